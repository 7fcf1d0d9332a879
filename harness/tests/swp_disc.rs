//! The discovery namespaces (agdisc, tooldisc) against broken endpoints: the `badswp` proxy in
//! front of the reference endpoint breaks one SWP-AGDISC or SWP-TOOLDISC requirement per mode,
//! and each mode is caught by exactly the vectors that exercise what it breaks; the unbroken
//! proxy passes every session vector of both namespaces. The reference itself runs the namespace over TLS (bare
//! message form), TCP (wrapper form), in process and as a testee in tests/catalog.rs.

mod common;

use common::{badswp, badswp::set, catalog};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use swp_conform::catalog::vector::Method;
use swp_conform::catalog::LoadedVector;
use swp_conform::method::{self, Setup};
use swp_conform::report::result::Verdict;
use swp_conform::sut::Sut;

/// A manifest for `badswp MODE`: the reference's SWP-AGDISC declarations, over stdio.
fn manifest(mode: &str, dir: &Path) -> PathBuf {
    // The AGDISC and TOOLDISC block of the reference's own manifest.
    let params = badswp::reference_params(&["AGDISC_", "TOOLDISC_"]);
    assert!(params.lines().count() >= 20, "{params}");
    badswp::manifest(mode, dir, "{class: C0, profiles: [1, 10, 11]}", &params, "")
}

/// The short ids (`agdisc_0003`) of the vectors of `namespace` that do not pass against
/// `mode`; every session vector of it must have run.
fn failing(mode: &str, namespace: &str) -> BTreeSet<String> {
    let cat = catalog();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("badswp-disc-{mode}"));
    let sut = Sut::load(&manifest(mode, &work)).unwrap_or_else(|e| panic!("{e}"));
    let plan: Vec<_> = cat
        .vectors
        .iter()
        .filter(|v| v.vector.header.namespace == namespace)
        .collect();
    let session = |v: &LoadedVector| {
        v.vector.header.methods.contains(&Method::Session)
            && v.vector.frames().is_some_and(|b| b.topology.is_none())
    };
    badswp::run(mode, &cat, &sut, &work, &plan, session, 0)
}

#[test]
fn the_unbroken_proxy_passes_every_session_vector() {
    assert_eq!(failing("none", "agdisc"), set(&[]));
    assert_eq!(failing("none", "tooldisc"), set(&[]));
}

#[test]
fn card_octets_changed_on_the_way_out_are_caught() {
    assert_eq!(
        failing("agdisc-alter-card", "agdisc"),
        set(&["agdisc_0001", "agdisc_0004", "agdisc_0005", "agdisc_0104"])
    );
}

#[test]
fn accepting_a_card_without_a_revision_is_caught() {
    assert_eq!(
        failing("agdisc-accept-no-revision", "agdisc"),
        set(&["agdisc_0003", "agdisc_0006"])
    );
}

#[test]
fn answering_any_validator_not_modified_is_caught() {
    assert_eq!(
        failing("agdisc-not-modified-any", "agdisc"),
        set(&["agdisc_0004"])
    );
}

#[test]
fn a_listing_that_drops_its_cursor_is_caught() {
    assert_eq!(
        failing("tooldisc-drop-page-token", "tooldisc"),
        set(&["tooldisc_0001"])
    );
}

#[test]
fn accepting_an_invalid_schema_reference_is_caught() {
    assert_eq!(
        failing("tooldisc-accept-bad-schema-ref", "tooldisc"),
        set(&[
            "tooldisc_0004",
            "tooldisc_0102",
            "tooldisc_0105",
            "tooldisc_0107"
        ])
    );
}

#[test]
fn ignoring_the_version_selector_is_caught() {
    assert_eq!(
        failing("tooldisc-ignore-version", "tooldisc"),
        set(&["tooldisc_0003"])
    );
}

/// The codec vectors of both namespaces in the wrapper P1 form (the session vectors run in
/// both forms in tests/catalog.rs: `tls` speaks the bare message, `lenient` the wrapper).
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
            ["agdisc", "tooldisc"].contains(&v.vector.header.namespace.as_str())
                && v.vector.header.methods.contains(&Method::Codec)
        })
        .collect();
    assert_eq!(plan.len(), 17);
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testee-wrapper-disc");
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
