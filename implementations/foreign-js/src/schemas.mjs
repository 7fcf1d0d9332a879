// The P1 schemas of the five profiles, transcribed field by field from the proto annexes
// (swp_agdisc.proto, swp_tooldisc.proto, swp_cred.proto, swp_policyhint.proto, swp_relay.proto),
// and the `Payload` wrapper form this endpoint speaks (README "P1 payload form").

import { decode, encode, PbError } from './pb.mjs';

const msg = (fields) => ({ fields });
const s = (name) => ({ name, type: 'string' });
const b = (name) => ({ name, type: 'bytes' });
const u64 = (name) => ({ name, type: 'uint64' });
const u32 = (name) => ({ name, type: 'uint32' });
const bool = (name) => ({ name, type: 'bool' });
const m = (name, schema, repeated = false) => ({ name, type: 'message', schema, repeated });

export const AGDISC = {
  id: 10,
  name: 'agdisc',
  messages: {
    1: ['get', msg({ 1: s('agent_id'), 2: s('if_none_match') })],
    2: ['doc', msg({ 1: s('agent_id'), 2: s('schema_revision'), 3: b('card_payload'), 4: s('etag'), 5: u64('max_age_ms') })],
    3: ['not_modified', msg({ 1: s('agent_id'), 2: s('etag') })],
    4: ['err', msg({ 1: s('code'), 2: s('message') })],
  },
  errType: 4,
};

const ToolDescriptor = msg({ 1: s('tool_id'), 2: s('name'), 3: s('version'), 4: s('schema_ref'), 5: b('descriptor_payload') });
export const TOOLDISC = {
  id: 11,
  name: 'tooldisc',
  messages: {
    1: ['list_req', msg({ 1: u32('page_size'), 2: s('page_token'), 3: s('filter') })],
    2: ['list_resp', msg({ 1: m('tools', ToolDescriptor, true), 2: s('next_page_token') })],
    3: ['get_req', msg({ 1: s('tool_id'), 2: s('version') })],
    4: ['get_resp', msg({ 1: m('tool', ToolDescriptor) })],
    5: ['err', msg({ 1: s('code'), 2: s('message') })],
  },
  errType: 5,
};

export const CRED = {
  id: 15,
  name: 'cred',
  messages: {
    1: ['present', msg({ 1: s('cred_type'), 2: b('credential'), 3: b('chain_id') })],
    2: ['delegate', msg({ 1: b('chain_id'), 2: b('delegation'), 3: u64('expires_at_unix_ms') })],
    3: ['revoke', msg({ 1: b('chain_id'), 2: s('reason') })],
    4: ['err', msg({ 1: s('code'), 2: s('message') })],
  },
  errType: 4,
};

const Constraint = msg({ 1: s('key'), 2: s('value'), 3: s('mode'), 4: s('scope_ref') });
export const POLICYHINT = {
  id: 16,
  name: 'policyhint',
  messages: {
    1: ['hint_set', msg({ 1: m('constraints', Constraint, true) })],
    2: ['hint_ack', msg({ 1: s('ack_id') })],
    3: ['violation', msg({ 1: s('key'), 2: s('scope_ref'), 3: s('reason_code') })],
    4: ['err', msg({ 1: s('code'), 2: s('message') })],
  },
  errType: 4,
};

export const RPC = {
  id: 12,
  name: 'rpc',
  messages: {
    1: ['req', msg({ 1: b('rpc_id'), 2: s('method'), 3: b('params'), 4: s('idempotency_key') })],
    2: ['resp', msg({ 1: b('rpc_id'), 2: b('result') })],
    3: ['err', msg({ 1: b('rpc_id'), 2: s('error_code'), 3: bool('retryable'), 4: s('error_message') })],
    4: ['stream_item', msg({ 1: b('rpc_id'), 2: u64('seq_no'), 3: b('item'), 4: bool('is_terminal') })],
    5: ['cancel', msg({ 1: b('rpc_id'), 2: s('reason') })],
  },
  errType: 3,
  // RPC_ERR is a call's terminal outcome, not a refusal of a frame: profile rejects of SWP-RPC
  // go out as core error frames (README "SWP-RPC").
  rejectsAsCoreErrors: true,
};

const EventRecord = msg({
  1: s('event_id'), 2: s('event_type'), 3: s('severity'), 4: u64('ts_unix_ms'),
  5: b('msg_id'), 6: b('task_id'), 7: b('rpc_id'), 8: b('body'),
});
export const EVENTS = {
  id: 13,
  name: 'events',
  messages: {
    1: ['publish', msg({ 1: m('event', EventRecord) })],
    2: ['subscribe', msg({ 1: s('filter') })],
    3: ['unsubscribe', msg({ 1: s('subscription_id') })],
    4: ['batch', msg({ 1: m('events', EventRecord, true) })],
    5: ['err', msg({ 1: s('code'), 2: s('message') })],
  },
  errType: 5,
};

export const STATE = {
  id: 17,
  name: 'state',
  messages: {
    1: ['put', msg({ 1: b('state_id'), 2: b('blob'), 3: { name: 'parent_ids', type: 'bytes', repeated: true }, 4: b('metadata') })],
    2: ['get', msg({ 1: b('state_id') })],
    3: ['delta', msg({ 1: b('state_id'), 2: b('delta'), 3: { name: 'parent_ids', type: 'bytes', repeated: true } })],
    4: ['err', msg({ 1: s('code'), 2: s('message') })],
  },
  errType: 4,
};

export const OBS = {
  id: 18,
  name: 'obs',
  messages: {
    1: ['set', msg({ 1: s('traceparent'), 2: s('tracestate'), 3: b('msg_id'), 4: b('task_id'), 5: b('rpc_id') })],
    2: ['get', msg({ 1: bool('include_current') })],
    3: ['doc', msg({ 1: s('traceparent'), 2: s('tracestate'), 3: b('msg_id'), 4: b('task_id'), 5: b('rpc_id') })],
    4: ['err', msg({ 1: s('code'), 2: s('message') })],
  },
  errType: 4,
};

export const RELAY = {
  id: 19,
  name: 'relay',
  messages: {
    1: ['publish', msg({ 1: b('delivery_id'), 2: s('topic'), 3: b('payload'), 4: u64('ttl_ms') })],
    2: ['ack', msg({ 1: b('delivery_id') })],
    3: ['nack', msg({ 1: b('delivery_id'), 2: bool('retryable'), 3: s('reason_code') })],
    4: ['status', msg({ 1: b('delivery_id'), 2: s('state'), 3: u32('attempt_count') })],
    5: ['err', msg({ 1: s('code'), 2: s('message') })],
  },
  errType: 5,
};

function wrapperSchema(profile) {
  if (!profile.$wrapper) {
    const fields = {};
    for (const [no, [name, schema]] of Object.entries(profile.messages)) fields[no] = m(name, schema);
    profile.$wrapper = msg(fields);
  }
  return profile.$wrapper;
}

/**
 * Decodes a payload in the wrapper form: the annex's `Payload` whose set member is the one
 * numbered like the msg_type. Any other member set, or none, is a payload that does not decode
 * as the message of its msg_type (P1 §2) and throws PbError.
 */
export function decodePayload(profile, msgType, buf, form = 'wrapper') {
  const entry = profile.messages[msgType];
  if (!entry) throw new Error(`no message for msg_type ${msgType}`);
  if (form === 'message') return decode(entry[1], buf);
  const w = decode(wrapperSchema(profile), buf);
  const present = [...w.$present];
  if (present.length === 0) throw new PbError('the Payload wrapper has no member set');
  if (present.length > 1 || present[0] !== entry[0]) {
    throw new PbError(`the Payload member set (${present.join(', ')}) is not ${entry[0]}, the member of msg_type ${msgType}`);
  }
  return w[entry[0]];
}

/** Encodes `obj` as the message of `msgType`, wrapped in `Payload` (or bare, form 'message'). */
export function encodePayload(profile, msgType, obj, form = 'wrapper') {
  const [name, schema] = profile.messages[msgType];
  if (form === 'message') return encode(schema, obj);
  return encode(wrapperSchema(profile), { [name]: obj });
}

export const PROFILES = { 10: AGDISC, 11: TOOLDISC, 12: RPC, 13: EVENTS, 15: CRED, 16: POLICYHINT, 17: STATE, 18: OBS, 19: RELAY };
