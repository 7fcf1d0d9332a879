//! Supervision of misbehaving endpoints (the `badsut` example): a stack that signals rejects
//! by closing yields "reject observed, code not observable"; one that hangs yields `timeout`;
//! one that crashes yields `crash`; one that floods is cut off at the bound; and in every
//! case the run goes on. Ctrl-C keeps the partial results and reaps every child.

mod common;
use common::{catalog, root};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use swp_conform::catalog::vector::{Method, Topology};
use swp_conform::method::{self, Setup};
use swp_conform::report::result::Verdict;
use swp_conform::sut::Sut;

/// A manifest for `badsut MODE`. Modes where a pass is expected get the default 3 s step, so
/// a loaded machine cannot turn a slow answer into a timeout; modes where only timeouts,
/// crashes and cut-offs are expected keep a 400 ms step so the test stays short. The 60 ms
/// quiet window never decides a pass here: the reject mode is `close`, so every accept is
/// confirmed by the probe's answer, not by silence.
fn manifest(mode: &str, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let step_ms = if mode == "close-on-reject" || mode == "bad-stream" {
        3000
    } else {
        400
    };
    let text = format!(
        r#"name: badsut-{mode}
version: "0"
kind: endpoint
start: {{command: "{}", args: ["{mode}"]}}
methods: [session]
claims: {{class: C0, profiles: [1, 2]}}
limits: {{MAX_FRAME_BYTES: 8388608, MIN_MSG_ID_BYTES: 8, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 4096, MAX_PAYLOAD_BYTES: 8387584}}
policy: {{timestamp_freshness: false, unknown_profile: close}}
params: {{ANSWERED_METHOD: ping, STREAM_METHOD: stream, STREAM_PARAMS: {{}}, STREAM_FAIL_PARAMS: {{fail: true}}}}
session:
  transport: stdio
  reject_signal: {{mode: close}}
  probe:
    frame: {{profile_id: 1, msg_type: 1, payload: {{json: {{jsonrpc: "2.0", id: "probe", method: "ping"}}}}}}
    reply_profile_id: 1
    reply_msg_type: 2
  timing: {{step_ms: {step_ms}, vector_ms: 8000, silence_ms: 60, max_read_bytes: 1048576}}
"#,
        common::example("badsut").display()
    );
    let p = dir.join(format!("badsut-{mode}.yaml"));
    std::fs::write(&p, text).unwrap();
    p
}

fn run(mode: &str, ids: &[&str]) -> Vec<(String, Verdict, String)> {
    let cat = catalog();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("session-{mode}"));
    let sut = Sut::load(&manifest(mode, &work)).unwrap_or_else(|e| panic!("{e}"));
    let plan: Vec<_> = cat
        .vectors
        .iter()
        .filter(|v| ids.contains(&v.vector.header.id.as_str()))
        .collect();
    assert_eq!(plan.len(), ids.len());
    method::run(&cat, &sut, &Setup::new(&work), &plan)
        .unwrap()
        .into_iter()
        .map(|r| (r.vector_id, r.verdict, r.detail.unwrap_or_default()))
        .collect()
}

const ACCEPT: &str = "core_0002_valid_typical_frame";
const REJECT: &str = "core_0003_invalid_zero_length";
const VERSION: &str = "core_0008_unsupported_version";

#[test]
fn a_stack_that_closes_on_reject_gives_code_not_observable_and_passes_accepts() {
    let r = run(
        "close-on-reject",
        &[
            ACCEPT,
            REJECT,
            VERSION,
            "core_0018_unknown_profile_no_error_path",
        ],
    );
    assert_eq!(r[0].1, Verdict::Pass, "{r:?}");
    assert_eq!(r[1].1, Verdict::RejectCodeNotObservable, "{r:?}");
    assert_eq!(r[2].1, Verdict::RejectCodeNotObservable, "{r:?}");
    // Closing on an unknown profile is exactly what core_0018 asks for.
    assert_eq!(r[3].1, Verdict::Pass, "{r:?}");
}

#[test]
fn a_hanging_endpoint_times_out_and_the_run_goes_on() {
    let r = run("hang", &[ACCEPT, REJECT]);
    assert_eq!(r[0].1, Verdict::Timeout, "{r:?}");
    assert_eq!(r[1].1, Verdict::Timeout, "{r:?}");
}

#[test]
fn a_crashing_endpoint_is_reported_and_the_run_goes_on() {
    let r = run("crash", &[ACCEPT, VERSION]);
    assert_eq!(r[0].1, Verdict::Crash, "{r:?}");
    assert!(r[0].2.contains("signal"), "{r:?}");
    assert_eq!(r[1].1, Verdict::Crash, "{r:?}");
}

#[test]
fn a_flooding_endpoint_is_cut_off_at_the_bound() {
    let r = run("flood", &[ACCEPT]);
    assert_eq!(r[0].1, Verdict::Fail, "{r:?}");
    assert!(r[0].2.contains("cut off"), "{r:?}");
    let r = run("flood4g", &[ACCEPT]);
    assert_eq!(r[0].1, Verdict::Fail, "{r:?}");
    assert!(r[0].2.contains("4294967295"), "{r:?}");
}

/// Interrupts a run of the hanging endpoint with `signal` once a vector is in flight: the
/// report is written with the vectors that finished, the one in flight is `interrupted`
/// (not the crash the harness itself caused), the run does not succeed, and no SUT process
/// survives.
fn interrupt_with(signal: &str) {
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("session-interrupt-{signal}"));
    let _ = std::fs::remove_dir_all(&work);
    let m = manifest("hang", &work);
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_swp-conform"));
    let mut child = Command::new(bin)
        .args(["run", "--sut"])
        .arg(&m)
        .args(["--filter", "core_000*", "--out"])
        .arg(work.join("out"))
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Interrupt once a vector is in flight: its endpoint, a child of the run, exists.
    let pid = child.id();
    let until = std::time::Instant::now() + Duration::from_secs(30);
    let suts = loop {
        let kids = children_of(pid);
        if !kids.is_empty() {
            break kids;
        }
        assert!(
            std::time::Instant::now() < until,
            "no SUT started within 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap()
        .success());
    let status = child.wait().unwrap();
    assert!(!status.success(), "an interrupted run must not succeed");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("out/report.json")).unwrap())
            .unwrap();
    assert_eq!(report["run"]["interrupted"], true);
    let n = report["total"].as_u64().unwrap()
        + report["not_applicable"].as_array().unwrap().len() as u64;
    assert!((1..9).contains(&n), "partial results expected, got {n}");
    let verdicts: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verdict"].as_str().unwrap_or(""))
        .collect();
    assert!(
        verdicts.contains(&"interrupted") && !verdicts.contains(&"crash"),
        "{verdicts:?}"
    );
    // No SUT process of this run may survive: checked by PID, not by command line, so the
    // endpoints of tests running in parallel are not mistaken for leftovers.
    let alive: Vec<u32> = suts
        .iter()
        .copied()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| !s.contains(") Z "))
        })
        .collect();
    assert!(alive.is_empty(), "children left behind: {alive:?}");
}

#[test]
fn ctrl_c_keeps_partial_results_and_reaps_every_child() {
    interrupt_with("INT");
}

#[test]
fn sigterm_and_sighup_are_handled_as_ctrl_c() {
    interrupt_with("TERM");
    interrupt_with("HUP");
}

fn children_of(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name, which is in parentheses and may hold spaces.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(parent) {
            out.push(pid);
        }
    }
    out
}

#[test]
fn a_stream_with_response_partials_and_no_error_is_caught_at_its_shoulds() {
    let got = run(
        "bad-stream",
        &[
            "mcp_0013_stream_partial_then_terminal_success",
            "mcp_0014_stream_partial_then_terminal_error",
            "mcp_0020_stream_partials_are_correlated_notifications",
        ],
    );
    let verdicts: Vec<(&str, Verdict)> = got.iter().map(|(i, v, _)| (i.as_str(), *v)).collect();
    assert_eq!(
        verdicts,
        [
            // The MUST holds: the flow ends in a result on the request's msg_id.
            (
                "mcp_0013_stream_partial_then_terminal_success",
                Verdict::Pass
            ),
            // The SHOULDs do not: a result after the failure, partials as responses.
            ("mcp_0014_stream_partial_then_terminal_error", Verdict::Fail),
            (
                "mcp_0020_stream_partials_are_correlated_notifications",
                Verdict::Fail
            ),
        ],
        "{got:#?}"
    );
    assert!(got[1].2.contains("does not contain"), "{}", got[1].2);
    assert!(got[2].2.contains("expected a notification"), "{}", got[2].2);
}

#[test]
fn a_stream_without_a_terminal_response_fails_the_must() {
    let got = run(
        "unterminated-stream",
        &["mcp_0013_stream_partial_then_terminal_success"],
    );
    assert_eq!(got[0].1, Verdict::Timeout, "{got:#?}");
    assert!(
        got[0].2.contains("after 2 partial output(s)"),
        "{}",
        got[0].2
    );
}

/// Runs the intermediary vectors against `badrelay` in `mode`.
fn run_relay(mode: &str) -> Vec<swp_conform::report::result::VectorResult> {
    let bad = common::example("badrelay");
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("session-badrelay-{mode}"));
    std::fs::create_dir_all(&work).unwrap();
    let text = std::fs::read_to_string(root().join("implementations/manifests/reference-relay.yaml"))
        .unwrap()
        .replace("command: ${SWP_REF}", &format!("command: \"{}\"", bad.display()))
        .replace(
            r#"args: [relay, --listen, "tcp://127.0.0.1:0", --port-file, "${PORT_FILE}", --upstream, "${UPSTREAM}"]"#,
            &format!(r#"args: ["${{PORT_FILE}}", "${{UPSTREAM}}"]
  env: {{BADRELAY_MODE: {mode}}}"#),
        );
    let m = work.join("badrelay.yaml");
    std::fs::write(&m, text).unwrap();
    let cat = catalog();
    let sut = Sut::load(&m).unwrap_or_else(|e| panic!("{e}"));
    // Every vector of the intermediary topology.
    let plan: Vec<_> = cat
        .vectors
        .iter()
        .filter(|v| {
            v.vector
                .frames()
                .is_some_and(|b| b.topology == Some(Topology::Intermediary))
                && v.vector.header.methods.contains(&Method::Session)
        })
        .collect();
    // mcp_0001, mcp_0002, mcp_0015 and obs_0002 (a trace context through the intermediary).
    assert_eq!(plan.len(), 4, "the relay vectors");
    method::run(&cat, &sut, &Setup::new(&work), &plan).unwrap()
}

#[test]
fn a_relay_that_reserialises_json_is_caught_by_the_byte_preservation_vector() {
    let r = run_relay("reserialise");
    // Compact JSON survives a compact re-serialisation (mcp_0001, and mcp_0002 upstream to
    // client); whitespace and escapes do not (mcp_0015).
    common::assert_fails_exactly(&r, &["mcp_0015"]);
    let v = r
        .iter()
        .find(|x| x.vector_id.starts_with("mcp_0015"))
        .unwrap();
    assert!(
        v.detail
            .as_deref()
            .unwrap_or_default()
            .contains("payload differs"),
        "{v:?}"
    );
}

/// Only the payload must be preserved: a relay that re-issues msg_ids and re-stamps
/// timestamps, and maps answers back, passes every relay vector.
#[test]
fn a_relay_that_reissues_msg_ids_passes_the_relay_vectors() {
    let r = run_relay("reissue");
    common::assert_fails_exactly(&r, &[]);
    assert!(r.iter().all(|x| x.verdict == Verdict::Pass), "{r:#?}");
}

/// An answer that reaches the client on the relay's own msg_id breaks correlation.
#[test]
fn a_relay_that_loses_the_clients_msg_id_is_caught() {
    let r = run_relay("lose-id");
    common::assert_fails_exactly(&r, &["mcp_0002", "mcp_0015"]);
    let v = r
        .iter()
        .find(|x| x.vector_id.starts_with("mcp_0002"))
        .unwrap();
    assert!(
        v.detail
            .as_deref()
            .unwrap_or_default()
            .contains("not the client's request msg_id"),
        "{v:?}"
    );
}
