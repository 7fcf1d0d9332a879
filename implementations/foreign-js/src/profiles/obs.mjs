// SWP-OBS (profile 18, swp-obs.md): keeps the trace context a peer sets (OBS_SET) for the
// connection, validates its W3C traceparent (§4, §6), keeps the tracestate octet for octet, and
// answers OBS_GET with the context in effect (OBS_DOC, §5).

import { ERR, ProfileReject } from '../errors.mjs';

const SET = 1, GET = 2, DOC = 3, ERR_T = 4;
const NO_CONTEXT = 'fj.no-context';

export function createConnState() {
  return { current: null };
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const HEX2 = /^[0-9a-f]{2}$/;

/**
 * W3C Trace Context `traceparent`: `version-traceid-parentid-flags`, lower-case hex, version
 * not `ff`, neither id all zeros. Version 00 is exactly 55 characters; a later version is
 * parsed by its first four fields and may go on after a `-` (what a version-00 parser is told
 * to do with a higher version).
 */
export function traceparentValid(tp) {
  if (tp.length < 55) return false;
  const head = tp.slice(0, 55);
  const [version, traceId, parentId, flags, ...more] = head.split('-');
  if (more.length || !HEX2.test(version || '') || !HEX32.test(traceId || '') || !HEX16.test(parentId || '') || !HEX2.test(flags || '')) return false;
  if (version === 'ff' || /^0+$/.test(traceId) || /^0+$/.test(parentId)) return false;
  if (version === '00') return tp.length === 55;
  return tp.length === 55 || tp[55] === '-';
}

function context(m) {
  return { traceparent: m.traceparent, tracestate: m.tracestate, msg_id: m.msg_id, task_id: m.task_id, rpc_id: m.rpc_id };
}

export function handle(ctx, msgType, m) {
  switch (msgType) {
    case SET:
      if (!m.traceparent) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, 'OBS_SET without traceparent');
      if (!traceparentValid(m.traceparent)) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, `traceparent ${JSON.stringify(m.traceparent)} is not a valid W3C traceparent`);
      // Kept verbatim: tracestate entries are never parsed, reordered or rewritten (§4).
      ctx.conn.obs.current = context(m);
      return;
    case GET: {
      const cur = ctx.conn.obs.current;
      if (!m.include_current) return ctx.reply(DOC, {}); // nothing asked for: an empty document
      if (!cur) return ctx.reply(ERR_T, { code: NO_CONTEXT, message: 'no trace context was set on this connection' });
      return ctx.reply(DOC, cur);
    }
    case DOC:
      // We send no OBS_GET, so a document is unsolicited: judged, not kept.
      if (m.traceparent && !traceparentValid(m.traceparent)) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, 'OBS_DOC with an invalid traceparent');
      return;
    case ERR_T:
      return;
  }
}
