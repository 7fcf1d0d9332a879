//! The reports people read: the reference's committed reports (`reports/reference/`, insta
//! snapshots that fail when a change alters them), determinism outside the run block, the
//! HTML page in a real browser, and the command line around reports: claims with evidence
//! bundles, shards and merge, baselines and diff, against the reference and against a
//! broken deployment of it.
//!
//! Regenerate the committed reports after an intended change:
//! `INSTA_UPDATE=always cargo test -p swp-conform --test reports -- --exact reference_inproc reference_tls`
//! (or `scripts/update-reference-reports.sh`).

#[path = "common/shared.rs"]
mod shared;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use swp_conform::catalog::{self, Catalog, LoadedVector};
use swp_conform::cli::{run_report, RunOptions};
use swp_conform::method::{self, Cancel, Setup};
use swp_conform::report::model::Report;
use swp_conform::report::result::Verdict;
use swp_conform::report::{render_all, strip_run};
use swp_conform::sut::Sut;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn catalog() -> &'static Catalog {
    static CAT: OnceLock<Catalog> = OnceLock::new();
    CAT.get_or_init(|| {
        catalog::load::load(&root().join("vectors")).unwrap_or_else(|e| panic!("{e}"))
    })
}

fn manifest(name: &str) -> Sut {
    Sut::load(&root().join("implementations/manifests").join(name))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn opts() -> RunOptions {
    RunOptions {
        pattern: "*".into(),
        quiet: true,
        ..Default::default()
    }
}

/// The whole catalog in-process, as `swp-conform run` does it.
fn inproc_report() -> Report {
    let cat = catalog();
    let sut = Sut::builtin().unwrap_or_else(|e| panic!("{e}"));
    let plan: Vec<&LoadedVector> = cat.vectors.iter().collect();
    let mut runner = method::open(cat, &sut, &Setup::new(root().join("target")))
        .unwrap_or_else(|e| panic!("{e}"));
    run_report(
        cat,
        &sut,
        &plan,
        &opts(),
        runner.as_mut(),
        &mut [],
        &Cancel::new(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// The whole catalog through a session manifest.
fn session_report(sut: &Sut, work: &str) -> Report {
    let cat = catalog();
    let plan: Vec<&LoadedVector> = cat.vectors.iter().collect();
    let work = root().join("target").join(work);
    let mut runner = method::open(cat, sut, &Setup::new(work)).unwrap_or_else(|e| panic!("{e}"));
    run_report(
        cat,
        sut,
        &plan,
        &opts(),
        runner.as_mut(),
        &mut [],
        &Cancel::new(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// The vectors that failed a run, with why, for an assertion's message.
fn failures(rep: &Report) -> String {
    rep.results
        .iter()
        .filter(|r| !r.pass && r.verdict != Verdict::NotApplicable)
        .map(|r| {
            format!(
                "\n{} [{}] {}",
                r.vector_id,
                r.verdict.as_str(),
                r.detail.as_deref().unwrap_or("")
            )
        })
        .collect()
}

fn snapshot(dir: &str, rep: &Report) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("reports/reference").join(dir));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_description(
        "the reference's report, run block redacted; regenerate: scripts/update-reference-reports.sh",
    );
    settings.bind(|| {
        for (name, text) in render_all(&rep.redacted()).unwrap() {
            insta::assert_snapshot!(name, text);
        }
    });
}

fn assert_same_outside_run(a: &Report, b: &Report) {
    let (a, b) = (render_all(a).unwrap(), render_all(b).unwrap());
    for ((name, x), (_, y)) in a.iter().zip(b.iter()) {
        let (x, y) = (strip_run(name, x), strip_run(name, y));
        if x != y {
            let diff = similar_lines(&x, &y);
            panic!("{name} differs between two runs outside the run block:\n{diff}");
        }
    }
}

fn similar_lines(a: &str, b: &str) -> String {
    a.lines()
        .zip(b.lines())
        .filter(|(x, y)| x != y)
        .take(5)
        .map(|(x, y)| format!("- {x}\n+ {y}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn reference_inproc() {
    let a = inproc_report();
    assert!(!a.run_failed, "the reference fails in-process");
    // The codec method cannot do TLS or watch a connection: no class can be claimed, and
    // every class says which required vectors went untested.
    assert!(a.claims.is_empty(), "{:?}", a.claims);
    let c0 = &a.classes[0];
    assert_eq!(c0.status.as_str(), "incomplete", "{c0:?}");
    let untested: Vec<&str> = c0.withheld.iter().map(|w| w.vector_id.as_str()).collect();
    for id in [
        "s1_0001_unauthenticated_peer_rejected",
        "s1_0004_integrity_failure_terminates",
        "core_0018_unknown_profile_no_error_path",
    ] {
        assert!(untested.contains(&id), "{id} not in {untested:?}");
    }
    let b = inproc_report();
    assert_same_outside_run(&a, &b);
    snapshot("inproc", &a);
}

#[test]
fn reference_tls() {
    let sut = manifest("reference-tls.yaml");
    // The two runs go side by side, each with its own endpoint and work directory: a TLS
    // run is mostly waiting on the profiles' clocks (expiries, retries), not CPU.
    let (a, b) = std::thread::scope(|s| {
        let b = s.spawn(|| session_report(&sut, "reports-test/tls-b"));
        let a = session_report(&sut, "reports-test/tls-a");
        (a, b.join().expect("the second TLS run panicked"))
    });
    for r in [&a, &b] {
        assert!(
            !r.run_failed,
            "the reference fails over TLS: {}",
            failures(r)
        );
    }
    assert!(
        !a.run.transcripts.is_empty(),
        "session transcripts belong in the run block"
    );
    assert_same_outside_run(&a, &b);
    snapshot("tls", &a);
}

/// The other session manifests, pinned like the TLS one: stdio (one process per vector),
/// plain TCP, the relay (intermediary topology) and the TCP endpoint with the other policies.
fn pinned_session(manifest_file: &str, dir: &str) {
    let sut = manifest(manifest_file);
    let a = session_report(&sut, &format!("reports-test/{dir}"));
    assert!(
        !a.run_failed,
        "the reference fails with {manifest_file}: {}",
        failures(&a)
    );
    snapshot(dir, &a);
}

#[test]
fn reference_stdio() {
    pinned_session("reference-stdio.yaml", "stdio");
}

#[test]
fn reference_tcp() {
    pinned_session("reference-tcp.yaml", "tcp");
}

#[test]
fn reference_relay() {
    pinned_session("reference-relay.yaml", "relay");
}

#[test]
fn reference_lenient() {
    pinned_session("reference-lenient.yaml", "lenient");
}

/// The spec kit's published set beside the checkout, run as published against the
/// built-in reference: its report, with the published section (agreement and every ruled
/// departure), is pinned like the catalog's.
#[test]
fn reference_published() {
    let dir = shared::shared_dir().join("swp-spec-kit/conformance/vectors");
    if !dir.is_dir() {
        assert!(
            std::env::var("SWP_REQUIRE_SPEC_KIT").as_deref() != Ok("1"),
            "SWP_REQUIRE_SPEC_KIT=1 but the spec kit's published vectors are not at {}",
            dir.display()
        );
        println!(
            "reports: skipped the published set: {} not found",
            dir.display()
        );
        return;
    }
    let cat =
        catalog::load::load_sets(&[dir], &root().join("vectors")).unwrap_or_else(|e| panic!("{e}"));
    let sut = Sut::builtin().unwrap_or_else(|e| panic!("{e}"));
    let plan: Vec<&LoadedVector> = cat.vectors.iter().collect();
    let run = || {
        let mut runner = method::open(&cat, &sut, &Setup::new(root().join("target")))
            .unwrap_or_else(|e| panic!("{e}"));
        run_report(
            &cat,
            &sut,
            &plan,
            &opts(),
            runner.as_mut(),
            &mut [],
            &Cancel::new(),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let a = run();
    assert!(!a.run_failed, "the reference fails the published set");
    assert_eq!(a.published.as_ref().map(|p| p.unruled), Some(0));
    assert_same_outside_run(&a, &run());
    snapshot("published", &a);
}

#[test]
fn strip_run_removes_only_the_marked_parts() {
    let md =
        "a\n<!-- run:begin -->\nx 1\n<!-- run:end -->\nb\n<!-- run:begin -->y<!-- run:end -->c";
    assert_eq!(
        strip_run("report.md", md),
        "a\n<!-- run:begin --><!-- run:end -->\nb\n<!-- run:begin --><!-- run:end -->c"
    );
    let json = r#"{"schema_version":1,"run":{"t":1},"total":0}"#;
    assert!(!strip_run("report.json", json).contains("\"t\""));
}

/// The broken deployment (reference endpoint over TCP without `--freshness` while the
/// manifest claims it), whole catalog, shared by the tests that need failures.
fn broken_report() -> &'static Report {
    static REP: OnceLock<Report> = OnceLock::new();
    REP.get_or_init(|| {
        let sut = Sut::load(&root().join("harness/tests/fixtures/reports/broken-tcp.yaml"))
            .unwrap_or_else(|e| panic!("{e}"));
        session_report(&sut, "reports-test/broken")
    })
}

#[test]
fn a_broken_deployment_shows_in_every_format() {
    let rep = broken_report();
    assert!(rep.run_failed);
    let failed: Vec<&str> = rep.failures.iter().map(|r| r.vector_id.as_str()).collect();
    assert!(
        failed.contains(&"core_0014_stale_timestamp")
            && failed.contains(&"s1_0005_timestamp_freshness_enforced"),
        "{failed:?}"
    );
    let c0 = &rep.classes[0];
    assert_eq!(c0.status.as_str(), "fail", "{c0:?}");
    assert!(rep.claims.is_empty());
    let s1_016 = rep
        .requirements
        .iter()
        .find(|r| r.id == "S1-016")
        .expect("S1-016");
    assert_eq!(s1_016.verdict.as_str(), "fail");
    let files = render_all(rep).unwrap();
    let get = |n: &str| &files.iter().find(|(f, _)| *f == n).expect(n).1;
    let junit = get("junit.xml");
    assert_eq!(junit.matches("<failure").count(), rep.failed, "{junit}");
    assert!(junit.contains("name=\"S1-016\" value=\"MUST\""));
    let md = get("report.md");
    assert!(
        md.contains("**Run FAILED · Claim: no class claim**"),
        "{md}"
    );
    assert!(md.contains("### FAIL `s1_0005_timestamp_freshness_enforced`"));
    assert!(md.contains("- **fail** S1-016"));
    let html = get("report.html");
    assert!(html.contains("data-class=\"C0\" data-status=\"fail\""));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "the page must not load anything"
    );
}

/// Runs the browser check on a page; `None` when no browser can be had here.
fn browser_check(html: &Path) -> Option<String> {
    let o = Command::new("bash")
        .arg(root().join("scripts/check-html-report.sh"))
        .arg(html)
        .output()
        .expect("run scripts/check-html-report.sh");
    match o.status.code() {
        Some(0) => Some(String::from_utf8_lossy(&o.stdout).into_owned()),
        Some(3) if std::env::var("SWP_REQUIRE_BROWSER").as_deref() == Ok("1") => panic!(
            "SWP_REQUIRE_BROWSER=1 but no browser: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Some(3) => {
            eprintln!(
                "SKIPPED: no chromium here and it cannot be installed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            None
        }
        _ => panic!(
            "browser check failed for {}:\n{}{}",
            html.display(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    }
}

fn attr(check: &str, name: &str) -> Option<usize> {
    let key = format!(" {name}=\"");
    let i = check.find(&key)? + key.len();
    check[i..].split('"').next()?.parse().ok()
}

#[test]
fn html_report_renders_in_chromium_with_the_right_counts() {
    let dir = root().join("target/reports-test/html");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, rep) in [
        ("reference", inproc_report()),
        ("broken", broken_report().clone()),
    ] {
        let p = dir.join(format!("{name}.html"));
        std::fs::write(&p, swp_conform::report::render::html::render(&rep)).unwrap();
        let Some(check) = browser_check(&p) else {
            return;
        };
        // What the browser counted from the rows must be what the report says.
        let all = rep.all_results();
        assert_eq!(
            attr(&check, "data-js-vec-total"),
            Some(all.len()),
            "{name}: {check}"
        );
        assert_eq!(
            attr(&check, "data-js-req-total"),
            Some(rep.requirements.len()),
            "{name}: {check}"
        );
        for (v, n) in &rep.verdicts {
            assert_eq!(
                attr(&check, &format!("data-js-vec-{v}")),
                Some(*n),
                "{name} {v}: {check}"
            );
        }
        for (v, n) in swp_conform::report::analysis::requirements::totals(&rep.requirements) {
            let got = attr(&check, &format!("data-js-req-{}", v.as_str())).unwrap_or(0);
            assert_eq!(got, n, "{name} requirements {}: {check}", v.as_str());
        }
    }
}

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swp-conform"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run swp-conform")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn out_dir(name: &str) -> PathBuf {
    let d = root().join("target/reports-test").join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn bundle_entries(path: &Path) -> Vec<(String, String)> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(f));
    let mut out = Vec::new();
    for e in ar.entries().unwrap() {
        let mut e = e.unwrap();
        let name = e.path().unwrap().display().to_string();
        let mut s = String::new();
        e.read_to_string(&mut s).unwrap();
        out.push((name, s));
    }
    out
}

#[test]
fn claim_c0_in_process_is_withheld_and_names_the_untested_vectors() {
    let out = out_dir("claim-c0-inproc");
    let o = bin(&["claim", "--class", "C0", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.starts_with("no claim: C0")
            && stdout.contains("incomplete")
            && stdout.contains("s1_0001_unauthenticated_peer_rejected"),
        "{stdout}"
    );
    assert!(!stdout.contains("SWP C0 —"), "{stdout}");
}

#[test]
fn claim_c0_over_tls_prints_the_claim_and_writes_evidence() {
    let out = out_dir("claim-c0");
    let sut = root().join("implementations/manifests/reference-tls.yaml");
    let o = bin(&[
        "claim",
        "--class",
        "C0",
        "--sut",
        sut.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    // The claim line carries the Core version and the version of each specification.
    assert!(
        stdout.starts_with("SWP C0 — swp-ref 0.1.0; Core v1 (core-spec Draft v0.1), E1 (")
            && stdout.contains("S1 (security-bindings Draft v0.1)"),
        "{stdout}"
    );
    let entries = bundle_entries(&out.join("evidence-C0.tar.gz"));
    let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    for want in [
        "evidence-C0/report.json",
        "evidence-C0/junit.xml",
        "evidence-C0/report.md",
        "evidence-C0/report.html",
        "evidence-C0/manifest/reference-tls.yaml",
        "evidence-C0/vector-set.sha256",
        "evidence-C0/command.txt",
        "evidence-C0/versions.txt",
        "evidence-C0/claim.json",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let claim = &entries
        .iter()
        .find(|(n, _)| n.ends_with("claim.json"))
        .unwrap()
        .1;
    let v: serde_json::Value = serde_json::from_str(claim).unwrap();
    assert_eq!(v["claimed"], true);
    assert_eq!(v["verdict"]["status"], "pass");
    let vs = &entries
        .iter()
        .find(|(n, _)| n.ends_with("vector-set.sha256"))
        .unwrap()
        .1;
    assert!(
        vs.contains("vectors/core/core_0001_valid_min_frame.yaml")
            || vs.contains("core/core_0001_valid_min_frame.yaml"),
        "{vs}"
    );
}

#[test]
fn claim_c2_over_tls_passes_with_the_a2a_namespace() {
    let out = out_dir("claim-c2");
    let sut = root().join("implementations/manifests/reference-tls.yaml");
    let o = bin(&[
        "claim",
        "--class",
        "C2",
        "--sut",
        sut.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.starts_with("SWP C2"), "{stdout}");
    let entries = bundle_entries(&out.join("evidence-C2.tar.gz"));
    let report = &entries
        .iter()
        .find(|(n, _)| n.ends_with("report.json"))
        .unwrap()
        .1;
    assert!(report.contains("a2a_0015_multi_task_interleaving_valid"));
}

#[test]
fn claim_of_a_class_the_sut_cannot_show_is_refused_with_the_reason() {
    // In process, the session vectors of C5's profiles cannot run: the claim is withheld and
    // every vector that withheld it is named, under its group (C5 passes over TLS: tests/catalog.rs, the TLS
    // reference report).
    let out = out_dir("claim-c5");
    let o = bin(&["claim", "--class", "C5", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.starts_with("no claim: C5")
            && stdout.contains("is incomplete")
            && stdout.contains("\n  untested:\n    agdisc_0001_get_doc_success: not tested: "),
        "{stdout}"
    );
    assert!(!stdout.contains("SWP C5"));
    let entries = bundle_entries(&out.join("evidence-C5.tar.gz"));
    let claim = &entries
        .iter()
        .find(|(n, _)| n.ends_with("claim.json"))
        .unwrap()
        .1;
    assert!(claim.contains("\"claimed\": false"), "{claim}");
    let o = bin(&["claim", "--class", "C9", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn claim_on_a_broken_deployment_is_refused_and_the_bundle_holds_the_failures() {
    let out = out_dir("claim-broken");
    let o = bin(&[
        "claim",
        "--class",
        "C0",
        "--sut",
        "harness/tests/fixtures/reports/broken-tcp.yaml",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.starts_with("no claim: C0 Core Baseline is fail"),
        "{stdout}"
    );
    let entries = bundle_entries(&out.join("evidence-C0.tar.gz"));
    let t = entries
        .iter()
        .find(|(n, _)| n == "evidence-C0/transcripts/s1_0005_timestamp_freshness_enforced.txt")
        .unwrap_or_else(|| {
            panic!(
                "no transcript in {:?}",
                entries.iter().map(|e| &e.0).collect::<Vec<_>>()
            )
        });
    assert!(
        t.1.contains("observed: accepted") && t.1.contains("→ +"),
        "{}",
        t.1
    );
}

#[test]
fn shards_merge_into_the_unsharded_report() {
    let full = out_dir("shard-full");
    let o = bin(&["run", "-q", "--out", full.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let mut shards = Vec::new();
    for k in ["1/3", "2/3", "3/3"] {
        let d = out_dir(&format!("shard-{}", &k[..1]));
        // Not quiet and not a terminal: one plain progress line per vector on stderr.
        let o = bin(&["run", "--shard", k, "--out", d.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.lines().next().is_some_and(|l| l
                .strip_prefix('[')
                .is_some_and(|r| r.trim_start().starts_with("1/"))),
            "{err}"
        );
        assert!(
            !err.contains('\u{1b}'),
            "no control characters off a terminal"
        );
        shards.push(d.join("report.json"));
    }
    let shard_reports: Vec<Report> = shards
        .iter()
        .map(|p| Report::from_json(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect();
    let total: usize = shard_reports
        .iter()
        .map(|r| r.results.len() + r.not_applicable.len())
        .sum();
    assert_eq!(
        total,
        catalog().vectors.len(),
        "the shards cover the plan once"
    );
    assert_eq!(shard_reports[0].classes[0].status.as_str(), "incomplete");
    let merged = out_dir("shard-merged");
    // Shards given out of order merge the same.
    let o = bin(&[
        "merge",
        shards[2].to_str().unwrap(),
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    for f in ["report.json", "junit.xml", "report.md", "report.html"] {
        let a = std::fs::read_to_string(full.join(f)).unwrap();
        let b = std::fs::read_to_string(merged.join(f)).unwrap();
        assert!(
            strip_run(f, &a) == strip_run(f, &b),
            "{f}: merged differs from unsharded:\n{}",
            similar_lines(&strip_run(f, &a), &strip_run(f, &b))
        );
    }
    // A missing shard is refused.
    let o = bin(&[
        "merge",
        shards[0].to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("do not cover 1..3"),
        "{}",
        text(&o)
    );
}

#[test]
fn baselines_expect_known_failures_and_diff_finds_regressions() {
    let filter = "core_0001*,core_0014*,core_0015*";
    let broken = "harness/tests/fixtures/reports/broken-tcp.yaml";
    let dir = out_dir("baseline");
    std::fs::create_dir_all(&dir).unwrap();
    let base = dir.join("baseline.yaml");
    let run = |sut: &str, out: &str, extra: &[&str]| {
        let out = dir.join(out);
        let mut args = vec![
            "run",
            "-q",
            "--sut",
            sut,
            "--filter",
            filter,
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        (bin(&args), out.join("report.json"))
    };
    // Without a baseline the broken deployment fails.
    let (o, broken_json) = run(broken, "plain", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // --update-baseline writes its failures and the run passes against it.
    let (o, _) = run(
        broken,
        "update",
        &["--baseline", base.to_str().unwrap(), "--update-baseline"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let yaml = std::fs::read_to_string(&base).unwrap();
    assert!(
        yaml.contains("vector: \"core_0014_stale_timestamp\"") && yaml.contains("verdict: fail"),
        "{yaml}"
    );
    assert!(
        !yaml.contains("core_0001"),
        "a passing vector is not an expected failure:\n{yaml}"
    );
    let (o, json) = run(broken, "expected", &["--baseline", base.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let rep = Report::from_json(&std::fs::read_to_string(json).unwrap()).unwrap();
    let b = rep.baseline.expect("baseline block");
    assert_eq!((b.expected_failures, b.deviations.len()), (2, 0));
    let junit = std::fs::read_to_string(dir.join("expected/junit.xml")).unwrap();
    assert_eq!(
        junit.matches("type=\"expected-failure\"").count(),
        2,
        "{junit}"
    );
    assert!(!junit.contains("<failure"), "{junit}");
    // The same vectors against the working reference pass unexpectedly: the run fails.
    let (o, good_json) = run(
        "implementations/manifests/reference-tcp.yaml",
        "unexpected-pass",
        &["--baseline", base.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("unexpected-pass core_0014_stale_timestamp"),
        "{}",
        text(&o)
    );
    let junit = std::fs::read_to_string(dir.join("unexpected-pass/junit.xml")).unwrap();
    assert_eq!(
        junit.matches("type=\"baseline-deviation\"").count(),
        2,
        "{junit}"
    );
    // A listed vector failing with another observation fails the run.
    assert!(yaml.contains("observed: \"accepted\""), "{yaml}");
    std::fs::write(
        &base,
        yaml.replace(
            "observed: \"accepted\"",
            "observed: \"reject ERR_SOMETHING_ELSE\"",
        ),
    )
    .unwrap();
    let (o, _) = run(broken, "different", &["--baseline", base.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("failed-differently"),
        "{}",
        text(&o)
    );
    // diff: good → broken is a regression (exit 1), listed first; broken → good is not.
    let o = bin(&[
        "diff",
        good_json.to_str().unwrap(),
        broken_json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let d = String::from_utf8_lossy(&o.stdout);
    let first = d.find("## ").map(|i| &d[i..]).unwrap_or("");
    assert!(first.starts_with("## Regressions"), "{d}");
    assert!(
        d.contains("- vector `core_0014_stale_timestamp`: pass → fail"),
        "{d}"
    );
    assert!(d.contains("- requirement `S1-016`: pass → fail"), "{d}");
    let o = bin(&[
        "diff",
        broken_json.to_str().unwrap(),
        good_json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("## Fixed"),
        "{}",
        text(&o)
    );
}

/// Vector results of the broken report keep the verdicts the engine gave (no doctoring).
#[test]
fn failures_carry_their_transcripts() {
    let rep = broken_report();
    for r in &rep.failures {
        assert!(r.verdict.is_failure() || r.verdict == Verdict::RejectCodeNotObservable);
        let t: &[swp_conform::report::result::TranscriptEntry] = rep.transcript(r);
        assert!(!t.is_empty(), "{} has no transcript", r.vector_id);
    }
}

/// `run --jobs N` changes how long a run takes, not what it says: the report equals the
/// one-worker report outside the run block, and the rate-limit vector (exclusive) passes.
#[test]
fn parallel_jobs_give_the_same_report() {
    let dir = out_dir("jobs");
    let run = |jobs: &str| {
        let out = dir.join(format!("jobs-{jobs}"));
        let o = bin(&[
            "run",
            "-q",
            "--sut",
            "implementations/manifests/reference-tcp.yaml",
            "--filter",
            "core_*,mcp_*",
            "--jobs",
            jobs,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap())
                .unwrap();
        v.as_object_mut().unwrap().remove("run");
        v
    };
    let one = run("1");
    let four = run("4");
    assert!(one["total"].as_u64().unwrap_or(0) > 50, "{one}");
    let passed = |v: &serde_json::Value, id: &str| {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["vector_id"] == id && r["verdict"] == "pass")
    };
    assert!(passed(&four, "core_0016_burst_limit_exceeded"));
    assert_eq!(one, four);
}
