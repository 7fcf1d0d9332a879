//! The reference's SWP-CRED receiver (profile 15): one table of delegation chains per
//! connection (`swp_profiles::cred::Chains` with the library's defaults, which are the
//! reference's declared parameters: credential type `swp.test.subject`, whose credential
//! is `sub=<identity>` and must name the connection's TLS client identity; at most four
//! delegation entries per chain; every entry's expiry after the receiver's clock and at
//! most one hour past it; `CRED_REVOKE` supported).
//!
//! A credential, delegation or revocation the chains take gets no reply. One they refuse
//! is rejected with an error frame carrying the canonical code: `ERR_SECURITY_POLICY` for
//! a credential or entry refused on its merits (unsupported type, invalid credential, bound
//! to another identity, expired, expiry beyond the bound, chain too long, a replayed root,
//! a revoked chain), `ERR_INVALID_PROFILE_PAYLOAD` for a chain this identity never
//! presented and for a payload that does not decode or misses a required field,
//! `ERR_UNSUPPORTED_MSG_TYPE` for an unassigned msg_type. A `CRED_ERR` from the peer is
//! taken and ignored: the reference sends nothing it could answer.
//!
//! A peer the channel did not authenticate (tcp://, stdio, TLS without `--client-ca`) has
//! no identity, and no identity is not a wildcard: its credentials are bound to the
//! [`ANONYMOUS_SUBJECT`], so `sub=spiffe://t/alice` from it is refused like a credential of
//! someone else, and only `sub=swp.test.anonymous` is taken (issue 30, defect 4;
//! docs/spec-issues.md SI-048). The library's own reading of an empty scope (any subject
//! binds) stays what the codec method judges with: there is no channel there at all.

use super::{step, Action, Config, Incoming, ProfileAgent, Reject};
use swp_profiles::cred::{Chains, CredError, CredMessage};
use swp_profiles::p1::P1Form;
use swp_profiles::Ctx;

/// The subject a peer without an authenticated identity is bound to: what its
/// `swp.test.subject` credentials must name. No certificate field is read for it, and a
/// server either authenticates every peer (mTLS) or none, so it never stands for a peer
/// that has an identity.
pub const ANONYMOUS_SUBJECT: &str = "swp.test.anonymous";

/// The CRED state of one connection.
#[derive(Debug)]
pub struct Agent {
    chains: Chains,
    form: P1Form,
}

impl Agent {
    /// An empty table with the reference's parameters.
    pub fn new(form: P1Form) -> Self {
        Agent {
            chains: Chains::default(),
            form,
        }
    }
}

impl ProfileAgent for Agent {
    type Profile = Chains;

    fn for_connection(_: &Config, form: P1Form) -> Self {
        Agent::new(form)
    }

    fn form(&self) -> P1Form {
        self.form
    }

    /// What the chains take gets no reply.
    fn on_message(&mut self, m: CredMessage, at: Incoming<'_>) -> Result<Action, Reject> {
        // The library binds an empty scope to nothing (any subject passes); here the
        // unauthenticated peer is bound to the anonymous subject instead.
        let scope = if at.scope.is_empty() {
            ANONYMOUS_SUBJECT
        } else {
            at.scope
        };
        step::<Self>(&mut self.chains, Ctx::new(at.now_ms, scope), &m)?;
        Ok(Action::Nothing)
    }

    /// The refusal names the `CredErr.code` too (`binding_mismatch`, `expired`, ...).
    fn refusal(e: &CredError) -> String {
        format!("{}: {e}", e.reply_code())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::code;
    use super::*;
    use bytes::Bytes;
    use swp_core::ErrorCode;
    use swp_profiles::cred;
    use swp_profiles::p1::pb::cred::{CredDelegate, CredPresent};

    const ID: Bytes = Bytes::from_static(b"msg-000000000001");
    const ME: &str = "spiffe://swp-conform.test/harness-client";

    fn present(cred: &'static str) -> Vec<u8> {
        cred::encode(
            P1Form::Message,
            &CredMessage::Present(CredPresent {
                cred_type: cred::SUBJECT_TYPE.into(),
                credential: Bytes::from_static(cred.as_bytes()),
                chain_id: Bytes::from_static(b"c"),
            }),
        )
    }

    fn delegate(exp: u64) -> Vec<u8> {
        cred::encode(
            P1Form::Message,
            &CredMessage::Delegate(CredDelegate {
                chain_id: Bytes::from_static(b"c"),
                delegation: Bytes::from_static(b"d"),
                expires_at_unix_ms: exp,
            }),
        )
    }

    #[test]
    fn a_peer_without_an_identity_is_bound_to_the_anonymous_subject() {
        let mut a = Agent::new(P1Form::Message);
        // Not a wildcard: a credential naming someone is refused as bound to another.
        let alice = a.handle(1, &ID, &present("sub=spiffe://t/alice"), "", 0);
        assert_eq!(code(alice), ErrorCode::SecurityPolicy);
        let anon = a.handle(1, &ID, &present("sub=swp.test.anonymous"), "", 0);
        assert_eq!(anon, Action::Nothing);
        // An authenticated peer is not the anonymous subject either.
        let other = a.handle(1, &ID, &present("sub=swp.test.anonymous"), ME, 0);
        assert_eq!(code(other), ErrorCode::SecurityPolicy);
    }

    #[test]
    fn binds_to_the_identity_and_judges_expiry_on_its_clock() {
        let mut a = Agent::new(P1Form::Message);
        let other = a.handle(1, &ID, &present("sub=spiffe://other"), ME, 0);
        assert_eq!(code(other), ErrorCode::SecurityPolicy);
        let unknown = a.handle(2, &ID, &delegate(2_000), ME, 1_000);
        assert_eq!(code(unknown), ErrorCode::InvalidProfilePayload);
        let ok = a.handle(
            1,
            &ID,
            &present("sub=spiffe://swp-conform.test/harness-client"),
            ME,
            0,
        );
        assert_eq!(ok, Action::Nothing);
        assert_eq!(
            a.handle(2, &ID, &delegate(2_000), ME, 1_000),
            Action::Nothing
        );
        assert_eq!(
            code(a.handle(2, &ID, &delegate(999), ME, 1_000)),
            ErrorCode::SecurityPolicy
        );
        assert_eq!(
            code(a.handle(5, &ID, &[], ME, 1_000)),
            ErrorCode::UnsupportedMsgType
        );
    }
}
