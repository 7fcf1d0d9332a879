//! SWP-CRED (profile 15, swp-cred.md): credential and delegation fields (§4), delegation
//! chains keyed by the presenting side and chain_id (SI-P-CRED-5), their length and expiry
//! limits (§4, §6; SI-P-CRED-2..4) and revocation (SI-P-CRED-7).
//!
//! The length and lifetime limits are the SUT's, declared in its manifest: they judge the
//! chains the harness presents to it (the SUT is the receiver enforcing them), never the
//! endpoint's own chains, whose receiver (the harness) declares none. Expiry against the
//! clock judges both sides.

use super::common::{show, trackable, Table};
use super::config::{Ctx, EDGE_SLACK_MS};
use super::verdict::{decode, Level, Rule, Side, Violation};
use crate::p1::pb::types::cred::{CredDelegate, CredErr, CredPresent, CredRevoke};

/// The profile_id of SWP-CRED.
pub(super) const PROFILE_ID: u64 = 15;

const MSG_TYPE: Rule = Rule {
    name: "cred.msg-type-assigned",
    profile: "CRED",
    requirement: "CRED-008",
    level: Level::Must,
    section: "§3, §6",
    checks: "msg_type is 1 PRESENT, 2 DELEGATE, 3 REVOKE or 4 ERR",
};
const PRESENT_FIELDS: Rule = Rule {
    name: "cred.present-fields",
    profile: "CRED",
    requirement: "CRED-011",
    level: Level::Must,
    section: "§4",
    checks: "CRED_PRESENT carries credential octets tagged by a non-empty cred_type",
};
const DELEGATE_FIELDS: Rule = Rule {
    name: "cred.delegate-fields",
    profile: "CRED",
    requirement: "CRED-002",
    level: Level::Must,
    section: "§4, §5",
    checks: "CRED_DELEGATE names its chain_id and carries a non-empty delegation entry",
};
const EXPIRY_PRESENT: Rule = Rule {
    name: "cred.expiry-present",
    profile: "CRED",
    requirement: "CRED-003",
    level: Level::Must,
    section: "§4 (SI-P-CRED-3)",
    checks: "every delegation entry carries a non-zero expires_at_unix_ms",
};
const REVOKE_FIELDS: Rule = Rule {
    name: "cred.revoke-fields",
    profile: "CRED",
    requirement: "CRED-010",
    level: Level::May,
    section: "§2, §5",
    checks: "CRED_REVOKE names the chain_id it revokes",
};
const NO_REPLAYED_ROOT: Rule = Rule {
    name: "cred.no-replayed-root",
    profile: "CRED",
    requirement: "CRED-004",
    level: Level::Must,
    section: "§4 (SI-P-CRED-5, -7)",
    checks: "a side does not present the root of a chain it already presented (open or revoked)",
};
const DELEGATE_NAMES_CHAIN: Rule = Rule {
    name: "cred.delegate-names-chain",
    profile: "CRED",
    requirement: "CRED-004",
    level: Level::Must,
    section: "§4 (SI-P-CRED-5)",
    checks: "CRED_DELEGATE extends a chain its sender presented on the connection",
};
const NO_DELEGATION_AFTER_REVOKE: Rule = Rule {
    name: "cred.no-delegation-after-revoke",
    profile: "CRED",
    requirement: "CRED-009",
    level: Level::Must,
    section: "§5 (SI-P-CRED-7)",
    checks: "a revoked chain takes no further delegation entry",
};
const CHAIN_LENGTH: Rule = Rule {
    name: "cred.chain-length",
    profile: "CRED",
    requirement: "CRED-005",
    level: Level::Must,
    section: "§4, §6 (SI-P-CRED-2)",
    checks: "a chain presented to the SUT holds at most CRED_MAX_CHAIN_LENGTH entries",
};
const EXPIRY_BOUNDED: Rule = Rule {
    name: "cred.expiry-bounded",
    profile: "CRED",
    requirement: "CRED-003",
    level: Level::Must,
    section: "§4 (SI-P-CRED-3)",
    checks: "an entry given to the SUT expires at most CRED_MAX_TTL_MS past the clock",
};
const ENTRY_NOT_EXPIRED: Rule = Rule {
    name: "cred.entry-not-expired",
    profile: "CRED",
    requirement: "CRED-006",
    level: Level::Must,
    section: "§6 (SI-P-CRED-4)",
    checks: "no delegation entry has already expired when it is sent",
};
const CHAIN_NOT_EXPIRED: Rule = Rule {
    name: "cred.chain-not-expired",
    profile: "CRED",
    requirement: "CRED-006",
    level: Level::Must,
    section: "§6 (SI-P-CRED-4)",
    checks: "a chain one of whose entries expired takes no further entry",
};

/// Every SWP-CRED rule.
pub(super) const RULES: &[&Rule] = &[
    &MSG_TYPE,
    &PRESENT_FIELDS,
    &DELEGATE_FIELDS,
    &EXPIRY_PRESENT,
    &REVOKE_FIELDS,
    &NO_REPLAYED_ROOT,
    &DELEGATE_NAMES_CHAIN,
    &NO_DELEGATION_AFTER_REVOKE,
    &CHAIN_LENGTH,
    &EXPIRY_BOUNDED,
    &ENTRY_NOT_EXPIRED,
    &CHAIN_NOT_EXPIRED,
];

/// A decoded SWP-CRED message whose own fields hold.
pub(super) enum Msg {
    Present(CredPresent),
    Delegate(CredDelegate),
    Revoke(CredRevoke),
    Err,
}

/// Decodes by msg_type and checks the class's required fields (§4).
pub(super) fn check(msg_type: u64, bare: &[u8]) -> Result<Msg, Violation> {
    match msg_type {
        1 => {
            let m: CredPresent = decode(bare, "cred.CredPresent")?;
            if m.cred_type.is_empty() {
                return Err(PRESENT_FIELDS.violation("CRED_PRESENT without cred_type"));
            }
            if m.credential.is_empty() {
                return Err(PRESENT_FIELDS.violation("CRED_PRESENT without credential"));
            }
            Ok(Msg::Present(m))
        }
        2 => {
            let m: CredDelegate = decode(bare, "cred.CredDelegate")?;
            if m.chain_id.is_empty() {
                return Err(DELEGATE_FIELDS.violation("CRED_DELEGATE without chain_id"));
            }
            if m.delegation.is_empty() {
                return Err(DELEGATE_FIELDS.violation("CRED_DELEGATE without delegation"));
            }
            if m.expires_at_unix_ms == 0 {
                return Err(EXPIRY_PRESENT.violation(format!(
                    "delegation on chain {} without expiry",
                    show(&m.chain_id)
                )));
            }
            Ok(Msg::Delegate(m))
        }
        3 => {
            let m: CredRevoke = decode(bare, "cred.CredRevoke")?;
            if m.chain_id.is_empty() {
                return Err(REVOKE_FIELDS.violation("CRED_REVOKE without chain_id"));
            }
            Ok(Msg::Revoke(m))
        }
        4 => {
            let _: CredErr = decode(bare, "cred.CredErr")?;
            Ok(Msg::Err)
        }
        t => Err(MSG_TYPE.violation(format!("msg_type {t} is not assigned in SWP-CRED"))),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Chain {
    entries: u64,
    earliest_expiry: Option<u64>,
    revoked: bool,
}

/// The delegation chains of one connection, keyed by presenting side and chain_id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct State {
    chains: Table<(Side, Vec<u8>), Chain>,
}

impl State {
    /// Judges `msg` from `ctx.side`, then records it.
    pub(super) fn observe(&mut self, ctx: &Ctx, msg: Msg) -> Result<(), Violation> {
        let side = ctx.side;
        match msg {
            Msg::Present(p) => {
                // A credential outside any chain is not tracked.
                if p.chain_id.is_empty() || !trackable(&p.chain_id) {
                    return Ok(());
                }
                let key = (side, p.chain_id.to_vec());
                if self.chains.contains(&key) {
                    return Err(NO_REPLAYED_ROOT.violation(format!(
                        "chain {} presented again on the connection",
                        show(&p.chain_id)
                    )));
                }
                self.chains.insert(
                    key,
                    Chain {
                        entries: 0,
                        earliest_expiry: None,
                        revoked: false,
                    },
                );
                Ok(())
            }
            Msg::Delegate(d) => self.delegate(ctx, d),
            Msg::Revoke(r) => {
                if !trackable(&r.chain_id) {
                    return Ok(());
                }
                // Either side may signal the intent; revoking an unknown or revoked chain
                // changes nothing (SI-P-CRED-7).
                for owner in [side, side.other()] {
                    if let Some(c) = self.chains.get_mut(&(owner, r.chain_id.to_vec())) {
                        c.revoked = true;
                    }
                }
                Ok(())
            }
            Msg::Err => Ok(()),
        }
    }

    fn delegate(&mut self, ctx: &Ctx, d: CredDelegate) -> Result<(), Violation> {
        let side = ctx.side;
        let name = show(&d.chain_id);
        let expiry = d.expires_at_unix_ms;
        if let Some(now) = ctx.unix_now_ms {
            if expiry.saturating_add(EDGE_SLACK_MS) <= now {
                return Err(ENTRY_NOT_EXPIRED.violation(format!(
                    "delegation on chain {name} expired at {expiry}, before now ({now})"
                )));
            }
            if let (Some(ttl), Side::Harness) = (ctx.config.cred_max_ttl_ms, side) {
                let bound = now.saturating_add(ttl).saturating_add(EDGE_SLACK_MS);
                if expiry > bound {
                    return Err(EXPIRY_BOUNDED.violation(format!(
                        "delegation on chain {name} expires at {expiry}, more than CRED_MAX_TTL_MS {ttl} past now ({now})"
                    )));
                }
            }
        }
        if !trackable(&d.chain_id) {
            return Ok(());
        }
        let key = (side, d.chain_id.to_vec());
        let Some(chain) = self.chains.get(&key) else {
            if self.chains.overflowed() {
                return Ok(());
            }
            return Err(DELEGATE_NAMES_CHAIN.violation(format!(
                "CRED_DELEGATE extends chain {name}, which its sender never presented"
            )));
        };
        if chain.revoked {
            return Err(NO_DELEGATION_AFTER_REVOKE
                .violation(format!("CRED_DELEGATE extends revoked chain {name}")));
        }
        if let (Some(now), Some(earliest)) = (ctx.unix_now_ms, chain.earliest_expiry) {
            if earliest.saturating_add(EDGE_SLACK_MS) <= now {
                return Err(CHAIN_NOT_EXPIRED.violation(format!(
                    "CRED_DELEGATE extends chain {name}, one of whose entries expired at {earliest}"
                )));
            }
        }
        let entries = chain.entries.saturating_add(1);
        if let (Some(max), Side::Harness) = (ctx.config.cred_max_chain_length, side) {
            if entries > max {
                return Err(CHAIN_LENGTH.violation(format!(
                    "chain {name} would hold {entries} delegation entries; CRED_MAX_CHAIN_LENGTH is {max}"
                )));
            }
        }
        let earliest = chain.earliest_expiry.map_or(expiry, |e| e.min(expiry));
        if let Some(c) = self.chains.get_mut(&key) {
            c.entries = entries;
            c.earliest_expiry = Some(earliest);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{enc, full_config, sequence_property, Run, Step, OPEN_UNIX_MS};
    use super::super::{Config, Side::*};
    use super::*;
    use proptest::prelude::*;

    fn present(chain: &str) -> CredPresent {
        CredPresent {
            cred_type: "swp.test.subject".into(),
            credential: b"sub=a".to_vec().into(),
            chain_id: chain.as_bytes().to_vec().into(),
        }
    }
    fn delegate(chain: &str, expires_in_ms: i64) -> CredDelegate {
        CredDelegate {
            chain_id: chain.as_bytes().to_vec().into(),
            delegation: b"to=b".to_vec().into(),
            expires_at_unix_ms: OPEN_UNIX_MS.saturating_add_signed(expires_in_ms),
        }
    }
    fn revoke(chain: &str) -> CredRevoke {
        CredRevoke {
            chain_id: chain.as_bytes().to_vec().into(),
            reason: "r".into(),
        }
    }
    fn limited() -> Run {
        Run::with(
            PROFILE_ID,
            Config {
                cred_max_chain_length: Some(2),
                cred_max_ttl_ms: Some(60_000),
                ..Config::default()
            },
        )
    }

    #[test]
    fn msg_type_must_be_assigned() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Harness, 5, &present("c"), "cred.msg-type-assigned");
        r.ok(Harness, 1, &present("c"));
    }

    #[test]
    fn required_fields() {
        let mut r = Run::new(PROFILE_ID);
        let mut p = present("c");
        p.cred_type.clear();
        r.err(Harness, 1, &p, "cred.present-fields");
        let mut p = present("c");
        p.credential = Default::default();
        r.err(Harness, 1, &p, "cred.present-fields");
        r.ok(Harness, 1, &present(""));
        r.ok(Harness, 1, &present("c"));
        r.err(Harness, 2, &delegate("", 1000), "cred.delegate-fields");
        let mut d = delegate("c", 1000);
        d.delegation = Default::default();
        r.err(Harness, 2, &d, "cred.delegate-fields");
        let mut d = delegate("c", 1000);
        d.expires_at_unix_ms = 0;
        r.err(Harness, 2, &d, "cred.expiry-present");
        r.err(Harness, 3, &revoke(""), "cred.revoke-fields");
        r.ok(Harness, 2, &delegate("c", 1000));
        r.ok(Harness, 3, &revoke("c"));
        r.ok(Endpoint, 4, &CredErr::default());
    }

    #[test]
    fn a_root_is_presented_once() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &present("c"));
        r.err(Harness, 1, &present("c"), "cred.no-replayed-root");
        // The same chain_id from the other identity is another chain (SI-P-CRED-5).
        r.ok(Endpoint, 1, &present("c"));
        r.ok(Harness, 3, &revoke("c"));
        r.err(Harness, 1, &present("c"), "cred.no-replayed-root");
    }

    #[test]
    fn a_delegation_extends_a_chain_of_its_sender() {
        let mut r = Run::new(PROFILE_ID);
        r.err(
            Harness,
            2,
            &delegate("c", 1000),
            "cred.delegate-names-chain",
        );
        r.ok(Endpoint, 1, &present("c"));
        r.err(
            Harness,
            2,
            &delegate("c", 1000),
            "cred.delegate-names-chain",
        );
        r.ok(Harness, 1, &present("c"));
        r.ok(Harness, 2, &delegate("c", 1000));
    }

    #[test]
    fn a_revoked_chain_takes_no_entry() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &present("c"));
        r.ok(Harness, 2, &delegate("c", 10_000));
        r.ok(Endpoint, 3, &revoke("c"));
        r.err(
            Harness,
            2,
            &delegate("c", 10_000),
            "cred.no-delegation-after-revoke",
        );
        r.ok(Harness, 3, &revoke("unknown"));
    }

    #[test]
    fn chains_given_to_the_sut_hold_its_maximum_length() {
        let mut r = limited();
        r.ok(Harness, 1, &present("c"));
        r.ok(Harness, 2, &delegate("c", 10_000));
        r.ok(Harness, 2, &delegate("c", 10_000));
        r.err(Harness, 2, &delegate("c", 10_000), "cred.chain-length");
        // The endpoint's own chains are not held to its limit, nor is an undeclared limit assumed.
        r.ok(Endpoint, 1, &present("c"));
        for _ in 0..4 {
            r.ok(Endpoint, 2, &delegate("c", 10_000));
        }
        let mut u = Run::new(PROFILE_ID);
        u.ok(Harness, 1, &present("c"));
        for _ in 0..8 {
            u.ok(Harness, 2, &delegate("c", 10_000));
        }
    }

    #[test]
    fn expiries_given_to_the_sut_are_bounded_by_its_ttl() {
        let mut r = limited();
        r.ok(Harness, 1, &present("c"));
        r.err(Harness, 2, &delegate("c", 62_000), "cred.expiry-bounded");
        r.ok(Harness, 2, &delegate("c", 60_500));
        r.ok(Endpoint, 1, &present("c"));
        r.ok(Endpoint, 2, &delegate("c", 600_000));
    }

    #[test]
    fn expired_entries_are_not_sent() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &present("c"));
        r.at(5_000)
            .err(Harness, 2, &delegate("c", 3_000), "cred.entry-not-expired");
        r.err(Endpoint, 2, &delegate("x", 3_000), "cred.entry-not-expired");
        // Within the edge slack nothing is judged.
        r.ok(Harness, 2, &delegate("c", 4_500));
    }

    #[test]
    fn a_chain_with_an_expired_entry_takes_no_more() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &present("c"));
        r.ok(Harness, 2, &delegate("c", 2_000));
        r.at(1_000).ok(Harness, 2, &delegate("c", 20_000));
        r.at(5_000)
            .err(Harness, 2, &delegate("c", 20_000), "cred.chain-not-expired");
    }

    #[test]
    fn without_a_wall_clock_expiry_is_not_judged() {
        let mut r = Run::new(PROFILE_ID);
        r.conn = r.conn.clone().with_unix_ms_at_open(None);
        r.ok(Harness, 1, &present("c"));
        r.at(5_000).ok(Harness, 2, &delegate("c", -100_000));
    }

    fn step() -> impl Strategy<Value = Step> {
        let chain = prop::sample::select(vec!["a", "b", ""]);
        let side = prop::sample::select(vec![Harness, Endpoint]);
        let msg = prop_oneof![
            chain.clone().prop_map(|c| (1u64, enc(&present(c)))),
            (chain.clone(), -5_000i64..100_000).prop_map(|(c, e)| (2u64, enc(&delegate(c, e)))),
            chain.prop_map(|c| (3u64, enc(&revoke(c)))),
            Just((4u64, enc(&CredErr::default()))),
            (0u64..6, prop::collection::vec(any::<u8>(), 0..16)),
        ];
        (0u64..10_000, side, msg).prop_map(|(t, s, (mt, b))| (t, s, mt, b))
    }

    proptest! {
        #[test]
        fn sequences_keep_the_state_on_refusal(steps in prop::collection::vec(step(), 0..40)) {
            sequence_property(PROFILE_ID, &Config::default(), &steps);
            sequence_property(PROFILE_ID, &full_config(), &steps);
        }
    }
}
