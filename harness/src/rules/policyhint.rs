//! SWP-POLICYHINT (profile 16, swp-policyhint.md): constraint entries (§4), violation reports
//! (§5), and mode semantics (§6) as docs/spec-issues-profiles.md reads them: a violation
//! names the effective scope of the constraint it reports (SI-P-POLICYHINT-2), and only a
//! `MUST` constraint is reported when unmet (SI-P-POLICYHINT-3).
//!
//! The constraints in effect are kept per setting side, by (key, scope_ref): a later set
//! replaces what an earlier set put on the same key and scope (SI-P-POLICYHINT-5).

use super::common::{show, trackable, Table};
use super::config::{ConflictPolicy, Ctx};
use super::verdict::{decode, Level, Rule, Side, Violation};
use crate::p1::pb::types::policyhint::{PolicyErr, PolicyHintAck, PolicyHintSet, PolicyViolation};
use std::collections::BTreeMap;

/// The profile_id of SWP-POLICYHINT.
pub(super) const PROFILE_ID: u64 = 16;

const MSG_TYPE: Rule = Rule {
    name: "policyhint.msg-type-assigned",
    profile: "POLICYHINT",
    requirement: "POLICYHINT-009",
    level: Level::Must,
    section: "§3, §6",
    checks: "msg_type is 1 HINT_SET, 2 HINT_ACK, 3 VIOLATION or 4 ERR",
};
const CONSTRAINT_FIELDS: Rule = Rule {
    name: "policyhint.constraint-fields",
    profile: "POLICYHINT",
    requirement: "POLICYHINT-010",
    level: Level::Must,
    section: "§4 (SI-P-POLICYHINT-1)",
    checks: "every constraint carries a non-empty key and value and a mode of MUST, SHOULD or MAY",
};
const VIOLATION_KEY: Rule = Rule {
    name: "policyhint.violation-key",
    profile: "POLICYHINT",
    requirement: "POLICYHINT-003",
    level: Level::Must,
    section: "§5",
    checks: "POLICY_VIOLATION names the violated key",
};
const VIOLATION_SCOPE: Rule = Rule {
    name: "policyhint.violation-scope",
    profile: "POLICYHINT",
    requirement: "POLICYHINT-004",
    level: Level::Must,
    section: "§5 (SI-P-POLICYHINT-2)",
    checks: "POLICY_VIOLATION carries a non-empty effective scope reference",
};
const VIOLATION_REASON: Rule = Rule {
    name: "policyhint.violation-reason",
    profile: "POLICYHINT",
    requirement: "POLICYHINT-005",
    level: Level::Must,
    section: "§5",
    checks: "POLICY_VIOLATION carries a reason code",
};
const VIOLATION_EFFECTIVE_SCOPE: Rule = Rule {
    name: "policyhint.violation-effective-scope",
    profile: "POLICYHINT",
    requirement: "POLICYHINT-004",
    level: Level::Must,
    section: "§5 (SI-P-POLICYHINT-2)",
    checks: "a violation of a key the peer set only with scopes names one of those scope_refs",
};
const VIOLATION_BINDS_MUST: Rule = Rule {
    name: "policyhint.violation-binds-must",
    profile: "POLICYHINT",
    requirement: "POLICYHINT-007",
    level: Level::Must,
    section: "§6 (SI-P-POLICYHINT-3)",
    checks: "a violation is reported only for a constraint in effect with mode MUST",
};

/// Every SWP-POLICYHINT rule.
pub(super) const RULES: &[&Rule] = &[
    &MSG_TYPE,
    &CONSTRAINT_FIELDS,
    &VIOLATION_KEY,
    &VIOLATION_SCOPE,
    &VIOLATION_REASON,
    &VIOLATION_EFFECTIVE_SCOPE,
    &VIOLATION_BINDS_MUST,
];

const MUST: u8 = 1;
const SHOULD: u8 = 2;
const MAY: u8 = 4;

/// The mode bit of a constraint (the doc's capitals exactly, SI-P-POLICYHINT-1).
fn mode_bit(mode: &str) -> Option<u8> {
    match mode {
        "MUST" => Some(MUST),
        "SHOULD" => Some(SHOULD),
        "MAY" => Some(MAY),
        _ => None,
    }
}

/// A decoded SWP-POLICYHINT message whose own fields hold.
pub(super) enum Msg {
    Set(PolicyHintSet),
    Violation(PolicyViolation),
    Other,
}

/// Decodes by msg_type and checks the class's required fields (§4, §5).
pub(super) fn check(msg_type: u64, bare: &[u8]) -> Result<Msg, Violation> {
    match msg_type {
        1 => {
            let m: PolicyHintSet = decode(bare, "policyhint.PolicyHintSet")?;
            for c in &m.constraints {
                let key = show(c.key.as_bytes());
                if c.key.is_empty() {
                    return Err(CONSTRAINT_FIELDS.violation("constraint without key"));
                }
                if c.value.is_empty() {
                    return Err(
                        CONSTRAINT_FIELDS.violation(format!("constraint {key} without value"))
                    );
                }
                if mode_bit(&c.mode).is_none() {
                    return Err(CONSTRAINT_FIELDS.violation(format!(
                        "constraint {key} has mode {}, not MUST, SHOULD or MAY",
                        show(c.mode.as_bytes())
                    )));
                }
            }
            Ok(Msg::Set(m))
        }
        2 => {
            let _: PolicyHintAck = decode(bare, "policyhint.PolicyHintAck")?;
            Ok(Msg::Other)
        }
        3 => {
            let m: PolicyViolation = decode(bare, "policyhint.PolicyViolation")?;
            if m.key.is_empty() {
                return Err(VIOLATION_KEY.violation("POLICY_VIOLATION without key"));
            }
            if m.scope_ref.is_empty() {
                return Err(VIOLATION_SCOPE.violation(format!(
                    "POLICY_VIOLATION of {} without scope_ref",
                    show(m.key.as_bytes())
                )));
            }
            if m.reason_code.is_empty() {
                return Err(VIOLATION_REASON.violation(format!(
                    "POLICY_VIOLATION of {} without reason_code",
                    show(m.key.as_bytes())
                )));
            }
            Ok(Msg::Violation(m))
        }
        4 => {
            let _: PolicyErr = decode(bare, "policyhint.PolicyErr")?;
            Ok(Msg::Other)
        }
        t => Err(MSG_TYPE.violation(format!("msg_type {t} is not assigned in SWP-POLICYHINT"))),
    }
}

/// The constraints each side set, by (setter, key, scope_ref): the modes possibly in effect.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct State {
    constraints: Table<(Side, String, String), u8>,
}

impl State {
    /// Judges `msg` from `ctx.side`, then records it.
    pub(super) fn observe(&mut self, ctx: &Ctx, msg: Msg) -> Result<(), Violation> {
        match msg {
            Msg::Set(set) => {
                // Two constraints of one set on one key and scope: the declared conflict
                // policy picks one; undeclared, either may be in effect (both modes kept).
                let mut modes: BTreeMap<(String, String), u8> = BTreeMap::new();
                for c in set.constraints {
                    if !trackable(c.key.as_bytes()) || !trackable(c.scope_ref.as_bytes()) {
                        continue;
                    }
                    let bit = mode_bit(&c.mode).unwrap_or(0);
                    let slot = modes.entry((c.key, c.scope_ref));
                    match ctx.config.policyhint_conflict_policy {
                        Some(ConflictPolicy::LaterWins) => {
                            *slot.or_insert(0) = bit;
                        }
                        Some(ConflictPolicy::EarlierWins) => {
                            slot.or_insert(bit);
                        }
                        None => {
                            *slot.or_insert(0) |= bit;
                        }
                    }
                }
                for ((key, scope), mask) in modes {
                    self.constraints.insert((ctx.side, key, scope), mask);
                }
                Ok(())
            }
            Msg::Violation(v) => self.violation(ctx.side, &v),
            Msg::Other => Ok(()),
        }
    }

    fn violation(&self, side: Side, v: &PolicyViolation) -> Result<(), Violation> {
        if self.constraints.overflowed() {
            return Ok(());
        }
        let setter = side.other();
        let set: Vec<(&str, u8)> = self
            .constraints
            .range_from((setter, v.key.clone(), String::new()))
            .take_while(|((s, k, _), _)| *s == setter && *k == v.key)
            .map(|((_, _, scope), mask)| (scope.as_str(), *mask))
            .collect();
        // A key the peer never set: the report may concern the reporter's own policy
        // (or an unknown-key policy), which the judge cannot see.
        if set.is_empty() {
            return Ok(());
        }
        let key = show(v.key.as_bytes());
        if set.iter().all(|(scope, _)| !scope.is_empty())
            && !set.iter().any(|(scope, _)| *scope == v.scope_ref)
        {
            return Err(VIOLATION_EFFECTIVE_SCOPE.violation(format!(
                "violation of {key} names scope {}, which no constraint on the key has",
                show(v.scope_ref.as_bytes())
            )));
        }
        // The effective scope of an unscoped constraint is the receiver's own name for its
        // default scope, unknown here: an unscoped constraint is relevant to any scope.
        let relevant: Vec<u8> = set
            .iter()
            .filter(|(scope, _)| scope.is_empty() || *scope == v.scope_ref)
            .map(|(_, m)| *m)
            .collect();
        if !relevant.is_empty() && relevant.iter().all(|m| m & MUST == 0) {
            return Err(VIOLATION_BINDS_MUST.violation(format!(
                "violation of {key} in scope {}, whose constraints are only SHOULD or MAY",
                show(v.scope_ref.as_bytes())
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{enc, full_config, sequence_property, Run, Step};
    use super::super::{Config, Side::*};
    use super::*;
    use crate::p1::pb::types::policyhint::Constraint;
    use proptest::prelude::*;

    fn c(key: &str, mode: &str, scope: &str) -> Constraint {
        Constraint {
            key: key.into(),
            value: "v".into(),
            mode: mode.into(),
            scope_ref: scope.into(),
        }
    }
    fn set(cs: Vec<Constraint>) -> PolicyHintSet {
        PolicyHintSet { constraints: cs }
    }
    fn viol(key: &str, scope: &str) -> PolicyViolation {
        PolicyViolation {
            key: key.into(),
            scope_ref: scope.into(),
            reason_code: "exceeded".into(),
        }
    }

    #[test]
    fn msg_type_must_be_assigned() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Harness, 5, &set(vec![]), "policyhint.msg-type-assigned");
        r.ok(Harness, 1, &set(vec![]));
    }

    #[test]
    fn constraints_carry_key_value_and_a_known_mode() {
        let mut r = Run::new(PROFILE_ID);
        r.err(
            Harness,
            1,
            &set(vec![c("", "MUST", "")]),
            "policyhint.constraint-fields",
        );
        let mut no_value = c("k", "MUST", "");
        no_value.value.clear();
        r.err(
            Harness,
            1,
            &set(vec![no_value]),
            "policyhint.constraint-fields",
        );
        r.err(
            Harness,
            1,
            &set(vec![c("k", "must", "")]),
            "policyhint.constraint-fields",
        );
        r.err(
            Harness,
            1,
            &set(vec![c("k", "", "")]),
            "policyhint.constraint-fields",
        );
        r.ok(
            Harness,
            1,
            &set(vec![c("k", "MAY", ""), c("j", "SHOULD", "s")]),
        );
        r.ok(Endpoint, 2, &PolicyHintAck::default());
        r.ok(Endpoint, 4, &PolicyErr::default());
    }

    #[test]
    fn violations_carry_key_scope_and_reason() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Endpoint, 3, &viol("", "s"), "policyhint.violation-key");
        r.err(Endpoint, 3, &viol("k", ""), "policyhint.violation-scope");
        let mut v = viol("k", "s");
        v.reason_code.clear();
        r.err(Endpoint, 3, &v, "policyhint.violation-reason");
        r.ok(Endpoint, 3, &viol("k", "s"));
    }

    #[test]
    fn a_violation_names_the_scope_of_a_scoped_constraint() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &set(vec![c("k", "MUST", "tenant-a")]));
        r.err(
            Endpoint,
            3,
            &viol("k", "session"),
            "policyhint.violation-effective-scope",
        );
        r.ok(Endpoint, 3, &viol("k", "tenant-a"));
        // An unscoped constraint's effective scope is the receiver's own name.
        r.ok(Harness, 1, &set(vec![c("j", "MUST", "")]));
        r.ok(Endpoint, 3, &viol("j", "session"));
    }

    #[test]
    fn only_must_constraints_are_reported() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(
            Harness,
            1,
            &set(vec![c("k", "SHOULD", ""), c("m", "MAY", "")]),
        );
        r.err(
            Endpoint,
            3,
            &viol("k", "session"),
            "policyhint.violation-binds-must",
        );
        r.err(
            Endpoint,
            3,
            &viol("m", "session"),
            "policyhint.violation-binds-must",
        );
        // A later set replaces the mode on the same key and scope.
        r.ok(Harness, 1, &set(vec![c("k", "MUST", "")]));
        r.ok(Endpoint, 3, &viol("k", "session"));
        // Keys the peer never set are not judged.
        r.ok(Endpoint, 3, &viol("own", "session"));
    }

    #[test]
    fn the_conflict_policy_picks_the_mode_in_effect() {
        let both = set(vec![c("k", "MUST", ""), c("k", "SHOULD", "")]);
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &both);
        r.ok(Endpoint, 3, &viol("k", "s"));
        let mut r = Run::with(
            PROFILE_ID,
            Config {
                policyhint_conflict_policy: Some(ConflictPolicy::LaterWins),
                ..Config::default()
            },
        );
        r.ok(Harness, 1, &both);
        r.err(
            Endpoint,
            3,
            &viol("k", "s"),
            "policyhint.violation-binds-must",
        );
        let mut r = Run::with(
            PROFILE_ID,
            Config {
                policyhint_conflict_policy: Some(ConflictPolicy::EarlierWins),
                ..Config::default()
            },
        );
        r.ok(Harness, 1, &both);
        r.ok(Endpoint, 3, &viol("k", "s"));
    }

    fn step() -> impl Strategy<Value = Step> {
        let key = prop::sample::select(vec!["k", "j", ""]);
        let scope = prop::sample::select(vec!["", "s", "t"]);
        let mode = prop::sample::select(vec!["MUST", "SHOULD", "MAY", "x"]);
        let side = prop::sample::select(vec![Harness, Endpoint]);
        let cons = (key.clone(), mode, scope.clone()).prop_map(|(k, m, s)| c(k, m, s));
        let msg = prop_oneof![
            prop::collection::vec(cons, 0..4).prop_map(|cs| (1u64, enc(&set(cs)))),
            (key, scope).prop_map(|(k, s)| (3u64, enc(&viol(k, s)))),
            Just((2u64, enc(&PolicyHintAck::default()))),
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
