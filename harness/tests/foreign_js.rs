//! The whole catalog against foreign-js, the third SWP endpoint, written in JavaScript for
//! Node.js from the spec text alone (implementations/foreign-js/), compared with its
//! committed expected verdicts: a vector only our reference can pass shows up here as a
//! change. Every non-pass in the file is explained: a vector out of scope by one of its
//! declared choices, one the harness cannot build for the profiles it serves
//! (implementations/foreign-js/HARNESS-FINDINGS.md), or a documented deviation. Its own
//! `node --test` suite runs first. `SWP_UPDATE_REPORTS=1` rewrites the file (keeping the
//! explanations) and then fails.

mod common;
use common::expected::ExpectedResult;
use common::root;

use std::collections::BTreeMap;
use std::process::Command;
use swp_conform::report::result::{NaCause, VectorResult, Verdict};

const MANIFEST: &str = "implementations/manifests/foreign-js.yaml";
const EXPECTED: &str = "implementations/foreign-js/expected-verdicts.json";

/// The explanation a verdict gets by default when the file is rebuilt; a failure (or an
/// inconclusive result) gets none and must be explained by hand.
fn default_why(r: &VectorResult) -> Option<String> {
    match r.verdict {
        Verdict::NotApplicable => Some(match r.na_cause {
            Some(NaCause::SutChoice) => {
                "out of scope by a choice foreign-js declares in its manifest (see observed)".into()
            }
            _ => "not testable on this SUT with this manifest (see observed)".into(),
        }),
        _ => None,
    }
}

fn node() -> String {
    std::env::var("NODE").unwrap_or_else(|_| "node".into())
}

#[test]
fn foreign_js_self_tests_pass() {
    let dir = root().join("implementations/foreign-js");
    let mut tests: Vec<String> = std::fs::read_dir(dir.join("test"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".test.mjs"))
        .map(|n| format!("test/{n}"))
        .collect();
    tests.sort();
    assert!(tests.len() >= 2, "foreign-js has no node tests: {tests:?}");
    let o = Command::new(node())
        .arg("--test")
        .args(&tests)
        .current_dir(&dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} (foreign-js needs Node.js 20+): {e}", node()));
    assert!(
        o.status.success(),
        "foreign-js's node tests failed ({}):\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_catalog_on_foreign_js_matches_its_expected_verdicts() {
    let (_, rs, want) = common::expected::catalog_matches_expected(
        MANIFEST,
        EXPECTED,
        "foreign-js-test",
        default_why,
    );
    // No failure that is not a documented deviation, and the five federation profiles
    // really executed: every session vector of their namespaces that applies ran.
    let documented: BTreeMap<&str, &ExpectedResult> = want
        .iter()
        .filter(|(_, e)| e.rule.contains("deviation"))
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    for r in rs.iter().filter(|r| r.verdict.is_failure()) {
        assert!(
            documented.contains_key(r.vector_id.as_str()),
            "{} fails on foreign-js without a documented deviation",
            r.vector_id
        );
    }
    for ns in ["agdisc", "tooldisc", "cred", "policyhint", "relay"] {
        let passed = rs
            .iter()
            .filter(|r| r.vector_id.starts_with(ns) && r.verdict == Verdict::Pass)
            .count();
        assert!(
            passed >= 5,
            "only {passed} {ns} vectors passed on foreign-js"
        );
    }
    let executed = rs
        .iter()
        .filter(|r| r.verdict != Verdict::NotApplicable)
        .count();
    assert!(
        executed >= 80,
        "only {executed} vectors executed on foreign-js"
    );
    // Core and E1 vectors the harness cannot build for a SUT that serves only SWP-* profiles
    // (no valid payload of its core profile) are untested, not its choice: C0 stays
    // incomplete and names them (HARNESS-FINDINGS.md F1). Granting it would claim 13
    // required vectors that never ran.
    let sut = swp_conform::sut::Sut::load(&root().join(MANIFEST)).unwrap();
    let mut report = swp_conform::report::model::Report::new(
        swp_conform::report::model::RunInfo::default(),
        swp_conform::report::model::SutInfo {
            name: sut.manifest.name.clone(),
            version: sut.manifest.version.clone(),
            reported: "foreign-js".into(),
        },
        rs.clone(),
        false,
    );
    report.attach(
        &common::catalog(),
        swp_conform::report::model::Digests::default(),
    );
    let c0 = &report.classes[0];
    assert_eq!(c0.class.to_string(), "C0");
    assert_eq!(c0.status.as_str(), "incomplete", "{}", c0.reason);
    let untested: Vec<&str> = c0.withheld.iter().map(|w| w.vector_id.as_str()).collect();
    assert!(
        untested.len() == 13 && untested.iter().any(|v| v.starts_with("core_0001")),
        "the 13 required vectors withhold C0: {untested:?}"
    );
    let r = rs
        .iter()
        .find(|r| r.vector_id.starts_with("e1_0120"))
        .unwrap();
    assert_eq!(r.na_cause, Some(NaCause::Untested), "{:?}", r.detail);
}
