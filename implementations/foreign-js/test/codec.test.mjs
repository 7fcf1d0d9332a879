// Unit tests of the E1 codec, the framing reader and the P1 codec.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_LIMITS, FrameReader, decodeEnvelope, encodeEnvelope, readUvarint, writeUvarint } from '../src/e1.mjs';
import { AGDISC, TOOLDISC, decodePayload, encodePayload } from '../src/schemas.mjs';
import { PbError } from '../src/pb.mjs';

const code = (fn) => {
  try {
    fn();
  } catch (e) {
    return e.code ?? e.name;
  }
  return 'accepted';
};
const hex = (s) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

test('uvarint: canonical round trip at the edges of 64 bits', () => {
  for (const v of [0n, 1n, 127n, 128n, 300n, (1n << 63n), (1n << 64n) - 1n]) {
    const b = writeUvarint(v);
    assert.deepEqual(readUvarint(b, 0), { value: v, next: b.length });
  }
  assert.equal(writeUvarint((1n << 64n) - 1n).length, 10);
});

test('uvarint: overflow, more than 10 octets and truncation are ERR_INVALID_UVARINT (E1 §2.1)', () => {
  assert.equal(code(() => readUvarint(hex('ffffffffffffffffff02'), 0)), 'ERR_INVALID_UVARINT'); // 2^64
  assert.equal(code(() => readUvarint(hex('8080808080808080808000'), 0)), 'ERR_INVALID_UVARINT'); // 11 octets
  assert.equal(code(() => readUvarint(hex('8080'), 0)), 'ERR_INVALID_UVARINT');
  // A padded (non-minimal) encoding within 10 octets is a value like any other.
  assert.equal(readUvarint(hex('8100'), 0).value, 1n);
});

const base = { profile_id: 10, msg_type: 1, flags: 0x8005, ts_unix_ms: 1767225600000, msg_id: Buffer.alloc(16, 7), payload: Buffer.from('p') };

test('envelope: a valid body decodes field for field, unknown flags and extensions kept', () => {
  const body = encodeEnvelope({ ...base, extensions: [{ type: 99, value: Buffer.from('x') }] });
  const env = decodeEnvelope(body);
  assert.equal(env.version, 1);
  assert.equal(env.profile_id, 10);
  assert.equal(env.flags, 0x8005n);
  assert.equal(env.extensions[0].type, 99n);
  assert.deepEqual(env.payload, Buffer.from('p'));
});

test('envelope: every E1 §4 reject gets its canonical code', () => {
  const ok = encodeEnvelope(base);
  assert.equal(code(() => decodeEnvelope(Buffer.concat([writeUvarint(2), ok.subarray(1)]))), 'ERR_UNSUPPORTED_VERSION');
  assert.equal(code(() => decodeEnvelope(encodeEnvelope({ ...base, msg_id: Buffer.alloc(0) }))), 'ERR_MSG_ID_INVALID');
  assert.equal(code(() => decodeEnvelope(encodeEnvelope({ ...base, msg_id: Buffer.alloc(7) }))), 'ERR_MSG_ID_INVALID');
  assert.equal(code(() => decodeEnvelope(encodeEnvelope({ ...base, msg_id: Buffer.alloc(33) }))), 'ERR_MSG_ID_INVALID');
  assert.equal(code(() => decodeEnvelope(encodeEnvelope({ ...base, extensions: [{ type: 16, value: Buffer.alloc(4096) }] }))), 'ERR_EXT_TOO_LARGE');
  const big = { ...DEFAULT_LIMITS, MAX_PAYLOAD_BYTES: 4 };
  assert.equal(code(() => decodeEnvelope(encodeEnvelope({ ...base, payload: Buffer.alloc(5) }), big)), 'ERR_PAYLOAD_TOO_LARGE');
  assert.equal(code(() => decodeEnvelope(Buffer.concat([ok, Buffer.from([0])]))), 'ERR_INVALID_FRAME');
  assert.equal(code(() => decodeEnvelope(ok.subarray(0, ok.length - 1))), 'ERR_INVALID_FRAME');
  assert.equal(code(() => decodeEnvelope(ok.subarray(0, 3))), 'ERR_INVALID_ENVELOPE'); // ends before flags
  assert.equal(code(() => decodeEnvelope(hex('01 0a 01 00 ffffffffffffffffffff01'))), 'ERR_INVALID_UVARINT');
  // An empty body: the version itself is missing.
  assert.equal(code(() => decodeEnvelope(Buffer.alloc(0))), 'ERR_INVALID_ENVELOPE');
});

test('envelope: a rejected frame whose msg_id was read carries it for correlation', () => {
  try {
    decodeEnvelope(encodeEnvelope({ ...base, extensions: [{ type: 16, value: Buffer.alloc(5000) }] }));
    assert.fail('accepted');
  } catch (e) {
    assert.deepEqual(e.msgId, base.msg_id);
  }
});

test('framing: split reads, two frames in one chunk, zero prefix, oversized prefix, truncation', () => {
  const body = encodeEnvelope(base);
  const frame = Buffer.concat([Buffer.from([0, 0, 0, body.length]), body]);
  const r = new FrameReader();
  assert.deepEqual(r.push(frame.subarray(0, 3)), []);
  assert.equal(r.push(frame.subarray(3)).length, 1);
  assert.equal(r.push(Buffer.concat([frame, frame])).length, 2);
  const z = r.push(Buffer.from([0, 0, 0, 0]));
  assert.equal(z[0].error.code, 'ERR_INVALID_FRAME');
  assert.equal(z[0].fatal, false);
  const big = r.push(hex('00100001'));
  assert.equal(big[0].error.code, 'ERR_FRAME_TOO_LARGE');
  assert.equal(big[0].fatal, true);
  const t = new FrameReader();
  t.push(frame.subarray(0, 10));
  assert.equal(t.end()[0].error.code, 'ERR_INVALID_FRAME');
});

test('P1 wrapper form: round trip, unknown fields skipped, wrong member and malformed octets refused', () => {
  const p = encodePayload(AGDISC, 1, { agent_id: 'a' });
  assert.deepEqual(p, hex('0a03 0a0161'));
  assert.equal(decodePayload(AGDISC, 1, p).agent_id, 'a');
  // unknown field 15 (varint) and an unknown group inside the message are skipped (P1 §4)
  const withUnknown = hex('0a07 0a0161 7801 6b6c');
  assert.equal(decodePayload(AGDISC, 1, withUnknown).agent_id, 'a');
  assert.throws(() => decodePayload(AGDISC, 2, p), PbError); // member 1 under msg_type 2
  assert.throws(() => decodePayload(AGDISC, 1, Buffer.alloc(0)), PbError);
  assert.throws(() => decodePayload(AGDISC, 1, hex('ffffffff')), PbError);
  assert.throws(() => decodePayload(AGDISC, 1, hex('0a02 0aff')), PbError); // runs past
  assert.throws(() => decodePayload(AGDISC, 1, hex('0a03 0a01ff')), PbError); // not UTF-8
  assert.throws(() => decodePayload(AGDISC, 1, hex('0a02 0801')), PbError); // wire type of agent_id
  const list = encodePayload(TOOLDISC, 2, { tools: [{ tool_id: 't', name: 'n', version: '1', schema_ref: 'urn:x' }], next_page_token: '' });
  const back = decodePayload(TOOLDISC, 2, list);
  assert.equal(back.tools[0].schema_ref, 'urn:x');
  assert.equal(decodePayload(TOOLDISC, 2, list, 'wrapper').next_page_token, '');
  // The bare-message form is available too (--p1-form message).
  assert.equal(decodePayload(AGDISC, 1, encodePayload(AGDISC, 1, { agent_id: 'z' }, 'message'), 'message').agent_id, 'z');
});
