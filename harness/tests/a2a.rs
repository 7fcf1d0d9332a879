//! The `a2a` namespace against broken A2A agents (the `bada2a` example, a proxy in front of
//! the reference endpoint that changes one behaviour): each is caught by exactly the vectors
//! of the requirement it breaks, and the unbroken proxy passes everything. The reference
//! itself runs the namespace over stdio and TLS in tests/catalog.rs.

mod common;
use common::catalog;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use swp_conform::method::{self, Setup};
use swp_conform::p1::P1Form;
use swp_conform::report::result::Verdict;
use swp_conform::sut::Sut;

/// A manifest for `bada2a MODE`; `form` is the P1 payload form it declares (the proxy and
/// the reference behind it always speak the bare message).
fn manifest(mode: &str, form: P1Form, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let text = format!(
        r#"name: bada2a-{mode}
version: "0"
kind: endpoint
start: {{command: "{}", args: ["{mode}", "${{SWP_REF}}"]}}
methods: [session]
claims: {{class: C2, profiles: [1, 2]}}
p1_payload: {}
params: {{A2A_ECHO_KIND: echo, A2A_EVENTS_KIND: events, A2A_FAIL_KIND: fail, A2A_MALFORMED_KIND: sum, A2A_MALFORMED_INPUT: "1,x"}}
limits: {{MAX_FRAME_BYTES: 8388608, MIN_MSG_ID_BYTES: 8, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 4096, MAX_PAYLOAD_BYTES: 8387584}}
policy: {{timestamp_freshness: false, unknown_profile: error-reply}}
session:
  transport: stdio
  reject_signal:
    mode: error-frame
    error_frame: {{profile_id: 1, msg_type: 2, code_pointer: /error/data/swp_error}}
  probe:
    frame: {{profile_id: 1, msg_type: 1, payload: {{json: {{jsonrpc: "2.0", id: "probe", method: "ping"}}}}}}
    reply_profile_id: 1
    reply_msg_type: 2
"#,
        common::example("bada2a").display(),
        form.as_str()
    );
    let p = dir.join(format!("bada2a-{mode}-{}.yaml", form.as_str()));
    std::fs::write(&p, text).unwrap();
    p
}

/// The short ids (`a2a_0004`) of the a2a vectors that do not pass against `mode`.
fn failing(mode: &str) -> BTreeSet<String> {
    failing_as(mode, P1Form::Message)
}

/// As [`failing`], with the manifest declaring P1 payload form `form`.
fn failing_as(mode: &str, form: P1Form) -> BTreeSet<String> {
    let cat = catalog();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("a2a-{mode}-{}", form.as_str()));
    let sut = Sut::load(&manifest(mode, form, &work)).unwrap_or_else(|e| panic!("{e}"));
    let plan: Vec<_> = cat
        .vectors
        .iter()
        .filter(|v| v.vector.header.namespace == "a2a")
        .collect();
    assert!(plan.len() >= 22, "{} a2a vectors", plan.len());
    let rs = method::run(&cat, &sut, &Setup::new(&work), &plan).unwrap();
    // Every session-method vector must really run: a proxy that made them all not
    // applicable would otherwise pass the "caught by exactly" checks vacuously.
    let executed = rs
        .iter()
        .filter(|r| r.verdict != Verdict::NotApplicable)
        .count();
    // Session vectors written for the other P1 form do not apply (a2a_0111/0112).
    let session = plan
        .iter()
        .filter(|v| {
            v.vector
                .header.methods
                .contains(&swp_conform::catalog::vector::Method::Session)
                && v.vector.header.applies_when.p1_payload.is_none_or(|f| f == form)
                // Over stdio there is no client certificate, let alone a second one.
                && v.vector.frames().is_some_and(|b| {
                    b.connect.is_none() && !b.steps.iter().any(|s| s.second_connection)
                })
        })
        .count();
    assert_eq!(executed, session, "{mode}: every session a2a vector runs");
    for r in &rs {
        if r.verdict != Verdict::Pass && r.verdict != Verdict::NotApplicable {
            eprintln!(
                "{mode}: {} [{}] {}",
                r.vector_id,
                r.verdict.as_str(),
                r.detail.as_deref().unwrap_or("")
            );
        }
    }
    // Codec-only vectors are not applicable to an endpoint; they are not failures.
    rs.iter()
        .filter(|r| r.verdict != Verdict::Pass && r.verdict != Verdict::NotApplicable)
        .map(|r| r.vector_id[..8].to_owned())
        .collect()
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn the_unbroken_proxy_passes_every_a2a_vector() {
    assert_eq!(failing("none"), set(&[]));
}

#[test]
fn accepting_an_event_after_the_terminal_result_is_caught() {
    // a2a_0004 allows ignoring the late Event (SI-030); a2a_0010 requires the reject.
    assert_eq!(failing("accept-post-terminal"), set(&["a2a_0010"]));
}

#[test]
fn accepting_a_conflicting_duplicate_task_is_caught() {
    assert_eq!(failing("accept-conflicting-task"), set(&["a2a_0009"]));
}

#[test]
fn rejecting_unknown_protobuf_fields_is_caught() {
    assert_eq!(failing("reject-unknown-fields"), set(&["a2a_0103"]));
}

/// The P1 form is not taken on trust: a SUT declaring the wrapper form but speaking bare
/// messages fails every vector whose frames carry a P1 message either way. The five left
/// send nothing the form changes, or the reject they expect happens before decoding.
#[test]
fn a_sut_speaking_another_p1_form_than_it_declares_is_caught() {
    assert_eq!(
        failing_as("none", P1Form::Wrapper),
        set(&[
            "a2a_0001", "a2a_0002", "a2a_0003", "a2a_0004", "a2a_0005", "a2a_0008", "a2a_0009",
            "a2a_0010", "a2a_0011", "a2a_0012", "a2a_0013", "a2a_0015", "a2a_0103", "a2a_0104",
            "a2a_0105", "a2a_0110", "a2a_0111",
        ])
    );
}
