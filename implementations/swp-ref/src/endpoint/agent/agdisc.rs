//! The reference's SWP-AGDISC responder (profile 10): a fixed set of agents and what a GET
//! for each gets, deterministic so vectors can state it (docs/profiles.md).
//!
//! - `swp.test.agent`: its card ([`CARD`], revision [`REVISION`]), with an etag derived
//!   from the card ([`etag`]) and a max-age of [`MAX_AGE_MS`]. A GET whose `if_none_match`
//!   is that etag gets `AGDISC_NOT_MODIFIED`; any other GET gets the card.
//! - `swp.test.invalid`: the card held is invalid (no revision): `AGDISC_ERR`
//!   `invalid_card`. `swp.test.private`: `unauthorized`. `swp.test.internal`: `internal`.
//! - any other agent: `AGDISC_ERR` `not_found`, its message starting `ERR_NOT_FOUND`.
//!
//! Answers reuse the GET's msg_id. The reference asks for no card itself; a card, a
//! not-modified or an error from the peer is judged by the channel's cache (an invalid card
//! or a not-modified nobody asked for is rejected, `ERR_INVALID_PROFILE_PAYLOAD`) and
//! otherwise taken silently. What the agent sends goes through the same cache first.

use super::{step, Action, Config, Incoming, Out, ProfileAgent, Reject};
use bytes::Bytes;
use sha2::{Digest, Sha256};
use swp_profiles::agdisc::{self, codes, AgdiscMessage, Cache};
use swp_profiles::p1::pb::agdisc::{AgdiscDoc, AgdiscErr, AgdiscNotModified};
use swp_profiles::p1::P1Form;
use swp_profiles::payload::shown;
use swp_profiles::Profile;

/// The agent whose card the reference serves.
pub const AGENT_ID: &str = "swp.test.agent";
/// Its card's schema/profile revision.
pub const REVISION: &str = "swp-agdisc/0.1";
/// Its card: opaque octets to the profile, JSON declaring the agent, its endpoints and its
/// capabilities (§4).
pub const CARD: &[u8] = br#"{"agent_id":"swp.test.agent","revision":"swp-agdisc/0.1","endpoints":["swp://swp-ref/agent"],"capabilities":["swp-rpc","swp-events","swp-agdisc"]}"#;
/// How long its card may be served from cache.
pub const MAX_AGE_MS: u64 = 1_000;
/// An agent whose stored card is invalid.
pub const INVALID_AGENT_ID: &str = "swp.test.invalid";
/// An agent whose card the peer may not see.
pub const PRIVATE_AGENT_ID: &str = "swp.test.private";
/// An agent whose lookup fails inside the reference.
pub const INTERNAL_AGENT_ID: &str = "swp.test.internal";

/// The card's validator: a quoted prefix of the SHA-256 of revision and card, so it changes
/// exactly when the representation does.
pub fn etag() -> String {
    let mut h = Sha256::new();
    h.update(REVISION.as_bytes());
    h.update([0]);
    h.update(CARD);
    let d = h.finalize();
    let hex: String = d[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

/// The AGDISC state of one connection.
#[derive(Debug)]
pub struct Agent {
    cache: Cache,
    form: P1Form,
    etag: String,
}

impl Agent {
    /// The responder with the library's caps.
    pub fn new(form: P1Form) -> Self {
        Agent {
            cache: Cache::new(agdisc::Config::default()),
            form,
            etag: etag(),
        }
    }

    fn answer_for(&self, agent_id: &str, if_none_match: &str) -> AgdiscMessage {
        let err = |code: &str, canonical: &str, why: &str| {
            AgdiscMessage::Err(AgdiscErr {
                code: code.into(),
                message: format!("{canonical}: agent {}: {why}", shown(agent_id)),
            })
        };
        match agent_id {
            AGENT_ID if if_none_match == self.etag => {
                AgdiscMessage::NotModified(AgdiscNotModified {
                    agent_id: agent_id.into(),
                    etag: self.etag.clone(),
                })
            }
            AGENT_ID => AgdiscMessage::Doc(AgdiscDoc {
                agent_id: agent_id.into(),
                schema_revision: REVISION.into(),
                card_payload: Bytes::from_static(CARD),
                etag: self.etag.clone(),
                max_age_ms: MAX_AGE_MS,
            }),
            INVALID_AGENT_ID => err(
                codes::INVALID_CARD,
                "ERR_INVALID_PROFILE_PAYLOAD",
                "the card held declares no schema revision",
            ),
            PRIVATE_AGENT_ID => err(
                codes::UNAUTHORIZED,
                "ERR_SECURITY_POLICY",
                "its card is not shown to this peer",
            ),
            // No canonical code names an internal failure.
            INTERNAL_AGENT_ID => err(codes::INTERNAL, "internal", "the card store failed"),
            _ => err(codes::NOT_FOUND, "ERR_NOT_FOUND", "no card for this agent"),
        }
    }
}

impl ProfileAgent for Agent {
    type Profile = Cache;

    /// The peer's cards the judge holds (up to a frame each).
    fn held_bytes(&self) -> usize {
        self.cache.held_bytes()
    }

    fn for_connection(_: &Config, form: P1Form) -> Self {
        Agent::new(form)
    }

    fn form(&self) -> P1Form {
        self.form
    }

    fn on_message(&mut self, m: AgdiscMessage, at: Incoming<'_>) -> Result<Action, Reject> {
        step::<Self>(&mut self.cache, at.ctx(), &m)?;
        let AgdiscMessage::Get(g) = &m else {
            return Ok(Action::Nothing);
        };
        let answer = self.answer_for(&g.agent_id, &g.if_none_match);
        // Our answer passes our own judge: a validator that names one card, a not-modified
        // for the etag asked about.
        if self.cache.step(at.ctx(), &answer).is_err() {
            return Ok(Action::Nothing);
        }
        Ok(Action::Send(vec![Out::of::<Cache>(
            self.form,
            &answer,
            Some(at.msg_id.clone()),
        )]))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{code, outs};
    use super::*;
    use swp_core::ErrorCode;
    use swp_profiles::p1::pb::agdisc::AgdiscGet;

    const ID: Bytes = Bytes::from_static(b"msg-000000000001");

    fn get(a: &mut Agent, agent_id: &str, inm: &str, now: u64) -> AgdiscMessage {
        let g = agdisc::encode(
            P1Form::Message,
            &AgdiscMessage::Get(AgdiscGet {
                agent_id: agent_id.into(),
                if_none_match: inm.into(),
            }),
        );
        let o = outs(a.handle(1, &ID, &g, "", now));
        assert_eq!(o.len(), 1);
        assert_eq!(o[0].reply_to.as_ref(), Some(&ID));
        agdisc::decode(P1Form::Message, o[0].msg_type, &o[0].payload).unwrap()
    }

    #[test]
    fn the_card_its_validator_and_not_modified() {
        let mut a = Agent::new(P1Form::Message);
        let AgdiscMessage::Doc(d) = get(&mut a, AGENT_ID, "", 0) else {
            panic!("a card")
        };
        assert_eq!(d.card_payload, CARD);
        assert_eq!(d.schema_revision, REVISION);
        assert_eq!(d.max_age_ms, MAX_AGE_MS);
        assert_eq!(d.etag, etag());
        // The value the reference manifests declare as AGDISC_ETAG.
        assert_eq!(etag(), "\"d9b5a602b830d011\"");
        let nm = get(&mut a, AGENT_ID, &d.etag, 10);
        assert!(matches!(nm, AgdiscMessage::NotModified(n) if n.etag == d.etag));
        // A validator that does not match gets the card again, unchanged.
        assert_eq!(
            get(&mut a, AGENT_ID, "\"stale\"", 2_000),
            AgdiscMessage::Doc(d)
        );
    }

    #[test]
    fn errors_are_deterministic_reasons() {
        let mut a = Agent::new(P1Form::Message);
        for (agent, want) in [
            ("nobody", codes::NOT_FOUND),
            (INVALID_AGENT_ID, codes::INVALID_CARD),
            (PRIVATE_AGENT_ID, codes::UNAUTHORIZED),
            (INTERNAL_AGENT_ID, codes::INTERNAL),
        ] {
            let first = get(&mut a, agent, "", 0);
            assert!(
                matches!(&first, AgdiscMessage::Err(e) if e.code == want),
                "{first:?}"
            );
            assert_eq!(get(&mut a, agent, "", 5), first);
        }
    }

    #[test]
    fn invalid_cards_and_unasked_not_modified_are_rejected() {
        let mut a = Agent::new(P1Form::Message);
        let doc = |rev: &str| {
            agdisc::encode(
                P1Form::Message,
                &AgdiscMessage::Doc(AgdiscDoc {
                    agent_id: "x".into(),
                    schema_revision: rev.into(),
                    card_payload: Bytes::from_static(b"{}"),
                    etag: String::new(),
                    max_age_ms: 0,
                }),
            )
        };
        assert_eq!(
            code(a.handle(2, &ID, &doc(""), "", 0)),
            ErrorCode::InvalidProfilePayload
        );
        assert_eq!(a.handle(2, &ID, &doc("1"), "", 0), Action::Nothing);
        let nm = agdisc::encode(
            P1Form::Message,
            &AgdiscMessage::NotModified(AgdiscNotModified {
                agent_id: "x".into(),
                etag: "e".into(),
            }),
        );
        assert_eq!(
            code(a.handle(3, &ID, &nm, "", 0)),
            ErrorCode::InvalidProfilePayload
        );
        assert_eq!(
            code(a.handle(5, &ID, b"", "", 0)),
            ErrorCode::UnsupportedMsgType
        );
    }
}
