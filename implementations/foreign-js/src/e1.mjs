// E1 envelope encoding binding (encoding-binding-e1.md) and the 32-bit big-endian stream framing
// of core-spec §3. Pure functions over Buffers: no I/O here.

import { ERR, SwpError } from './errors.mjs';

const U64_MAX = (1n << 64n) - 1n;

/** Default limits of this endpoint (README "Limits"). */
export const DEFAULT_LIMITS = Object.freeze({
  MAX_FRAME_BYTES: 1048576,
  MIN_MSG_ID_BYTES: 8,
  MAX_MSG_ID_BYTES: 32,
  MAX_EXT_BYTES: 4096,
  MAX_PAYLOAD_BYTES: 1047552,
});

/**
 * Reads one uvarint at `pos` of `buf` (reading stops at `end`). Returns {value: BigInt, next}.
 * Throws ERR_INVALID_UVARINT for more than 10 octets, a value above 2^64-1, or a truncation
 * (E1 §2.1). Non-minimal (padded) encodings within 10 octets are accepted: §2.1 lists only
 * these three rejects.
 */
export function readUvarint(buf, pos, end = buf.length) {
  let value = 0n;
  let shift = 0n;
  for (let i = 0; i < 10; i++) {
    if (pos + i >= end) throw new SwpError(ERR.INVALID_UVARINT, 'uvarint truncated', { truncated: true });
    const b = buf[pos + i];
    value |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      if (value > U64_MAX) throw new SwpError(ERR.INVALID_UVARINT, 'uvarint overflows 64 bits');
      return { value, next: pos + i + 1 };
    }
    shift += 7n;
  }
  throw new SwpError(ERR.INVALID_UVARINT, 'uvarint longer than 10 octets');
}

/** Canonical (minimal) LEB128 of a non-negative Number or BigInt. */
export function writeUvarint(v) {
  let n = BigInt(v);
  if (n < 0n || n > U64_MAX) throw new RangeError('uvarint out of range');
  const out = [];
  do {
    let b = Number(n & 0x7fn);
    n >>= 7n;
    if (n > 0n) b |= 0x80;
    out.push(b);
  } while (n > 0n);
  return Buffer.from(out);
}

function writeBytes(b) {
  return Buffer.concat([writeUvarint(b.length), b]);
}

/** Reads a `bytes` field (E1 §2.2) whose length must not exceed `max` (checked before use). */
function readBytes(buf, pos, end, max, tooLargeCode, what) {
  const { value: len, next } = readUvarint(buf, pos, end);
  if (len > BigInt(max)) {
    throw new SwpError(tooLargeCode, `${what} length ${len} exceeds ${max}`);
  }
  const n = Number(len);
  if (next + n > end) throw new SwpError(ERR.INVALID_FRAME, `${what} runs past the frame body`);
  return { value: buf.subarray(next, next + n), next: next + n };
}

/** Parses the extensions block into [{type: BigInt, value: Buffer}] (E1 §3.1). */
export function parseExtensions(block) {
  const out = [];
  let pos = 0;
  while (pos < block.length) {
    const t = readUvarint(block, pos, block.length);
    const v = readBytes(block, t.next, block.length, block.length, ERR.INVALID_FRAME, 'extension value');
    out.push({ type: t.value, value: v.value });
    pos = v.next;
  }
  return out;
}

/**
 * Decodes one E1 envelope body (the N octets after the prefix). Throws SwpError with the
 * canonical code; where the msg_id could be read it is attached as `msgId`, so the error frame
 * can name the frame it refuses.
 */
export function decodeEnvelope(body, limits = DEFAULT_LIMITS) {
  const end = body.length;
  let pos = 0;
  const env = {};
  // A body that ends exactly where a field should start is a missing field (core §4.1).
  const need = (name) => {
    if (pos >= end) throw new SwpError(ERR.INVALID_ENVELOPE, `required field ${name} missing`);
  };
  need('version');
  let r = readUvarint(body, pos, end);
  pos = r.next;
  const version = r.value;
  if (version !== 1n) {
    const err = new SwpError(ERR.UNSUPPORTED_VERSION, `unsupported core version ${version}`);
    err.msgId = tryMsgIdAfterVersion(body, pos, limits);
    throw err;
  }
  env.version = 1;
  for (const name of ['profile_id', 'msg_type', 'flags', 'ts_unix_ms']) {
    need(name);
    r = readUvarint(body, pos, end);
    pos = r.next;
    env[name] = r.value;
  }
  need('msg_id');
  const lenAt = readUvarint(body, pos, end);
  if (lenAt.value > BigInt(limits.MAX_MSG_ID_BYTES)) {
    throw new SwpError(ERR.MSG_ID_INVALID, `msg_id longer than ${limits.MAX_MSG_ID_BYTES}`);
  }
  const id = readBytes(body, pos, end, limits.MAX_MSG_ID_BYTES, ERR.MSG_ID_INVALID, 'msg_id');
  pos = id.next;
  env.msg_id = Buffer.from(id.value);
  const withId = (fn) => {
    try {
      return fn();
    } catch (e) {
      if (e instanceof SwpError) e.msgId = env.msg_id;
      throw e;
    }
  };
  return withId(() => {
    need('extensions');
    const ext = readBytes(body, pos, end, limits.MAX_EXT_BYTES, ERR.EXT_TOO_LARGE, 'extensions');
    pos = ext.next;
    env.extensions = parseExtensions(ext.value);
    need('payload');
    const pl = readBytes(body, pos, end, limits.MAX_PAYLOAD_BYTES, ERR.PAYLOAD_TOO_LARGE, 'payload');
    pos = pl.next;
    env.payload = Buffer.from(pl.value);
    if (pos !== end) throw new SwpError(ERR.INVALID_FRAME, `${end - pos} octets after the payload`);
    if (env.msg_id.length < limits.MIN_MSG_ID_BYTES) {
      throw new SwpError(ERR.MSG_ID_INVALID, `msg_id shorter than ${limits.MIN_MSG_ID_BYTES}`);
    }
    // Profile ids and msg_types beyond 2^53 can name nothing we serve; keep them exact as BigInt
    // for the unknown-profile path, Numbers otherwise.
    env.profile_id = toNum(env.profile_id);
    env.msg_type = toNum(env.msg_type);
    env.flags = env.flags; // BigInt: unknown bits are kept, never interpreted (core §4.3)
    env.ts_unix_ms = toNum(env.ts_unix_ms);
    return env;
  });
}

function toNum(b) {
  return b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

/** Best effort, for correlation only: the msg_id of a body whose version we do not speak. */
function tryMsgIdAfterVersion(body, pos, limits) {
  try {
    let p = pos;
    for (let i = 0; i < 4; i++) p = readUvarint(body, p, body.length).next;
    const id = readBytes(body, p, body.length, limits.MAX_MSG_ID_BYTES, ERR.MSG_ID_INVALID, 'msg_id');
    return id.value.length > 0 ? Buffer.from(id.value) : undefined;
  } catch {
    return undefined;
  }
}

/** Encodes an envelope body (canonical uvarints) without the length prefix. */
export function encodeEnvelope({ profile_id, msg_type, flags = 0, ts_unix_ms = Date.now(), msg_id, extensions = [], payload = Buffer.alloc(0) }) {
  const ext = Buffer.concat(extensions.map((e) => Buffer.concat([writeUvarint(e.type), writeBytes(e.value)])));
  return Buffer.concat([
    writeUvarint(1),
    writeUvarint(profile_id),
    writeUvarint(msg_type),
    writeUvarint(flags),
    writeUvarint(ts_unix_ms),
    writeBytes(msg_id),
    writeBytes(ext),
    writeBytes(payload),
  ]);
}

/** Prefix + body (core §3). */
export function encodeFrame(env) {
  const body = encodeEnvelope(env);
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(body.length, 0);
  return Buffer.concat([prefix, body]);
}

/**
 * Incremental splitter of a byte stream into frame bodies. `push` returns a list of events:
 * {body} for a whole frame, {error, fatal} for a framing reject. After a fatal error it
 * yields nothing more (the stream cannot be resynchronised).
 */
export class FrameReader {
  constructor(limits = DEFAULT_LIMITS) {
    this.limits = limits;
    this.chunks = [];
    this.size = 0;
    this.dead = false;
  }

  push(chunk) {
    if (this.dead) return [];
    this.chunks.push(chunk);
    this.size += chunk.length;
    const out = [];
    for (;;) {
      if (this.size < 4) break;
      const head = this.peek(4);
      const n = head.readUInt32BE(0);
      if (n === 0) {
        // A zero prefix is a whole (empty) unit: the boundary is intact, so the stream goes on.
        this.take(4);
        out.push({ error: new SwpError(ERR.INVALID_FRAME, 'zero length prefix'), fatal: false });
        continue;
      }
      if (n > this.limits.MAX_FRAME_BYTES) {
        // Decided from the prefix alone, before any body octet is buffered (core §3.1).
        this.dead = true;
        this.chunks = [];
        this.size = 0;
        out.push({ error: new SwpError(ERR.FRAME_TOO_LARGE, `frame length ${n} exceeds ${this.limits.MAX_FRAME_BYTES}`), fatal: true });
        break;
      }
      if (this.size < 4 + n) break;
      this.take(4);
      out.push({ body: this.take(n) });
    }
    return out;
  }

  /** At end of stream: what is left is a truncated prefix or body (core §3). */
  end() {
    if (this.dead || this.size === 0) return [];
    const what = this.size < 4 ? 'length prefix not fully readable' : 'fewer octets than the length prefix announced';
    this.dead = true;
    this.chunks = [];
    this.size = 0;
    return [{ error: new SwpError(ERR.INVALID_FRAME, what), fatal: true }];
  }

  peek(n) {
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.chunks = [all];
    return all.subarray(0, n);
  }

  take(n) {
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const head = Buffer.from(all.subarray(0, n));
    const rest = all.subarray(n);
    this.chunks = rest.length ? [rest] : [];
    this.size -= n;
    return head;
  }
}
