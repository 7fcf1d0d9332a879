// End-to-end tests: a real endpoint on a loopback port, driven over TCP, one test per profile
// and one for the core reject paths.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, startServer } from './helpers.mjs';
import { manifestParams } from '../src/catalog.mjs';
import { encodeFrame } from '../src/e1.mjs';

const P = manifestParams();
let srv;
before(async () => {
  srv = await startServer();
});
after(async () => {
  await srv.close();
});

async function client() {
  return Client.connect(srv.port);
}

test('core: rejects are error frames on profile 4096 naming the refused msg_id, and the stream goes on', async () => {
  const c = await client();
  const id = c.send(999, 1, Buffer.alloc(0));
  let f = await c.nextP1();
  assert.equal(f.env.profile_id, 4096);
  assert.equal(f.core.code, 'ERR_UNKNOWN_PROFILE');
  assert.deepEqual(f.env.msg_id, id);
  c.send(10, 1, Buffer.alloc(0), { ts_unix_ms: Date.now() - 600_000 });
  assert.equal((await c.nextP1()).core.code, 'ERR_INVALID_ENVELOPE');
  c.send(10, 1, Buffer.alloc(0), { msg_id: Buffer.alloc(4, 1) });
  assert.equal((await c.nextP1()).core.code, 'ERR_MSG_ID_INVALID');
  c.raw(Buffer.from([0, 0, 0, 0]));
  assert.equal((await c.nextP1()).core.code, 'ERR_INVALID_FRAME');
  // still usable: a GET is answered
  c.sendP1(10, 1, { agent_id: P.AGDISC_AGENT_ID });
  f = await c.nextP1();
  assert.equal(f.env.msg_type, 2);
  // an oversized prefix: the code, then the close
  c.raw(Buffer.from([0x7f, 0, 0, 0]));
  assert.equal((await c.nextP1()).core.code, 'ERR_FRAME_TOO_LARGE');
  assert.equal(await c.next(), null);
  c.destroy();
});

test('core: a body cut short is refused when the peer half-closes', async () => {
  const c = await client();
  const frame = encodeFrame({ profile_id: 10, msg_type: 1, msg_id: Buffer.alloc(16, 2), payload: Buffer.from('abc') });
  c.raw(frame.subarray(0, frame.length - 2));
  c.end();
  assert.equal((await c.nextP1()).core.code, 'ERR_INVALID_FRAME');
  assert.equal(await c.next(), null);
});

test('SWP-AGDISC: card, validator, not-modified, error reasons, invalid cards refused', async () => {
  const c = await client();
  const id = c.sendP1(10, 1, { agent_id: P.AGDISC_AGENT_ID });
  let f = await c.nextP1();
  assert.deepEqual(f.env.msg_id, id);
  assert.equal(f.msg.schema_revision, P.AGDISC_SCHEMA_REVISION);
  assert.equal(f.msg.card_payload.toString(), P.AGDISC_CARD);
  assert.equal(f.msg.etag, P.AGDISC_ETAG);
  assert.equal(f.msg.max_age_ms, BigInt(P.AGDISC_MAX_AGE_MS));
  c.sendP1(10, 1, { agent_id: P.AGDISC_AGENT_ID, if_none_match: P.AGDISC_ETAG });
  f = await c.nextP1();
  assert.equal(f.env.msg_type, 3);
  assert.equal(f.msg.etag, P.AGDISC_ETAG);
  for (const [agent, want] of [
    [P.AGDISC_MISSING_AGENT_ID, P.AGDISC_NOT_FOUND_CODE],
    [P.AGDISC_INVALID_AGENT_ID, P.AGDISC_INVALID_CARD_CODE],
    [P.AGDISC_UNAUTHORIZED_AGENT_ID, P.AGDISC_UNAUTHORIZED_CODE],
    [P.AGDISC_INTERNAL_AGENT_ID, P.AGDISC_INTERNAL_CODE],
  ]) {
    c.sendP1(10, 1, { agent_id: agent });
    f = await c.nextP1();
    assert.equal(f.env.msg_type, 4);
    assert.equal(f.msg.code, want);
  }
  c.sendP1(10, 2, { agent_id: 'x', card_payload: Buffer.from('{}') });
  f = await c.nextP1();
  assert.equal(f.msg.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.send(10, 5, Buffer.alloc(0));
  assert.equal((await c.nextP1()).msg.code, 'ERR_UNSUPPORTED_MSG_TYPE');
  c.destroy();
});

test('SWP-TOOLDISC: paging by opaque cursor, filter, get by version, not found, invalid descriptors', async () => {
  const c = await client();
  c.sendP1(11, 1, { page_size: 1 });
  let f = await c.nextP1();
  assert.equal(f.msg.tools.length, 1);
  assert.equal(f.msg.next_page_token, P.TOOLDISC_PAGE_TOKEN);
  const seen = [f.msg.tools[0].tool_id];
  let tok = f.msg.next_page_token;
  while (tok) {
    c.sendP1(11, 1, { page_size: 1, page_token: tok });
    f = await c.nextP1();
    seen.push(...f.msg.tools.map((t) => t.tool_id));
    tok = f.msg.next_page_token;
  }
  assert.equal(new Set(seen).size, 3);
  c.sendP1(11, 1, { filter: P.TOOLDISC_FILTER });
  f = await c.nextP1();
  assert.deepEqual(f.msg.tools.map((t) => t.tool_id), [P.TOOLDISC_TOOL_ID]);
  c.sendP1(11, 3, { tool_id: P.TOOLDISC_TOOL_ID, version: P.TOOLDISC_TOOL_VERSION });
  f = await c.nextP1();
  assert.equal(f.msg.tool.schema_ref, P.TOOLDISC_TOOL_SCHEMA_REF);
  c.sendP1(11, 3, { tool_id: P.TOOLDISC_MISSING_TOOL_ID });
  assert.equal((await c.nextP1()).msg.code, P.TOOLDISC_NOT_FOUND_CODE);
  for (const ref of ['schema.json', 'my schema:x', 'https://a b', 'sha384:' + 'a'.repeat(64), 'sha256:not-hex']) {
    c.sendP1(11, 4, { tool: { tool_id: 't', name: 'n', version: '1', schema_ref: ref } });
    assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD', ref);
  }
  c.sendP1(11, 4, { tool: { tool_id: 't', name: 'n', version: '1', schema_ref: 'urn:x:t' } });
  assert.equal(await c.next(300), null); // a valid descriptor is taken silently
  c.destroy();
});

test('SWP-CRED: presentation, chain bound and expiry, unknown chain, revocation', async () => {
  const c = await client();
  const chain = `test-${Date.now()}`;
  const now = Date.now();
  c.sendP1(15, 1, { cred_type: P.CRED_TYPE, credential: P.CRED_CREDENTIAL, chain_id: chain });
  c.sendP1(15, 1, { cred_type: P.CRED_UNSUPPORTED_TYPE, credential: P.CRED_CREDENTIAL });
  assert.equal((await c.nextP1()).msg.code, 'ERR_SECURITY_POLICY');
  c.sendP1(15, 1, { cred_type: P.CRED_TYPE, credential: P.CRED_INVALID_CREDENTIAL });
  assert.equal((await c.nextP1()).msg.code, 'ERR_SECURITY_POLICY');
  c.sendP1(15, 1, { credential: P.CRED_CREDENTIAL });
  assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.sendP1(15, 2, { chain_id: chain, delegation: 'd', expires_at_unix_ms: now - 1000 });
  assert.equal((await c.nextP1()).msg.code, 'ERR_SECURITY_POLICY');
  c.sendP1(15, 2, { chain_id: chain, delegation: 'd', expires_at_unix_ms: now + P.CRED_MAX_TTL_MS + 60_000 });
  assert.equal((await c.nextP1()).msg.code, 'ERR_SECURITY_POLICY');
  for (let i = 0; i < P.CRED_MAX_CHAIN_LENGTH; i++) c.sendP1(15, 2, { chain_id: chain, delegation: 'd', expires_at_unix_ms: now + 60_000 });
  c.sendP1(15, 2, { chain_id: chain, delegation: 'd', expires_at_unix_ms: now + 60_000 });
  let f = await c.nextP1();
  assert.equal(f.msg.code, 'ERR_SECURITY_POLICY');
  assert.match(f.msg.message, /maximum/);
  c.sendP1(15, 2, { chain_id: 'never-presented', delegation: 'd', expires_at_unix_ms: now + 60_000 });
  assert.equal((await c.nextP1()).msg.code, 'ERR_NOT_FOUND');
  const other = `${chain}-b`;
  c.sendP1(15, 1, { cred_type: P.CRED_TYPE, credential: P.CRED_CREDENTIAL, chain_id: other });
  c.sendP1(15, 3, { chain_id: other, reason: P.CRED_REVOKE_REASON });
  c.sendP1(15, 2, { chain_id: other, delegation: 'd', expires_at_unix_ms: now + 60_000 });
  f = await c.nextP1();
  assert.equal(f.msg.code, 'ERR_SECURITY_POLICY');
  assert.match(f.msg.message, /revoked/);
  c.destroy();
});

test('SWP-POLICYHINT: unmet MUST and unknown keys reported before the ack, first constraint wins, bad mode refused', async () => {
  const c = await client();
  c.sendP1(16, 1, { constraints: [{ key: 'fj.region', value: 'us-east-2', mode: 'MUST', scope_ref: 'tenant:alpha' }, { key: 'zz', value: '1', mode: 'MUST' }] });
  let f = await c.nextP1();
  assert.equal(f.env.msg_type, 3);
  assert.deepEqual([f.msg.key, f.msg.scope_ref, f.msg.reason_code], ['fj.region', 'tenant:alpha', 'fj.unmet']);
  f = await c.nextP1();
  assert.deepEqual([f.msg.key, f.msg.scope_ref, f.msg.reason_code], ['zz', 'fj:connection', 'fj.unknown-key']);
  f = await c.nextP1();
  assert.equal(f.env.msg_type, 2);
  c.sendP1(16, 1, { constraints: [{ key: 'fj.region', value: 'eu-west-1', mode: 'MUST' }, { key: 'fj.region', value: 'us-east-2', mode: 'MUST' }] });
  assert.equal((await c.nextP1()).env.msg_type, 2); // the met one came first and wins
  c.sendP1(16, 1, { constraints: [{ key: 'fj.region', value: 'us-east-2', mode: 'SHOULD' }] });
  assert.equal((await c.nextP1()).env.msg_type, 2); // advice is not a violation
  c.sendP1(16, 1, { constraints: [{ key: 'fj.region', value: 'eu-west-1', mode: 'MUSTNT' }] });
  assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.sendP1(16, 3, { key: 'k', scope_ref: '', reason_code: 'r' });
  assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.destroy();
});

test('SWP-RELAY: loop delivery retried until acked, dedupe, dead letter, gate, missing delivery_id', async () => {
  const c = await client();
  const tag = `${Date.now()}`;
  c.sendP1(19, 1, { delivery_id: `a-${tag}`, topic: 'fj.loop', payload: 'x' });
  let f = await c.nextP1();
  assert.equal(f.env.msg_type, 1);
  assert.equal(f.msg.delivery_id.toString(), `a-${tag}`);
  f = await c.nextP1(); // the retry, 500 ms later
  assert.equal(f.env.msg_type, 1);
  c.sendP1(19, 2, { delivery_id: `a-${tag}` });
  assert.equal(await c.next(900), null);
  c.sendP1(19, 1, { delivery_id: `a-${tag}`, topic: 'fj.loop', payload: 'x' });
  assert.equal(await c.next(400), null); // a duplicate
  c.sendP1(19, 1, { delivery_id: `b-${tag}`, topic: 'fj.loop', payload: 'y' });
  for (let i = 0; i < 3; i++) assert.equal((await c.nextP1()).env.msg_type, 1);
  f = await c.nextP1();
  assert.equal(f.env.msg_type, 3);
  assert.equal(f.msg.retryable, false);
  assert.equal(f.msg.reason_code, 'fj.retries-exhausted');
  c.sendP1(19, 1, { delivery_id: `c-${tag}`, topic: 'fj.restricted', payload: 'z' });
  assert.equal((await c.nextP1()).msg.code, 'ERR_SECURITY_POLICY');
  c.sendP1(19, 1, { topic: 'fj.loop', payload: 'z' });
  assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.destroy();
});

test('SWP-OBS: traceparent validated, context and tracestate returned exactly, a refused set changes nothing', async () => {
  const c = await client();
  const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  c.sendP1(18, 2, { include_current: true });
  assert.equal((await c.nextP1()).msg.code, 'fj.no-context');
  for (const bad of [tp.toUpperCase(), 'ff' + tp.slice(2), tp + '-x', tp.slice(0, 53), '00-' + '0'.repeat(32) + tp.slice(35)]) {
    c.sendP1(18, 1, { traceparent: bad });
    assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD', bad);
  }
  c.sendP1(18, 1, { traceparent: 'cc' + tp.slice(2) + '-what-follows' });
  c.sendP1(18, 1, { traceparent: tp, tracestate: 'rojo=1, congo=t61 ,x@y=z', task_id: Buffer.from([0, 255]) });
  c.sendP1(18, 1, { traceparent: tp.slice(0, 54) }); // refused: the context stays
  assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.sendP1(18, 2, { include_current: true });
  const f = await c.nextP1();
  assert.equal(f.env.msg_type, 3);
  assert.equal(f.msg.traceparent, tp);
  assert.equal(f.msg.tracestate, 'rojo=1, congo=t61 ,x@y=z');
  assert.deepEqual(f.msg.task_id, Buffer.from([0, 255]));
  c.destroy();
});

test('SWP-STATE: content-addressed puts and deltas, parents must exist, ids must fit, missing state is ERR_NOT_FOUND', async () => {
  const c = await client();
  const root = Buffer.from(P.STATE_ROOT_ID);
  c.sendP1(17, 1, { state_id: Buffer.from(P.STATE_ORPHAN_ID), blob: 'swp-test orphan', parent_ids: [Buffer.from(P.STATE_MISSING_ID)] });
  assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.sendP1(17, 1, { state_id: Buffer.from(P.STATE_WRONG_ID), blob: 'swp-test root' });
  assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.sendP1(17, 1, { state_id: root, blob: 'swp-test root' });
  c.sendP1(17, 1, { state_id: root, blob: 'swp-test root' }); // a duplicate, taken
  c.sendP1(17, 1, { state_id: Buffer.from(P.STATE_CHILD_ID), blob: 'swp-test child', parent_ids: [root] });
  c.sendP1(17, 3, { state_id: Buffer.from(P.STATE_DELTA_ID), delta: Buffer.from('00ff80fe7f0102c3', 'hex'), parent_ids: [root] });
  c.sendP1(17, 2, { state_id: Buffer.from(P.STATE_CHILD_ID) });
  let f = await c.nextP1();
  assert.equal(f.env.msg_type, 1);
  assert.equal(f.msg.blob.toString(), 'swp-test child');
  assert.deepEqual(f.msg.parent_ids, [root]);
  c.sendP1(17, 2, { state_id: Buffer.from(P.STATE_DELTA_ID) });
  f = await c.nextP1();
  assert.equal(f.env.msg_type, 3);
  assert.equal(f.msg.delta.toString('hex'), '00ff80fe7f0102c3');
  c.sendP1(17, 3, { state_id: Buffer.from(P.STATE_MALFORMED_ID), delta: Buffer.from([1, 2]), parent_ids: [root] });
  assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.sendP1(17, 2, { state_id: Buffer.from(P.STATE_MISSING_ID) });
  f = await c.nextP1();
  assert.equal(f.env.msg_type, 4);
  assert.equal(f.msg.code, 'ERR_NOT_FOUND');
  c.destroy();
});

test('SWP-EVENTS: required fields, severities, id reuse per producer, echo in order, ticks, batches, refused filters', async () => {
  const c = await client();
  const ev = (id, body, extra = {}) => ({ event_id: id, event_type: 't', severity: 'info', ts_unix_ms: 1767225600000, task_id: 't-1', body, ...extra });
  c.sendP1(13, 1, { event: { ...ev('a', 'x'), severity: 'loud' } });
  assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.sendP1(13, 1, { event: { ...ev('a', 'x'), task_id: '' } });
  assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.sendP1(13, 2, { filter: 'echo' });
  c.sendP1(13, 4, { events: [ev('b1', '1', { ts_unix_ms: 3 }), ev('b2', '2', { ts_unix_ms: 1 })] });
  for (const want of ['b1', 'b2']) {
    const f = await c.nextP1();
    assert.equal(f.env.msg_type, 1);
    assert.equal(f.msg.event.event_id, want);
  }
  c.sendP1(13, 1, { event: ev('b1', 'other') });
  assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.sendP1(13, 1, { event: ev('b1', '1', { ts_unix_ms: 3 }) }); // the same event again: taken, not echoed twice
  c.sendP1(13, 4, { events: [ev('c', '1'), ev('c', '2')] });
  assert.equal((await c.nextP1()).msg.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.sendP1(13, 2, { filter: 'batch:2' });
  let f = await c.nextP1();
  assert.equal(f.env.msg_type, 4);
  assert.equal(f.msg.events.length, 2);
  c.sendP1(13, 2, { filter: 'deny:all' });
  assert.equal((await c.nextP1()).msg.code, 'fj.subscription-refused');
  c.sendP1(13, 3, { subscription_id: 'nope' });
  assert.equal((await c.nextP1()).msg.code, 'fj.no-such-subscription');
  c.sendP1(13, 3, { subscription_id: 'echo' });
  c.sendP1(13, 1, { event: ev('d', 'quiet') });
  assert.equal(await c.next(300), null);
  c.destroy();
});

test('SWP-RPC: one terminal outcome per rpc_id, streams, cancel, idempotent replays, refusals as core error frames', async () => {
  const c = await client();
  const tag = `${Date.now()}`;
  c.sendP1(12, 1, { rpc_id: `e-${tag}`, method: P.RPC_ECHO_METHOD, params: 'hi' });
  let f = await c.nextP1();
  assert.equal(f.env.msg_type, 2);
  assert.equal(f.msg.result.toString(), 'hi');
  c.sendP1(12, 1, { rpc_id: `e-${tag}`, method: P.RPC_ECHO_METHOD, params: 'again' });
  assert.equal((await c.nextP1()).core.code, 'ERR_INVALID_PROFILE_PAYLOAD'); // the rpc_id is closed
  c.sendP1(12, 1, { rpc_id: `s-${tag}`, method: P.RPC_STREAM_METHOD, params: '2' });
  for (const seq of [1n, 2n]) assert.equal((await c.nextP1()).msg.seq_no, seq);
  assert.equal((await c.nextP1()).env.msg_type, 2);
  c.sendP1(12, 1, { rpc_id: `c-${tag}`, method: P.RPC_SLOW_METHOD, params: '800' });
  c.sendP1(12, 5, { rpc_id: `c-${tag}` });
  f = await c.nextP1();
  assert.equal(f.msg.error_code, 'cancelled');
  assert.equal(await c.next(1000), null); // nothing after the terminal outcome
  const key = `k-${tag}`;
  c.sendP1(12, 1, { rpc_id: `n1-${tag}`, method: P.RPC_COUNTER_METHOD, params: 'n', idempotency_key: key });
  const first = (await c.nextP1()).msg.result.toString();
  c.sendP1(12, 1, { rpc_id: `n2-${tag}`, method: P.RPC_COUNTER_METHOD, params: 'n', idempotency_key: key });
  assert.equal((await c.nextP1()).msg.result.toString(), first);
  c.sendP1(12, 1, { rpc_id: `n3-${tag}`, method: P.RPC_COUNTER_METHOD, params: 'x', idempotency_key: key });
  assert.equal((await c.nextP1()).msg.error_code, 'idempotency_conflict');
  c.sendP1(12, 1, { rpc_id: `g-${tag}`, method: P.RPC_GATED_METHOD });
  assert.equal((await c.nextP1()).core.code, 'ERR_SECURITY_POLICY');
  c.sendP1(12, 1, { rpc_id: `u-${tag}`, method: 'js.foreign.nope' });
  assert.equal((await c.nextP1()).msg.error_code, 'unknown_method');
  c.sendP1(12, 2, { rpc_id: `e-${tag}`, result: 'r' });
  assert.equal((await c.nextP1()).core.code, 'ERR_INVALID_PROFILE_PAYLOAD');
  c.destroy();
});
