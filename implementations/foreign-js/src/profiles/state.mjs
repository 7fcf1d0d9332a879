// SWP-STATE (profile 17, swp-state.md): an immutable, content-addressed state store shared by
// every connection. A state's id is the SHA-256 of its blob, parents and metadata in this
// endpoint's own `fjs1:` form (§4 SHOULD); parents must exist when declared (§4 MUST), so the
// references form a DAG; deltas are opaque (§4) and addressed the same way.

import { createHash } from 'node:crypto';
import { ERR, ProfileReject } from '../errors.mjs';

const PUT = 1, GET = 2, DELTA = 3, ERR_T = 4;
const MAX_STATES = 100_000;
const MAX_PARENTS = 64;
const ID_RE = /^fjs1:[A-Za-z0-9_-]{43}$/;

export function createShared() {
  return { states: new Map() }; // id (latin1 string) -> {kind, state_id, blob|delta, parent_ids, metadata}
}

function u32(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
}
const field = (b) => [u32(b.length), b];

/** The id of a state (`put`) or a delta: `fjs1:` and the base64url SHA-256 of its content. */
export function stateId(kind, body, parents, metadata = Buffer.alloc(0)) {
  const h = createHash('sha256');
  h.update(kind === 'put' ? 'fj-state/1\0' : 'fj-state-delta/1\0');
  for (const part of [...field(body), u32(parents.length), ...parents.flatMap(field), ...field(metadata)]) h.update(part);
  return Buffer.from('fjs1:' + h.digest('base64url'));
}

export const idWellFormed = (id) => ID_RE.test(id.toString('latin1'));
const invalid = (msg) => new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, msg);

function checkParents(store, parents) {
  if (parents.length > MAX_PARENTS) throw invalid(`more than ${MAX_PARENTS} parents`);
  const seen = new Set();
  for (const p of parents) {
    if (!idWellFormed(p)) throw invalid('a parent id is not an fjs1 id');
    const k = p.toString('latin1');
    if (seen.has(k)) throw invalid('a parent is named twice');
    seen.add(k);
    if (!store.has(k)) throw invalid(`parent ${k} does not exist (parents must exist when declared)`);
  }
}

function store(ctx, record) {
  const states = ctx.shared.state.states;
  const k = record.state_id.toString('latin1');
  if (states.has(k)) return; // the same content again: ids cover all of it, so a duplicate
  if (states.size >= MAX_STATES) throw new ProfileReject(ERR.SECURITY_POLICY, 'the state store is full');
  states.set(k, record);
}

export function handle(ctx, msgType, m) {
  const states = ctx.shared.state.states;
  switch (msgType) {
    case PUT: {
      if (!idWellFormed(m.state_id)) throw invalid('state_id is not an fjs1 id');
      checkParents(states, m.parent_ids);
      const want = stateId('put', m.blob, m.parent_ids, m.metadata);
      if (!want.equals(m.state_id)) throw invalid('state_id does not match the content (blob, parents and metadata)');
      return store(ctx, { kind: 'put', state_id: m.state_id, blob: m.blob, parent_ids: m.parent_ids, metadata: m.metadata });
    }
    case DELTA: {
      if (!idWellFormed(m.state_id)) throw invalid('state_id is not an fjs1 id');
      if (m.parent_ids.length === 0) throw invalid('a delta names the state(s) it applies to');
      checkParents(states, m.parent_ids);
      const want = stateId('delta', m.delta, m.parent_ids);
      if (!want.equals(m.state_id)) throw invalid('state_id does not match the delta and its parents');
      return store(ctx, { kind: 'delta', state_id: m.state_id, delta: m.delta, parent_ids: m.parent_ids });
    }
    case GET: {
      if (m.state_id.length === 0) throw invalid('STATE_GET without state_id');
      const rec = states.get(m.state_id.toString('latin1'));
      if (!rec) return ctx.reply(ERR_T, { code: ERR.NOT_FOUND, message: 'no such state' });
      if (rec.kind === 'delta') return ctx.reply(DELTA, { state_id: rec.state_id, delta: rec.delta, parent_ids: rec.parent_ids });
      return ctx.reply(PUT, { state_id: rec.state_id, blob: rec.blob, parent_ids: rec.parent_ids, metadata: rec.metadata });
    }
    case ERR_T:
      return;
  }
}
