//! The relay namespace (SWP-RELAY, profile 19) against broken relays (the `badswp`
//! example's `relay-*` modes, a proxy in front of the reference endpoint whose loop topic
//! makes it a relay with the harness on both sides): each is caught by exactly the vectors
//! that exercise the broken behaviour, and the unbroken proxy passes every session vector.
//! Also: a relay that declares no retry schedule leaves the timed vectors untested, one
//! without RELAY_NACK leaves the NACK vectors out by its choice, and the codec vectors pass
//! in the wrapper form. The reference runs the namespace over TLS, TCP (wrapper form), in
//! process and as a testee in tests/catalog.rs.

mod common;
use common::{badswp, badswp::set, catalog};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use swp_conform::catalog::vector::Method;
use swp_conform::catalog::LoadedVector;
use swp_conform::method::{self, Setup};
use swp_conform::report::result::{NaCause, Verdict};
use swp_conform::sut::Sut;

/// A manifest for `badswp MODE` over stdio, claiming profile 19.
fn manifest(mode: &str, dir: &Path, extra: &str) -> PathBuf {
    let params = format!("{}{extra}", badswp::reference_params(&["RELAY_"]));
    badswp::manifest(mode, dir, "{profiles: [1, 19]}", &params, "")
}

/// The short ids (`relay_0002`) of the relay vectors that do not pass against `mode`;
/// every session vector must have run.
fn failing(mode: &str) -> BTreeSet<String> {
    failing_with(mode, "")
}

/// As [`failing`], with `extra` params lines added to the manifest.
fn failing_with(mode: &str, extra: &str) -> BTreeSet<String> {
    let cat = catalog();
    let tag = if extra.is_empty() { "" } else { "-declared" };
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("badswp-{mode}{tag}"));
    let sut = Sut::load(&manifest(mode, &work, extra)).unwrap_or_else(|e| panic!("{e}"));
    let plan: Vec<_> = cat
        .vectors
        .iter()
        .filter(|v| v.vector.header.namespace == "relay")
        .collect();
    let session = |v: &LoadedVector| v.vector.header.methods.contains(&Method::Session);
    badswp::run(mode, &cat, &sut, &work, &plan, session, 0)
}

#[test]
fn the_unbroken_proxy_passes_every_relay_vector() {
    assert_eq!(failing("none"), set(&[]));
}

#[test]
fn delivering_duplicates_is_caught() {
    assert_eq!(
        failing("relay-ignore-dedupe"),
        set(&["relay_0002", "relay_0105"])
    );
}

#[test]
fn accepting_a_publish_without_delivery_id_is_caught() {
    assert_eq!(failing("relay-accept-missing-id"), set(&["relay_0101"]));
}

#[test]
fn a_dead_letter_reason_outside_the_set_is_caught() {
    assert_eq!(
        failing("relay-dead-letter-unknown-reason"),
        set(&["relay_0004", "relay_0005", "relay_0105"])
    );
}

/// Undeclared timings leave the timed vectors untested (the retry policy is the SUT's to
/// define, swp-relay §4); an undeclared NACK trigger leaves the NACK vectors out by the
/// SUT's choice (RELAY_NACK is optional, §2).
#[test]
fn undeclared_timings_are_untested_and_undeclared_nacks_are_a_choice() {
    let cat = catalog();
    let path = common::root().join("implementations/manifests/reference-tls.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let parse = |t: &str| Sut::parse(t, &path, None).unwrap_or_else(|e| panic!("{e}"));
    let without = |names: &[&str]| {
        parse(
            &text
                .lines()
                .filter(|l| {
                    !names
                        .iter()
                        .any(|w| l.trim_start().starts_with(&format!("{w}:")))
                })
                .collect::<Vec<_>>()
                .join("\n"),
        )
    };
    let vector = |id: &str| {
        &cat.vectors
            .iter()
            .find(|v| v.vector.header.id.starts_with(id))
            .unwrap()
            .vector
    };
    // As the run decides: the manifest's conditions first, then the placeholders, where a
    // missing optional-feature trigger is the SUT's choice and any other name untested.
    let cause = |sut: &Sut, id: &str| {
        let v = vector(id);
        method::applicability(v, sut)
            .map(|na| na.cause)
            .or_else(
                || match swp_conform::plan::placeholders::fill(v, &sut.manifest.params) {
                    Err(swp_conform::plan::placeholders::FillError::Missing(names)) => Some(
                        if names.iter().any(|n| {
                            swp_conform::plan::placeholders::FEATURE_PARAMS.contains(&n.as_str())
                        }) {
                            NaCause::SutChoice
                        } else {
                            NaCause::Untested
                        },
                    ),
                    _ => None,
                },
            )
    };
    let untimed = without(&["RELAY_RETRY_BACKOFF_MS", "RELAY_MAX_ATTEMPTS"]);
    for id in ["relay_0001", "relay_0003", "relay_0004", "relay_0005"] {
        assert_eq!(cause(&untimed, id), Some(NaCause::Untested), "{id}");
    }
    assert_eq!(cause(&untimed, "relay_0002"), None);
    let no_nack = without(&["RELAY_NACK_REASON"]);
    assert_eq!(cause(&no_nack, "relay_0005"), Some(NaCause::SutChoice));
    assert_eq!(cause(&no_nack, "relay_0004"), None);
    let no_dead_letter_signal = without(&["RELAY_EXHAUSTED_REASON"]);
    for id in ["relay_0004", "relay_0005"] {
        assert_eq!(
            cause(&no_dead_letter_signal, id),
            Some(NaCause::SutChoice),
            "{id}"
        );
    }
    let full = without(&[]);
    for id in [
        "relay_0001",
        "relay_0002",
        "relay_0003",
        "relay_0004",
        "relay_0005",
    ] {
        assert_eq!(cause(&full, id), None, "{id}");
    }
}

/// Whether a relay acknowledges its publisher is not stated (SI-P19-2): a relay that does
/// passes every relay vector unless its manifest says it never does, and one that declares
/// it always does and never does is caught.
#[test]
fn acknowledging_the_publisher_is_a_choice_held_to_its_declaration() {
    assert_eq!(failing("relay-ack-publisher"), set(&[]));
    let never = "  RELAY_PUBLISHER_ACK: 0\n";
    let always = "  RELAY_PUBLISHER_ACK: 1\n";
    let delivering = set(&[
        "relay_0001",
        "relay_0002",
        "relay_0003",
        "relay_0004",
        "relay_0005",
        "relay_0105",
    ]);
    assert_eq!(failing_with("relay-ack-publisher", never), delivering);
    assert_eq!(failing_with("relay-ack-publisher", always), set(&[]));
    assert_eq!(failing_with("none", always), delivering);
    assert_eq!(failing_with("none", never), set(&[]));
}

/// The codec vectors of the relay namespace in the wrapper P1 form.
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
            v.vector.header.namespace == "relay" && v.vector.header.methods.contains(&Method::Codec)
        })
        .collect();
    assert_eq!(plan.len(), 3);
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testee-wrapper-relay");
    let rs = method::run(&cat, &sut, &Setup::new(&work), &plan).unwrap();
    assert!(
        rs.iter().all(|r| r.verdict == Verdict::Pass),
        "{:?}",
        rs.iter()
            .map(|r| (&r.vector_id, r.verdict.as_str(), &r.detail))
            .collect::<Vec<_>>()
    );
}
