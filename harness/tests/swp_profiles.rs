//! The SWP-* namespaces (rpc, events, obs, artifact, state) against broken endpoints (the
//! `badswp` example, a proxy in front of the reference endpoint that breaks one requirement
//! per mode): each is caught by exactly the vectors that exercise the broken behaviour, and
//! the unbroken proxy passes every session vector of the five. The reference itself runs the
//! namespaces over TLS, TCP (wrapper form), in process and as a testee in tests/catalog.rs.

mod common;
use common::{badswp, badswp::set, catalog};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use swp_conform::catalog::vector::Method;
use swp_conform::catalog::LoadedVector;
use swp_conform::method::{self, Setup};
use swp_conform::report::result::Verdict;
use swp_conform::sut::Sut;

const NAMESPACES: [&str; 5] = ["rpc", "events", "obs", "artifact", "state"];

/// A manifest for `badswp MODE`: the reference's test-agent declarations, over stdio.
fn manifest(mode: &str, dir: &Path) -> PathBuf {
    let params = badswp::reference_params(&["RPC_", "EVENTS_", "ARTIFACT_", "STATE_", "OBS_"]);
    badswp::manifest(
        mode,
        dir,
        "{class: C4, profiles: [1, 12, 13, 14, 17, 18]}",
        &params,
        "",
    )
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
        .filter(|v| namespaces.contains(&v.vector.header.namespace.as_str()))
        .collect();
    // Over stdio no client certificate exists: a vector that connects with one (rpc_0108's
    // allowed identity, rpc_0109's second) is not applicable here.
    let session = |v: &LoadedVector| {
        v.vector.header.methods.contains(&Method::Session)
            && v.vector
                .frames()
                .is_some_and(|b| b.topology.is_none() && b.connect.is_none())
    };
    badswp::run(mode, &cat, &sut, &work, &plan, session, 0)
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
        set(&["obs_0001", "obs_0101", "obs_0103", "obs_0106"])
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
        set(&[
            "artifact_0001",
            "artifact_0004",
            "artifact_0106",
            "artifact_0109"
        ])
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
        set(&["state_0001", "state_0004", "state_0103", "state_0107"])
    );
}

#[test]
fn accepting_a_state_whose_parent_is_missing_is_caught() {
    assert_eq!(
        failing("state-accept-missing-parent", &["state"]),
        set(&["state_0003", "state_0105"])
    );
}

/// A window or size the manifest does not declare leaves the vectors sized from it untested,
/// so a class that needs them stays incomplete: the SUT owes these values (swp-rpc §6 asks it
/// to document its replay window). A declared value too large for a vector is its choice.
#[test]
fn vectors_sized_from_an_undeclared_window_are_untested_not_the_suts_choice() {
    use swp_conform::report::result::NaCause;
    let cat = catalog();
    let path = common::root().join("implementations/manifests/reference-tls.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let parse = |t: &str| Sut::parse(t, &path, None).unwrap_or_else(|e| panic!("{e}"));
    let vector = |id: &str| {
        &cat.vectors
            .iter()
            .find(|v| v.vector.header.id.starts_with(id))
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
    let filled = swp_conform::plan::placeholders::fill(v, &undeclared.manifest.params).unwrap();
    let built = swp_conform::plan::materialize::materialise(&filled, &undeclared.params(0));
    assert!(
        matches!(
            built,
            Err(swp_conform::plan::materialize::MaterialiseError::Undeclared { .. })
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
            NAMESPACES.contains(&v.vector.header.namespace.as_str())
                && v.vector.header.methods.contains(&Method::Codec)
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
