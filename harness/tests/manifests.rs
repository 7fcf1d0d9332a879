//! Manifests a vendor writes from the docs: every problem is named with its line and what
//! was expected, a manifest given by its bare file name works, and a testee that gets the
//! protocol wrong stops the run with a message saying what it did.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use swp_conform::support::diag::FileError;
use swp_conform::sut::{Sut, SutError};

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("manifests-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const LIMITS: &str = "limits: {MAX_FRAME_BYTES: 8388608, MIN_MSG_ID_BYTES: 8, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 4096, MAX_PAYLOAD_BYTES: 8387584}\n";

fn problems(text: &str) -> Vec<String> {
    match Sut::parse(text, Path::new("m.yaml"), None) {
        Ok(_) => Vec::new(),
        Err(SutError::File(FileError::Invalid(e))) => {
            e.problems.iter().map(|p| p.to_string()).collect()
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn every_problem_is_listed_with_its_line() {
    let text = format!(
        "name: acme\nversion: '1'\nkind: testee\nmethods: [codec, session]\nclaims: {{class: C9}}\n{LIMITS}policy:\n  timestamp_freshness: false\n  rate_limit: {{frames: 0, window_ms: 1000}}\n"
    );
    let p = problems(&text);
    let want = [
        ("m.yaml:4:", "method session does not fit kind testee"),
        ("m.yaml:5:", "unknown class \"C9\": expected C0..C5"),
        (
            "m.yaml:9:",
            "rate_limit {frames: 0, window_ms: 1000} admits no frame",
        ),
        ("m.yaml:3:", "kind testee needs `start`"),
    ];
    assert_eq!(p.len(), want.len(), "{p:#?}");
    for (at, what) in want {
        assert!(
            p.iter().any(|x| x.starts_with(at) && x.contains(what)),
            "no problem {at} {what:?} in {p:#?}"
        );
    }
}

#[test]
fn sections_of_another_kind_and_missing_endpoint_parts_are_named() {
    let text = format!(
        "name: acme\nversion: '1'\nkind: endpoint\nmethods: [session]\n{LIMITS}policy: {{timestamp_freshness: false}}\nsession:\n  transport: tls\n  reject_signal: {{mode: close}}\nmcp_native: {{transport: stdio, protocol_version: '2025-06-18'}}\n"
    );
    let p = problems(&text);
    for what in [
        "`mcp_native` belongs to kind mcp-server",
        "transport tls needs `tls`",
        "a tcp/tls endpoint needs `address` or `start`",
        "reject_signal mode close needs a `probe`",
    ] {
        assert!(p.iter().any(|x| x.contains(what)), "{what:?} not in {p:#?}");
    }
}

/// An MCP-only manifest carries no SWP sections; an SWP kind without them is told, at the
/// line of its kind, which section is missing.
#[test]
fn only_swp_kinds_need_limits_and_policy() {
    let mcp = "name: srv\nversion: '1'\nkind: mcp-server\nstart: {command: srv}\nmethods: [mcp_native]\nmcp_native: {transport: stdio, protocol_version: '2025-06-18'}\n";
    assert_eq!(problems(mcp), Vec::<String>::new());
    let swp = "name: acme\nversion: '1'\nkind: testee\nstart: {command: t}\nmethods: [codec]\n";
    let p = problems(swp);
    for what in ["kind testee needs `limits`", "kind testee needs `policy`"] {
        assert!(
            p.iter()
                .any(|x| x.starts_with("m.yaml:3:") && x.contains(what)),
            "{what:?} not in {p:#?}"
        );
    }
}

#[test]
fn every_committed_manifest_loads() {
    let dir = common::root().join("implementations/manifests");
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "yaml") {
            Sut::load(&p).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

fn swp_conform() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_swp-conform"));
    c.env_remove("RUST_LOG");
    c
}

#[test]
fn a_manifest_named_without_a_directory_starts_its_testee() {
    let d = scratch("bare");
    let text = format!(
        "name: acme\nversion: '1'\nkind: testee\nstart: {{command: '${{SWP_REF}}', args: [testee]}}\nmethods: [codec]\nclaims: {{profiles: [1]}}\n{LIMITS}policy: {{timestamp_freshness: false}}\n"
    );
    std::fs::write(d.join("my-swp.yaml"), text).unwrap();
    let out = swp_conform()
        .current_dir(&d)
        .args([
            "run",
            "--sut",
            "my-swp.yaml",
            "--filter",
            "core_0002*",
            "--vectors",
        ])
        .arg(common::root().join("vectors"))
        .args(["--out", "out", "-q"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("1 passed, 0 did not pass"), "{text}");
}

/// Runs one vector against `badtestee MODE`; the run must stop (exit 2) naming the mistake.
fn refused(mode: &str) -> String {
    let d = scratch(mode);
    let text = format!(
        "name: acme\nversion: '1'\nkind: testee\nstart: {{command: '{}', args: [{mode}]}}\nmethods: [codec]\nclaims: {{profiles: [1]}}\n{LIMITS}policy: {{timestamp_freshness: false}}\n",
        common::example("badtestee").display()
    );
    let m = d.join("m.yaml");
    std::fs::write(&m, text).unwrap();
    let out = swp_conform()
        .args([
            "run",
            "--filter",
            "core_0002*",
            "--timeout-ms",
            "3000",
            "--sut",
        ])
        .arg(&m)
        .arg("--out")
        .arg(d.join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        !d.join("out/report.json").exists(),
        "a SUT that cannot be driven gets no report of failed vectors"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_testee_logging_on_stdout_is_told_so() {
    let e = refused("log-on-stdout");
    assert!(e.contains("the testee wrote `acme…` on stdout"), "{e}");
    assert!(e.contains("testees log to stderr"), "{e}");
}

#[test]
fn a_testee_writing_newline_delimited_json_gets_a_hint() {
    let e = refused("ndjson");
    assert!(
        e.contains("JSON without the 4-octet big-endian length prefix"),
        "{e}"
    );
}

#[test]
fn a_refused_hello_stops_the_run_with_the_testee_message() {
    let e = refused("refuse-hello");
    assert!(
        e.contains("acme speaks testee protocol 2; upgrade the harness"),
        "{e}"
    );
}

#[test]
fn another_protocol_version_stops_the_run() {
    let e = refused("protocol-2");
    assert!(
        e.contains("speaks testee protocol 2; this harness speaks 1"),
        "{e}"
    );
}

/// An endpoint may end the stream after a reject (CORE-039, SI-002). Declared, the vectors
/// that go on after a reject are not applicable by the SUT's choice; a vector whose only
/// reject is its last step still runs.
#[test]
fn an_endpoint_declaring_it_closes_after_a_reject_is_not_held_to_continuing() {
    let d = scratch("after-close");
    let text = std::fs::read_to_string(
        common::root().join("implementations/manifests/reference-tcp.yaml"),
    )
    .unwrap()
    .replace("after: continue", "after: close");
    assert!(text.contains("after: close"));
    std::fs::write(d.join("closing.yaml"), text).unwrap();
    let out = swp_conform()
        .current_dir(&d)
        .args([
            "run",
            "--sut",
            "closing.yaml",
            "--filter",
            "core_0109*,core_0003*",
            "--vectors",
        ])
        .arg(common::root().join("vectors"))
        .args(["--out", "out", "-q"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = std::fs::read_to_string(d.join("out/report.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&report).unwrap();
    // Not-applicable vectors are listed apart from the results.
    let verdict = |id: &str| {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .chain(v["not_applicable"].as_array().unwrap())
            .find(|r| r["vector_id"].as_str().is_some_and(|x| x.starts_with(id)))
            .map(|r| {
                (
                    r["verdict"].as_str().unwrap_or("").to_owned(),
                    r["detail"].to_string(),
                )
            })
            .unwrap_or_else(|| panic!("{id} not in {report}"))
    };
    let (v109, why) = verdict("core_0109");
    assert_eq!(v109, "not-applicable", "{why}");
    assert!(why.contains("reject_signal.after: close"), "{why}");
    assert_eq!(verdict("core_0003").0, "pass");
}

#[test]
fn after_is_refused_for_an_endpoint_that_closes_on_every_reject() {
    let text = format!(
        "name: acme\nversion: '1'\nkind: endpoint\nmethods: [session]\n{LIMITS}policy: {{timestamp_freshness: false}}\nsession:\n  transport: tcp\n  address: 127.0.0.1:1\n  reject_signal: {{mode: close, after: continue}}\n  probe: {{frame: {{payload: {{json: {{jsonrpc: '2.0', id: p, method: ping}}}}}}, reply_profile_id: 1, reply_msg_type: 2}}\n"
    );
    let p = problems(&text);
    assert!(
        p.iter()
            .any(|x| x.contains("reject_signal.after is for endpoints that send error frames")),
        "{p:#?}"
    );
}

/// An endpoint manifest whose error frame is `error_frame` (a YAML flow mapping).
fn with_error_frame(error_frame: &str) -> String {
    format!(
        "name: acme\nversion: '1'\nkind: endpoint\nmethods: [session]\n{LIMITS}policy: {{timestamp_freshness: false}}\nsession:\n  transport: tcp\n  address: 127.0.0.1:1\n  reject_signal:\n    mode: error-frame\n    error_frame: {error_frame}\n"
    )
}

/// A `code_pointer` that finds nothing in the manifest's own example error frame is refused
/// at load time, naming the file, the line and the field, and where the code is instead;
/// without an example only a pointer that is not one is refused.
#[test]
fn a_code_pointer_that_finds_nothing_in_the_example_is_refused_at_load() {
    let example = r#"{jsonrpc: "2.0", id: null, error: {code: -32600, message: bad, data: {swp_error: ERR_INVALID_ENVELOPE}}}"#;
    let dir = scratch("code-pointer");
    let path = dir.join("vendor.yaml");
    std::fs::write(
        &path,
        with_error_frame(&format!(
            "{{profile_id: 1, msg_type: 2, code_pointer: /error/data/code, example: {example}}}"
        )),
    )
    .unwrap();
    let e = Sut::load(&path)
        .expect_err("a pointer into nothing loaded")
        .to_string();
    let want = format!("{}:12:", path.display());
    assert!(
        e.contains(&want)
            && e.contains("reject_signal.error_frame.code_pointer `/error/data/code` finds nothing in reject_signal.error_frame.example (its ERR_* code is at /error/data/swp_error)"),
        "{e}"
    );
    let number = with_error_frame(&format!(
        "{{profile_id: 1, msg_type: 2, code_pointer: /error/code, example: {example}}}"
    ));
    assert!(
        problems(&number)
            .iter()
            .any(|p| p.contains("`/error/code` finds -32600, not a code string")),
        "{:#?}",
        problems(&number)
    );
    let right = with_error_frame(&format!(
        "{{profile_id: 1, msg_type: 2, code_pointer: /error/data/swp_error, example: {example}}}"
    ));
    assert_eq!(problems(&right), Vec::<String>::new());
    let bare = with_error_frame("{profile_id: 1, msg_type: 2, code_pointer: error/data/swp_error}");
    assert!(
        problems(&bare)
            .iter()
            .any(|p| p.contains("`error/data/swp_error` is not a JSON pointer")),
        "{:#?}",
        problems(&bare)
    );
    let unchecked =
        with_error_frame("{profile_id: 1, msg_type: 2, code_pointer: /error/data/code}");
    assert_eq!(problems(&unchecked), Vec::<String>::new());
}
