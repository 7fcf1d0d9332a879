// SWP-AGDISC (profile 10, swp-agdisc.md): serves Agent Cards from the catalog, with ETag
// validators and AGDISC_NOT_MODIFIED (§5), deterministic error reasons (§6), and judges cards
// and not-modified answers a peer sends (§4, §7).

import { AGENTS } from '../catalog.mjs';
import { ERR, ProfileReject } from '../errors.mjs';

const GET = 1, DOC = 2, NOT_MODIFIED = 3, ERR_T = 4;

/** §4/§7: a card declares its revision, its agent id and a non-empty body. */
export function checkDoc(doc) {
  if (!doc.agent_id) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, 'AGDISC_DOC without agent_id');
  if (!doc.schema_revision) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, 'AGDISC_DOC without schema_revision');
  if (doc.card_payload.length === 0) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, 'AGDISC_DOC with an empty card');
}

export function handle(ctx, msgType, m) {
  switch (msgType) {
    case GET:
      return get(ctx, m);
    case DOC:
      // This endpoint never sends a GET, so a card is unsolicited: it is judged (an invalid one
      // is refused) and otherwise not kept.
      checkDoc(m);
      return;
    case NOT_MODIFIED:
      // A not-modified answers a conditional GET of ours; we send none, so nobody asked (§5).
      if (!m.agent_id || !m.etag) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, 'AGDISC_NOT_MODIFIED without agent_id or etag');
      throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, 'AGDISC_NOT_MODIFIED answers no conditional GET of this endpoint');
    case ERR_T:
      return; // an error report changes nothing here
  }
}

function get(ctx, m) {
  if (!m.agent_id) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, 'AGDISC_GET without agent_id');
  const id = m.agent_id;
  const c = AGENTS.codes;
  if (AGENTS.unauthorized.has(id)) return ctx.reply(ERR_T, { code: c.unauthorized, message: `the card of ${id} is not disclosed to this peer` });
  if (AGENTS.internal.has(id)) return ctx.reply(ERR_T, { code: c.internal, message: `the card store failed to look up ${id}` });
  const bad = AGENTS.invalid.get(id);
  if (bad) return ctx.reply(ERR_T, { code: c.invalidCard, message: `the stored card of ${id} is invalid` });
  const card = AGENTS.cards.get(id);
  if (!card) return ctx.reply(ERR_T, { code: c.notFound, message: `no card for ${id}` });
  if (m.if_none_match && m.if_none_match === card.etag) {
    return ctx.reply(NOT_MODIFIED, { agent_id: id, etag: card.etag });
  }
  return ctx.reply(DOC, card);
}
