//! `swp-conform load` end to end: against the reference endpoint over TCP and TLS (nothing
//! lost, requests sent, percentiles reported, the SUT's resources sampled), against its
//! rate limit and against a SUT that answers every other probe (lost replies reported,
//! status 1), against a SUT that makes up a new error code for every answer (memory and
//! report bounded), and the refusals (status 2). Runs are ~2 s; nothing here asserts a time
//! or a rate.

mod common;
use common::root;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("load-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn load(args: &[&str], out: &Path) -> (Output, Option<Value>) {
    let o = Command::new(env!("CARGO_BIN_EXE_swp-conform"))
        .arg("load")
        .args(args)
        .arg("--out")
        .arg(out)
        .current_dir(root())
        .output()
        .unwrap();
    let report: Option<Value> = std::fs::read_to_string(out.join("load-report.json"))
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    if let Some(r) = &report {
        conforms_to_schema(r);
    }
    (o, report)
}

/// Every load report the tests produce matches the published schema
/// (docs/schema/load-report.schema.json), so tools reading it can rely on it.
fn conforms_to_schema(r: &Value) {
    let text = std::fs::read_to_string(root().join("docs/schema/load-report.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(r)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "load-report.json breaks its schema: {errors:?}"
    );
}

fn explain(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn n(r: &Value, pointer: &str) -> u64 {
    r.pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{pointer} missing in {r:#}"))
}

/// A manifest for the reference without its 64 frames/s rate limit: the conformance
/// manifests set one so the rate-limit vectors apply, and under load it refuses most
/// requests (see `the_reference_rate_limit_shows_as_unmatched_errors_and_lost_replies`).
/// `reference-tls-load.yaml` is committed for the measurements; the TCP one is derived here.
fn without_rate_limit(manifest: &str) -> PathBuf {
    let src = root().join("implementations/manifests").join(manifest);
    let text = std::fs::read_to_string(&src).unwrap();
    let lifted = text
        .replace(", --rate-limit, \"64/1000\"", "")
        .replace("  rate_limit: {frames: 64, window_ms: 1000}\n", "");
    assert!(
        !lifted.contains("--rate-limit") && !lifted.contains("rate_limit:"),
        "{manifest} changed shape:\n{lifted}"
    );
    let dir = out_dir(&format!("{manifest}.sut"));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(manifest);
    std::fs::write(&p, lifted).unwrap();
    p
}

/// The reference at 4 connections × 2 in flight for 2 s: it holds (nothing lost, no error,
/// no connection failure), and the report carries what it must.
fn reference(manifest: &Path) {
    let out = out_dir(&manifest.file_name().unwrap().to_string_lossy());
    let (o, r) = load(
        &[
            "--sut",
            manifest.to_str().unwrap(),
            "--connections",
            "4",
            "--in-flight",
            "2",
            "--duration",
            "2s",
        ],
        &out,
    );
    let r = r.unwrap_or_else(|| panic!("no report\n{}", explain(&o)));
    assert_eq!(n(&r, "/lost"), 0, "{r:#}");
    assert_eq!(n(&r, "/errors"), 0, "{r:#}");
    assert!(n(&r, "/counts/sent") > 0, "{r:#}");
    assert_eq!(n(&r, "/counts/replies"), n(&r, "/counts/sent"), "{r:#}");
    assert_eq!(n(&r, "/counts/connection_failures"), 0, "{r:#}");
    assert_eq!(n(&r, "/counts/connections_opened"), 4, "{r:#}");
    for p in ["p50", "p90", "p99", "p99_9", "max"] {
        assert!(n(&r, &format!("/latency_us/{p}")) > 0, "{p} in {r:#}");
    }
    assert!(n(&r, "/latency_us/p50") <= n(&r, "/latency_us/p99"));
    assert!(n(&r, "/latency_us/p99") <= n(&r, "/latency_us/max"));
    // The harness started the endpoint, so its resources were sampled: at least its
    // listener and the four connections are open.
    assert_eq!(r["resources"]["sampled"], Value::Bool(true), "{r:#}");
    assert!(n(&r, "/resources/rss_kib_max") > 0, "{r:#}");
    assert!(n(&r, "/resources/fds_max") >= 5, "{r:#}");
    assert_eq!(r["held"], Value::Bool(true), "{r:#}");
    assert_eq!(o.status.code(), Some(0), "{}", explain(&o));
    assert!(out.join("load-report.md").is_file());
}

#[test]
fn the_reference_over_tcp_holds() {
    reference(&without_rate_limit("reference-tcp.yaml"));
}

#[test]
fn the_reference_over_tls_holds() {
    reference(&root().join("implementations/manifests/reference-tls-load.yaml"));
}

/// The conformance manifest's rate limit (64 frames/s per connection) under load: the
/// reference refuses a frame over the limit before decoding it, so its error frame carries
/// a msg_id of its own. The load counts it as an unmatched error, the request it refused is
/// never answered and is lost after the reply timeout, and the run does not hold.
#[test]
fn the_reference_rate_limit_shows_as_unmatched_errors_and_lost_replies() {
    let out = out_dir("rate-limited");
    let (o, r) = load(
        &[
            "--sut",
            "implementations/manifests/reference-tcp.yaml",
            "--connections",
            "2",
            "--in-flight",
            "8",
            "--duration",
            "2s",
            "--drain",
            "200ms",
            "--reply-timeout",
            "300ms",
        ],
        &out,
    );
    let r = r.unwrap_or_else(|| panic!("no report\n{}", explain(&o)));
    assert_eq!(o.status.code(), Some(1), "{}", explain(&o));
    assert!(
        n(
            &r,
            "/counts/unmatched_error_codes/by_code/ERR_RATE_LIMIT_EXCEEDED"
        ) > 0,
        "{r:#}"
    );
    assert!(n(&r, "/lost") > 0, "{r:#}");
    assert!(n(&r, "/counts/replies") > 0, "{r:#}");
}

/// A stdio manifest for `badsut MODE` (see `harness/examples/badsut.rs`).
/// How a `badsut` manifest says the SUT refuses: a close-only endpoint needs a probe to pass
/// the manifest check, so the manifest without one declares error frames.
const CLOSES_WITH_PROBE: &str = r#"  reject_signal: {mode: close}
  probe:
    frame: {profile_id: 1, msg_type: 1, payload: {json: {jsonrpc: "2.0", id: "probe", method: "ping"}}}
    reply_profile_id: 1
    reply_msg_type: 2
"#;
const ERROR_FRAMES: &str = "  reject_signal: {mode: error-frame, error_frame: {profile_id: 1, msg_type: 2, code_pointer: /error/data/swp_error}}\n";
const ERROR_FRAMES_WITH_PROBE: &str = r#"  reject_signal: {mode: error-frame, error_frame: {profile_id: 1, msg_type: 2, code_pointer: /error/data/swp_error}}
  probe:
    frame: {profile_id: 1, msg_type: 1, payload: {json: {jsonrpc: "2.0", id: "probe", method: "ping"}}}
    reply_profile_id: 1
    reply_msg_type: 2
"#;

/// A manifest for `badsut MODE` over stdio, refusing as `signal` says.
fn badsut(mode: &str, dir: &Path, signal: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let text = format!(
        r#"name: badsut-{mode}
version: "0"
kind: endpoint
start: {{command: "{}", args: ["{mode}"]}}
methods: [session]
claims: {{class: C0, profiles: [1, 2]}}
limits: {{MAX_FRAME_BYTES: 8388608, MIN_MSG_ID_BYTES: 8, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 4096, MAX_PAYLOAD_BYTES: 8387584}}
policy: {{timestamp_freshness: false, unknown_profile: close}}
session:
  transport: stdio
{signal}"#,
        common::example("badsut").display()
    );
    let p = dir.join(format!("badsut-{mode}.yaml"));
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_sut_that_drops_every_other_reply_is_reported_lost_with_status_1() {
    let out = out_dir("every-other");
    let m = badsut("every-other", &out.with_extension("sut"), CLOSES_WITH_PROBE);
    let (o, r) = load(
        &[
            "--sut",
            m.to_str().unwrap(),
            "--in-flight",
            "4",
            "--duration",
            "2s",
            "--drain",
            "200ms",
            "--reply-timeout",
            "300ms",
        ],
        &out,
    );
    let r = r.unwrap_or_else(|| panic!("no report\n{}", explain(&o)));
    assert_eq!(o.status.code(), Some(1), "{}", explain(&o));
    assert!(n(&r, "/lost") > 0, "{r:#}");
    assert!(n(&r, "/counts/replies") > 0, "{r:#}");
    assert_eq!(r["held"], Value::Bool(false));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("replies lost"),
        "{}",
        explain(&o)
    );
    // One connection (stdio), the process the harness started is sampled.
    assert_eq!(n(&r, "/counts/connections_opened"), 1, "{r:#}");
    assert_eq!(r["resources"]["sampled"], Value::Bool(true), "{r:#}");
}

#[test]
fn a_manifest_without_a_probe_is_refused_naming_the_file_and_the_field() {
    let out = out_dir("no-probe");
    let m = badsut("close-on-reject", &out.with_extension("sut"), ERROR_FRAMES);
    let (o, r) = load(&["--sut", m.to_str().unwrap()], &out);
    assert_eq!(o.status.code(), Some(2), "{}", explain(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("badsut-close-on-reject.yaml") && err.contains("session.probe"),
        "{err}"
    );
    assert!(r.is_none());
}

#[test]
fn a_stdio_endpoint_takes_one_connection() {
    let out = out_dir("stdio-two");
    let m = badsut(
        "close-on-reject",
        &out.with_extension("sut"),
        CLOSES_WITH_PROBE,
    );
    let (o, _) = load(&["--sut", m.to_str().unwrap(), "--connections", "2"], &out);
    assert_eq!(o.status.code(), Some(2), "{}", explain(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--connections 1"));
}

/// A SUT that answers every probe with an error frame under a new 1,000-character code: the
/// count by code keeps 64 codes per connection and reports the 32 most frequent, each cut
/// to 64 characters, the rest summed as other codes, so the harness's memory and its report
/// do not grow with the codes (once 701 MB and a 220 MB report for 13,676 codes).
#[test]
fn a_sut_that_makes_up_a_code_each_time_keeps_memory_and_reports_bounded() {
    let out = out_dir("new-code");
    let m = badsut(
        "new-code",
        &out.with_extension("sut"),
        ERROR_FRAMES_WITH_PROBE,
    );
    let args = [
        "load",
        "--sut",
        m.to_str().unwrap(),
        "--in-flight",
        "16",
        "--duration",
        "3s",
        "--drain",
        "200ms",
        "--out",
        out.to_str().unwrap(),
    ];
    let (o, peak_kib) =
        common::run_measured(Path::new(env!("CARGO_BIN_EXE_swp-conform")), &args, &root());
    let text = std::fs::read_to_string(out.join("load-report.json"))
        .unwrap_or_else(|e| panic!("no report ({e})\n{}", explain(&o)));
    let r: Value = serde_json::from_str(&text).unwrap();
    conforms_to_schema(&r);
    assert_eq!(o.status.code(), Some(1), "{}", explain(&o));
    let errors = n(&r, "/errors");
    let codes = r["counts"]["error_codes"]["by_code"].as_object().unwrap();
    let named: u64 = codes.values().filter_map(Value::as_u64).sum();
    let other = n(&r, "/counts/error_codes/other");
    // Enough distinct codes that an unbounded count would show, every one counted.
    assert!(
        errors > 1_000,
        "{errors} error frames only\n{}",
        explain(&o)
    );
    assert_eq!(named + other, errors, "nothing lost, only summed");
    assert_eq!(
        codes.len(),
        32,
        "{:?}",
        codes.keys().take(3).collect::<Vec<_>>()
    );
    assert!(
        codes.keys().all(|k| k.chars().count() <= 65),
        "codes are cut"
    );
    let md = std::fs::metadata(out.join("load-report.md")).unwrap().len();
    eprintln!(
        "new-code: {errors} error frames, peak RSS {} MiB, load-report.json {} octets, load-report.md {md} octets",
        peak_kib / 1024,
        text.len()
    );
    assert!(
        text.len() < 64 * 1024,
        "load-report.json is {} octets",
        text.len()
    );
    assert!(md < 64 * 1024, "load-report.md is {md} octets");
    assert!(
        String::from_utf8_lossy(&o.stderr).len() < 64 * 1024,
        "stderr names every code"
    );
    assert!(
        peak_kib < 200 * 1024,
        "the harness peaked at {peak_kib} KiB"
    );
}
