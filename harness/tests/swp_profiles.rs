//! The SWP-* namespaces (rpc, events, obs, artifact, state) against broken endpoints (the
//! `badswp` example, a proxy in front of the reference endpoint that breaks one requirement
//! per mode): each is caught by exactly the vectors that exercise the broken behaviour, and
//! the unbroken proxy passes every session vector of the five. The reference itself runs the
//! namespaces over TLS, TCP (wrapper form), in process and as a testee in tests/catalog.rs.

mod common;
use common::catalog;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use swp_conform::catalog::vector::Method;
use swp_conform::method::{self, Setup};
use swp_conform::model::Verdict;
use swp_conform::sut::Sut;

const NAMESPACES: [&str; 5] = ["rpc", "events", "obs", "artifact", "state"];

/// A manifest for `badswp MODE`: the reference's test-agent declarations, over stdio.
fn manifest(mode: &str, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let text = format!(
        r#"name: badswp-{mode}
version: "0"
kind: endpoint
start: {{command: "{}", args: ["{mode}", "${{SWP_REF}}"]}}
methods: [session]
claims: {{class: C4, profiles: [1, 12, 13, 14, 17, 18]}}
params:
  # The SWP-* test agent of swp-ref serve (docs/profiles.md): what the reference calls the
  # methods, streams, artifact and states the rpc, events, obs, artifact and state vectors
  # need, and its implementation-defined windows and sizes, which vectors are sized from.
  RPC_ECHO_METHOD: swp.test.echo
  RPC_FAIL_METHOD: swp.test.fail
  RPC_RETRY_METHOD: swp.test.retry
  RPC_COUNTER_METHOD: swp.test.counter
  RPC_STREAM_METHOD: swp.test.stream
  RPC_STREAM_PARAMS: "3"
  RPC_STREAM_ITEMS: 3
  RPC_SLOW_METHOD: swp.test.slow
  RPC_SLOW_PARAMS: "1000"
  RPC_CANCEL_CODE: cancelled
  RPC_GATED_METHOD: swp.test.admin
  RPC_REPLAY_WINDOW_MS: 1000          # --rpc-replay-window-ms above
  EVENTS_SEVERITY: info
  EVENTS_SEVERITIES: [trace, debug, info, warn, error, fatal]
  EVENTS_ID_RETENTION_MS: 86400000
  EVENTS_ECHO_FILTER: swp.test.echo
  EVENTS_TICKS_FILTER: swp.test.ticks
  EVENTS_TICKS_COUNT: 3
  EVENTS_BATCH_FILTER: swp.test.batch
  EVENTS_BATCH_COUNT: 3
  ARTIFACT_ID: swp.test.blob
  ARTIFACT_BYTES: 100000
  ARTIFACT_CHUNK_BYTES: 4096
  ARTIFACT_UPLOAD_MAX_BYTES: 1048576
  ARTIFACT_RESUME_TOKEN: "r1.2.8192.100000.873d99fa"
  STATE_ID_SCHEME: sha256
  STATE_ROOT_ID: "hex:c0c0460e5bf81a1b87defa96769884de54e0a0916e06f2364033f2b71b93d5b6"
  STATE_CHILD_ID: "hex:e7e1721db83f831a38cd4b192dc65cf17a156a5a47c2401b507186a72d3cd2b3"
  STATE_LEAF_ID: "hex:fff9be772aa0f21527ed87253220b8918d848d514c552ad2fb33382d9125c1bc"
  STATE_DELTA_ID: "hex:46a3111a2310171929e8af4398fe43c2017a10d320b30ab41c1136b99c3b91d9"
  OBS_OWN_TRACESTATE_KEYS: []
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
        common::example("badswp").display(),
    );
    let p = dir.join(format!("badswp-{mode}.yaml"));
    std::fs::write(&p, text).unwrap();
    p
}

/// The short ids (`rpc_0003`) of the vectors of `namespaces` that do not pass against
/// `mode`; every session vector of them must have run.
fn failing(mode: &str, namespaces: &[&str]) -> BTreeSet<String> {
    let cat = catalog();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("badswp-{mode}"));
    let sut = Sut::load(&manifest(mode, &work)).unwrap_or_else(|e| panic!("{e}"));
    let plan: Vec<_> = cat
        .vectors
        .iter()
        .filter(|v| namespaces.contains(&v.vector.namespace.as_str()))
        .collect();
    let rs = method::run(&cat, &sut, &Setup::new(&work), &plan).unwrap();
    // A proxy that made the vectors not applicable would pass "caught by exactly" checks
    // vacuously: every session vector in the endpoint topology must run.
    let session: BTreeSet<&str> = plan
        .iter()
        .filter(|v| v.vector.methods.contains(&Method::Session) && v.vector.topology.is_none())
        .map(|v| v.vector.id.as_str())
        .collect();
    let executed: BTreeSet<&str> = rs
        .iter()
        .filter(|r| r.verdict != Verdict::NotApplicable)
        .map(|r| r.vector_id.as_str())
        .collect();
    assert_eq!(executed, session, "{mode}: every session vector runs");
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
    rs.iter()
        .filter(|r| r.verdict != Verdict::Pass && r.verdict != Verdict::NotApplicable)
        .map(|r| {
            let id = &r.vector_id;
            id[..id.find('_').map_or(id.len(), |i| i + 5)].to_owned()
        })
        .collect()
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn the_unbroken_proxy_passes_every_session_vector() {
    assert_eq!(failing("none", &NAMESPACES), set(&[]));
}

#[test]
fn a_stream_item_after_the_terminal_response_is_caught() {
    assert_eq!(
        failing("rpc-item-after-terminal", &["rpc"]),
        set(&["rpc_0003"])
    );
}

#[test]
fn replays_that_run_again_and_conflicts_that_are_served_are_caught() {
    assert_eq!(
        failing("rpc-ignore-idempotency", &["rpc"]),
        set(&["rpc_0005", "rpc_0104"])
    );
}

#[test]
fn a_batch_delivered_out_of_order_is_caught() {
    assert_eq!(
        failing("events-batch-reorder", &["events"]),
        set(&["events_0004"])
    );
}

#[test]
fn accepting_an_event_missing_a_required_field_is_caught() {
    assert_eq!(
        failing("events-accept-incomplete", &["events"]),
        set(&["events_0001"])
    );
}

#[test]
fn accepting_an_invalid_traceparent_is_caught() {
    assert_eq!(
        failing("obs-accept-invalid-traceparent", &["obs"]),
        set(&["obs_0001", "obs_0101"])
    );
}

#[test]
fn mutating_unknown_tracestate_entries_is_caught() {
    assert_eq!(
        failing("obs-mutate-tracestate", &["obs"]),
        set(&["obs_0003"])
    );
}

#[test]
fn chunks_sent_out_of_order_are_caught() {
    assert_eq!(
        failing("artifact-reorder-chunks", &["artifact"]),
        set(&["artifact_0001", "artifact_0004", "artifact_0106"])
    );
}

#[test]
fn resuming_past_the_point_a_token_names_is_caught() {
    assert_eq!(
        failing("artifact-resume-late", &["artifact"]),
        set(&["artifact_0106"])
    );
}

#[test]
fn accepting_octets_that_miss_the_offered_hash_is_caught() {
    assert_eq!(
        failing("artifact-accept-corrupt", &["artifact"]),
        set(&["artifact_0003", "artifact_0006"])
    );
}

#[test]
fn a_state_answered_with_other_content_than_its_id_is_caught() {
    assert_eq!(
        failing("state-alter-answer", &["state"]),
        set(&["state_0001", "state_0004", "state_0103"])
    );
}

#[test]
fn accepting_a_state_whose_parent_is_missing_is_caught() {
    assert_eq!(
        failing("state-accept-missing-parent", &["state"]),
        set(&["state_0003"])
    );
}

/// A window or size the manifest does not declare leaves the vectors sized from it untested,
/// so a class that needs them stays incomplete: the SUT owes these values (swp-rpc §6 asks it
/// to document its replay window). A declared value too large for a vector is its choice.
#[test]
fn vectors_sized_from_an_undeclared_window_are_untested_not_the_suts_choice() {
    use swp_conform::model::NaCause;
    let cat = catalog();
    let path = common::root().join("implementations/manifests/reference-tls.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let parse = |t: &str| Sut::parse(t, &path, None).unwrap_or_else(|e| panic!("{e}"));
    let vector = |id: &str| {
        &cat.vectors
            .iter()
            .find(|v| v.vector.id.starts_with(id))
            .unwrap()
            .vector
    };
    let cause = |sut: &Sut, id: &str| method::applicability(vector(id), sut).map(|na| na.cause);

    let windows = [
        "RPC_REPLAY_WINDOW_MS",
        "ARTIFACT_UPLOAD_MAX_BYTES",
        "ARTIFACT_CHUNK_BYTES",
        "EVENTS_TICKS_COUNT",
    ];
    let undeclared = parse(
        &text
            .lines()
            .filter(|l| {
                !windows
                    .iter()
                    .any(|w| l.trim_start().starts_with(&format!("{w}:")))
            })
            .collect::<Vec<_>>()
            .join("\n"),
    );
    for id in [
        "rpc_0104",
        "artifact_0002",
        "artifact_0003",
        "artifact_0005",
        "artifact_0006",
    ] {
        assert_eq!(cause(&undeclared, id), Some(NaCause::Untested), "{id}");
    }
    // A count named in a step rather than in `holds` is found when the vector is built.
    let v = vector("events_0102");
    assert_eq!(cause(&undeclared, "events_0102"), None);
    let filled = swp_conform::placeholders::fill(v, &undeclared.manifest.params).unwrap();
    let built = swp_conform::materialize::materialise(&filled, &undeclared.params(0));
    assert!(
        matches!(
            built,
            Err(swp_conform::materialize::MaterialiseError::Undeclared(_))
        ),
        "{built:?}"
    );

    let long = parse(&text.replace(
        "RPC_REPLAY_WINDOW_MS: 1000",
        "RPC_REPLAY_WINDOW_MS: 86400000",
    ));
    assert_eq!(cause(&long, "rpc_0104"), Some(NaCause::SutChoice));
    assert_eq!(cause(&long, "rpc_0005"), None);
}

/// The codec vectors of the five namespaces in the wrapper P1 form, as the spec's authors'
/// stack shapes payloads: the testee validates in the form the manifest declares. (The
/// session vectors run in both forms in tests/catalog.rs: `tls` speaks the bare message,
/// `lenient` the wrapper; the codec manifests there declare the message form.)
#[test]
fn the_codec_vectors_pass_in_the_wrapper_form_too() {
    let cat = catalog();
    let path = common::root().join("implementations/manifests/reference-testee.yaml");
    let text = std::fs::read_to_string(&path).unwrap() + "\np1_payload: wrapper\n";
    let sut = Sut::parse(&text, &path, Some(path.clone())).unwrap_or_else(|e| panic!("{e}"));
    let plan: Vec<_> = cat
        .vectors
        .iter()
        .filter(|v| {
            NAMESPACES.contains(&v.vector.namespace.as_str())
                && v.vector.methods.contains(&Method::Codec)
        })
        .collect();
    assert!(plan.len() >= 15, "{} codec vectors", plan.len());
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testee-wrapper");
    let rs = method::run(&cat, &sut, &Setup::new(&work), &plan).unwrap();
    let not_passed: Vec<String> = rs
        .iter()
        .filter(|r| r.verdict != Verdict::Pass)
        .map(|r| {
            format!(
                "{} [{}] {}",
                r.vector_id,
                r.verdict.as_str(),
                r.detail.as_deref().unwrap_or("")
            )
        })
        .collect();
    assert!(not_passed.is_empty(), "{}", not_passed.join("\n"));
    assert_eq!(rs.len(), plan.len());
}
