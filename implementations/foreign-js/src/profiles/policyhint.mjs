// SWP-POLICYHINT (profile 16, swp-policyhint.md): takes constraint sets (§4), keeps the
// constraints in effect per connection and scope, reports unmet MUST constraints and unknown
// keys as POLICY_VIOLATION (§5), then acknowledges the set.

import { DEFAULT_SCOPE, POLICY_CODES, POLICY_KEYS } from '../catalog.mjs';
import { ERR, ProfileReject } from '../errors.mjs';

const HINT_SET = 1, HINT_ACK = 2, VIOLATION = 3, ERR_T = 4;
const MODES = new Set(['MUST', 'SHOULD', 'MAY']);
const MAX_IN_EFFECT = 10_000;

export function createConnState() {
  return { inEffect: new Map(), acks: 0 };
}

const invalid = (msg) => new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, msg);

export function handle(ctx, msgType, m) {
  switch (msgType) {
    case HINT_SET:
      return hintSet(ctx, m);
    case VIOLATION:
      if (!m.key || !m.scope_ref || !m.reason_code) throw invalid('POLICY_VIOLATION needs key, scope_ref and reason_code (§5)');
      return;
    case HINT_ACK:
    case ERR_T:
      return;
  }
}

function hintSet(ctx, m) {
  // Validate the whole set before any of it takes effect.
  for (const c of m.constraints) {
    if (!c.key) throw invalid('a constraint without key');
    if (!MODES.has(c.mode)) throw invalid(`constraint ${c.key}: mode ${JSON.stringify(c.mode)} is not MUST, SHOULD or MAY`);
  }
  const state = ctx.conn.policyhint;
  const violations = [];
  const decided = new Set();
  for (const c of m.constraints) {
    const scope = c.scope_ref || DEFAULT_SCOPE;
    const slot = `${scope}\u0000${c.key}`;
    // Conflicts inside one set: the first constraint on a key and scope wins (README).
    if (decided.has(slot)) continue;
    decided.add(slot);
    const satisfiable = POLICY_KEYS[c.key];
    if (!satisfiable) {
      // Unknown keys are dropped and reported (§4: behaviour defined by implementation policy).
      violations.push({ key: c.key, scope_ref: scope, reason_code: POLICY_CODES.unknownKey });
      continue;
    }
    if (state.inEffect.size >= MAX_IN_EFFECT && !state.inEffect.has(slot)) throw new ProfileReject(ERR.SECURITY_POLICY, 'too many constraints in effect');
    state.inEffect.set(slot, { key: c.key, value: c.value, mode: c.mode, scope });
    // Mode semantics (§6): only MUST binds, so only an unmet MUST is a violation.
    if (c.mode === 'MUST' && !satisfiable(c.value)) {
      violations.push({ key: c.key, scope_ref: scope, reason_code: POLICY_CODES.unmet });
    }
  }
  for (const v of violations) ctx.originate(VIOLATION, v);
  state.acks += 1;
  ctx.reply(HINT_ACK, { ack_id: `fj-ack-${state.acks}` });
}
