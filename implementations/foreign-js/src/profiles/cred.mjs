// SWP-CRED (profile 15, swp-cred.md): takes presented credentials of the one type it supports
// (fj.hmac-token/1, checked against the issuer key), opens delegation chains named by
// chain_id, extends them under a length bound and bounded, checked expiry (§4), and revokes
// them (§5). Chains live in one process-wide namespace (README "SWP-CRED").

import { timingSafeEqual } from 'node:crypto';
import { CRED_POLICY, issueCredential } from '../catalog.mjs';
import { ERR, ProfileReject } from '../errors.mjs';

const PRESENT = 1, DELEGATE = 2, REVOKE = 3, ERR_T = 4;
const MAX_CHAINS = 100_000;

export function createShared() {
  return { chains: new Map() };
}

const policy = (msg) => new ProfileReject(ERR.SECURITY_POLICY, msg);
const invalid = (msg) => new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, msg);

/**
 * The subject of `octets` when they are a credential of fj.hmac-token/1 that the issuer key
 * signed, else null.
 */
export function credentialSubject(octets) {
  const text = octets.toString('utf8');
  const m = /^fjt1\.([A-Za-z0-9_-]{1,344})\.([0-9a-f]{32})$/.exec(text);
  if (!m) return null;
  const subject = Buffer.from(m[1], 'base64url').toString('utf8');
  const want = Buffer.from(issueCredential(subject));
  return want.length === octets.length && timingSafeEqual(want, octets) ? subject : null;
}

export function handle(ctx, msgType, m) {
  const chains = ctx.shared.cred.chains;
  const now = ctx.now();
  switch (msgType) {
    case PRESENT: {
      if (!m.cred_type) throw invalid('CRED_PRESENT without cred_type (credentials are tagged, §4)');
      if (m.credential.length === 0) throw invalid('CRED_PRESENT without credential octets');
      if (m.cred_type !== CRED_POLICY.type) throw policy(`cred_type ${m.cred_type} is not supported by policy`);
      const subject = credentialSubject(m.credential);
      if (subject === null) throw policy('the credential is not valid for its type');
      // Binding-aware (§4): on an authenticated channel a credential is taken only from the
      // identity it was issued to. A plaintext loopback channel surfaces no identity, and
      // there credentials are bearer tokens.
      if (ctx.identity !== null && subject !== ctx.identity) throw policy('the credential is bound to another identity than this channel\'s');
      if (m.chain_id.length === 0) return; // a presentation without a chain: checked, nothing opened
      const key = m.chain_id.toString('hex');
      const chain = chains.get(key);
      if (chain) {
        if (chain.owner !== ctx.identity) throw policy('the chain_id is held by another identity');
        if (chain.revoked) throw policy('the chain was revoked');
        // The same root presented again: an idempotent no-op; another root is a collision.
        if (!chain.root.equals(m.credential)) throw policy('the chain_id belongs to another credential');
        return;
      }
      if (chains.size >= MAX_CHAINS) throw policy('too many open chains');
      chains.set(key, { owner: ctx.identity, root: Buffer.from(m.credential), entries: [], revoked: false });
      return;
    }
    case DELEGATE: {
      if (m.chain_id.length === 0) throw invalid('CRED_DELEGATE without chain_id');
      if (m.delegation.length === 0) throw invalid('CRED_DELEGATE without delegation octets');
      if (m.expires_at_unix_ms === 0n) throw invalid('CRED_DELEGATE without an expiry (entries carry a bounded expiry, §4)');
      const chain = chains.get(m.chain_id.toString('hex'));
      if (!chain) throw new ProfileReject(ERR.NOT_FOUND, 'no chain was presented under this chain_id');
      if (chain.owner !== ctx.identity) throw policy('the chain belongs to another identity');
      if (chain.revoked) throw policy('the chain was revoked');
      const exp = m.expires_at_unix_ms;
      if (exp <= BigInt(now)) throw policy('the delegation entry has already expired');
      if (exp > BigInt(now + CRED_POLICY.maxTtlMs)) throw policy(`the entry outlives the ${CRED_POLICY.maxTtlMs} ms lifetime bound`);
      if (chain.entries.some((e) => e.expires <= BigInt(now))) throw policy('the chain expired with its earliest entry');
      if (chain.entries.length >= CRED_POLICY.maxChainLength) throw policy(`the chain holds its maximum of ${CRED_POLICY.maxChainLength} entries`);
      chain.entries.push({ delegation: Buffer.from(m.delegation), expires: exp });
      return;
    }
    case REVOKE: {
      if (m.chain_id.length === 0) throw invalid('CRED_REVOKE without chain_id');
      const chain = chains.get(m.chain_id.toString('hex'));
      if (!chain) throw new ProfileReject(ERR.NOT_FOUND, 'no chain was presented under this chain_id');
      if (chain.owner !== ctx.identity) throw policy('the chain belongs to another identity');
      chain.revoked = true;
      return;
    }
    case ERR_T:
      return;
  }
}
