// SWP-RELAY (profile 19, swp-relay.md): store-and-forward with at-least-once delivery (§4).
// A publish on the loop topic is delivered to the publishing connection, its consumer, again
// on a fixed backoff until acknowledged, and dead-lettered to the publisher with a RELAY_NACK
// (retryable false, reason from a finite set) when the attempts are exhausted. delivery_ids are
// deduplicated process-wide within the retention window.

import { RELAY_POLICY } from '../catalog.mjs';
import { ERR, ProfileReject } from '../errors.mjs';

const PUBLISH = 1, ACK = 2, NACK = 3, STATUS = 4, ERR_T = 5;
const MAX_SEEN = 100_000;

export function createShared() {
  return { seen: new Map() }; // delivery_id hex -> first seen (ms)
}

export function createConnState() {
  return { pending: new Map() }; // delivery_id hex -> delivery
}

export function dropConnection(state) {
  for (const d of state.pending.values()) clearTimeout(d.timer);
  state.pending.clear();
}

const invalid = (msg) => new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, msg);

export function handle(ctx, msgType, m) {
  switch (msgType) {
    case PUBLISH:
      return publish(ctx, m);
    case ACK: {
      if (m.delivery_id.length === 0) throw invalid('RELAY_ACK without delivery_id');
      settle(ctx, m.delivery_id);
      return;
    }
    case NACK: {
      if (m.delivery_id.length === 0) throw invalid('RELAY_NACK without delivery_id');
      const d = ctx.conn.relay.pending.get(m.delivery_id.toString('hex'));
      if (!d) return; // a NACK for nothing we deliver: no state to change
      clearTimeout(d.timer);
      if (!m.retryable) return deadLetter(ctx, d, RELAY_POLICY.reasons.rejected);
      // A retryable NACK uses up the attempt it answers; retry on the same backoff.
      if (d.attempts >= RELAY_POLICY.maxAttempts) return deadLetter(ctx, d, RELAY_POLICY.reasons.exhausted);
      d.timer = setTimeout(() => attempt(ctx, d), RELAY_POLICY.backoffMs);
      return;
    }
    case STATUS:
      if (m.delivery_id.length === 0) throw invalid('RELAY_STATUS without delivery_id');
      return;
    case ERR_T:
      return;
  }
}

function publish(ctx, m) {
  if (m.delivery_id.length === 0) throw invalid('RELAY_PUBLISH without delivery_id (§4)');
  if (!m.topic) throw invalid('RELAY_PUBLISH without topic');
  if (m.topic === RELAY_POLICY.gatedTopic) throw new ProfileReject(ERR.SECURITY_POLICY, `topic ${m.topic} is closed to this peer by policy`);
  const key = m.delivery_id.toString('hex');
  const seen = ctx.shared.relay.seen;
  const now = ctx.now();
  const first = seen.get(key);
  if (first !== undefined && now - first < RELAY_POLICY.dedupeWindowMs) return; // duplicate: not delivered again, not answered
  prune(seen, now);
  seen.set(key, now);
  const d = {
    key,
    delivery_id: Buffer.from(m.delivery_id),
    topic: m.topic,
    payload: Buffer.from(m.payload),
    ttl_ms: m.ttl_ms,
    expiresAt: m.ttl_ms > 0n ? now + Number(m.ttl_ms > 86_400_000n ? 86_400_000n : m.ttl_ms) : Infinity,
    attempts: 0,
    timer: null,
  };
  if (m.topic !== RELAY_POLICY.loopTopic) {
    // No consumer is routed for this topic: dead-lettered at once.
    return ctx.originate(NACK, { delivery_id: d.delivery_id, retryable: false, reason_code: RELAY_POLICY.reasons.noRoute });
  }
  ctx.conn.relay.pending.set(key, d);
  attempt(ctx, d);
}

function attempt(ctx, d) {
  if (!ctx.alive || !ctx.conn.relay.pending.has(d.key)) return;
  if (ctx.now() >= d.expiresAt) return deadLetter(ctx, d, RELAY_POLICY.reasons.expired);
  d.attempts += 1;
  ctx.originate(PUBLISH, { delivery_id: d.delivery_id, topic: d.topic, payload: d.payload, ttl_ms: d.ttl_ms });
  if (d.attempts < RELAY_POLICY.maxAttempts) d.timer = setTimeout(() => attempt(ctx, d), RELAY_POLICY.backoffMs);
  else d.timer = setTimeout(() => deadLetter(ctx, d, RELAY_POLICY.reasons.exhausted), RELAY_POLICY.deadLetterAfterMs);
}

function settle(ctx, id) {
  const key = id.toString('hex');
  const d = ctx.conn.relay.pending.get(key);
  if (!d) return;
  clearTimeout(d.timer);
  ctx.conn.relay.pending.delete(key);
}

function deadLetter(ctx, d, reason) {
  clearTimeout(d.timer);
  ctx.conn.relay.pending.delete(d.key);
  if (ctx.alive) ctx.originate(NACK, { delivery_id: d.delivery_id, retryable: false, reason_code: reason });
}

function prune(seen, now) {
  if (seen.size < MAX_SEEN) return;
  for (const [k, t] of seen) if (now - t >= RELAY_POLICY.dedupeWindowMs) seen.delete(k);
  // Still full: forget the oldest (Map keeps insertion order); documented as a capacity bound.
  while (seen.size >= MAX_SEEN) seen.delete(seen.keys().next().value);
}
