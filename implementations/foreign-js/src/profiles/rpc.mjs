// SWP-RPC (profile 12, swp-rpc.md), the callee side: serves this endpoint's methods with one
// terminal outcome per rpc_id (§5), streams with increasing seq_no, honours RPC_CANCEL, and
// keeps idempotency keys per peer identity for a documented replay window (§6).

import { createHash } from 'node:crypto';
import { ERR, ProfileReject } from '../errors.mjs';
import { RPC_POLICY } from '../catalog.mjs';

const REQ = 1, RESP = 2, ERR_T = 3, ITEM = 4, CANCEL = 5;
const MAX_DONE = 10_000;
const MAX_KEYS = 100_000;

export function createShared() {
  return { keys: new Map(), counter: 0 }; // `${identity}\0${key}` -> {digest, at, outcome|null, waiters}
}

export function createConnState() {
  return { running: new Map(), done: new Set() }; // rpc_id hex -> call; completed rpc_ids
}

export function dropConnection(state) {
  for (const c of state.running.values()) clearTimeout(c.timer);
  state.running.clear();
}

const invalid = (msg) => new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, msg);

/** The terminal outcome of a call as a {type, body} pair, re-addressed to any rpc_id. */
const resp = (result) => ({ type: RESP, body: { result: Buffer.from(result) } });
const fail = (code, retryable, message) => ({ type: ERR_T, body: { error_code: code, retryable, error_message: message } });

export function handle(ctx, msgType, m) {
  switch (msgType) {
    case REQ:
      return request(ctx, m);
    case CANCEL: {
      if (m.rpc_id.length === 0) throw invalid('RPC_CANCEL without rpc_id');
      const call = ctx.conn.rpc.running.get(m.rpc_id.toString('hex'));
      if (!call || !call.cancel) return; // finished, unknown or not cancellable: nothing to end
      clearTimeout(call.timer);
      return finish(ctx, call, fail(RPC_POLICY.cancelCode, false, `cancelled: ${m.reason || 'no reason given'}`));
    }
    case RESP:
      if (m.rpc_id.length === 0) throw invalid('RPC_RESP without rpc_id');
      throw invalid('RPC_RESP for a call this endpoint never made');
    case ERR_T:
      if (m.rpc_id.length === 0 || !m.error_code || !m.error_message) throw invalid('RPC_ERR needs rpc_id, error_code and error_message (§4)');
      throw invalid('RPC_ERR for a call this endpoint never made');
    case ITEM:
      if (m.rpc_id.length === 0 || m.seq_no === 0n || m.item.length === 0) throw invalid('RPC_STREAM_ITEM needs rpc_id, seq_no and item (§4)');
      throw invalid('RPC_STREAM_ITEM for a call this endpoint never made');
  }
}

function request(ctx, m) {
  if (m.rpc_id.length === 0) throw invalid('RPC_REQ without rpc_id');
  if (!m.method) throw invalid('RPC_REQ without method');
  const st = ctx.conn.rpc;
  const id = m.rpc_id.toString('hex');
  if (st.running.has(id) || st.done.has(id)) throw invalid('rpc_id already names a call on this connection');
  const method = RPC_POLICY.methods[m.method];
  if (method === 'gated' || (method === 'owner' && ctx.identity !== ctx.opts.rpcOwner)) {
    throw new ProfileReject(ERR.SECURITY_POLICY, `method ${m.method} is refused to this peer by policy`);
  }
  const call = { id, rpc_id: Buffer.from(m.rpc_id), cancel: false, timer: null, key: null };
  st.running.set(id, call);
  if (m.idempotency_key) {
    const k = `${ctx.identity ?? ''}\u0000${m.idempotency_key}`;
    const digest = createHash('sha256').update(m.method).update('\u0000').update(m.params).digest('hex');
    const keys = ctx.shared.rpc.keys;
    const now = ctx.now();
    const prior = keys.get(k);
    if (prior && now - prior.at < RPC_POLICY.replayWindowMs) {
      if (prior.digest !== digest) return finish(ctx, call, fail('idempotency_conflict', false, 'the idempotency key was used with other inputs'));
      if (prior.outcome) return finish(ctx, call, prior.outcome);
      // The original still runs: told to retry (RPC_REPLAY_WHILE_RUNNING 1).
      return finish(ctx, call, fail('in_progress', true, 'the original call under this key is still running'));
    }
    if (keys.size >= MAX_KEYS) prune(keys, now);
    call.key = { k, digest, at: now, outcome: null };
    keys.set(k, call.key);
  }
  run(ctx, call, method, m);
}

function run(ctx, call, method, m) {
  switch (method) {
    case 'echo':
      return finish(ctx, call, resp(m.params));
    case 'counter':
      return finish(ctx, call, resp(`count ${++ctx.shared.rpc.counter}`));
    case 'fail':
      return finish(ctx, call, fail('internal', false, 'this method always fails'));
    case 'retry':
      return finish(ctx, call, fail('unavailable', true, 'a transient failure: try again'));
    case 'owner':
      return finish(ctx, call, resp(m.params));
    case 'stream': {
      const n = /^[0-9]{1,3}$/.test(m.params.toString()) ? Number(m.params.toString()) : -1;
      if (n < 1 || n > 100) return finish(ctx, call, fail('invalid_request', false, 'params: the number of items, 1 to 100'));
      for (let i = 1; i <= n; i++) ctx.originate(ITEM, { rpc_id: call.rpc_id, seq_no: i, item: Buffer.from(`item ${i}`), is_terminal: false });
      return finish(ctx, call, resp(`${n} items`));
    }
    case 'slow': {
      const ms = /^[0-9]{1,4}$/.test(m.params.toString()) ? Number(m.params.toString()) : -1;
      if (ms < 0 || ms > 5000) return finish(ctx, call, fail('invalid_request', false, 'params: milliseconds, 0 to 5000'));
      call.cancel = true;
      call.timer = setTimeout(() => finish(ctx, call, resp(`slept ${ms} ms`)), ms);
      return;
    }
    default:
      return finish(ctx, call, fail('unknown_method', false, `no method ${m.method}`));
  }
}

/** The one terminal outcome of a call (§5): sent, remembered for replays, the call closed. */
function finish(ctx, call, outcome) {
  const st = ctx.conn.rpc;
  if (!st.running.has(call.id)) return;
  st.running.delete(call.id);
  if (st.done.size >= MAX_DONE) st.done.delete(st.done.values().next().value);
  st.done.add(call.id);
  if (call.key) call.key.outcome = outcome;
  if (ctx.alive) ctx.reply(outcome.type, { rpc_id: call.rpc_id, ...outcome.body });
}

function prune(keys, now) {
  for (const [k, v] of keys) if (now - v.at >= RPC_POLICY.replayWindowMs) keys.delete(k);
  while (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value);
}
