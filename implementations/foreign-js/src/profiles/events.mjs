// SWP-EVENTS (profile 13, swp-events.md): takes published events and batches (§4 required
// fields, §6 a finite severity enumeration), remembers event_ids per producer (the connection,
// §5), and serves subscriptions in its own filter syntax: an echo stream, a burst of ticks, a
// batch, and a refused filter (§7 EVT_ERR).

import { ERR, ProfileReject } from '../errors.mjs';

const PUBLISH = 1, SUBSCRIBE = 2, UNSUBSCRIBE = 3, BATCH = 4, ERR_T = 5;
export const SEVERITIES = ['trace', 'debug', 'info', 'notice', 'warning', 'error', 'critical'];
const MAX_REMEMBERED = 100_000;
const MAX_TICKS = 100;

export function createConnState() {
  return { seen: new Map(), subs: new Set(), ticks: 0 };
}

const invalid = (msg) => new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, msg);

/** §4 required fields and §6 severity; throws on the first missing one. */
function checkEvent(e, where) {
  if (!e) throw invalid(`${where}: no event`);
  for (const f of ['event_id', 'event_type', 'severity']) if (!e[f]) throw invalid(`${where}: no ${f}`);
  if (e.ts_unix_ms === 0n) throw invalid(`${where}: no ts_unix_ms`);
  if (!e.msg_id.length && !e.task_id.length && !e.rpc_id.length) throw invalid(`${where}: no correlation key (msg_id, task_id or rpc_id)`);
  if (!e.body.length) throw invalid(`${where}: no body`);
  if (!SEVERITIES.includes(e.severity)) throw invalid(`${where}: severity ${JSON.stringify(e.severity)} is not one of ${SEVERITIES.join(', ')}`);
}

/** A fingerprint of everything an event carries, to tell a re-delivery from a reuse. */
function fingerprint(e) {
  return JSON.stringify([e.event_type, e.severity, String(e.ts_unix_ms), ...['msg_id', 'task_id', 'rpc_id', 'body'].map((k) => e[k].toString('hex'))]);
}

const plain = (e) => ({ event_id: e.event_id, event_type: e.event_type, severity: e.severity, ts_unix_ms: e.ts_unix_ms, msg_id: e.msg_id, task_id: e.task_id, rpc_id: e.rpc_id, body: e.body });

/**
 * Validates the events of one publish or batch as a whole (all or nothing) and returns those
 * not seen before; an event_id this producer used for other content is refused (§5 unique).
 */
function admit(ctx, list, where) {
  const seen = ctx.conn.events.seen;
  const inThis = new Map();
  const fresh = [];
  list.forEach((e, i) => {
    const w = list.length > 1 ? `${where} event ${i + 1}` : where;
    checkEvent(e, w);
    const fp = fingerprint(e);
    const prior = inThis.get(e.event_id) ?? seen.get(e.event_id);
    if (prior !== undefined && prior !== fp) throw invalid(`${w}: event_id ${e.event_id} was used for another event`);
    if (inThis.has(e.event_id)) throw invalid(`${w}: event_id ${e.event_id} twice in one batch`);
    inThis.set(e.event_id, fp);
    if (prior === undefined) fresh.push(e);
  });
  if (seen.size + inThis.size > MAX_REMEMBERED) throw new ProfileReject(ERR.SECURITY_POLICY, 'too many event_ids remembered for this producer');
  for (const [k, v] of inThis) seen.set(k, v);
  return fresh;
}

function tick(ctx, i) {
  const n = ++ctx.conn.events.ticks;
  return { event_id: `fj-tick-${n}`, event_type: 'fj.tick', severity: 'info', ts_unix_ms: BigInt(ctx.now()), task_id: Buffer.from('fj-ticks'), body: Buffer.from(`tick ${i}`) };
}

export function handle(ctx, msgType, m) {
  const st = ctx.conn.events;
  switch (msgType) {
    case PUBLISH: {
      const fresh = admit(ctx, [m.event], 'EVT_PUBLISH');
      if (st.subs.has('echo')) for (const e of fresh) ctx.originate(PUBLISH, { event: plain(e) });
      return;
    }
    case BATCH: {
      if (m.events.length === 0) throw invalid('EVT_BATCH without events');
      const fresh = admit(ctx, m.events, 'EVT_BATCH');
      // The echo stream delivers a batch as single events, in the batch's order (§6).
      if (st.subs.has('echo')) for (const e of fresh) ctx.originate(PUBLISH, { event: plain(e) });
      return;
    }
    case SUBSCRIBE:
      return subscribe(ctx, m.filter);
    case UNSUBSCRIBE:
      if (!st.subs.delete(m.subscription_id)) return ctx.reply(ERR_T, { code: 'fj.no-such-subscription', message: `no subscription ${JSON.stringify(m.subscription_id)} on this connection` });
      return;
    case ERR_T:
      return;
  }
}

/** Filters: `echo`, `ticks:N`, `batch:N` (1 ≤ N ≤ 100); `deny:…` and anything else are refused. */
function subscribe(ctx, filter) {
  const st = ctx.conn.events;
  if (filter === 'echo') {
    st.subs.add('echo');
    return;
  }
  const m = /^(ticks|batch):([1-9][0-9]{0,2})$/.exec(filter);
  if (m && Number(m[2]) <= MAX_TICKS) {
    const list = Array.from({ length: Number(m[2]) }, (_, i) => tick(ctx, i + 1));
    if (m[1] === 'ticks') for (const e of list) ctx.originate(PUBLISH, { event: e });
    else ctx.originate(BATCH, { events: list });
    return;
  }
  if (filter.startsWith('deny:')) return ctx.reply(ERR_T, { code: 'fj.subscription-refused', message: `filter ${JSON.stringify(filter)} is refused by policy` });
  return ctx.reply(ERR_T, { code: 'fj.bad-filter', message: 'filters: echo, ticks:N, batch:N' });
}
