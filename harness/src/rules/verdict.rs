//! The verdict vocabulary every profile file speaks: who sent a message ([`Side`]), a named
//! check and the clause it cites ([`Rule`], [`Level`]), what a broken rule yields
//! ([`Violation`]), and the one rule all profiles share, that a payload decodes as its
//! msg_type's message ([`P1_DECODE`], [`decode`]).

/// Who sent a message on the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    /// The conformance harness.
    Harness,
    /// The implementation under test.
    Endpoint,
}

impl Side {
    /// The peer of this side.
    pub fn other(self) -> Side {
        match self {
            Side::Harness => Side::Endpoint,
            Side::Endpoint => Side::Harness,
        }
    }

    /// Index into per-side arrays.
    pub(super) fn index(self) -> usize {
        match self {
            Side::Harness => 0,
            Side::Endpoint => 1,
        }
    }
}

/// How much a requirement binds (the level of its registry entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// MUST (or "required").
    Must,
    /// MUST NOT.
    MustNot,
    /// SHOULD.
    Should,
    /// MAY.
    May,
}

impl Level {
    /// The keyword as the registry spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::MustNot => "MUST NOT",
            Level::Should => "SHOULD",
            Level::May => "MAY",
        }
    }
}

/// One named check and the clause it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Short stable name, `<profile>.<what>`.
    pub name: &'static str,
    /// The profile's short name (A2A, RPC, ...).
    pub profile: &'static str,
    /// The requirement ID it cites (`vectors/requirements/*.yaml`).
    pub requirement: &'static str,
    /// The level of that requirement.
    pub level: Level,
    /// Section of the profile doc (or an SI entry) the rule rests on.
    pub section: &'static str,
    /// What it checks, in one line.
    pub checks: &'static str,
}

impl Rule {
    /// The violation of this rule with the given detail.
    pub(crate) fn violation(&self, detail: impl Into<String>) -> Violation {
        Violation {
            rule: self.name,
            requirement: self.requirement,
            detail: detail.into(),
        }
    }
}

/// A rule a message broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{detail} ({rule}, {requirement})")]
pub struct Violation {
    /// The rule's short stable name, e.g. `rpc.one-terminal-outcome`.
    pub rule: &'static str,
    /// The requirement ID it cites, e.g. `RPC-005`.
    pub requirement: &'static str,
    /// What was wrong with this message.
    pub detail: String,
}

/// The P1 decode rule shared by every profile.
pub(crate) const P1_DECODE: Rule = Rule {
    name: "p1.decode",
    profile: "P1",
    requirement: "P1-001",
    level: Level::Must,
    section: "P1 §2",
    checks: "the payload decodes (proto3) as the message its msg_type carries",
};

/// Decodes the bare message (unknown fields are skipped, P1 §4).
pub(crate) fn decode<M: prost::Message + Default>(bare: &[u8], what: &str) -> Result<M, Violation> {
    M::decode(bare)
        .map_err(|e| P1_DECODE.violation(format!("the payload is not a valid {what}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_violation_displays_its_detail_rule_and_requirement() {
        let v = P1_DECODE.violation("bad octets");
        assert_eq!(v.to_string(), "bad octets (p1.decode, P1-001)");
    }
}
