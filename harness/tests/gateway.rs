//! The `gateway` namespace (method `mcp_gateway`) against the reference MCP gateway on all
//! three client transports (the transport parity check: one vector set, three transports,
//! the same verdicts), and against deliberately broken gateways (`badgateway` example),
//! each caught by exactly the vectors of the requirement it breaks.

mod common;
use common::{catalog, explain, root};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use swp_conform::catalog::Catalog;
use swp_conform::method::{self, Setup};
use swp_conform::plan::select::{select, Selection};
use swp_conform::report::result::{VectorResult, Verdict};
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
        .filter(|r| r.verdict != Verdict::Pass)
        .map(|r| r.vector_id.split('_').take(2).collect::<Vec<_>>().join("_"))
        .collect()
}

#[test]
fn reference_gateway_passes_on_stdio_http_and_websocket() {
    let cat = catalog();
    for t in ["stdio", "http", "websocket"] {
        let sut = Sut::load(&root().join(format!("implementations/manifests/gateway-{t}.yaml")))
            .unwrap_or_else(|e| panic!("{e}"));
        let work = root().join(format!("target/gateway-test/{t}"));
        let rs = run(&cat, &sut, &work);
        assert!(
            rs.iter().all(|r| r.verdict == Verdict::Pass),
            "{t}:\n{}",
            explain(&rs)
        );
        assert_eq!(
            rs.len(),
            cat.vectors
                .iter()
                .filter(|v| v.vector.header.namespace == "gateway")
                .count()
        );
        // HTTP statuses are judged on http only, and were seen there.
        let statuses = rs
            .iter()
            .flat_map(|r| &r.transcript)
            .filter(|e| e.data.starts_with("HTTP "))
            .count();
        assert_eq!(
            statuses > 0,
            t == "http",
            "{t}: {statuses} HTTP status notes"
        );
    }
}

fn bad_sut(mode: &str) -> (Sut, PathBuf) {
    let dir = root().join(format!("target/gateway-test/bad-{mode}"));
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        r#"name: badgateway-{mode}
version: "0"
kind: mcp-server
start: {{command: "{}", args: ["{mode}", "${{SWP_REF}}"]}}
methods: [mcp_gateway]
limits: {{MAX_FRAME_BYTES: 8388608, MIN_MSG_ID_BYTES: 8, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 4096, MAX_PAYLOAD_BYTES: 8387584}}
policy: {{timestamp_freshness: false}}
mcp_native:
  transport: stdio
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
    let (sut, dir) = bad_sut("fallback");
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
    let (sut, dir) = bad_sut("lenient-id");
    let rs = run(&cat, &sut, &dir);
    let want: BTreeSet<String> = ["gateway_0004".to_owned()].into();
    assert_eq!(failing(&rs), want, "{}", explain(&rs));
}
