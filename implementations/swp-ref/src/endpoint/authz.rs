//! The endpoint's authorization policy: which authenticated peer identity may not ask for
//! which MCP method or A2A task kind. Decisions bind both the surfaced channel identity and
//! the request (mcp-mapping §8, a2a-profile §9), so the same request is served to one peer
//! and refused to another; without rules every authenticated peer may ask for everything,
//! and a peer without an identity is never taken for one that no rule names.

use std::collections::BTreeSet;

/// Deny rules, each an `(identity, name)` pair: `name` is an MCP method or an A2A task kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Authz {
    deny: BTreeSet<(String, String)>,
}

/// A `--authz-deny` value that is not `IDENTITY=NAME`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--authz-deny takes IDENTITY=NAME (an MCP method or an A2A task kind), got {0:?}")]
pub struct AuthzRuleError(pub String);

impl Authz {
    /// Adds the rule `IDENTITY=NAME`, split at the last `=` (identities are URIs and may hold
    /// one; method names and task kinds do not).
    pub fn deny(&mut self, rule: &str) -> Result<(), AuthzRuleError> {
        match rule.rsplit_once('=') {
            Some((id, name)) if !id.is_empty() && !name.is_empty() => {
                self.deny.insert((id.to_owned(), name.to_owned()));
                Ok(())
            }
            _ => Err(AuthzRuleError(rule.to_owned())),
        }
    }

    /// Whether `identity` may not ask for `name`.
    ///
    /// A peer without an identity is denied `name` whenever some rule denies it to anyone:
    /// no identity cannot show that the peer is not the one a rule names, so the rule is
    /// not skipped (issue 30, defect 4; docs/spec-issues.md SI-048). `serve` accepts rules
    /// only under mTLS and refuses a client certificate that names no one, so this is the
    /// fail-closed answer for a path that should not occur, not a policy of its own.
    pub fn denies(&self, identity: Option<&str>, name: &str) -> bool {
        match identity {
            Some(id) => self.deny.contains(&(id.to_owned(), name.to_owned())),
            None => self.deny.iter().any(|(_, n)| n == name),
        }
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.deny.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_binds_identity_and_name() {
        let mut a = Authz::default();
        a.deny("spiffe://t/b=tools/call").unwrap();
        assert!(a.denies(Some("spiffe://t/b"), "tools/call"));
        assert!(!a.denies(Some("spiffe://t/a"), "tools/call"));
        assert!(!a.denies(Some("spiffe://t/b"), "ping"));
        // No identity: whatever a rule denies to anyone is denied; the rest is not.
        assert!(a.denies(None, "tools/call"));
        assert!(!a.denies(None, "ping"));
        assert!(!Authz::default().denies(None, "tools/call"));
    }

    #[test]
    fn malformed_rules_are_refused() {
        let mut a = Authz::default();
        for bad in ["", "=x", "id=", "no-equals"] {
            assert_eq!(a.deny(bad), Err(AuthzRuleError(bad.into())));
        }
        assert!(a.is_empty());
        // Split at the last '=': an identity may contain one.
        a.deny("spiffe://t/q?a=b=sum").unwrap();
        assert!(a.denies(Some("spiffe://t/q?a=b"), "sum"));
    }
}
