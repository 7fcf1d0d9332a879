//! The `gateway` namespace (method `mcp_gateway`) against the reference MCP gateway on all
//! three client transports (the transport parity check: one vector set, three transports,
//! the same verdicts), and against deliberately broken gateways (`badgateway` example),
//! each caught by exactly the vectors of the requirement it breaks.

mod common;
use common::{catalog, explain, root};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use swp_conform::catalog::gateway::GatewayEnvelope;
use swp_conform::catalog::Catalog;
use swp_conform::method::{self, Setup};
use swp_conform::plan::select::{select, Selection};
use swp_conform::report::result::{NaCause, VectorResult, Verdict};
use swp_conform::sut::Sut;

fn run(cat: &Catalog, sut: &Sut, work: &Path) -> Vec<VectorResult> {
    std::fs::create_dir_all(work).unwrap();
    let sel = Selection {
        namespaces: vec!["gateway".into()],
        ..Default::default()
    };
    let plan = select(cat, &sel).unwrap();
    assert!(
        plan.len() >= 20,
        "the gateway namespace has {} vectors",
        plan.len()
    );
    method::run(cat, sut, &Setup::new(work), &plan).unwrap()
}

fn failing(rs: &[VectorResult]) -> BTreeSet<String> {
    rs.iter()
        // Vectors of the contract the SUT does not declare are its choice, not failures.
        .filter(|r| !matches!(r.verdict, Verdict::Pass | Verdict::NotApplicable))
        .map(|r| r.vector_id.split('_').take(2).collect::<Vec<_>>().join("_"))
        .collect()
}

/// The envelope contract each vector needs, by id (`None`: graded under both).
fn needs(cat: &Catalog) -> BTreeMap<String, Option<GatewayEnvelope>> {
    cat.vectors
        .iter()
        .filter(|v| v.vector.header.namespace == "gateway")
        .map(|v| {
            (
                v.vector.header.id.clone(),
                v.vector.header.applies_when.gateway_envelope,
            )
        })
        .collect()
}

/// Every vector of `declared`'s contract (or of none) passed; every vector of the other
/// contract is not applicable, as the SUT's declared choice, saying why.
fn assert_graded_as(cat: &Catalog, rs: &[VectorResult], declared: GatewayEnvelope, what: &str) {
    let needs = needs(cat);
    assert_eq!(rs.len(), needs.len(), "{what}");
    for r in rs {
        let need = needs.get(&r.vector_id).copied().flatten();
        if need.is_none_or(|n| n == declared) {
            assert_eq!(r.verdict, Verdict::Pass, "{what}: {}", explain(rs));
        } else {
            assert_eq!(r.verdict, Verdict::NotApplicable, "{what}: {r:?}");
            assert_eq!(r.na_cause, Some(NaCause::SutChoice), "{what}: {r:?}");
            assert!(
                r.detail
                    .as_deref()
                    .unwrap_or("")
                    .contains("gateway_envelope"),
                "{what}: {r:?}"
            );
        }
    }
    // Both kinds are there: vectors of the other contract were skipped, and some graded.
    let graded = rs.iter().filter(|r| r.verdict == Verdict::Pass).count();
    assert!(graded >= 10 && graded < rs.len(), "{what}: {graded} graded");
}

#[test]
fn reference_gateway_passes_in_both_envelope_policies_on_stdio_http_and_websocket() {
    let cat = catalog();
    for (prefix, declared) in [
        ("gateway", GatewayEnvelope::Seed003),
        ("gateway-mcp", GatewayEnvelope::Mcp),
    ] {
        for t in ["stdio", "http", "websocket"] {
            let name = format!("{prefix}-{t}");
            let sut = Sut::load(&root().join(format!("implementations/manifests/{name}.yaml")))
                .unwrap_or_else(|e| panic!("{e}"));
            let work = root().join(format!("target/gateway-test/{name}"));
            let rs = run(&cat, &sut, &work);
            assert_graded_as(&cat, &rs, declared, &name);
            // HTTP statuses are judged on http only, and were seen there.
            let statuses = rs
                .iter()
                .flat_map(|r| &r.transcript)
                .filter(|e| e.data.starts_with("HTTP "))
                .count();
            assert_eq!(
                statuses > 0,
                t == "http",
                "{name}: {statuses} HTTP status notes"
            );
        }
    }
}

/// A broken gateway running under envelope policy `runs`, its manifest declaring `declares`.
fn bad_sut(mode: &str, runs: &str, declares: &str) -> (Sut, PathBuf) {
    let dir = root().join(format!(
        "target/gateway-test/bad-{mode}-{runs}-as-{declares}"
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        r#"name: badgateway-{mode}
version: "0"
kind: mcp-server
start: {{command: "{}", args: ["{mode}", "${{SWP_REF}}", "{runs}"]}}
methods: [mcp_gateway]
limits: {{MAX_FRAME_BYTES: 8388608, MIN_MSG_ID_BYTES: 8, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 4096, MAX_PAYLOAD_BYTES: 8387584}}
policy: {{timestamp_freshness: false}}
mcp_native:
  transport: stdio
  gateway_envelope: {declares}
  protocol_version: "2025-06-18"
  timing: {{step_ms: 2000, vector_ms: 10000, max_read_bytes: 1048576}}
  params:
    ANSWERED_METHOD: ping
    TOOL_NAME: echo
    TOOL_ARGUMENTS: '{{"message":"swp-conform"}}'
    TOOL_OUTPUT_TEXT: swp-conform
    TYPED_TOOL: add
    TYPED_TOOL_BAD_ARGUMENTS: '{{"a":"one","b":2}}'
    BROKEN_OUTPUT_TOOL: broken_output
    FAILING_TOOL: fail
    FAILING_TOOL_ARGUMENTS: '{{}}'
"#,
        common::example("badgateway").display()
    );
    let p = dir.join("manifest.yaml");
    std::fs::write(&p, text).unwrap();
    (Sut::load(&p).unwrap(), dir)
}

#[test]
fn a_gateway_that_falls_back_to_internal_error_is_caught_by_the_canonical_table_vectors() {
    let cat = catalog();
    let (sut, dir) = bad_sut("fallback", "seed-003", "seed-003");
    let rs = run(&cat, &sut, &dir);
    let want: BTreeSet<String> = [
        "0004", "0005", "0006", "0007", "0008", "0009", "0010", "0012", "0013", "0014", "0017",
        "0020", "0021",
    ]
    .iter()
    .map(|n| format!("gateway_{n}"))
    .collect();
    assert_eq!(failing(&rs), want, "{}", explain(&rs));
    // Each failure names the code it wanted.
    let r = rs
        .iter()
        .find(|r| r.vector_id.starts_with("gateway_0012"))
        .unwrap();
    assert!(
        r.detail
            .as_deref()
            .unwrap_or("")
            .contains("-32603 instead of -32001"),
        "{r:?}"
    );
}

#[test]
fn a_gateway_that_accepts_numeric_ids_is_caught_by_the_envelope_vector() {
    let cat = catalog();
    let (sut, dir) = bad_sut("lenient-id", "seed-003", "seed-003");
    let rs = run(&cat, &sut, &dir);
    let want: BTreeSet<String> = ["gateway_0004".to_owned()].into();
    assert_eq!(failing(&rs), want, "{}", explain(&rs));
}

#[test]
fn a_seed_003_gateway_declaring_the_mcp_envelope_is_caught_by_the_mcp_readings() {
    // The reference, unmodified, run strict while its manifest promises MCP clients: what
    // MCP allows and the seed refuses is exactly what fails.
    let cat = catalog();
    let (sut, dir) = bad_sut("as-is", "seed-003", "mcp");
    let rs = run(&cat, &sut, &dir);
    let want: BTreeSet<String> = ["0022", "0023", "0024"]
        .iter()
        .map(|n| format!("gateway_{n}"))
        .collect();
    assert_eq!(failing(&rs), want, "{}", explain(&rs));
    let r = rs
        .iter()
        .find(|r| r.vector_id.starts_with("gateway_0022"))
        .unwrap();
    // Refused as the seed refuses it: an envelope error where MCP wants the ping answered.
    assert!(r.observed.contains("-32600"), "{r:?}");
    assert!(
        r.detail
            .as_deref()
            .unwrap_or("")
            .contains("an error instead of a result"),
        "{r:?}"
    );
}

#[test]
fn an_mcp_gateway_that_falls_back_to_internal_error_is_caught_by_the_mcp_codes() {
    let cat = catalog();
    let (sut, dir) = bad_sut("fallback", "mcp", "mcp");
    let rs = run(&cat, &sut, &dir);
    // Unknown tools and bad tool input pass on any error (MCP pins no code for them);
    // the unknown method, the parse error and the invalid requests have codes.
    let want: BTreeSet<String> = ["0017", "0024", "0025"]
        .iter()
        .map(|n| format!("gateway_{n}"))
        .collect();
    assert_eq!(failing(&rs), want, "{}", explain(&rs));
}
