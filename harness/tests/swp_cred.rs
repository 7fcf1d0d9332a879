//! The cred and policyhint namespaces (SWP-CRED 15, SWP-POLICYHINT 16) against broken
//! endpoints (the `badswp` example in front of the reference endpoint, over stdio): each
//! break is caught by exactly the vectors that exercise it, and the unbroken proxy passes
//! every session vector of the two, except those that need TLS client identities and those
//! written for the unknown-key and conflict policies the reference does not declare. The
//! codec vectors run in the wrapper form here; tests/catalog.rs runs the namespaces over TLS,
//! TCP (wrapper), in process and as a testee.

mod common;
use common::{badswp, badswp::set, catalog};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use swp_conform::catalog::vector::Method;
use swp_conform::catalog::LoadedVector;
use swp_conform::method::{self, Setup};
use swp_conform::report::result::Verdict;
use swp_conform::sut::Sut;

/// The reference's declarations for SWP-CRED (as in reference-lenient.yaml: stdio surfaces
/// no identity, so the reference binds the peer to its anonymous subject, and the
/// credential bound to another identity is left out).
const CRED_PARAMS: &str = r#"  CRED_TYPE: swp.test.subject
  CRED_CREDENTIAL: "sub=swp.test.anonymous"
  CRED_INVALID_CREDENTIAL: "not a subject credential"
  CRED_UNSUPPORTED_TYPE: swp.test.unsupported
  CRED_MAX_CHAIN_LENGTH: 4
  CRED_MAX_TTL_MS: 3600000
  CRED_REVOKE_REASON: swp-conform revocation
  POLICYHINT_KEY: swp.test.region
  POLICYHINT_OK_VALUE: eu
  POLICYHINT_BAD_VALUE: mars
  POLICYHINT_UNKNOWN_KEY_POLICY: 0
  POLICYHINT_CONFLICT_POLICY: 0
  POLICYHINT_ACK_ORDER: 0
  POLICYHINT_UNMET_REPORT: 1
  POLICYHINT_SCOPE_A: swp-conform/scope-a
  POLICYHINT_SCOPE_B: swp-conform/scope-b
"#;

/// A manifest for `badswp MODE` claiming profile 15, over stdio.
/// `cred-err-replies` declares that it refuses with the profile's own error message.
fn manifest(mode: &str, dir: &Path) -> PathBuf {
    let profile_errors = if mode == "cred-err-replies" {
        "\n    profile_errors: true"
    } else {
        ""
    };
    badswp::manifest(
        mode,
        dir,
        "{profiles: [1, 15, 16]}",
        CRED_PARAMS,
        profile_errors,
    )
}

/// The short ids (`cred_0001`) of the vectors of `namespace` that do not pass against
/// `mode`; every session vector that needs no TLS connection (nor a second one) and applies by the declared
/// policies must have run, and at least `min` of them.
fn failing(mode: &str, namespace: &str, min: usize) -> BTreeSet<String> {
    use swp_conform::report::result::NaCause;
    let cat = catalog();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("badswp-{namespace}-{mode}"));
    let sut = Sut::load(&manifest(mode, &work)).unwrap_or_else(|e| panic!("{e}"));
    // The proxy re-frames what it relays and drops what does not decode as E1, so a vector
    // whose point is a core-invalid frame cannot go through it (it runs against the
    // reference directly in tests/catalog.rs).
    let through_proxy = |id: &str| !id.starts_with("policyhint_0104");
    let plan: Vec<_> = cat
        .vectors
        .iter()
        .filter(|v| v.vector.header.namespace == namespace && through_proxy(&v.vector.header.id))
        .collect();
    let session = |v: &LoadedVector| {
        v.vector.header.methods.contains(&Method::Session)
            // Over stdio there is no client certificate, let alone a second one.
            && v.vector.frames().is_some_and(|b| {
                b.connect.is_none() && !b.steps.iter().any(|s| s.second_connection)
            })
            && method::applicability(&v.vector, &sut).map(|na| na.cause) != Some(NaCause::SutChoice)
    };
    badswp::run(mode, &cat, &sut, &work, &plan, session, min)
}

#[test]
fn the_unbroken_proxy_passes_every_cred_and_policyhint_session_vector() {
    assert_eq!(failing("none", "cred", 7), set(&[]));
    assert_eq!(failing("none", "policyhint", 5), set(&[]));
}

/// A stack that refuses CRED frames with `CRED_ERR` rather than an error frame (SI-P-ERR),
/// and says so in its manifest, passes every cred vector.
#[test]
fn refusing_with_cred_err_is_a_declared_choice() {
    assert_eq!(failing("cred-err-replies", "cred", 7), set(&[]));
}

#[test]
fn accepting_an_expired_delegation_is_caught() {
    assert_eq!(
        failing("cred-accept-expired", "cred", 7),
        set(&["cred_0001"])
    );
}

#[test]
fn a_chain_past_its_maximum_length_is_caught() {
    assert_eq!(
        failing("cred-unbounded-chain", "cred", 7),
        set(&["cred_0002"])
    );
}

#[test]
fn a_revocation_that_changes_nothing_is_caught() {
    assert_eq!(
        failing("cred-ignore-revoke", "cred", 7),
        set(&["cred_0005"])
    );
}

#[test]
fn advice_that_binds_is_caught() {
    assert_eq!(
        failing("policyhint-every-mode-must", "policyhint", 5),
        set(&["policyhint_0005"])
    );
}

#[test]
fn conflicts_resolved_against_the_declared_rule_are_caught() {
    assert_eq!(
        failing("policyhint-first-wins", "policyhint", 5),
        set(&["policyhint_0003"])
    );
}

/// The codec vectors in the wrapper P1 form (the testee validates in the declared form);
/// those written for policies the testee does not declare are out by its choice.
#[test]
fn the_cred_and_policyhint_codec_vectors_pass_in_the_wrapper_form_too() {
    let cat = catalog();
    let path = common::root().join("implementations/manifests/reference-testee.yaml");
    let text = std::fs::read_to_string(&path).unwrap() + "\np1_payload: wrapper\n";
    let sut = Sut::parse(&text, &path, Some(path.clone())).unwrap_or_else(|e| panic!("{e}"));
    let plan: Vec<_> = cat
        .vectors
        .iter()
        .filter(|v| {
            ["cred", "policyhint"].contains(&v.vector.header.namespace.as_str())
                && v.vector.header.methods.contains(&Method::Codec)
        })
        .collect();
    assert!(plan.len() >= 9, "{} codec vectors", plan.len());
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testee-wrapper-cred");
    let rs = method::run(&cat, &sut, &Setup::new(&work), &plan).unwrap();
    let not_passed: Vec<String> = rs
        .iter()
        .filter(|r| r.verdict != Verdict::Pass && r.verdict != Verdict::NotApplicable)
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
