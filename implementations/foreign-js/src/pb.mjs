// A small proto3 wire-format codec driven by plain schema objects (profile-payload-encoding-p1.md
// §2): decode validates wire types of known fields, skips unknown fields of every wire type
// (P1 §4), and refuses malformed octets; encode is deterministic (fields in number order,
// defaults omitted, P1 §4 SHOULD).

import { readUvarint, writeUvarint } from './e1.mjs';

export class PbError extends Error {
  constructor(message) {
    super(message);
    this.name = 'PbError';
  }
}

const MAX_DEPTH = 32;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function varint(buf, pos, end) {
  try {
    return readUvarint(buf, pos, end);
  } catch (e) {
    throw new PbError(`malformed varint: ${e.message}`);
  }
}

/** Skips one field value of `wireType` starting at `pos`; returns the next position. */
function skip(buf, pos, end, wireType, fieldNo, depth) {
  switch (wireType) {
    case 0:
      return varint(buf, pos, end).next;
    case 1:
      if (pos + 8 > end) throw new PbError('truncated fixed64');
      return pos + 8;
    case 2: {
      const { value: len, next } = varint(buf, pos, end);
      if (len > BigInt(end - next)) throw new PbError('length-delimited field runs past the end');
      return next + Number(len);
    }
    case 3: {
      // A group: skip fields up to the matching end-group tag.
      if (depth > MAX_DEPTH) throw new PbError('groups nested too deep');
      let p = pos;
      for (;;) {
        if (p >= end) throw new PbError('unterminated group');
        const t = varint(buf, p, end);
        const tag = t.value;
        const wt = Number(tag & 7n);
        const fn = tag >> 3n;
        if (fn === 0n) throw new PbError('field number 0');
        if (wt === 4) {
          if (fn !== BigInt(fieldNo)) throw new PbError('mismatched end-group');
          return t.next;
        }
        p = skip(buf, t.next, end, wt, Number(fn), depth + 1);
      }
    }
    case 5:
      if (pos + 4 > end) throw new PbError('truncated fixed32');
      return pos + 4;
    default:
      throw new PbError(`invalid wire type ${wireType}`);
  }
}

const WIRE = { string: 2, bytes: 2, message: 2, uint64: 0, uint32: 0, bool: 0 };

/**
 * Decodes `buf` against `schema` ({fields: {no: {name, type, repeated?, schema?}}}).
 * Returns a plain object with every known field present (proto3 defaults when absent) plus
 * `$present`, the set of field names written on the wire.
 */
export function decode(schema, buf, depth = 0) {
  if (depth > MAX_DEPTH) throw new PbError('messages nested too deep');
  const out = { $present: new Set() };
  for (const f of Object.values(schema.fields)) out[f.name] = f.repeated ? [] : defaultOf(f);
  let pos = 0;
  const end = buf.length;
  while (pos < end) {
    const t = varint(buf, pos, end);
    const tag = t.value;
    const wt = Number(tag & 7n);
    const fnBig = tag >> 3n;
    if (fnBig === 0n || fnBig > 536870911n) throw new PbError('invalid field number');
    const fn = Number(fnBig);
    if (wt === 4) throw new PbError('unexpected end-group');
    const f = schema.fields[fn];
    if (!f) {
      pos = skip(buf, t.next, end, wt, fn, depth);
      continue;
    }
    if (wt !== WIRE[f.type]) {
      // proto3 packed repeated scalars are not used by any annex field we read.
      throw new PbError(`field ${f.name}: wire type ${wt}, expected ${WIRE[f.type]}`);
    }
    let value;
    if (wt === 0) {
      const v = varint(buf, t.next, end);
      pos = v.next;
      if (f.type === 'uint32') value = Number(v.value & 0xffffffffn);
      else if (f.type === 'bool') value = v.value !== 0n;
      else value = v.value; // uint64 as BigInt
    } else {
      const { value: len, next } = varint(buf, t.next, end);
      if (len > BigInt(end - next)) throw new PbError(`field ${f.name} runs past the end`);
      const raw = buf.subarray(next, next + Number(len));
      pos = next + Number(len);
      if (f.type === 'string') {
        try {
          value = utf8.decode(raw);
        } catch {
          throw new PbError(`field ${f.name} is not valid UTF-8`);
        }
      } else if (f.type === 'bytes') value = Buffer.from(raw);
      else value = decode(f.schema, raw, depth + 1);
    }
    out.$present.add(f.name);
    // A non-repeated field written twice: the last occurrence wins (for embedded messages
    // proto3 would merge; no annex message of ours is sent in parts, README "P1").
    if (f.repeated) out[f.name].push(value);
    else out[f.name] = value;
  }
  return out;
}

function defaultOf(f) {
  switch (f.type) {
    case 'string':
      return '';
    case 'bytes':
      return Buffer.alloc(0);
    case 'uint64':
      return 0n;
    case 'uint32':
      return 0;
    case 'bool':
      return false;
    default:
      return null;
  }
}

function tagOf(no, wt) {
  return writeUvarint((BigInt(no) << 3n) | BigInt(wt));
}

/** Encodes `obj` against `schema`; proto3 defaults are not written (deterministic output). */
export function encode(schema, obj) {
  const parts = [];
  const nos = Object.keys(schema.fields).map(Number).sort((a, b) => a - b);
  for (const no of nos) {
    const f = schema.fields[no];
    const v = obj[f.name];
    if (v === undefined || v === null) continue;
    const values = f.repeated ? v : [v];
    for (const one of values) {
      const b = encodeValue(f, one, !f.repeated);
      if (b) parts.push(tagOf(no, WIRE[f.type]), b);
    }
  }
  return Buffer.concat(parts);
}

function encodeValue(f, v, omitDefault) {
  switch (f.type) {
    case 'string': {
      const b = Buffer.from(String(v), 'utf8');
      if (omitDefault && b.length === 0) return null;
      return Buffer.concat([writeUvarint(b.length), b]);
    }
    case 'bytes': {
      const b = Buffer.isBuffer(v) ? v : Buffer.from(String(v), 'utf8');
      if (omitDefault && b.length === 0) return null;
      return Buffer.concat([writeUvarint(b.length), b]);
    }
    case 'uint64':
    case 'uint32': {
      const n = BigInt(v);
      if (omitDefault && n === 0n) return null;
      return writeUvarint(n);
    }
    case 'bool':
      if (omitDefault && !v) return null;
      return writeUvarint(v ? 1 : 0);
    case 'message': {
      const b = encode(f.schema, v);
      return Buffer.concat([writeUvarint(b.length), b]);
    }
    default:
      throw new Error(`unknown type ${f.type}`);
  }
}
