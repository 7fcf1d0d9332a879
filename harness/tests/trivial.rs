//! The judge against SUTs that do one thing to every frame (`examples/trivialsut.rs`):
//! `reject-all` refuses every frame with an error frame on its msg_id, `reject-all-slow`
//! does so 250 ms late (after the quiet window that confirms accepts), `accept-all` answers
//! nothing. Each runs the whole catalog, and may pass only the vectors marked with its
//! shape (`shape: reject-only` for the first two, `accept-only` for the third): a pass of
//! any other vector is a refusal credited to the wrong frame, or silence taken for an answer.
//! The test prints what each passes, so a new pass is seen in review.

mod common;
use common::catalog;

use std::path::{Path, PathBuf};
use swp_conform::catalog::vector::{Method, Shape};
use swp_conform::method::{self, Setup};
use swp_conform::report::result::Verdict;
use swp_conform::sut::Sut;

/// The `params` block of reference-tls.yaml, so every vector the reference runs applies
/// here too and the two cannot drift apart.
fn reference_params() -> String {
    let tls = common::root().join("implementations/manifests/reference-tls.yaml");
    let text = std::fs::read_to_string(tls).unwrap();
    text.lines()
        .skip_while(|l| !l.starts_with("params:"))
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' ') || l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The manifest of `trivialsut MODE` over stdio: every profile claimed, the reference's
/// params, short timing (nothing it does takes long), a probe where it can be refused.
fn manifest(mode: &str, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let probe = if mode == "accept-all" {
        // It answers nothing, so accepts are confirmed by quiet windows alone.
        String::new()
    } else {
        r#"  probe:
    frame: {profile_id: 1, msg_type: 1, payload: {json: {jsonrpc: "2.0", id: "probe", method: "ping"}}}
    reply_profile_id: 1
    reply_msg_type: 2
"#
        .to_owned()
    };
    let text = format!(
        r#"name: trivial-{mode}
version: "0"
kind: endpoint
start: {{command: "{}", args: ["{mode}"]}}
methods: [session]
claims: {{class: C0, profiles: [1, 2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]}}
params:
{}limits: {{MAX_FRAME_BYTES: 8388608, MIN_MSG_ID_BYTES: 8, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 4096, MAX_PAYLOAD_BYTES: 8387584}}
policy:
  timestamp_freshness: true
  max_clock_skew_ms: 300000
  unknown_profile: error-reply
  rate_limit: {{frames: 64, window_ms: 1000}}
  reject_duplicate_msg_id: true
session:
  transport: stdio
  reject_signal:
    mode: error-frame
    error_frame: {{profile_id: 1, msg_type: 2, code_pointer: /error/data/swp_error}}
    after: continue
{probe}  timing: {{step_ms: 450, silence_ms: 100, vector_ms: 20000}}
"#,
        common::example("trivialsut").display(),
        reference_params(),
    );
    let p = dir.join(format!("trivial-{mode}.yaml"));
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs every session vector against `mode` on four connections at once and checks that it
/// passes only vectors of `shape`; returns how many it executed and passed.
fn passes_only(mode: &str, shape: Shape) -> (usize, Vec<String>) {
    let cat = catalog();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("trivial-{mode}"));
    let sut = Sut::load(&manifest(mode, &work)).unwrap_or_else(|e| panic!("{e}"));
    let plan: Vec<_> = cat
        .vectors
        .iter()
        .filter(|v| v.vector.header.methods.contains(&Method::Session))
        .collect();
    let setup = Setup::new(&work);
    let mut runner = method::open(&cat, &sut, &setup).unwrap();
    let mut helpers: Vec<_> = (0..3)
        .map(|_| method::open(&cat, &sut, &setup).unwrap())
        .collect();
    let rs = method::run_plan_jobs(
        runner.as_mut(),
        &mut helpers,
        &plan,
        &swp_conform::support::cancel::Cancel::new(),
        &mut method::Silence::never(),
        &mut |_| {},
    )
    .unwrap();
    let executed = rs
        .iter()
        .filter(|r| r.verdict != Verdict::NotApplicable)
        .count();
    let mut passed = Vec::new();
    let mut wrong = Vec::new();
    for r in rs.iter().filter(|r| r.verdict == Verdict::Pass) {
        let marked = cat
            .vectors
            .iter()
            .find(|v| v.vector.header.id == r.vector_id)
            .and_then(|v| v.vector.frames().and_then(|b| b.shape));
        passed.push(r.vector_id.clone());
        if marked != Some(shape) {
            wrong.push(format!(
                "{} (marked {})",
                r.vector_id,
                marked.map_or("with no shape", Shape::as_str)
            ));
        }
    }
    eprintln!(
        "{mode}: executed {executed} vectors, passed {}: {}",
        passed.len(),
        passed.join(", ")
    );
    assert!(
        wrong.is_empty(),
        "{mode} passes vectors a SUT that does the same to every frame must not pass:\n  {}\n{}",
        wrong.join("\n  "),
        common::explain(
            &rs.iter()
                .filter(|r| wrong.iter().any(|w| w.starts_with(&r.vector_id)))
                .cloned()
                .map(|mut r| {
                    r.verdict = Verdict::Fail;
                    r
                })
                .collect::<Vec<_>>()
        )
    );
    // Most of the catalog runs: a SUT the harness could not drive would pass nothing
    // vacuously.
    assert!(executed >= 150, "{mode}: only {executed} vectors executed");
    (executed, passed)
}

#[test]
fn reject_all_passes_only_reject_only_vectors() {
    let (_, passed) = passes_only("reject-all", Shape::RejectOnly);
    assert!(!passed.is_empty(), "it refuses as some vectors ask");
}

#[test]
fn reject_all_slow_passes_only_reject_only_vectors() {
    let (_, passed) = passes_only("reject-all-slow", Shape::RejectOnly);
    assert!(!passed.is_empty(), "it refuses as some vectors ask");
}

#[test]
fn accept_all_passes_only_accept_only_vectors() {
    let (_, passed) = passes_only("accept-all", Shape::AcceptOnly);
    assert!(!passed.is_empty(), "it accepts as some vectors ask");
}
