//! SWP-AGDISC (profile 10, swp-agdisc.md): the Agent Card's required declarations (§4) and
//! the cache validators (§5) as docs/spec-issues-profiles.md reads them: one etag names one
//! representation, and `AGDISC_NOT_MODIFIED` answers a pending conditional GET naming the
//! very validator the GET sent.

use super::common::{digest, show, trackable, Digest, PerSide, Queue, Table};
use super::config::Ctx;
use super::verdict::{decode, Level, Rule, Side, Violation};
use crate::p1::pb::types::agdisc::{AgdiscDoc, AgdiscErr, AgdiscGet, AgdiscNotModified};

/// The profile_id of SWP-AGDISC.
pub(super) const PROFILE_ID: u64 = 10;

const MSG_TYPE: Rule = Rule {
    name: "agdisc.msg-type-assigned",
    profile: "AGDISC",
    requirement: "AGDISC-010",
    level: Level::Must,
    section: "§3, §7",
    checks: "msg_type is 1 GET, 2 DOC, 3 NOT_MODIFIED or 4 ERR",
};
const CARD_REVISION: Rule = Rule {
    name: "agdisc.card-revision",
    profile: "AGDISC",
    requirement: "AGDISC-002",
    level: Level::Must,
    section: "§4",
    checks: "an AGDISC_DOC carries a non-empty schema_revision",
};
const CARD_AGENT: Rule = Rule {
    name: "agdisc.card-agent-id",
    profile: "AGDISC",
    requirement: "AGDISC-003",
    level: Level::Must,
    section: "§4",
    checks: "an AGDISC_DOC carries a non-empty agent_id",
};
const CARD_BODY: Rule = Rule {
    name: "agdisc.card-body",
    profile: "AGDISC",
    requirement: "AGDISC-004",
    level: Level::Must,
    section: "§4 (SI: card body)",
    checks:
        "an AGDISC_DOC carries a non-empty card_payload (where endpoints and capabilities live)",
};
const ETAG_ONE_REPRESENTATION: Rule = Rule {
    name: "agdisc.etag-one-representation",
    profile: "AGDISC",
    requirement: "AGDISC-007",
    level: Level::Should,
    section: "§5 (SI: strong ETag)",
    checks: "one sender's etag for one agent always names the same schema_revision and card octets",
};
const NOT_MODIFIED_ANSWERS_GET: Rule = Rule {
    name: "agdisc.not-modified-answers-get",
    profile: "AGDISC",
    requirement: "AGDISC-007",
    level: Level::Should,
    section: "§5 (SI: AGDISC_NOT_MODIFIED)",
    checks: "AGDISC_NOT_MODIFIED answers a pending GET of the peer for that agent whose if_none_match is its etag",
};

/// Every SWP-AGDISC rule.
pub(super) const RULES: &[&Rule] = &[
    &MSG_TYPE,
    &CARD_REVISION,
    &CARD_AGENT,
    &CARD_BODY,
    &ETAG_ONE_REPRESENTATION,
    &NOT_MODIFIED_ANSWERS_GET,
];

/// A decoded SWP-AGDISC message whose own fields hold.
pub(super) enum Msg {
    Get(AgdiscGet),
    Doc(AgdiscDoc),
    NotModified(AgdiscNotModified),
    Err,
}

/// Decodes by msg_type and checks the class's required fields.
pub(super) fn check(msg_type: u64, bare: &[u8]) -> Result<Msg, Violation> {
    match msg_type {
        1 => Ok(Msg::Get(decode(bare, "agdisc.AgdiscGet")?)),
        2 => {
            let d: AgdiscDoc = decode(bare, "agdisc.AgdiscDoc")?;
            if d.schema_revision.is_empty() {
                return Err(CARD_REVISION.violation("Agent Card without schema_revision"));
            }
            if d.agent_id.is_empty() {
                return Err(CARD_AGENT.violation("Agent Card without agent_id"));
            }
            if d.card_payload.is_empty() {
                return Err(CARD_BODY.violation(
                    "Agent Card with an empty card_payload declares no endpoints or capabilities",
                ));
            }
            Ok(Msg::Doc(d))
        }
        3 => Ok(Msg::NotModified(decode(bare, "agdisc.AgdiscNotModified")?)),
        4 => {
            let _: AgdiscErr = decode(bare, "agdisc.AgdiscErr")?;
            Ok(Msg::Err)
        }
        t => Err(MSG_TYPE.violation(format!("msg_type {t} is not assigned in SWP-AGDISC"))),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct PendingGet {
    agent_id: String,
    if_none_match: String,
}

/// Pending GETs per asker and the validators each sender issued.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct State {
    gets: PerSide<Queue<PendingGet>>,
    etags: Table<(Side, String, String), Digest>,
}

impl State {
    /// Judges `msg` from `ctx.side`, then records it.
    pub(super) fn observe(&mut self, ctx: &Ctx, msg: Msg) -> Result<(), Violation> {
        let side = ctx.side;
        match msg {
            Msg::Get(g) => {
                let q = self.gets.get_mut(side);
                if trackable(g.agent_id.as_bytes()) && trackable(g.if_none_match.as_bytes()) {
                    q.push(PendingGet {
                        agent_id: g.agent_id,
                        if_none_match: g.if_none_match,
                    });
                } else {
                    q.mark_lost();
                }
                Ok(())
            }
            Msg::Doc(d) => {
                let rep = digest(&[d.schema_revision.as_bytes(), &d.card_payload]);
                let key = (side, d.agent_id.clone(), d.etag.clone());
                let tracked = !d.etag.is_empty()
                    && trackable(d.agent_id.as_bytes())
                    && trackable(d.etag.as_bytes());
                if tracked {
                    if let Some(prev) = self.etags.get(&key) {
                        if *prev != rep {
                            return Err(ETAG_ONE_REPRESENTATION.violation(format!(
                                "etag {} of agent {} already named another revision or card",
                                show(d.etag.as_bytes()),
                                show(d.agent_id.as_bytes())
                            )));
                        }
                    }
                    self.etags.insert(key, rep);
                }
                // A card answers the oldest pending GET of the peer for that agent; an
                // unsolicited card is taken (SI: no rule against a push).
                let q = self.gets.get_mut(side.other());
                if let Some(at) = q.position(|g| g.agent_id == d.agent_id) {
                    q.remove(at);
                }
                Ok(())
            }
            Msg::NotModified(n) => {
                let q = self.gets.get_mut(side.other());
                let at = q.position(|g| {
                    g.agent_id == n.agent_id
                        && !g.if_none_match.is_empty()
                        && g.if_none_match == n.etag
                });
                match at {
                    Some(at) => {
                        q.remove(at);
                        Ok(())
                    }
                    None if q.overflowed() => Ok(()),
                    None => Err(NOT_MODIFIED_ANSWERS_GET.violation(format!(
                        "AGDISC_NOT_MODIFIED for agent {} etag {} answers no pending conditional GET naming that etag",
                        show(n.agent_id.as_bytes()),
                        show(n.etag.as_bytes())
                    ))),
                }
            }
            Msg::Err => {
                // AGDISC_ERR names no agent: it is tied to a GET only when just one is pending.
                let q = self.gets.get_mut(side.other());
                if q.len() == 1 {
                    q.pop_front();
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{enc, full_config, sequence_property, Run, Step};
    use super::super::{Config, Side::*};
    use super::*;
    use proptest::prelude::*;

    fn get(agent: &str, inm: &str) -> AgdiscGet {
        AgdiscGet {
            agent_id: agent.into(),
            if_none_match: inm.into(),
        }
    }
    fn doc(agent: &str, etag: &str, body: &[u8]) -> AgdiscDoc {
        AgdiscDoc {
            agent_id: agent.into(),
            schema_revision: "1".into(),
            card_payload: body.to_vec().into(),
            etag: etag.into(),
            max_age_ms: 1000,
        }
    }
    fn nm(agent: &str, etag: &str) -> AgdiscNotModified {
        AgdiscNotModified {
            agent_id: agent.into(),
            etag: etag.into(),
        }
    }

    #[test]
    fn msg_type_must_be_assigned() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Endpoint, 5, &get("a", ""), "agdisc.msg-type-assigned");
        r.ok(Endpoint, 1, &get("a", ""));
    }

    #[test]
    fn card_needs_revision_agent_and_body() {
        let mut r = Run::new(PROFILE_ID);
        let mut d = doc("a", "e", b"card");
        d.schema_revision.clear();
        r.err(Endpoint, 2, &d, "agdisc.card-revision");
        r.err(Endpoint, 2, &doc("", "e", b"card"), "agdisc.card-agent-id");
        r.err(Endpoint, 2, &doc("a", "e", b""), "agdisc.card-body");
        r.ok(Endpoint, 2, &doc("a", "", b"card"));
    }

    #[test]
    fn an_etag_names_one_representation() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &get("a", ""));
        r.ok(Endpoint, 2, &doc("a", "e1", b"card"));
        r.ok(Endpoint, 2, &doc("a", "e1", b"card"));
        r.err(
            Endpoint,
            2,
            &doc("a", "e1", b"other"),
            "agdisc.etag-one-representation",
        );
        r.ok(Endpoint, 2, &doc("a", "e2", b"other"));
        // Another agent or another sender has its own validators.
        r.ok(Endpoint, 2, &doc("b", "e1", b"other"));
        r.ok(Harness, 2, &doc("a", "e1", b"other"));
    }

    #[test]
    fn not_modified_answers_a_conditional_get_with_its_etag() {
        let mut r = Run::new(PROFILE_ID);
        r.err(
            Endpoint,
            3,
            &nm("a", "e1"),
            "agdisc.not-modified-answers-get",
        );
        r.ok(Harness, 1, &get("a", ""));
        r.err(Endpoint, 3, &nm("a", ""), "agdisc.not-modified-answers-get");
        r.ok(Endpoint, 2, &doc("a", "e1", b"card"));
        r.ok(Harness, 1, &get("a", "e1"));
        r.err(
            Endpoint,
            3,
            &nm("a", "e2"),
            "agdisc.not-modified-answers-get",
        );
        r.err(
            Endpoint,
            3,
            &nm("b", "e1"),
            "agdisc.not-modified-answers-get",
        );
        r.err(
            Harness,
            3,
            &nm("a", "e1"),
            "agdisc.not-modified-answers-get",
        );
        r.ok(Endpoint, 3, &nm("a", "e1"));
        // Answered once.
        r.err(
            Endpoint,
            3,
            &nm("a", "e1"),
            "agdisc.not-modified-answers-get",
        );
        // An error answers the only pending GET.
        r.ok(Harness, 1, &get("a", "e1"));
        r.ok(Endpoint, 4, &AgdiscErr::default());
        r.err(
            Endpoint,
            3,
            &nm("a", "e1"),
            "agdisc.not-modified-answers-get",
        );
    }

    fn step() -> impl Strategy<Value = Step> {
        let agent = prop::sample::select(vec!["a", "b", ""]);
        let etag = prop::sample::select(vec!["e1", "e2", ""]);
        let body = prop::sample::select(vec![&b"c1"[..], b"c2", b""]);
        let side = prop::sample::select(vec![Harness, Endpoint]);
        let msg = prop_oneof![
            (agent.clone(), etag.clone()).prop_map(|(a, e)| (1u64, enc(&get(a, e)))),
            (agent.clone(), etag.clone(), body).prop_map(|(a, e, b)| (2u64, enc(&doc(a, e, b)))),
            (agent, etag).prop_map(|(a, e)| (3u64, enc(&nm(a, e)))),
            Just((4u64, enc(&AgdiscErr::default()))),
            (0u64..6, prop::collection::vec(any::<u8>(), 0..16)),
        ];
        (0u64..100, side, msg).prop_map(|(t, s, (mt, b))| (t, s, mt, b))
    }

    proptest! {
        #[test]
        fn sequences_keep_the_state_on_refusal(steps in prop::collection::vec(step(), 0..40)) {
            sequence_property(PROFILE_ID, &Config::default(), &steps);
            sequence_property(PROFILE_ID, &full_config(), &steps);
        }
    }
}
