//! Authorization bound to the channel identity (A2A-016, MCP-028): the reference over TLS
//! with a generated PKI and two client identities, configured right and configured wrong.
//! Each wrong policy (refusing nobody, refusing both identities, refusing the second one
//! everything) is caught by exactly the vectors of the pair it breaks; the vectors run with
//! no policy declared are not applicable, never passed. a2a_0115 (task_ids per tenant, two
//! connections at once) passes under every policy: none of them touches task ids. The
//! session engine's unit tests show it failing a stack with one id space for all peers.

mod common;
use common::root;

use std::collections::BTreeSet;
use swp_conform::report::result::Verdict;

const AUTHZ: [&str; 5] = ["mcp_0022", "mcp_0023", "mcp_0024", "a2a_0113", "a2a_0114"];

const RULES: &str = r#", --authz-deny, "${TLS_SECOND_IDENTITY}=tools/list", --authz-deny, "${TLS_SECOND_IDENTITY}=echo""#;

/// Runs the authorization vectors against reference-tls.yaml with its `--authz-deny` rules
/// replaced by `rules` (and, when `declare` is false, no second identity declared); returns
/// each vector's verdict by short id.
fn run(name: &str, rules: &str, declare: bool) -> Vec<(String, Verdict)> {
    let text = std::fs::read_to_string(root().join("implementations/manifests/reference-tls.yaml"))
        .unwrap();
    assert!(
        text.contains(RULES),
        "reference-tls.yaml no longer has the rules this test swaps"
    );
    let mut text = text.replace(RULES, rules);
    if !declare {
        text = text.replace("    second_identity: {}", "");
    }
    let rs = common::run_with_manifest(&format!("authz-{name}"), &text, &AUTHZ);
    rs.iter()
        .map(|r| (r.vector_id[..8].to_owned(), r.verdict))
        .collect()
}

fn failing(rs: &[(String, Verdict)]) -> BTreeSet<&str> {
    for (id, v) in rs {
        assert!(
            *v == Verdict::Pass || *v == Verdict::Fail,
            "{id}: {} (every vector runs and is judged)",
            v.as_str()
        );
    }
    rs.iter()
        .filter(|(_, v)| *v == Verdict::Fail)
        .map(|(id, _)| id.as_str())
        .collect()
}

#[test]
fn the_reference_policy_passes_every_authorization_vector() {
    assert_eq!(failing(&run("reference", RULES, true)), BTreeSet::new());
}

#[test]
fn a_policy_that_refuses_nobody_is_caught() {
    assert_eq!(
        failing(&run("open", "", true)),
        BTreeSet::from(["mcp_0023", "a2a_0114"])
    );
}

#[test]
fn a_policy_that_ignores_the_identity_is_caught() {
    // Both identities refused the same requests: the refusal is not bound to the identity.
    let both = format!(
        r#"{RULES}, --authz-deny, "${{TLS_CLIENT_IDENTITY}}=tools/list", --authz-deny, "${{TLS_CLIENT_IDENTITY}}=echo""#
    );
    assert_eq!(
        failing(&run("both", &both, true)),
        BTreeSet::from(["mcp_0022", "a2a_0113"])
    );
}

#[test]
fn a_policy_that_ignores_the_method_is_caught() {
    // The second identity refused its answered request too: the refusal is not bound to the
    // method.
    let blanket = format!(r#"{RULES}, --authz-deny, "${{TLS_SECOND_IDENTITY}}=ping""#);
    assert_eq!(
        failing(&run("blanket", &blanket, true)),
        BTreeSet::from(["mcp_0024"])
    );
}

#[test]
fn without_a_declared_second_identity_the_pair_is_not_applicable() {
    let rs = run("undeclared", "", false);
    for (id, v) in &rs {
        let expect = if id.starts_with("mcp_0022") || id.starts_with("a2a_0113") {
            // Served to the first identity: still runs (AUTHZ_* are declared).
            Verdict::Pass
        } else {
            Verdict::NotApplicable
        };
        assert_eq!(*v, expect, "{id}");
    }
}
