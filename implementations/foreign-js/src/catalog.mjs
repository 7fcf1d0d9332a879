// The data this endpoint serves: agents and cards (SWP-AGDISC), tools (SWP-TOOLDISC), the
// credential issuer key (SWP-CRED), the policy keys it knows (SWP-POLICYHINT) and the relay's
// schedule (SWP-RELAY). Every value a manifest declares is derived here, and
// `node bin/swp-fj.mjs params` prints them.

import { createHash, createHmac } from 'node:crypto';
import { stateId } from './profiles/state.mjs';

const sha256hex = (b) => createHash('sha256').update(b).digest('hex');

// ---- SWP-AGDISC -------------------------------------------------------------------------
const alphaCard = Buffer.from(
  JSON.stringify({
    agent: 'fj.agent.alpha',
    endpoints: ['swp+tcp://127.0.0.1/fj.agent.alpha'],
    capabilities: ['swp.agdisc', 'swp.tooldisc', 'swp.cred', 'swp.policyhint', 'swp.relay'],
  }),
);

/** An agent's card; `etag` is a strong validator derived from the card octets and revision. */
function card(agentId, revision, payload, maxAgeMs) {
  const etag = `"fj-${sha256hex(Buffer.concat([Buffer.from(revision + '\n'), payload])).slice(0, 20)}"`;
  return { agent_id: agentId, schema_revision: revision, card_payload: payload, etag, max_age_ms: maxAgeMs };
}

export const AGENTS = {
  cards: new Map([['fj.agent.alpha', card('fj.agent.alpha', 'fj-card/1', alphaCard, 2000)]]),
  // A stored card that lost its revision: served as an invalid-card error, never as a card.
  invalid: new Map([['fj.agent.broken', { agent_id: 'fj.agent.broken', schema_revision: '', card_payload: Buffer.from('{}') }]]),
  unauthorized: new Set(['fj.agent.private']),
  internal: new Set(['fj.agent.flaky']),
  codes: {
    notFound: 'fj.agent-not-found',
    invalidCard: 'fj.invalid-card',
    unauthorized: 'fj.unauthorized',
    internal: 'fj.internal',
  },
};

// ---- SWP-TOOLDISC -----------------------------------------------------------------------
const clockSchema = Buffer.from('{"type":"object","properties":{"tz":{"type":"string"}}}');
export const TOOLS = [
  {
    tool_id: 'fj.echo',
    name: 'Echo',
    version: '1.0.0',
    schema_ref: 'https://schemas.foreign-js.example/tools/echo-1.json',
    descriptor_payload: Buffer.from('{"hint":{"cost":"free","binding":false}}'),
  },
  {
    tool_id: 'fj.sum',
    name: 'Sum',
    version: '2.1.0',
    schema_ref: 'urn:foreign-js:schema:sum:2',
    descriptor_payload: Buffer.from('{"hint":{"rate":"10/s","binding":false}}'),
  },
  {
    tool_id: 'fj.clock',
    name: 'Clock',
    version: '0.3.0',
    schema_ref: `sha256:${sha256hex(clockSchema)}`,
    descriptor_payload: Buffer.alloc(0),
  },
];
export const TOOL_CODES = {
  notFound: 'fj.tool-not-found',
  versionNotFound: 'fj.version-not-found',
  badFilter: 'fj.bad-filter',
  badPageToken: 'fj.bad-page-token',
};
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

// ---- SWP-CRED ---------------------------------------------------------------------------
export const CRED_POLICY = {
  type: 'fj.hmac-token/1',
  issuerKey: Buffer.from('foreign-js demo issuer key: not a secret, a test fixture'),
  maxChainLength: 4,
  maxTtlMs: 3_600_000,
};
/**
 * A credential of type fj.hmac-token/1 for `subject` (an identity):
 * `fjt1.<base64url of the subject>.<first 32 hex digits of HMAC-SHA256(issuer key, subject)>`.
 */
export function issueCredential(subject) {
  const mac = createHmac('sha256', CRED_POLICY.issuerKey).update(subject).digest('hex').slice(0, 32);
  return `fjt1.${Buffer.from(subject).toString('base64url')}.${mac}`;
}

/** The harness's client identities as this endpoint names them (subject DN form). */
export const HARNESS_IDENTITY = 'CN=harness-client';
export const HARNESS_SECOND_IDENTITY = 'CN=harness-client-2';

// ---- SWP-POLICYHINT ---------------------------------------------------------------------
/** Known keys and whether this endpoint can satisfy a value of them. */
export const POLICY_KEYS = {
  'fj.region': (v) => v === 'eu-west-1',
  'fj.max-response-ms': (v) => /^[0-9]{1,9}$/.test(v) && Number(v) >= 10,
};
export const POLICY_CODES = { unmet: 'fj.unmet', unknownKey: 'fj.unknown-key' };
export const DEFAULT_SCOPE = 'fj:connection';

// ---- SWP-RPC ----------------------------------------------------------------------------
export const RPC_POLICY = {
  methods: {
    'js.foreign.echo': 'echo',
    'js.foreign.counter': 'counter',
    'js.foreign.fail': 'fail',
    'js.foreign.retry': 'retry',
    'js.foreign.stream': 'stream',
    'js.foreign.slow': 'slow',
    'js.foreign.gated': 'gated',
    'js.foreign.owner': 'owner',
  },
  replayWindowMs: 4000,
  cancelCode: 'cancelled',
};

// ---- SWP-RELAY --------------------------------------------------------------------------
export const RELAY_POLICY = {
  loopTopic: 'fj.loop',
  gatedTopic: 'fj.restricted',
  maxAttempts: 3,
  backoffMs: 500,
  deadLetterAfterMs: 600,
  dedupeWindowMs: 24 * 3600 * 1000,
  reasons: { exhausted: 'fj.retries-exhausted', rejected: 'fj.consumer-rejected', noRoute: 'fj.no-route', expired: 'fj.ttl-expired' },
};

/** The manifest `params` this catalog implies (printed by `swp-fj params`). */
export function manifestParams() {
  const a = AGENTS.cards.get('fj.agent.alpha');
  const t = TOOLS[0];
  return {
    AGDISC_AGENT_ID: a.agent_id,
    AGDISC_SCHEMA_REVISION: a.schema_revision,
    AGDISC_CARD: a.card_payload.toString('utf8'),
    AGDISC_ETAG: a.etag,
    AGDISC_NOT_MODIFIED_ETAG: a.etag,
    AGDISC_MAX_AGE_MS: a.max_age_ms,
    AGDISC_MISSING_AGENT_ID: 'fj.agent.nobody',
    AGDISC_NOT_FOUND_CODE: AGENTS.codes.notFound,
    AGDISC_INVALID_AGENT_ID: 'fj.agent.broken',
    AGDISC_INVALID_CARD_CODE: AGENTS.codes.invalidCard,
    AGDISC_UNAUTHORIZED_AGENT_ID: 'fj.agent.private',
    AGDISC_UNAUTHORIZED_CODE: AGENTS.codes.unauthorized,
    AGDISC_INTERNAL_AGENT_ID: 'fj.agent.flaky',
    AGDISC_INTERNAL_CODE: AGENTS.codes.internal,
    TOOLDISC_TOOL_ID: t.tool_id,
    TOOLDISC_TOOL_NAME: t.name,
    TOOLDISC_TOOL_VERSION: t.version,
    TOOLDISC_TOOL_SCHEMA_REF: t.schema_ref,
    TOOLDISC_TOOL_PAYLOAD: t.descriptor_payload.toString('utf8'),
    TOOLDISC_MISSING_TOOL_ID: 'fj.nope',
    TOOLDISC_NOT_FOUND_CODE: TOOL_CODES.notFound,
    TOOLDISC_PAGE_TOKEN: pageToken(1, ''),
    TOOLDISC_FILTER: `id=${t.tool_id}`,
    TOOLDISC_CONTENT_HASH_FORMS: 1,
    CRED_TYPE: CRED_POLICY.type,
    CRED_CREDENTIAL: issueCredential(HARNESS_IDENTITY),
    CRED_SECOND_CREDENTIAL: issueCredential(HARNESS_SECOND_IDENTITY),
    CRED_OTHER_CREDENTIAL: issueCredential('CN=someone-else'),
    CRED_INVALID_CREDENTIAL: `fjt1.${Buffer.from(HARNESS_IDENTITY).toString('base64url')}.00000000000000000000000000000000`,
    CRED_UNSUPPORTED_TYPE: 'x509-der',
    CRED_MAX_CHAIN_LENGTH: CRED_POLICY.maxChainLength,
    CRED_MAX_TTL_MS: CRED_POLICY.maxTtlMs,
    CRED_TTL_CAPPED: 1,
    CRED_CHAIN_EXPIRES_WITH_ENTRY: 1,
    CRED_REVOKE_REASON: 'key-compromise',
    ...stateParams(),
    RPC_ECHO_METHOD: 'js.foreign.echo',
    RPC_FAIL_METHOD: 'js.foreign.fail',
    RPC_RETRY_METHOD: 'js.foreign.retry',
    RPC_COUNTER_METHOD: 'js.foreign.counter',
    RPC_STREAM_METHOD: 'js.foreign.stream',
    RPC_STREAM_PARAMS: '3',
    RPC_STREAM_ITEMS: 3,
    RPC_SLOW_METHOD: 'js.foreign.slow',
    RPC_SLOW_PARAMS: '1000',
    RPC_CANCEL_CODE: RPC_POLICY.cancelCode,
    RPC_GATED_METHOD: 'js.foreign.gated',
    RPC_OWNER_METHOD: 'js.foreign.owner',
    RPC_REPLAY_WINDOW_MS: RPC_POLICY.replayWindowMs,
    RPC_REPLAY_WHILE_RUNNING: 1,
    RPC_KEY_FREED_AFTER_WINDOW: 1,
  };
}

/** The ids of the states the SWP-STATE vectors name (README "SWP-STATE"). */
function stateParams() {
  const t = (x) => Buffer.from(x);
  const id = (blob, parents = [], meta = '') => stateId('put', t(blob), parents, t(meta));
  const root = id('swp-test root');
  const child = id('swp-test child', [root]);
  const missing = id('swp-test missing');
  const txt = (b) => b.toString('latin1');
  return {
    STATE_ROOT_ID: txt(root),
    STATE_CHILD_ID: txt(child),
    STATE_LEAF_ID: txt(id('swp-test leaf', [child, root])),
    STATE_DELTA_ID: txt(stateId('delta', Buffer.from('00ff80fe7f0102c3', 'hex'), [root])),
    STATE_DELTA_SHORT_ID: txt(stateId('delta', Buffer.from('0102', 'hex'), [root])),
    STATE_DELTA_LONG_ID: txt(stateId('delta', t('swp-conform delta content, deliberately longer than a 32 or 64 octet state id.'), [root])),
    STATE_MISSING_ID: txt(missing),
    STATE_ORPHAN_ID: txt(id('swp-test orphan', [missing])),
    STATE_META_ID: txt(id('swp-test meta', [], 'swp-conform metadata that is deliberately longer than the state id and the blob put together')),
    STATE_WRONG_ID: txt(id('foreign-js: a state no vector stores')),
    STATE_MALFORMED_ID: 'fjs1:short',
  };
}

/** Opaque page cursor: the offset and the filter it belongs to, so a cursor cannot switch filters. */
export function pageToken(offset, filter) {
  return 'fjp.' + Buffer.from(JSON.stringify([offset, filter])).toString('base64url');
}
export function parsePageToken(tok) {
  if (!tok.startsWith('fjp.')) return null;
  try {
    const v = JSON.parse(Buffer.from(tok.slice(4), 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && Number.isSafeInteger(v[0]) && v[0] >= 0 && typeof v[1] === 'string') {
      return { offset: v[0], filter: v[1] };
    }
  } catch {
    /* not one of ours */
  }
  return null;
}
