// SWP-TOOLDISC (profile 11, swp-tooldisc.md): lists (paged, filtered) and gets tool descriptors
// from the catalog (§5), and judges descriptors a peer sends: required fields and schema-ref
// validity (§4, §6).

import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, TOOLS, TOOL_CODES, pageToken, parsePageToken } from '../catalog.mjs';
import { ERR, ProfileReject } from '../errors.mjs';

const LIST_REQ = 1, LIST_RESP = 2, GET_REQ = 3, GET_RESP = 4, ERR_T = 5;

const HASH_HEX = { sha256: 64, sha384: 96, sha512: 128 };

/**
 * §4: "Schema references MUST be resolvable (URI or content hash form)". A content hash is
 * `sha256:`, `sha384:` or `sha512:` and that digest's length in lower- or upper-case hex; any
 * other reference must be an absolute URI (RFC 3986 scheme, ':', a non-empty rest with no
 * white space, control characters or characters RFC 3986 never allows unescaped).
 */
export function schemaRefValid(ref) {
  const colon = ref.indexOf(':');
  if (colon <= 0) return false;
  const scheme = ref.slice(0, colon).toLowerCase();
  const rest = ref.slice(colon + 1);
  if (scheme in HASH_HEX) return rest.length === HASH_HEX[scheme] && /^[0-9a-fA-F]+$/.test(rest);
  if (!/^[A-Za-z][A-Za-z0-9+.-]*$/.test(ref.slice(0, colon))) return false;
  if (rest.length === 0) return false;
  return /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/.test(rest) && !/%(?![0-9A-Fa-f]{2})/.test(rest);
}

export function checkDescriptor(d) {
  if (!d) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, 'no tool descriptor');
  for (const f of ['tool_id', 'name', 'version', 'schema_ref']) {
    if (!d[f]) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, `tool descriptor without ${f}`);
  }
  if (!schemaRefValid(d.schema_ref)) {
    throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, `schema_ref ${JSON.stringify(d.schema_ref)} is neither an absolute URI nor a content hash`);
  }
}

/** Filter syntax: empty (all), `id=<tool_id>` (exact) or `name~<text>` (case-insensitive substring). */
function compileFilter(f) {
  if (f === '') return () => true;
  if (f.startsWith('id=') && f.length > 3) return (t) => t.tool_id === f.slice(3);
  if (f.startsWith('name~') && f.length > 5) {
    const needle = f.slice(5).toLowerCase();
    return (t) => t.name.toLowerCase().includes(needle);
  }
  return null;
}

export function handle(ctx, msgType, m) {
  switch (msgType) {
    case LIST_REQ:
      return list(ctx, m);
    case GET_REQ:
      return get(ctx, m);
    case LIST_RESP: {
      // Unsolicited (this endpoint lists nobody): judged, not kept.
      const seen = new Set();
      for (const d of m.tools) {
        checkDescriptor(d);
        const key = `${d.tool_id}\u0000${d.version}`;
        if (seen.has(key)) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, `two descriptors for ${d.tool_id} ${d.version} on one page`);
        seen.add(key);
      }
      return;
    }
    case GET_RESP:
      return checkDescriptor(m.tool);
    case ERR_T:
      return;
  }
}

function list(ctx, m) {
  const match = compileFilter(m.filter);
  if (!match) return ctx.reply(ERR_T, { code: TOOL_CODES.badFilter, message: `filter ${JSON.stringify(m.filter)}: use id=<tool_id> or name~<text>` });
  let offset = 0;
  if (m.page_token) {
    const t = parsePageToken(m.page_token);
    if (!t || t.filter !== m.filter) return ctx.reply(ERR_T, { code: TOOL_CODES.badPageToken, message: 'page_token was not issued for this listing' });
    offset = t.offset;
  }
  const size = Math.min(m.page_size || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const all = TOOLS.filter(match);
  const page = all.slice(offset, offset + size);
  const next = offset + size < all.length ? pageToken(offset + size, m.filter) : '';
  ctx.reply(LIST_RESP, { tools: page, next_page_token: next });
}

function get(ctx, m) {
  if (!m.tool_id) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, 'TOOLDISC_GET_REQ without tool_id');
  const tool = TOOLS.find((t) => t.tool_id === m.tool_id);
  if (!tool) return ctx.reply(ERR_T, { code: TOOL_CODES.notFound, message: `no tool ${m.tool_id}` });
  if (m.version && m.version !== tool.version) {
    return ctx.reply(ERR_T, { code: TOOL_CODES.versionNotFound, message: `${m.tool_id} has no version ${m.version}` });
  }
  ctx.reply(GET_RESP, { tool });
}
