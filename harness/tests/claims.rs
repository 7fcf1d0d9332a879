//! Profile claims beside the classes (issue 34), end to end through the binary against the
//! reference over TLS and variants of its manifest that break one thing each:
//! - `claim --profile relay,cred` grants `SWP C0 + SWP-RELAY (…) + SWP-CRED (…)` with each
//!   profile's and P1's version as its own document states it, and `verify` re-derives it;
//! - a deployment that misdeclares its SWP-CRED chain limit keeps C0 and SWP-RELAY and has
//!   SWP-CRED withheld, with the vector and the level that withhold it;
//! - a deployment with four different defects gets all four named in one message;
//! - the 100% rule (SI-050): a catalog-required vector failing at SHOULD level withholds
//!   the claim; an extra vector failing at SHOULD level does not;
//! - unknown profile names, and profiles the class already requires, are usage errors.

mod common;

use common::{catalog, output_text, root};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use swp_conform::catalog::class::{Class, Profile};
use swp_conform::catalog::Catalog;
use swp_conform::evidence::manifest::Manifest;
use swp_conform::evidence::unpack;
use swp_conform::report::analysis::classes::{ClassStatus, WithheldKind};
use swp_conform::report::model::{Digests, Report, RunInfo, SutInfo};
use swp_conform::report::result::{NaCause, VectorResult, Verdict};

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swp-conform"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run swp-conform")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn work(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("claims-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The reference's TLS manifest, named `name`, with `edit` applied to its text, written into
/// `dir`: the deployment differs from the reference only where the edit says.
fn variant(dir: &Path, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let tls = root().join("implementations/manifests/reference-tls.yaml");
    let text = std::fs::read_to_string(tls).unwrap();
    let edited = edit(text.replacen("name: swp-ref\n", &format!("name: {name}\n"), 1));
    let p = dir.join(format!("{name}.yaml"));
    std::fs::write(&p, edited).unwrap();
    p
}

/// `text` with `from` replaced once, which must be there.
fn replace(text: &str, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "the reference manifest has no {from:?}"
    );
    text.replacen(from, to, 1)
}

/// A profile's part of a claim line, from the registry's titles and versions.
fn part(cat: &Catalog, doc: &str) -> String {
    format!(
        "{} ({doc} {}, P1 {})",
        cat.requirements.documents[doc],
        cat.requirements.versions[doc],
        cat.requirements.versions["profile-payload-encoding-p1"]
    )
}

#[test]
fn a_profile_claim_names_each_profile_with_its_spec_versions_and_verifies() {
    let cat = catalog();
    // The registry quotes each document's own version line; where the spec kit is
    // mirrored, hold the quote to the heading itself.
    let kit = common::shared::shared_dir().join("swp-spec-kit/docs");
    for (doc, title) in [("swp-relay", "SWP-RELAY"), ("swp-cred", "SWP-CRED")] {
        let ver = &cat.requirements.versions[doc];
        assert_eq!(ver, "Draft v0.1");
        if let Ok(md) = std::fs::read_to_string(kit.join(format!("{doc}.md"))) {
            assert_eq!(
                md.lines().next(),
                Some(format!("# {title} ({ver})").as_str())
            );
        }
    }
    let out = work("granted");
    let sut = root().join("implementations/manifests/reference-tls.yaml");
    let o = bin(&[
        "claim",
        "--profile",
        "relay,cred",
        "--sut",
        s(&sut),
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", output_text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let want = format!(
        "SWP C0 + SWP-RELAY (swp-relay Draft v0.1, P1 Draft) + SWP-CRED (swp-cred Draft v0.1, P1 Draft) — swp-ref 0.1.0; Core v1 (core-spec {}), E1 (",
        cat.requirements.versions["core-spec"]
    );
    assert_eq!(
        format!(
            "SWP C0 + {} + {}",
            part(&cat, "swp-relay"),
            part(&cat, "swp-cred")
        ),
        want[..want.find(" — ").unwrap()]
    );
    let line = stdout.lines().find(|l| l.starts_with("SWP ")).unwrap_or("");
    assert!(line.starts_with(&want), "{stdout}");
    let bundle = out.join("evidence-C0-relay-cred.tar.gz");
    let o = bin(&["verify", s(&bundle)]);
    assert!(o.status.success(), "{}", output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with(&format!("unsigned: {line}: ")),
        "{}",
        output_text(&o)
    );
    // The MANIFEST names the profiles, and verify re-derives the claim with them: a
    // MANIFEST that drops one, or names one that is not, is caught even when re-sealed.
    let b = unpack::read_file(&bundle).unwrap();
    let m = Manifest::parse(b.get("MANIFEST").unwrap()).unwrap();
    assert_eq!(m.profiles, ["relay", "cred"]);
    let versions = String::from_utf8_lossy(b.get("versions.txt").unwrap()).into_owned();
    for l in [
        "P1: profile-payload-encoding-p1 Draft\n",
        "profile 19: swp-relay Draft v0.1\n",
        "profile 15: swp-cred Draft v0.1\n",
    ] {
        assert!(versions.contains(l), "{versions}");
    }
    for (profiles, problem) in [
        (vec!["relay".to_owned()], "claim: MANIFEST says "),
        (
            vec!["relay".to_owned(), "bogus".to_owned()],
            "profiles: unknown profile \"bogus\": expected one of mcp, a2a, rpc,",
        ),
    ] {
        let mut t = b.clone();
        t.seal(
            Manifest {
                profiles,
                ..m.clone()
            },
            None,
        )
        .unwrap();
        let p = out.join("tampered.tar.gz");
        std::fs::write(&p, t.pack().unwrap()).unwrap();
        let o = bin(&["verify", s(&p)]);
        assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).starts_with(problem),
            "{}",
            output_text(&o)
        );
    }
}

#[test]
fn a_broken_profile_is_withheld_beside_a_granted_one_and_says_why() {
    // The reference enforces a chain of at most 4 delegation entries; this deployment
    // declares 3, so it accepts a chain its own declaration says it must refuse.
    let out = work("broken-cred");
    let sut = variant(&out, "swp-ref-misdeclared", |t| {
        replace(&t, "CRED_MAX_CHAIN_LENGTH: 4", "CRED_MAX_CHAIN_LENGTH: 3")
    });
    let o = bin(&[
        "claim",
        "--profile",
        "relay,cred",
        "--sut",
        s(&sut),
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let said: Vec<&str> = stdout.lines().filter(|l| !l.starts_with('[')).collect();
    assert_eq!(
        said[..3],
        [
            "no claim: SWP C0 + SWP-RELAY + SWP-CRED is fail: 1 vector(s) failed at MUST level: cred_0002_chain_length_enforced",
            "  failed at MUST level:",
            "    cred_0002_chain_length_enforced: fail at MUST level",
        ],
        "{stdout}"
    );
    // The run's report grants what holds: C0, and SWP-RELAY on top of it.
    let cat = catalog();
    let rep =
        Report::from_json(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(rep.claims, ["SWP C0"]);
    assert_eq!(rep.profile_claims, ["SWP-RELAY"]);
    let relay = format!("SWP C0 + {}", part(&cat, "swp-relay"));
    assert_eq!(rep.headline_claim.as_deref(), Some(relay.as_str()));
    let cred = rep.profiles.iter().find(|p| p.profile == "cred").unwrap();
    assert_eq!(cred.status, ClassStatus::Fail);
    assert!(cred.claim.is_none());
    let relay_only: Vec<Profile> = vec!["relay".parse().unwrap()];
    let v = rep.claim_verdict(&cat, Class::C0, &relay_only).unwrap();
    assert!(
        v.claim
            .as_deref()
            .is_some_and(|c| c.starts_with(&format!("{relay} — swp-ref-misdeclared 0.1.0; "))),
        "{v:?}"
    );
    // Every report format shows the profile claims beside the classes.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Profile claims"), "{md}");
    assert!(md.contains(&format!("Headline claim: `{relay}`")), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("<tr data-profile=\"cred\" data-status=\"fail\">"),
        "{html}"
    );
}

#[test]
fn every_cause_of_a_withheld_claim_is_named_in_one_message() {
    // Four defects at once: SWP-TOOLDISC not claimed (none of its vectors runs), the relay
    // retry schedule not declared, the chain limit misdeclared (a MUST), and a validator
    // the card does not have (agdisc_0004 fails at SHOULD level).
    let out = work("many");
    let sut = variant(&out, "swp-ref-many-causes", |t| {
        let t = replace(
            &t,
            "profiles: [1, 2, 10, 11, 12,",
            "profiles: [1, 2, 10, 12,",
        );
        let t = replace(&t, "  RELAY_RETRY_BACKOFF_MS: 500\n", "");
        let t = replace(&t, "  RELAY_MAX_ATTEMPTS: 3\n", "");
        let t = replace(&t, "CRED_MAX_CHAIN_LENGTH: 4", "CRED_MAX_CHAIN_LENGTH: 3");
        replace(
            &t,
            "AGDISC_NOT_MODIFIED_ETAG: '\"d9b5a602b830d011\"'",
            "AGDISC_NOT_MODIFIED_ETAG: '\"d9b5a602b830d012\"'",
        )
    });
    let o = bin(&[
        "claim",
        "--profile",
        "relay,cred,agdisc,tooldisc",
        "--sut",
        s(&sut),
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let said: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with('[') && !l.starts_with("evidence: "))
        .collect();
    assert_eq!(
        said,
        [
            "no claim: SWP C0 + SWP-RELAY + SWP-CRED + SWP-AGDISC + SWP-TOOLDISC is fail: no vector of tooldisc_* ran against this SUT; 4 required vector(s) untested for a missing declaration: relay_0001_at_least_once (lacks RELAY_MAX_ATTEMPTS), relay_0003_ack_timeout_retry (lacks RELAY_RETRY_BACKOFF_MS), relay_0004_dead_letter_reason (lacks RELAY_RETRY_BACKOFF_MS), relay_0005_limits (lacks RELAY_MAX_ATTEMPTS); 1 vector(s) failed at MUST level: cred_0002_chain_length_enforced; 1 required vector(s) failed at SHOULD level (a claim needs 100% pass): agdisc_0004_etag_not_modified",
            "  namespaces with no vector run against this SUT:",
            "    tooldisc_* (every vector out of scope by the manifest's choices)",
            "  untested because the manifest lacks a declaration:",
            "    relay_0001_at_least_once: lacks RELAY_MAX_ATTEMPTS",
            "    relay_0003_ack_timeout_retry: lacks RELAY_RETRY_BACKOFF_MS",
            "    relay_0004_dead_letter_reason: lacks RELAY_RETRY_BACKOFF_MS",
            "    relay_0005_limits: lacks RELAY_MAX_ATTEMPTS",
            "  failed at MUST level:",
            "    cred_0002_chain_length_enforced: fail at MUST level",
            "  failed at SHOULD level (required vectors: a claim needs 100% pass):",
            "    agdisc_0004_etag_not_modified: fail at SHOULD level",
        ],
        "{stdout}"
    );
    // C0 itself held: the causes are the profiles', and the report still grants it.
    let rep =
        Report::from_json(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(rep.claims, ["SWP C0"]);
    assert!(rep.profile_claims.is_empty(), "{:?}", rep.profile_claims);
}

/// A report of `results` (every other vector not selected), attached to the catalog.
fn report(cat: &Catalog, results: Vec<VectorResult>) -> Report {
    let sut = SutInfo {
        name: "synthetic".into(),
        version: "1".into(),
        reported: "synthetic".into(),
    };
    let mut rep = Report::new(RunInfo::default(), sut, results, false);
    rep.attach(cat, Digests::default());
    rep
}

/// A passing result for every catalog-required vector of `namespaces`, MUST-graded.
fn all_pass(cat: &Catalog, namespaces: &[&str]) -> Vec<VectorResult> {
    cat.index
        .catalog
        .iter()
        .filter(|e| e.excluded.is_none())
        .filter(|e| {
            namespaces
                .iter()
                .any(|ns| e.id.starts_with(&format!("{ns}_")))
        })
        .map(|e| {
            let ns = &e.id[..e.id.find('_').unwrap()];
            let mut r = VectorResult::new(e.id.clone(), ns.into(), String::new(), vec![], true);
            r.verdict = Verdict::Pass;
            r.pass = true;
            r
        })
        .collect()
}

fn fail(id: &str, absolute: bool) -> VectorResult {
    let ns = &id[..id.find('_').unwrap()];
    let mut r = VectorResult::new(id.into(), ns.into(), String::new(), vec![], absolute);
    r.verdict = Verdict::Fail;
    r
}

/// The checklist's "100% pass" counts vectors, not requirement levels (SI-050): a
/// catalog-required vector failing at SHOULD level withholds the profile (and would
/// withhold a class); an extra vector failing at SHOULD level is a warning and withholds
/// nothing; one failing at MUST level withholds.
#[test]
fn the_100_percent_rule_counts_required_vectors_at_should_level_and_only_those() {
    let cat = catalog();
    let agdisc: Vec<Profile> = vec!["agdisc".parse().unwrap()];
    let extra = cat
        .vectors
        .iter()
        .map(|v| v.vector.header.id.as_str())
        .find(|id| id.starts_with("agdisc_") && !cat.index.catalog.iter().any(|e| e.id == *id))
        .expect("an extra agdisc vector");
    let base = all_pass(&cat, &["core", "e1", "s1", "agdisc"]);
    let with = |changed: Vec<VectorResult>| {
        let mut rs: Vec<VectorResult> = base
            .iter()
            .filter(|r| !changed.iter().any(|c| c.vector_id == r.vector_id))
            .cloned()
            .collect();
        rs.extend(changed);
        report(&cat, rs)
    };

    let rep = with(vec![]);
    let v = rep.claim_verdict(&cat, Class::C0, &agdisc).unwrap();
    assert_eq!(v.status, ClassStatus::Pass, "{v:?}");
    assert!(v
        .claim
        .unwrap()
        .starts_with("SWP C0 + SWP-AGDISC (swp-agdisc "));

    assert_eq!(rep.profile_claims, ["SWP-AGDISC"]);
    let granted = rep;
    let rep = with(vec![fail("agdisc_0004_etag_not_modified", false)]);
    assert!(
        !rep.run_failed,
        "a SHOULD-level failure alone does not fail the run"
    );
    // `diff` says when a profile claim is lost, as it does for a class.
    use swp_conform::report::analysis::diff;
    let d = diff::render(&granted, &rep, &diff::changes(&granted, &rep));
    assert!(d.contains("\nProfile claims: [SWP-AGDISC] → []\n"), "{d}");
    assert_eq!(rep.claims, ["SWP C0"]);
    let p = rep.profiles.iter().find(|p| p.profile == "agdisc").unwrap();
    assert_eq!(p.status, ClassStatus::Fail);
    assert_eq!(p.withheld.len(), 1);
    assert_eq!(p.withheld[0].kind, WithheldKind::Should);
    let v = rep.claim_verdict(&cat, Class::C0, &agdisc).unwrap();
    assert!(v.claim.is_none());
    assert_eq!(
        v.reason,
        "1 required vector(s) failed at SHOULD level (a claim needs 100% pass): agdisc_0004_etag_not_modified"
    );
    // The class rules are the same rules: C5 would be withheld by it too.
    let c5 = rep.classes.iter().find(|c| c.class == Class::C5).unwrap();
    assert!(c5
        .withheld
        .iter()
        .any(|w| w.vector_id == "agdisc_0004_etag_not_modified" && w.kind == WithheldKind::Should));

    let rep = with(vec![fail(extra, false)]);
    let p = rep.profiles.iter().find(|p| p.profile == "agdisc").unwrap();
    assert_eq!(p.status, ClassStatus::Pass, "{p:?}");
    assert_eq!(p.warnings, [extra]);
    assert!(rep
        .claim_verdict(&cat, Class::C0, &agdisc)
        .unwrap()
        .claim
        .is_some());

    let rep = with(vec![fail(extra, true)]);
    let v = rep.claim_verdict(&cat, Class::C0, &agdisc).unwrap();
    assert_eq!(v.status, ClassStatus::Fail);
    assert_eq!(
        v.reason,
        format!("1 vector(s) failed at MUST level: {extra}")
    );
}

/// A class claim names every cause at once too: a namespace with no vector run, a vector
/// untested for a missing declaration, one untested for another reason, and a MUST failure.
#[test]
fn a_withheld_class_names_every_cause_at_once() {
    let cat = catalog();
    let mut rs: Vec<VectorResult> = all_pass(&cat, &["core", "e1", "s1", "rpc", "events"])
        .into_iter()
        .filter(|r| {
            ![
                "rpc_0005_idempotency_replay",
                "rpc_0006_cancel_semantics",
                "events_0002_ordering",
            ]
            .contains(&r.vector_id.as_str())
        })
        .collect();
    let mut undeclared = VectorResult::new(
        "rpc_0005_idempotency_replay".into(),
        "rpc".into(),
        String::new(),
        vec![],
        true,
    );
    undeclared.verdict = Verdict::NotApplicable;
    undeclared.na_cause = Some(NaCause::Untested);
    undeclared.lacks = vec!["RPC_REPLAY_WINDOW_MS".into()];
    let mut timeout = fail("rpc_0006_cancel_semantics", true);
    timeout.verdict = Verdict::Inconclusive;
    rs.extend([undeclared, timeout, fail("events_0002_ordering", true)]);
    let rep = report(&cat, rs);
    let c3 = rep.classes.iter().find(|c| c.class == Class::C3).unwrap();
    assert_eq!(c3.status, ClassStatus::Fail);
    assert_eq!(
        c3.reason,
        "no vector of obs_* ran against this SUT; 1 required vector(s) untested for a missing declaration: rpc_0005_idempotency_replay (lacks RPC_REPLAY_WINDOW_MS); 1 required vector(s) untested: rpc_0006_cancel_semantics; 1 vector(s) failed at MUST level: events_0002_ordering"
    );
}

#[test]
fn unknown_and_redundant_profiles_are_usage_errors() {
    let o = bin(&["claim", "--profile", "relay,nosuch"]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("unknown profile \"nosuch\": expected one of mcp, a2a, rpc, events, obs, artifact, state, agdisc, tooldisc, cred, policyhint, relay"),
        "{err}"
    );
    let o = bin(&["claim", "--class", "C5", "--profile", "relay"]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("--profile relay: class C5 already requires it"),
        "{}",
        output_text(&o)
    );
    let o = bin(&["claim"]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
}
