//! The constraints in effect on one SWP-POLICYHINT channel, keyed by (effective scope,
//! key), and how a `POLICY_HINT_SET` changes them (swp-policyhint §4, §6):
//!
//! - a constraint whose key the receiver does not know is handled by the declared policy
//!   ([`UnknownKeys`]: ignored, reported as a violation, or the whole set refused), the
//!   same way every time (POLICYHINT-002, POLICYHINT-006);
//! - two constraints of one set on the same key and scope that disagree are resolved by
//!   the declared rule ([`ConflictPolicy`]: the later or the earlier wins); a later set
//!   replaces what an earlier one set for the same key and scope;
//! - the mode is kept with the constraint, so whoever acts on it keeps its meaning
//!   (POLICYHINT-007): the table judges nothing about satisfiability, which is the
//!   receiver's own business.
//!
//! A constraint without `scope_ref` applies to the configured default scope, which is the
//! effective scope a violation names. A refused set changes nothing.

use super::message::{Mode, PolicyMessage};
use crate::p1::pb::policyhint::{Constraint, PolicyHintSet};
use crate::payload::shown;
use crate::profile::{profile_codec, Ctx, Profile, WireError};
use std::collections::HashMap;
use swp_core::ErrorCode;

/// Default bound on constraints in effect per channel.
pub const DEFAULT_MAX_CONSTRAINTS: usize = 256;
/// The reference's known key.
pub const REFERENCE_KEY: &str = "swp.test.region";
/// The reference's name for the scope of an unscoped constraint.
pub const DEFAULT_SCOPE: &str = "session";

/// What happens to a constraint whose key is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnknownKeys {
    /// Dropped; the rest of the set applies (the reference).
    #[default]
    Ignore,
    /// Dropped and reported in a `POLICY_VIOLATION` with reason `unknown_key`.
    Violation,
    /// The whole set is refused.
    Reject,
}

/// Which of two disagreeing constraints of one set wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConflictPolicy {
    /// The later one in the set (the reference).
    #[default]
    LastWins,
    /// The earlier one.
    FirstWins,
}

/// The implementation-defined parts of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Keys the receiver knows; empty knows every key.
    pub known_keys: Vec<String>,
    /// The unknown-key policy.
    pub unknown_keys: UnknownKeys,
    /// The conflict rule.
    pub conflicts: ConflictPolicy,
    /// The scope of a constraint without scope_ref.
    pub default_scope: String,
    /// Constraints in effect.
    pub max_constraints: usize,
}

impl Default for Config {
    /// The reference's parameters: one known key ([`REFERENCE_KEY`]), unknown keys
    /// ignored, the later constraint wins, default scope [`DEFAULT_SCOPE`].
    fn default() -> Self {
        Config {
            known_keys: vec![REFERENCE_KEY.to_owned()],
            unknown_keys: UnknownKeys::Ignore,
            conflicts: ConflictPolicy::LastWins,
            default_scope: DEFAULT_SCOPE.to_owned(),
            max_constraints: DEFAULT_MAX_CONSTRAINTS,
        }
    }
}

impl Config {
    /// Every key known: what a judge that does not know the peer's keys can check.
    pub fn lenient() -> Config {
        Config {
            known_keys: Vec::new(),
            ..Config::default()
        }
    }
}

/// A constraint in effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effective {
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
    /// The mode.
    pub mode: Mode,
    /// The effective scope: its scope_ref, or the default scope.
    pub scope: String,
}

/// What a message did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A set applied: the constraints of it now in effect (after conflict resolution, in
    /// the order their key and scope first appear), and those with unknown keys that the
    /// policy drops or reports (`Violation`: an endpoint reports each).
    HintSet {
        /// Now in effect.
        effective: Vec<Effective>,
        /// Unknown keys, dropped.
        unknown: Vec<Effective>,
    },
    /// A `POLICY_HINT_ACK`.
    Ack,
    /// A `POLICY_VIOLATION`.
    Violation,
    /// A `POLICY_ERR`.
    Error,
}

/// A refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// A key the receiver does not know, under policy `Reject` (POLICYHINT-006).
    #[error("constraint key {0} is unknown to this receiver, whose policy refuses unknown keys (swp-policyhint §4)")]
    UnknownKey(String),
    /// Too many constraints: in effect, or in one set.
    #[error("too many constraints: at most {0} in effect, and in one set")]
    Full(usize),
}

impl PolicyError {
    /// The canonical code: an unknown key refused by policy is a policy refusal; a full
    /// table a quota.
    pub fn code(&self) -> ErrorCode {
        match self {
            PolicyError::UnknownKey(_) => ErrorCode::SecurityPolicy,
            PolicyError::Full(_) => ErrorCode::RateLimitExceeded,
        }
    }

    /// The `PolicyErr.code` an endpoint answers with.
    pub fn reply_code(&self) -> &'static str {
        match self {
            PolicyError::UnknownKey(_) => super::codes::UNKNOWN_KEY,
            PolicyError::Full(_) => super::codes::TOO_MANY,
        }
    }
}

/// The constraints of one channel.
#[derive(Debug, Clone)]
pub struct Policy {
    config: Config,
    table: HashMap<(String, String), Effective>,
}

impl Default for Policy {
    /// The reference's parameters.
    fn default() -> Self {
        Policy::new(Config::default())
    }
}

impl Policy {
    /// A table with these parameters (a cap of 0 is raised to 1).
    pub fn new(mut config: Config) -> Self {
        config.max_constraints = config.max_constraints.max(1);
        Policy {
            config,
            table: HashMap::new(),
        }
    }

    /// The parameters.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The constraint in effect for `key` in `scope` (the default scope for "").
    pub fn effective(&self, scope: &str, key: &str) -> Option<&Effective> {
        let scope = if scope.is_empty() {
            self.config.default_scope.as_str()
        } else {
            scope
        };
        self.table.get(&(scope.to_owned(), key.to_owned()))
    }

    fn entry(&self, c: &Constraint) -> Effective {
        Effective {
            key: c.key.clone(),
            value: c.value.clone(),
            // Decoding checked the mode; an unchecked one is taken as the weakest.
            mode: Mode::parse(&c.mode).unwrap_or(Mode::May),
            scope: if c.scope_ref.is_empty() {
                self.config.default_scope.clone()
            } else {
                c.scope_ref.clone()
            },
        }
    }

    fn set(&mut self, s: &PolicyHintSet) -> Result<Seen, PolicyError> {
        let known = |k: &str| {
            self.config.known_keys.is_empty() || self.config.known_keys.iter().any(|x| x == k)
        };
        // A set longer than the table can hold is refused before any work: what one frame
        // can cost is then bounded by the cap, not by the frame (a set of 120k constraints
        // took seconds of CPU when duplicates were looked for pairwise).
        if s.constraints.len() > self.config.max_constraints {
            return Err(PolicyError::Full(self.config.max_constraints));
        }
        let mut effective: Vec<Effective> = Vec::new();
        // Where each (key, scope) sits in `effective`: one lookup per constraint.
        let mut at: HashMap<(&str, &str), usize> = HashMap::new();
        let mut unknown = Vec::new();
        for c in &s.constraints {
            if !known(&c.key) {
                if self.config.unknown_keys == UnknownKeys::Reject {
                    return Err(PolicyError::UnknownKey(shown(&c.key)));
                }
                unknown.push(self.entry(c));
                continue;
            }
            let scope = if c.scope_ref.is_empty() {
                self.config.default_scope.as_str()
            } else {
                c.scope_ref.as_str()
            };
            match at.get(&(c.key.as_str(), scope)) {
                Some(&i) if self.config.conflicts == ConflictPolicy::LastWins => {
                    if let Some(x) = effective.get_mut(i) {
                        *x = self.entry(c);
                    }
                }
                Some(_) => {}
                None => {
                    at.insert((c.key.as_str(), scope), effective.len());
                    effective.push(self.entry(c));
                }
            }
        }
        let new = effective
            .iter()
            .filter(|e| !self.table.contains_key(&(e.scope.clone(), e.key.clone())))
            .count();
        if self.table.len() + new > self.config.max_constraints {
            return Err(PolicyError::Full(self.config.max_constraints));
        }
        for e in &effective {
            self.table
                .insert((e.scope.clone(), e.key.clone()), e.clone());
        }
        Ok(Seen::HintSet { effective, unknown })
    }
}

impl WireError for PolicyError {
    fn code(&self) -> ErrorCode {
        PolicyError::code(self)
    }
}

impl Profile for Policy {
    profile_codec!(PolicyMessage);
    type Config = Config;
    type Seen = Seen;
    type Error = PolicyError;

    fn new(config: Config) -> Self {
        Policy::new(config)
    }

    /// Steps the table with a decoded message.
    fn step(&mut self, _ctx: Ctx<'_>, m: &PolicyMessage) -> Result<Seen, PolicyError> {
        match m {
            PolicyMessage::HintSet(s) => self.set(s),
            PolicyMessage::HintAck(_) => Ok(Seen::Ack),
            PolicyMessage::Violation(_) => Ok(Seen::Violation),
            PolicyMessage::Err(_) => Ok(Seen::Error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(key: &str, value: &str, mode: &str, scope: &str) -> Constraint {
        Constraint {
            key: key.into(),
            value: value.into(),
            mode: mode.into(),
            scope_ref: scope.into(),
        }
    }

    fn set(cs: Vec<Constraint>) -> PolicyMessage {
        PolicyMessage::HintSet(PolicyHintSet { constraints: cs })
    }

    fn values(s: Seen) -> Vec<(String, String, String)> {
        match s {
            Seen::HintSet { effective, .. } => effective
                .into_iter()
                .map(|e| (e.key, e.value, e.scope))
                .collect(),
            other => panic!("{other:?}"),
        }
    }

    /// A set longer than the cap is refused before any work, and a full-sized set of
    /// distinct scopes is handled in linear time (it was pairwise: 60k constraints took
    /// 16 s of CPU).
    #[test]
    fn a_set_over_the_cap_is_refused_before_any_work() {
        let k = REFERENCE_KEY;
        let mut p = Policy::default();
        let many: Vec<Constraint> = (0..120_000)
            .map(|i| c(k, "eu", "MUST", &format!("s{i}")))
            .collect();
        let e = p.step(Ctx::default(), &set(many)).unwrap_err();
        assert_eq!(e, PolicyError::Full(DEFAULT_MAX_CONSTRAINTS));
        assert!(
            p.effective("s0", k).is_none(),
            "a refused set changes nothing"
        );
        let full: Vec<Constraint> = (0..DEFAULT_MAX_CONSTRAINTS)
            .map(|i| c(k, "eu", "MUST", &format!("s{i}")))
            .collect();
        let s = p.step(Ctx::default(), &set(full)).unwrap();
        assert_eq!(values(s).len(), DEFAULT_MAX_CONSTRAINTS);
    }

    #[test]
    fn conflicts_resolve_deterministically_and_scopes_stay_apart() {
        let k = REFERENCE_KEY;
        let mut p = Policy::default();
        let s = p
            .step(
                Ctx::default(),
                &set(vec![
                    c(k, "mars", "MUST", ""),
                    c(k, "eu", "MUST", ""),
                    c(k, "us", "MAY", "t"),
                ]),
            )
            .unwrap();
        assert_eq!(
            values(s),
            vec![
                (k.into(), "eu".into(), DEFAULT_SCOPE.into()),
                (k.into(), "us".into(), "t".into())
            ]
        );
        assert_eq!(p.effective("", k).unwrap().value, "eu");
        assert_eq!(p.effective("t", k).unwrap().mode, Mode::May);
        let mut f = Policy::new(Config {
            conflicts: ConflictPolicy::FirstWins,
            ..Config::default()
        });
        let s = f
            .step(
                Ctx::default(),
                &set(vec![c(k, "mars", "MUST", ""), c(k, "eu", "MUST", "")]),
            )
            .unwrap();
        assert_eq!(
            values(s),
            vec![(k.into(), "mars".into(), DEFAULT_SCOPE.into())]
        );
        // A later set replaces.
        f.step(Ctx::default(), &set(vec![c(k, "eu", "SHOULD", "")]))
            .unwrap();
        assert_eq!(f.effective("", k).unwrap().mode, Mode::Should);
    }

    #[test]
    fn unknown_keys_follow_the_policy() {
        let k = REFERENCE_KEY;
        let s = vec![c("x.unknown", "1", "MUST", ""), c(k, "eu", "MUST", "")];
        let mut p = Policy::default();
        match p.step(Ctx::default(), &set(s.clone())).unwrap() {
            Seen::HintSet { effective, unknown } => {
                assert_eq!(effective.len(), 1);
                assert_eq!(unknown[0].key, "x.unknown");
            }
            other => panic!("{other:?}"),
        }
        let mut r = Policy::new(Config {
            unknown_keys: UnknownKeys::Reject,
            ..Config::default()
        });
        let e = r.step(Ctx::default(), &set(s)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::SecurityPolicy);
        // Refused: nothing applied.
        assert_eq!(r.effective("", k), None);
        let mut l = Policy::new(Config::lenient());
        assert!(matches!(
            l.step(Ctx::default(), &set(vec![c("x.unknown", "1", "MAY", "")])).unwrap(),
            Seen::HintSet { ref unknown, .. } if unknown.is_empty()
        ));
    }

    #[test]
    fn a_full_table_refuses() {
        let mut p = Policy::new(Config {
            max_constraints: 1,
            ..Config::lenient()
        });
        p.step(Ctx::default(), &set(vec![c("a", "1", "MUST", "")]))
            .unwrap();
        p.step(Ctx::default(), &set(vec![c("a", "2", "MUST", "")]))
            .unwrap();
        assert_eq!(
            p.step(Ctx::default(), &set(vec![c("b", "1", "MUST", "")])),
            Err(PolicyError::Full(1))
        );
    }
}
