//! The `mcp_native` method: the engine against the in-repo mock MCP server (`mockmcp`
//! example, no network) at every protocol version and over Streamable HTTP, the mock's
//! broken modes (each schema or session defect fails the run at MUST with its rule), and the
//! `mcpnative` namespace against the real MCP servers at pinned versions (installed by
//! scripts/install-mcp-servers.sh, lockfiles included). Real servers deviate; their verdicts
//! are compared with reports/third-party/<server>/expected.json so a change in either
//! direction shows: every non-pass there names the rule it breaks (or why it is no
//! deviation) and the observed behaviour, and a failure for another reason than the one
//! recorded is a change too. The defects a server showed in passing (incidental
//! observations, one per requirement and key over the run) are compared with
//! reports/third-party/<server>/incidental.json the same way. `SWP_UPDATE_REPORTS=1`
//! rewrites report.json, expected.json and incidental.json (keeping the recorded rules)
//! and then fails, so the rewrite is reviewed. Attribution is under test too: a defect is
//! the failure of the vector whose own step sees it, and an incidental observation
//! everywhere else (a stdout banner, an unknown method's error code in vectors that only
//! use the method to see the session go on).

mod common;
use common::expected::{compare_expected, read_expected, rebuild_expected};
use common::{catalog, explain, root};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use swp_conform::catalog::Catalog;
use swp_conform::method::{self, Setup};
use swp_conform::plan::select::{select, Selection};
use swp_conform::report::result::{NaCause, VectorResult, Verdict};
use swp_conform::sut::Sut;

fn run(cat: &Catalog, sut: &Sut, work: &Path) -> Vec<VectorResult> {
    run_only(cat, sut, work, &[])
}

/// Runs the vectors of the `mcpnative` namespace matching `filter` (all when empty).
fn run_only(cat: &Catalog, sut: &Sut, work: &Path, filter: &[&str]) -> Vec<VectorResult> {
    std::fs::create_dir_all(work).unwrap();
    let sel = Selection {
        namespaces: vec!["mcpnative".into()],
        filter: filter.iter().map(|f| f.to_string()).collect(),
        ..Default::default()
    };
    let plan = select(cat, &sel).unwrap();
    assert!(
        plan.len() >= if filter.is_empty() { 40 } else { 1 },
        "the mcpnative selection has {} vectors",
        plan.len()
    );
    method::run(cat, sut, &Setup::new(work), &plan).unwrap()
}

fn verdicts(rs: &[VectorResult]) -> BTreeMap<String, String> {
    rs.iter()
        .map(|r| (r.vector_id.clone(), r.verdict.as_str().to_owned()))
        .collect()
}

/// The run's incidental observations as the report counts them: one per requirement and
/// key, whichever vectors saw it.
fn incidentals(rs: &[VectorResult]) -> BTreeSet<(String, String)> {
    rs.iter()
        .flat_map(|r| &r.incidental)
        .map(|i| (i.requirement.clone(), i.key.clone()))
        .collect()
}

/// The vectors that saw incidental observations, with their keys.
fn seen_by(rs: &[VectorResult]) -> String {
    rs.iter()
        .filter(|r| !r.incidental.is_empty())
        .map(|r| {
            let keys: Vec<String> = r
                .incidental
                .iter()
                .map(|i| format!("{} ({})", i.key, i.detail))
                .collect();
            format!("{}: {}", r.vector_id, keys.join("; "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a result is not applicable only because of the negotiated version or the
/// transport (the vector's declared scope), never because of something the mock lacks.
fn out_of_scope(r: &VectorResult) -> bool {
    let d = r.detail.as_deref().unwrap_or("");
    r.verdict == Verdict::NotApplicable
        && (d.contains("the session runs at")
            || d.contains("the manifest asks for")
            || d.contains("transport"))
}

/// A manifest for the mock server: `mode` and `extra` arguments, driven over `transport`
/// at `version`, with `start_ms` of start-up grace.
fn mock_sut_with(
    tag: &str,
    mode: &str,
    extra: &[&str],
    transport: &str,
    version: &str,
    start_ms: u64,
) -> (Sut, PathBuf) {
    let dir = root().join(format!("target/mcp-native-test/mock-{tag}"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut args: Vec<String> = vec![format!("{mode:?}")];
    args.extend(extra.iter().map(|a| format!("{a:?}")));
    if transport == "http" {
        args.extend(["\"--port-file\"".into(), "\"${PORT_FILE}\"".into()]);
    }
    // The mock asks the client only on stdio: over HTTP its tool answer would need the
    // server's own stream.
    let asks = if transport == "stdio" {
        "    - {name: ask-llm, arguments: {topic: greetings}, does: [sampling]}\n    - {name: ask-user, does: [elicitation]}\n"
    } else {
        ""
    };
    let text = format!(
        r#"name: mockmcp-{tag}
version: "0"
kind: mcp-server
start: {{command: "{}", args: [{}]}}
methods: [mcp_native]
limits: {{MAX_FRAME_BYTES: 8388608, MIN_MSG_ID_BYTES: 8, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 4096, MAX_PAYLOAD_BYTES: 8387584}}
policy: {{timestamp_freshness: false}}
mcp_native:
  transport: {transport}
  protocol_version: "{version}"
  timing: {{step_ms: 3000, vector_ms: 20000, start_ms: {start_ms}, max_read_bytes: 1048576}}
  templates: {{"mock://items/{{id}}": {{id: "42"}}}}
  tools:
    - {{name: echo, arguments: {{message: "hello"}}, does: [logging]}}
{asks}"#,
        common::example("mockmcp").display(),
        args.join(", ")
    );
    let p = dir.join("manifest.yaml");
    std::fs::write(&p, text).unwrap();
    (Sut::load(&p).unwrap(), dir)
}

fn mock_sut(mode: &str) -> (Sut, PathBuf) {
    mock_sut_with(mode, mode, &[], "stdio", "2025-06-18", 3000)
}

/// Every vector passes or is out of the run's scope (version, transport), and no defect was
/// seen in passing either; returns the vectors that ran.
fn assert_all_pass(rs: &[VectorResult]) -> Vec<String> {
    let wrong: Vec<&VectorResult> = rs
        .iter()
        .filter(|r| r.verdict != Verdict::Pass && !out_of_scope(r))
        .collect();
    assert!(
        wrong.is_empty(),
        "{}",
        explain(&wrong.into_iter().cloned().collect::<Vec<_>>())
    );
    // Attribution invents nothing: a conformant server shows no defect in passing.
    assert!(incidentals(rs).is_empty(), "{}", seen_by(rs));
    rs.iter()
        .filter(|r| r.verdict == Verdict::Pass)
        .map(|r| r.vector_id.clone())
        .collect()
}

/// Whether the vector started the server (its transcript opens with the start), rather
/// than running on a session an earlier vector left.
fn started_a_server(r: &VectorResult) -> bool {
    r.transcript
        .iter()
        .any(|e| e.data.starts_with("started mcp-native"))
}

/// Whether the official MCP schemas the judge reads are here (`MCP_SCHEMA_DIR`, which
/// `.ci/run` points at the mirror beside the checkout). Without them (a fresh clone) the
/// test says why it is skipped, unless `SWP_REQUIRE_MCP_SCHEMAS=1` (CI) makes their absence
/// a failure.
fn schemas_here(test: &str) -> bool {
    let dir = swp_conform::method::mcpnative::schema::schema_dir();
    if dir
        .as_ref()
        .is_some_and(|d| d.join("2025-06-18/schema.json").is_file())
    {
        return true;
    }
    let at = dir.map_or_else(
        || "nowhere: MCP_SCHEMA_DIR is not set and none were fetched".to_owned(),
        |d| format!("not at {}", d.display()),
    );
    assert!(
        std::env::var("SWP_REQUIRE_MCP_SCHEMAS").as_deref() != Ok("1"),
        "SWP_REQUIRE_MCP_SCHEMAS=1 but the official MCP schemas are {at}"
    );
    eprintln!(
        "mcp_native::{test}: skipped: the official MCP schemas are {at} (run `swp-conform schemas fetch`, or set MCP_SCHEMA_DIR to a directory of <version>/schema.json)"
    );
    false
}

#[test]
fn mock_conformant_server_passes_every_vector_at_every_version() {
    if !schemas_here("mock_conformant_server_passes_every_vector_at_every_version") {
        return;
    }
    let cat = catalog();
    for version in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        let (sut, work) = mock_sut_with(
            &format!("good-{version}"),
            "good",
            &[],
            "stdio",
            version,
            3000,
        );
        let ran = assert_all_pass(&run(&cat, &sut, &work));
        let stateless = ran.iter().any(|id| id.starts_with("mcpnative_0040"));
        assert_eq!(stateless, version == "2026-07-28", "{version}: {ran:?}");
        assert!(ran.len() >= 25, "{version}: only {ran:?} ran");
    }
}

#[test]
fn mock_server_passes_the_same_vectors_over_streamable_http() {
    if !schemas_here("mock_server_passes_the_same_vectors_over_streamable_http") {
        return;
    }
    let cat = catalog();
    for version in ["2025-06-18", "2025-11-25"] {
        let (sut, work) = mock_sut_with(
            &format!("stdio-{version}"),
            "good",
            &[],
            "stdio",
            version,
            3000,
        );
        let stdio = assert_all_pass(&run(&cat, &sut, &work));
        let (sut, work) = mock_sut_with(
            &format!("http-{version}"),
            "http",
            &[],
            "http",
            version,
            5000,
        );
        let rs = run(&cat, &sut, &work);
        // The HTTP mock does not ask the client (its manifest declares no such tool).
        let asks = |r: &VectorResult| {
            r.verdict == Verdict::NotApplicable
                && r.detail
                    .as_deref()
                    .unwrap_or("")
                    .contains("declares no tool with does")
        };
        let rs: Vec<VectorResult> = rs.into_iter().filter(|r| !asks(r)).collect();
        let http = assert_all_pass(&rs);
        let http_only: Vec<&String> = http.iter().filter(|id| !stdio.contains(id)).collect();
        let stdio_only: Vec<&String> = stdio.iter().filter(|id| !http.contains(id)).collect();
        // Only the transport's own vectors differ: the HTTP ones (SSE resumability too),
        // and stdin EOF.
        assert!(
            http_only
                .iter()
                .all(|id| id.starts_with("mcpnative_005") || id.starts_with("mcpnative_0066")),
            "{version}: {http_only:?}"
        );
        assert!(
            stdio_only
                .iter()
                .all(|id| ["mcpnative_0031", "mcpnative_0062", "mcpnative_0063"]
                    .iter()
                    .any(|p| id.starts_with(p))),
            "{version}: {stdio_only:?}"
        );
        assert!(http_only.len() >= 7, "{version}: {http_only:?}");
    }
}

/// Sharing sessions changes no verdict: the conformant mock and the lax one (whose
/// deviations retire the sessions they break) get the same results with every vector on a
/// server of its own, and the shared run starts far fewer servers.
#[test]
fn shared_sessions_give_the_verdicts_of_one_server_per_vector() {
    if !schemas_here("shared_sessions_give_the_verdicts_of_one_server_per_vector") {
        return;
    }
    let cat = catalog();
    for mode in ["good", "lax"] {
        // Work directories of its own: another test runs the good mock at the same time,
        // and two runs in one directory overwrite each other's server logs.
        let (sut, work) = mock_sut_with(
            &format!("{mode}-shared"),
            mode,
            &[],
            "stdio",
            "2025-06-18",
            3000,
        );
        let shared = run(&cat, &sut, &work);
        let (_, work) = mock_sut_with(
            &format!("{mode}-alone"),
            mode,
            &[],
            "stdio",
            "2025-06-18",
            3000,
        );
        let p = work.join("manifest.yaml");
        let text = std::fs::read_to_string(&p).unwrap() + "  share_session: false\n";
        std::fs::write(&p, text).unwrap();
        let alone_sut = Sut::load(&p).unwrap();
        let alone = run(&cat, &alone_sut, &work);
        assert_eq!(
            verdicts(&shared),
            verdicts(&alone),
            "{mode}\n{}",
            explain(&shared)
        );
        assert_eq!(incidentals(&shared), incidentals(&alone), "{mode}");
        let starts = |rs: &[VectorResult]| rs.iter().filter(|r| started_a_server(r)).count();
        assert!(
            starts(&shared) * 2 < starts(&alone),
            "{mode}: {} servers started shared, {} alone",
            starts(&shared),
            starts(&alone)
        );
    }
}

/// A server on a port the harness chooses (`${PORT}`) gets a spare started while a vector
/// runs: the `fresh` vectors take it instead of waiting for a start-up, the server the other
/// vectors use stays running beside them, and no verdict changes against the same server
/// found through a port file (no spare).
#[test]
fn spare_servers_change_no_verdict_and_save_the_starts() {
    if !schemas_here("spare_servers_change_no_verdict_and_save_the_starts") {
        return;
    }
    let cat = catalog();
    let (sut, work) = mock_sut_with("http-portfile", "http", &[], "http", "2025-06-18", 5000);
    let by_file = run(&cat, &sut, &work);
    let (_, work) = mock_sut_with("http-port", "http", &[], "http", "2025-06-18", 5000);
    let p = work.join("manifest.yaml");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace(r#""--port-file", "${PORT_FILE}""#, r#""--port", "${PORT}""#);
    assert!(text.contains("${PORT}"), "{text}");
    std::fs::write(&p, text).unwrap();
    let by_port = run(&cat, &Sut::load(&p).unwrap(), &work);
    assert_eq!(
        verdicts(&by_file),
        verdicts(&by_port),
        "{}",
        explain(&by_port)
    );
    assert_eq!(incidentals(&by_file), incidentals(&by_port));
    let started = |rs: &[VectorResult]| {
        rs.iter()
            .filter(|r| {
                r.transcript
                    .iter()
                    .any(|e| e.data.starts_with("started mcp-native") && !e.data.contains("ahead"))
            })
            .map(|r| r.vector_id.clone())
            .collect::<Vec<_>>()
    };
    let ahead: Vec<&str> = by_port
        .iter()
        .filter(|r| {
            r.transcript
                .iter()
                .any(|e| e.data.contains("ahead of the vector"))
        })
        .map(|r| r.vector_id.as_str())
        .collect();
    // Only the first vector waited for a start; every fresh vector found a spare listening.
    assert_eq!(started(&by_port).len(), 1, "{:?}", started(&by_port));
    assert!(
        ahead.iter().any(|id| id.starts_with("mcpnative_0025")),
        "{ahead:?}"
    );
    assert!(started(&by_file).len() > 1, "{:?}", started(&by_file));
    assert!(work.join("sut-stderr/spare-1.log").is_file());
}

/// An Invalid Request may be answered with its own id or with a null one (JSON-RPC 2.0 §5;
/// docs/spec-issues.md SI-043): both pass mcpnative_0010, and the null id is no defect.
#[test]
fn an_invalid_request_may_be_answered_with_a_null_id() {
    if !schemas_here("an_invalid_request_may_be_answered_with_a_null_id") {
        return;
    }
    let cat = catalog();
    for mode in ["good", "nullid"] {
        let (sut, work) = mock_sut(mode);
        let rs = run_only(&cat, &sut, &work, &["mcpnative_0010_*"]);
        assert_eq!(rs.len(), 1, "{mode}");
        assert_eq!(rs[0].verdict, Verdict::Pass, "{mode}\n{}", explain(&rs));
        assert!(rs[0].incidental.is_empty(), "{mode}\n{}", seen_by(&rs));
    }
}

/// A request before `initialize` (0011) is judged only where the server can know it came
/// first: over Streamable HTTP a server with sessions refuses it (passes), and one without
/// sessions, which MCP allows, is out of the vector's scope by its choice instead of failing.
#[test]
fn a_server_without_sessions_is_out_of_scope_for_a_request_before_initialize() {
    if !schemas_here("a_server_without_sessions_is_out_of_scope_for_a_request_before_initialize") {
        return;
    }
    let cat = catalog();
    for (mode, want) in [
        ("http", Verdict::Pass),
        ("http-sessionless", Verdict::NotApplicable),
    ] {
        let (sut, work) = mock_sut_with(mode, mode, &[], "http", "2025-06-18", 5000);
        let rs = run_only(&cat, &sut, &work, &["mcpnative_0011_*"]);
        assert_eq!(rs.len(), 1, "{mode}");
        assert_eq!(rs[0].verdict, want, "{mode}\n{}", explain(&rs));
        if want == Verdict::NotApplicable {
            let why = rs[0].detail.as_deref().unwrap_or("");
            assert!(why.contains("no Mcp-Session-Id"), "{mode}: {why}");
            assert_eq!(rs[0].na_cause, Some(NaCause::SutChoice), "{mode}");
        }
    }
    // Over stdio the connection is the session: the lax server's answer still fails.
    let (sut, work) = mock_sut("lax");
    let rs = run_only(&cat, &sut, &work, &["mcpnative_0011_*"]);
    assert_eq!(rs[0].verdict, Verdict::Fail, "lax\n{}", explain(&rs));
}

/// A run against an MCP server is about MCP: its report has no SWP class lines (which
/// listed every SWP vector as untested), and its claim line says why there is no class.
#[test]
fn an_mcp_only_report_has_no_swp_class_lines() {
    if !schemas_here("an_mcp_only_report_has_no_swp_class_lines") {
        return;
    }
    use swp_conform::cli::{run_report, RunOptions};
    let cat = catalog();
    let (sut, work) = mock_sut_with("good-report", "good", &[], "stdio", "2025-06-18", 3000);
    let plan: Vec<_> = cat.vectors.iter().collect();
    let mut runner = method::open(&cat, &sut, &Setup::new(&work)).unwrap();
    let opts = RunOptions {
        pattern: "*".into(),
        quiet: true,
        ..Default::default()
    };
    let rep = run_report(
        &cat,
        &sut,
        &plan,
        &opts,
        runner.as_mut(),
        &mut [],
        &swp_conform::method::Cancel::new(),
    )
    .unwrap();
    assert!(!rep.run_failed, "{}", explain(&rep.failures));
    assert!(rep.classes.is_empty(), "{:?}", rep.classes);
    let md = swp_conform::report::render_all(&rep)
        .unwrap()
        .into_iter()
        .find(|(name, _)| *name == "report.md")
        .map(|(_, text)| text)
        .unwrap();
    assert!(md.contains("Claim: none (no SWP class vector ran)"), "{md}");
    assert!(!md.contains("incomplete"), "{md}");
}

#[test]
fn a_counter_offer_of_a_supported_version_opens_the_session() {
    if !schemas_here("a_counter_offer_of_a_supported_version_opens_the_session") {
        return;
    }
    let cat = catalog();
    let (sut, work) = mock_sut_with(
        "counter",
        "good",
        &["--max-version", "2025-03-26"],
        "stdio",
        "2025-06-18",
        3000,
    );
    // Only the two vectors this is about: at 2025-03-26 the rest of the catalog waits out
    // its steps to no purpose.
    let rs = run_only(&cat, &sut, &work, &["mcpnative_0001_*", "mcpnative_0014_*"]);
    let v = verdicts(&rs);
    assert_eq!(v["mcpnative_0001_initialize"], "pass", "{}", explain(&rs));
    assert_eq!(
        v["mcpnative_0014_version_counter_offer"],
        "pass",
        "{}",
        explain(&rs)
    );
}

#[test]
fn start_up_time_is_granted_before_the_first_step() {
    if !schemas_here("start_up_time_is_granted_before_the_first_step") {
        return;
    }
    let cat = catalog();
    let (sut, work) = mock_sut_with("slow", "slow", &[], "stdio", "2025-06-18", 10000);
    let rs = run_only(&cat, &sut, &work, &["mcpnative_0001_*"]);
    let r = rs
        .iter()
        .find(|r| r.vector_id == "mcpnative_0001_initialize")
        .unwrap();
    assert_eq!(r.verdict, Verdict::Pass, "{}", explain(&rs));
}

/// The deliberately broken server: each defect fails the run (a failing vector whose
/// requirement is absolute) and names the rule it breaks, in exactly the vectors whose own
/// steps see it. Where another vector only meets the defect in passing (the initialize
/// result every vector opens with, the tool list a `pick` chooses from, the resource a
/// `pick` reads), it is an incidental observation under the same rule, not that vector's
/// failure: before attribution, such a defect failed every vector that met it.
#[test]
fn each_schema_defect_of_a_broken_server_fails_at_must() {
    if !schemas_here("each_schema_defect_of_a_broken_server_fails_at_must") {
        return;
    }
    let cat = catalog();
    let mut wrong = Vec::new();
    // Over Streamable HTTP, beside the others: a resumption (`Last-Event-ID`) that replays
    // from the event it names, so the response the client already had comes again.
    let replay = std::thread::spawn(|| {
        let (sut, work) = mock_sut_with(
            "broken-replay",
            "broken-replay",
            &[],
            "http",
            "2025-06-18",
            5000,
        );
        run(&catalog(), &sut, &work)
    });
    // (defect, the vector about it, its rule, every vector that fails; None: not listed)
    let cases: [(&str, &str, &str, Option<&[&str]>); 12] = [
        // 0014 opens with an expectation of its own (a counter-offer), so it judges the
        // initialize result too.
        (
            "serverinfo",
            "mcpnative_0001",
            "MCPN-020",
            Some(&["mcpnative_0001", "mcpnative_0014"]),
        ),
        // 0017 walks the tool list as its own step, and 0060 lists the tools it calls in
        // its own step; the vectors that pick a tool find no named one and do not apply.
        (
            "toolname",
            "mcpnative_0003",
            "MCPN-020",
            Some(&["mcpnative_0003", "mcpnative_0017", "mcpnative_0060"]),
        ),
        // The official schemas let a result carry more members; the exact emptiness of a
        // ping result is the ping rule's.
        (
            "ping",
            "mcpnative_0007",
            "MCPN-008",
            Some(&["mcpnative_0007"]),
        ),
        // 0020's pick reads the text resource on its way to the blob; 0064 reads a
        // resource of the template, whose contents carry the same mimeType.
        (
            "mimetype",
            "mcpnative_0012",
            "MCPN-020",
            Some(&["mcpnative_0012", "mcpnative_0064"]),
        ),
        (
            "prompt",
            "mcpnative_0013",
            "MCPN-020",
            Some(&["mcpnative_0013"]),
        ),
        // Every vector whose own step sends a request sees its answer twice.
        ("twice", "mcpnative_0001", "MCPN-021", None),
        // The sampling request arrives while 0030's `pick` lists the tools: it is the
        // vector's all the same, because 0030 tests MCPN-022; the tool-list vectors meet
        // it in passing.
        (
            "sampling",
            "mcpnative_0030",
            "MCPN-022",
            Some(&["mcpnative_0030"]),
        ),
        // An image whose data is not base64: only the vector that calls every tool sees it.
        (
            "content",
            "mcpnative_0060",
            "MCPN-070",
            Some(&["mcpnative_0060"]),
        ),
        // The tool answers with an error after the client's answer: both round trips.
        (
            "roundtrip",
            "mcpnative_0062",
            "MCPN-005",
            Some(&["mcpnative_0062", "mcpnative_0063"]),
        ),
        // A nested object in the form breaks the schema of elicitation/create; the
        // request is the step's, since the step waits for it.
        (
            "elicitschema",
            "mcpnative_0063",
            "MCPN-020",
            Some(&["mcpnative_0063"]),
        ),
        (
            "template",
            "mcpnative_0064",
            "MCPN-078",
            Some(&["mcpnative_0064"]),
        ),
        // The vectors that call one tool twice with the same arguments meet the cache:
        // three calls in flight together, and the logging vector's two calls.
        (
            "repeat",
            "mcpnative_0065",
            "MCPN-021",
            Some(&["mcpnative_0061", "mcpnative_0065"]),
        ),
    ];
    // Each defect's server runs in its own thread and work directory: the cases are
    // independent, and each spends its time waiting on its server.
    let runs: Vec<(String, Vec<VectorResult>)> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .iter()
            .map(|(defect, ..)| {
                let cat = &cat;
                s.spawn(move || {
                    let mode = format!("broken-{defect}");
                    let (sut, work) = mock_sut(&mode);
                    let rs = run(cat, &sut, &work);
                    (mode, rs)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a defect's run panicked"))
            .collect()
    });
    for ((_, vector, rule, failing), (mode, rs)) in cases.into_iter().zip(runs) {
        let hit = rs.iter().find(|r| r.vector_id.starts_with(vector));
        match hit {
            Some(r)
                if r.verdict == Verdict::Fail
                    && r.absolute
                    && r.requirements.iter().any(|q| q == rule) => {}
            _ => wrong.push(format!(
                "{mode}: expected {vector} to fail at MUST ({rule})\n{}",
                explain(&rs)
            )),
        }
        for r in rs.iter().filter(|r| r.verdict == Verdict::Fail) {
            if !r.absolute {
                wrong.push(format!("{mode}: {} fails below MUST", r.vector_id));
            }
        }
        let failed: Vec<String> = rs
            .iter()
            .filter(|r| r.verdict != Verdict::Pass && !out_of_scope(r))
            .filter(|r| r.verdict != Verdict::NotApplicable)
            .map(|r| r.vector_id.split('_').take(2).collect::<Vec<_>>().join("_"))
            .collect();
        if let Some(want) = failing {
            if failed != want {
                wrong.push(format!(
                    "{mode}: {failed:?} did not pass, expected exactly {want:?}\n{}",
                    explain(&rs)
                ));
            }
        }
        // In passing, only this defect's rule is seen.
        if let Some((req, key)) = incidentals(&rs).into_iter().find(|(req, _)| req != rule) {
            wrong.push(format!(
                "{mode}: an incidental {req} {key:?}\n{}",
                seen_by(&rs)
            ));
        }
    }
    // The duplicated answer to a set-up `initialize` is not the failure of a vector whose
    // own step only sends a notification.
    let (sut, work) = mock_sut("broken-twice");
    let rs = run_only(&cat, &sut, &work, &["mcpnative_0002_*"]);
    assert_eq!(rs[0].verdict, Verdict::Pass, "{}", explain(&rs));
    assert!(
        rs[0].incidental.iter().any(|i| i.requirement == "MCPN-021"),
        "{}",
        seen_by(&rs)
    );
    // It fails 0066 alone, at MUST, with the redelivery rule (and the one-response rule the
    // second copy breaks), and shows nothing in passing.
    let rs = replay.join().expect("the replay defect's run panicked");
    let failed: Vec<&VectorResult> = rs
        .iter()
        .filter(|r| !matches!(r.verdict, Verdict::Pass | Verdict::NotApplicable))
        .collect();
    let caught = |r: &VectorResult| {
        r.vector_id.starts_with("mcpnative_0066")
            && r.verdict == Verdict::Fail
            && r.absolute
            && r.requirements.iter().any(|q| q == "MCPN-075")
    };
    if failed.len() != 1 || !caught(failed[0]) || !incidentals(&rs).is_empty() {
        wrong.push(format!(
            "broken-replay: expected 0066 alone to fail at MUST (MCPN-075)\n{}\n{}",
            explain(&rs),
            seen_by(&rs)
        ));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// The breaks whose rule is a SHOULD, or starts at 2025-11-25, each caught by its vector
/// alone: a log level the server ignores (MCPN-071, SHOULD), and a tool schema that is no
/// valid JSON Schema (MCPN-074, from 2025-11-25).
#[test]
fn a_log_level_ignored_and_a_broken_tool_schema_are_caught() {
    if !schemas_here("a_log_level_ignored_and_a_broken_tool_schema_are_caught") {
        return;
    }
    let cat = catalog();
    let (sut, work) = mock_sut("broken-loglevel");
    let rs = run_only(&cat, &sut, &work, &["mcpnative_0061_*", "mcpnative_0004_*"]);
    let v = verdicts(&rs);
    assert_eq!(
        v.get("mcpnative_0061_logging_during_a_call")
            .map(String::as_str),
        Some("fail"),
        "{}",
        explain(&rs)
    );
    let r = &rs[rs
        .iter()
        .position(|r| r.vector_id.starts_with("mcpnative_0061"))
        .unwrap()];
    assert!(!r.absolute, "MCPN-071 is a SHOULD: {}", explain(&rs));
    assert!(
        r.detail
            .as_deref()
            .unwrap_or("")
            .contains("below emergency")
            || r.detail.as_deref().unwrap_or("").contains("emergency"),
        "{}",
        explain(&rs)
    );
    assert_eq!(
        v.get("mcpnative_0004_tools_call_advertised_tool")
            .map(String::as_str),
        Some("pass")
    );
    let (sut, work) = mock_sut_with(
        "broken-toolschema",
        "broken-toolschema",
        &["--max-version", "2025-11-25"],
        "stdio",
        "2025-11-25",
        3000,
    );
    let rs = run_only(&cat, &sut, &work, &["mcpnative_0067_*", "mcpnative_0003_*"]);
    let r = rs
        .iter()
        .find(|r| r.vector_id.starts_with("mcpnative_0067"))
        .expect("0067 ran");
    assert!(
        r.verdict == Verdict::Fail && r.absolute && r.requirements.iter().any(|q| q == "MCPN-074"),
        "{}",
        explain(&rs)
    );
    assert!(
        rs.iter()
            .any(|r| r.vector_id.starts_with("mcpnative_0003") && r.verdict == Verdict::Pass),
        "the schema is valid MCP: the list passes\n{}",
        explain(&rs)
    );
}

#[test]
fn mock_lax_server_fails_exactly_its_deviations() {
    if !schemas_here("mock_lax_server_fails_exactly_its_deviations") {
        return;
    }
    let cat = catalog();
    let (sut, work) = mock_sut("lax");
    let rs = run(&cat, &sut, &work);
    for r in &rs {
        let want = match r.vector_id.as_str() {
            "mcpnative_0009_malformed_json"
            | "mcpnative_0010_missing_jsonrpc"
            | "mcpnative_0011_request_before_initialize" => Verdict::Fail,
            _ if out_of_scope(r) => Verdict::NotApplicable,
            _ => Verdict::Pass,
        };
        assert_eq!(r.verdict, want, "{}\n{}", r.vector_id, explain(&rs));
    }
}

/// A server that prints one banner line on stdout breaks the stdio rule once: that is one
/// incidental observation of the run, and every vector is judged on the valid messages, so
/// each gets the verdict the conformant server gets.
#[test]
fn a_stdout_banner_is_one_defect_of_the_run_not_a_failure_per_vector() {
    if !schemas_here("a_stdout_banner_is_one_defect_of_the_run_not_a_failure_per_vector") {
        return;
    }
    let cat = catalog();
    let (sut, work) = mock_sut("good");
    let good = run(&cat, &sut, &work);
    let (sut, work) = mock_sut("banner");
    let banner = run(&cat, &sut, &work);
    assert_eq!(
        verdicts(&banner),
        verdicts(&good),
        "{}\n{}",
        explain(&banner),
        seen_by(&banner)
    );
    let seen = incidentals(&banner);
    assert_eq!(seen.len(), 1, "{}", seen_by(&banner));
    let (req, key) = seen.iter().next().unwrap();
    assert_eq!(req, "MCPN-020", "{key}");
    assert!(key.contains("stdout"), "{key}");
    // Exactly the vectors that started the server saw the banner and say so (those out of
    // the run's version scope too: they learn the version from the server); a vector on a
    // session an earlier one opened never read the banner.
    let saw: Vec<&str> = banner
        .iter()
        .filter(|r| !r.incidental.is_empty())
        .map(|r| r.vector_id.as_str())
        .collect();
    let starters: Vec<&str> = banner
        .iter()
        .filter(|r| started_a_server(r))
        .map(|r| r.vector_id.as_str())
        .collect();
    assert_eq!(saw, starters, "{}", seen_by(&banner));
    assert!(saw.len() >= 5, "{saw:?}");
    assert!(
        banner.len() > saw.len() + 10,
        "the vectors share too few sessions: {saw:?}"
    );
}

/// The misattribution of issue 26: mcpnative_0028 (a cancellation of an unknown request is
/// ignored) and 0029 (one response per request) send an unknown method only to see the
/// session go on and to count answers, yet they asked for its code, -32601, and a failed
/// expectation was charged to their own requirements (MCPN-028, and MCPN-021 at MUST). A
/// server answering unknown methods with another code (the Python SDK 1.x's -32602
/// "Invalid request parameters") thus failed three vectors for one defect, two of them
/// under rules it kept. Now the code is judged by the rule it belongs to: 0008 fails
/// MCPN-009, and the other vectors record it once, as an incidental observation.
#[test]
fn an_unknown_methods_code_fails_only_the_vector_about_it() {
    if !schemas_here("an_unknown_methods_code_fails_only_the_vector_about_it") {
        return;
    }
    let cat = catalog();
    let (sut, work) = mock_sut("broken-methodcode");
    let rs = run(&cat, &sut, &work);
    let v = verdicts(&rs);
    let r = rs
        .iter()
        .find(|r| r.vector_id == "mcpnative_0008_unknown_method")
        .unwrap();
    assert_eq!(r.verdict, Verdict::Fail, "{}", explain(&rs));
    assert!(r.absolute && r.requirements.iter().any(|q| q == "MCPN-009"));
    for id in [
        "mcpnative_0028_cancel_unknown_request",
        "mcpnative_0029_one_response_per_request",
    ] {
        assert_eq!(v[id], "pass", "{}", explain(&rs));
        let r = rs.iter().find(|r| r.vector_id == id).unwrap();
        assert!(
            r.incidental.iter().any(|i| i.requirement == "MCPN-009"),
            "{id}: {:?}",
            r.incidental
        );
    }
    let failing: Vec<&str> = rs
        .iter()
        .filter(|r| r.verdict != Verdict::Pass && !out_of_scope(r))
        .map(|r| r.vector_id.as_str())
        .collect();
    assert_eq!(
        failing,
        ["mcpnative_0008_unknown_method"],
        "{}",
        explain(&rs)
    );
    let seen = incidentals(&rs);
    assert_eq!(seen.len(), 1, "{}", seen_by(&rs));
    assert!(seen.iter().all(|(req, _)| req == "MCPN-009"), "{seen:?}");
}

#[test]
fn mock_garbage_and_crash_are_reported() {
    if !schemas_here("mock_garbage_and_crash_are_reported") {
        return;
    }
    let cat = catalog();
    // A line that is not JSON instead of the initialize result: the line is the transport's
    // defect (one incidental observation), and initialize goes unanswered. That fails the
    // vector about opening; a vector that only opens a session to get going cannot be
    // decided (inconclusive), and says why.
    let (sut, work) = mock_sut("garbage");
    let rs = run_only(&cat, &sut, &work, &["mcpnative_0001_*", "mcpnative_0003_*"]);
    let r = rs
        .iter()
        .find(|r| r.vector_id == "mcpnative_0001_initialize")
        .unwrap();
    assert_eq!(r.verdict, Verdict::Fail, "{}", explain(&rs));
    assert!(r.detail.as_deref().unwrap_or("").contains("not JSON"));
    assert!(r.absolute);
    let r = rs
        .iter()
        .find(|r| r.vector_id == "mcpnative_0003_tools_list")
        .unwrap();
    assert_eq!(r.verdict, Verdict::Inconclusive, "{}", explain(&rs));
    assert_eq!(r.steps.len(), 2, "{:?}", r.steps);
    assert_eq!(r.steps[1].verdict, None, "{:?}", r.steps);
    let seen = incidentals(&rs);
    assert!(
        seen.iter()
            .any(|(req, key)| req == "MCPN-020" && key.contains("stdout")),
        "{}",
        seen_by(&rs)
    );
    assert!(
        seen.iter().any(|(req, _)| req == "MCPN-001"),
        "{}",
        seen_by(&rs)
    );
    let (sut, work) = mock_sut("crash");
    let rs = run(&cat, &sut, &work);
    let r = rs
        .iter()
        .find(|r| r.vector_id == "mcpnative_0003_tools_list")
        .unwrap();
    assert_eq!(r.verdict, Verdict::Crash, "{}", explain(&rs));
    assert!(r.detail.as_deref().unwrap_or("").contains("status 3"));
}

/// Installs the pinned servers (idempotent); a failure fails the test with the reason.
fn install() {
    let o = Command::new("bash")
        .arg(root().join("scripts/install-mcp-servers.sh"))
        .output()
        .expect("cannot run scripts/install-mcp-servers.sh");
    assert!(
        o.status.success(),
        "installing the pinned MCP servers failed ({}):\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn real_server(cat: &Catalog, manifest: &str, dir: &str) -> Result<(), String> {
    let sut = Sut::load(&root().join("implementations/manifests").join(manifest))
        .map_err(|e| e.to_string())?;
    let work = root().join("target/mcp-native-test").join(dir);
    let started = std::time::Instant::now();
    let rs = run(cat, &sut, &work);
    let out = root().join("reports/third-party").join(dir);
    let expected_path = out.join("expected.json");
    let previous = read_expected(&expected_path).unwrap_or_default();
    // The full report of every run goes beside the run's logs, for reading (a CI artifact).
    // It is not committed: its transcripts and details carry ids and timings a server
    // chooses, so it could be pinned only by redacting what it is read for. What is pinned
    // is expected.json (each verdict, with the rule of every non-pass) and incidental.json.
    write_full_report(cat, &sut, &work, &rs, started.elapsed())?;
    if common::update_switch("SWP_UPDATE_REPORTS") {
        // Out of scope (a capability not declared, another version or transport) is no
        // deviation: its reason is the explanation.
        let rebuilt = rebuild_expected(&rs, &previous, |r| {
            (r.verdict == Verdict::NotApplicable)
                .then(|| format!("no deviation: {}", r.detail.as_deref().unwrap_or("")))
        });
        std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
        write_incidental(&out.join("incidental.json"), &rs)?;
        let text = serde_json::to_string_pretty(&rebuilt).map_err(|e| e.to_string())? + "\n";
        std::fs::write(&expected_path, text).map_err(|e| e.to_string())?;
        return Err(format!("{dir}: rewrote expected.json and incidental.json"));
    }
    let want = read_expected(&expected_path)?;
    let mut diff = compare_expected(&rs, &want);
    diff.extend(compare_incidental(&out.join("incidental.json"), &rs)?);
    if !diff.is_empty() {
        return Err(format!(
            "{dir}: results changed against {} (SWP_UPDATE_REPORTS=1 rewrites it; then explain every non-pass):\n{}\n{}",
            expected_path.display(),
            diff.join("\n"),
            explain(&rs)
        ));
    }
    Ok(())
}

/// Writes the report of one real server's run to `work/report.json`.
fn write_full_report(
    cat: &Catalog,
    sut: &Sut,
    work: &Path,
    rs: &[VectorResult],
    took: std::time::Duration,
) -> Result<(), String> {
    use swp_conform::report::model::{Report, RunInfo, SutInfo};
    let mut report = Report::new(
        RunInfo {
            pattern: "mcpnative_*".into(),
            no_fallback: true,
            timestamp_utc: swp_conform::report::model::rfc3339(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0),
            ),
            runner_git_sha: swp_conform::report::model::runner_git_sha(),
            duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
            command: vec!["cargo test -p swp-conform --test mcp_native".into()],
            interrupted: false,
            ..Default::default()
        },
        SutInfo {
            name: sut.manifest.name.clone(),
            version: sut.manifest.version.clone(),
            reported: method::open(cat, sut, &Setup::new(work))
                .map_err(|e| e.to_string())?
                .describe(),
        },
        rs.to_vec(),
        false,
    );
    report.attach(
        cat,
        swp_conform::cli::digests(cat, sut).map_err(|e| e.to_string())?,
    );
    std::fs::create_dir_all(work).map_err(|e| e.to_string())?;
    std::fs::write(work.join("report.json"), report.to_json()).map_err(|e| e.to_string())
}

/// A defect a real server showed in passing, as reports/third-party/<server>/incidental.json
/// lists it: the report counts it once per run, under its requirement.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Seen {
    requirement: String,
    key: String,
}

fn seen(rs: &[VectorResult]) -> BTreeSet<Seen> {
    incidentals(rs)
        .into_iter()
        .map(|(requirement, key)| Seen { requirement, key })
        .collect()
}

fn write_incidental(path: &Path, rs: &[VectorResult]) -> Result<(), String> {
    let list: Vec<Seen> = seen(rs).into_iter().collect();
    let text = serde_json::to_string_pretty(&list).map_err(|e| e.to_string())? + "\n";
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Every incidental observation that appeared or went away, one line each.
fn compare_incidental(path: &Path, rs: &[VectorResult]) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let want: BTreeSet<Seen> = serde_json::from_str::<Vec<Seen>>(&text)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .into_iter()
        .collect();
    let got = seen(rs);
    let mut diff: Vec<String> = got
        .difference(&want)
        .map(|s| {
            format!(
                "  new incidental observation: {} {:?}",
                s.requirement, s.key
            )
        })
        .collect();
    diff.extend(want.difference(&got).map(|s| {
        format!(
            "  incidental observation gone: {} {:?}",
            s.requirement, s.key
        )
    }));
    if !diff.is_empty() {
        diff.push(format!("  seen in this run:\n{}", seen_by(rs)));
    }
    Ok(diff)
}

/// The real servers, by manifest (implementations/manifests/<name>.yaml) and report
/// directory (reports/third-party/<name>/): both SDKs, stdio and Streamable HTTP.
const REAL_SERVERS: [&str; 10] = [
    "mcp-server-everything",
    "mcp-server-everything-http",
    "mcp-server-everything-http-2025-11-25",
    "mcp-server-filesystem",
    "mcp-server-memory",
    "mcp-server-sequential-thinking",
    "mcp-server-time",
    "mcp-server-fetch",
    "mcp-server-git",
    "mcp-python-sdk",
];

/// How many real servers run at once: enough to overlap their start-ups and waits on two
/// cores, few enough that a Python server's start-up stays well inside its `start_ms`.
const REAL_SERVERS_AT_ONCE: usize = 4;

#[test]
fn real_servers_match_their_expected_verdicts() {
    if !schemas_here("real_servers_match_their_expected_verdicts") {
        return;
    }
    install();
    let cat = catalog();
    // The servers run side by side, each in its own work directory: most of a server's
    // time is its start-up per vector and its answers, not the harness's CPU.
    let queue = std::sync::Mutex::new(REAL_SERVERS.iter());
    let errs = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..REAL_SERVERS_AT_ONCE {
            s.spawn(|| loop {
                let Some(dir) = queue.lock().unwrap().next() else {
                    break;
                };
                if let Err(e) = real_server(&cat, &format!("{dir}.yaml"), dir) {
                    errs.lock().unwrap().push(e);
                }
            });
        }
    });
    let mut errs = errs.into_inner().unwrap();
    errs.sort();
    if errs.is_empty() {
        real_servers_matrix();
    }
    if common::update_switch("SWP_UPDATE_REPORTS") {
        common::rewrote(2 * errs.len(), "SWP_UPDATE_REPORTS");
    }
    assert!(errs.is_empty(), "{}", errs.join("\n\n"));
}

/// The second matrix CI shows: the real servers side by side, built from the reports their
/// runs above wrote (as `swp-conform matrix --rebuild` does), in the browser with the counts
/// of matrix.json.
fn real_servers_matrix() {
    use swp_conform::matrix::model::{ColumnSeed, ColumnStatus, MatrixRun};
    let dir = root().join("target/mcp-native-test");
    let seeds: Vec<ColumnSeed> = REAL_SERVERS
        .iter()
        .map(|s| ColumnSeed {
            label: (*s).to_owned(),
            pair: None,
            run: None,
            missing: None,
        })
        .collect();
    let m = swp_conform::matrix::build(&dir, &seeds, MatrixRun::default());
    swp_conform::matrix::write(&dir, &m).unwrap();
    for c in &m.columns {
        assert_eq!(c.status, ColumnStatus::Complete, "{}: {}", c.label, c.why);
        let cells: usize = c.counts.values().sum();
        assert_eq!(cells, m.counts.rows, "{}: one cell per row", c.label);
    }
    assert!(
        m.rows.iter().all(|r| r.namespace == "mcpnative"),
        "only MCP-native vectors"
    );
    let o = Command::new("bash")
        .arg(root().join("scripts/check-matrix-page.sh"))
        .arg(dir.join("matrix.html"))
        .output()
        .expect("run scripts/check-matrix-page.sh");
    match o.status.code() {
        Some(0) => {
            let check = String::from_utf8_lossy(&o.stdout);
            let want = format!(" data-js-rows=\"{}\"", m.counts.rows);
            assert!(check.contains(&want), "{check}");
        }
        Some(3) if std::env::var("SWP_REQUIRE_BROWSER").as_deref() != Ok("1") => {
            eprintln!("SKIPPED: the MCP server matrix page: no chromium here");
        }
        _ => panic!("the MCP server matrix page: {}", common::output_text(&o)),
    }
}
