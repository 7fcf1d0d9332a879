//! Every vector of the catalog as its own test against every reference manifest it applies
//! to (`tcp::core::core_0005_...`): in process, the testee, stdio, TCP, TLS, the relay
//! (intermediary topology) and a TCP endpoint with the other legitimate policies (no
//! freshness, unknown profiles closed). A trial exists only for a vector that applies to the
//! mode, decided before anything runs, and it passes only on a `pass`: a vector that turns
//! out not applicable at run time fails, so no trial passes without running its vector.
//! Plus checks on the catalog itself: the spec kit's catalog IDs are all accounted for, the
//! checked-in JSON Schemas match the Rust types, every vector runs against some reference
//! manifest, and in-process and testee verdicts agree.

#[path = "common/shared.rs"]
mod shared;

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use swp_conform::catalog::{self, Catalog};
use swp_conform::connect::inproc::InProcess;
use swp_conform::method::codec::CodecMethod;
use swp_conform::method::{self, Cancel, Runner, Setup};
use swp_conform::report::result::{VectorResult, Verdict};
use swp_conform::sut::Sut;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn catalog() -> &'static Catalog {
    static CAT: OnceLock<Catalog> = OnceLock::new();
    CAT.get_or_init(|| match catalog::load::load(&root().join("vectors")) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    })
}

/// The (mode, vector) pairs whose correct verdict is `reject-code-not-observable`: the
/// lenient reference declares no error path for unknown profiles and closes (CORE-049), so
/// the code of core_0009's reject cannot be seen. Every other trial must pass.
const CODE_NOT_OBSERVABLE: &[(&str, &str)] = &[("lenient", "core_0009_unknown_profile")];

fn outcome(mode: &str, r: &VectorResult) -> Result<(), Failed> {
    let rcno_expected = CODE_NOT_OBSERVABLE.contains(&(mode, r.vector_id.as_str()));
    match r.verdict {
        Verdict::Pass if !rcno_expected => Ok(()),
        Verdict::RejectCodeNotObservable if rcno_expected => Ok(()),
        _ => Err(format!(
            "{} [{}]\n  expected: {}\n  observed: {}\n  detail: {}\n  transcript:\n{}",
            r.vector_id,
            r.verdict.as_str(),
            r.expected,
            r.observed,
            r.detail.as_deref().unwrap_or(""),
            r.transcript
                .iter()
                .map(|t| format!("    {:?} +{}ms {}", t.dir, t.t_ms, t.data))
                .collect::<Vec<_>>()
                .join("\n")
        )
        .into()),
    }
}

fn meta_index_complete() -> Result<(), Failed> {
    let cat = catalog();
    let mut problems = Vec::new();
    let spec: String = std::fs::read_to_string(
        shared::shared_dir().join("swp-spec-kit/conformance/vectors/catalog.md"),
    )
    .unwrap_or_default();
    if spec.is_empty() {
        // The spec kit sits beside the repo (../shared), as in CI, where its absence fails
        // (SWP_REQUIRE_SPEC_KIT=1); a clone elsewhere still checks that every indexed ID is
        // covered, excluded or pending, and says in one line what it could not check.
        if std::env::var("SWP_REQUIRE_SPEC_KIT").as_deref() == Ok("1") {
            return Err("the spec kit's catalog.md is missing (SWP_SHARED_DIR, else ../shared) and SWP_REQUIRE_SPEC_KIT=1".into());
        }
        eprintln!("skipped: meta::catalog_index_complete did not compare the index with the spec kit (not found in SWP_SHARED_DIR, else ../shared)");
    }
    for e in &cat.index.catalog {
        let has = cat.vectors.iter().any(|v| v.vector.header.id == e.id);
        match (has, &e.excluded, &e.pending) {
            (true, None, None) | (false, Some(_), None) | (false, None, Some(_)) => {}
            (true, _, _) => problems.push(format!(
                "{}: has a vector but is marked excluded/pending",
                e.id
            )),
            (false, None, None) => problems.push(format!(
                "{}: no vector and no exclusion or pending reason",
                e.id
            )),
            (false, Some(_), Some(_)) => {
                problems.push(format!("{}: both excluded and pending", e.id))
            }
        }
        if !spec.is_empty() && !spec.contains(&format!("`{}`", e.id)) {
            problems.push(format!("{}: not in the spec kit's catalog.md", e.id));
        }
    }
    // The index must list every catalog id of the spec kit when it is available.
    for line in spec.lines() {
        if let Some(id) = line.split('`').nth(1) {
            if line
                .trim_start()
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
                && !cat.index.catalog.iter().any(|e| e.id == id)
            {
                problems.push(format!(
                    "{id}: in catalog.md but missing from catalog-index.yaml"
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

fn meta_schemas_in_sync() -> Result<(), Failed> {
    let dir = root().join("docs/schema");
    let mut stale = Vec::new();
    for (name, text) in swp_conform::support::schema::all() {
        let on_disk = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        if on_disk != text {
            stale.push(name);
        }
    }
    if stale.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "docs/schema is stale for {}: run `cargo run -p swp-conform -- schema docs/schema`",
            stale.join(", ")
        )
        .into())
    }
}

fn meta_manifests_load() -> Result<(), Failed> {
    let dir = root().join("implementations/manifests");
    let mut errs = Vec::new();
    for e in std::fs::read_dir(&dir).map_err(|e| e.to_string())? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.extension().is_some_and(|x| x == "yaml") {
            if let Err(e) = Sut::load(&p) {
                errs.push(e.to_string());
            }
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs.join("\n").into())
    }
}

fn meta_inproc_and_testee_agree() -> Result<(), Failed> {
    let cat = catalog();
    let sut = Sut::builtin().map_err(|e| e.to_string())?;
    let plan: Vec<_> = cat.vectors.iter().collect();
    let a = CodecMethod::new(&sut, Box::new(InProcess))
        .run(cat, &plan)
        .map_err(|e| e.to_string())?;
    let testee = load_manifest("reference-testee.yaml");
    let b = method::run(cat, &testee, &setup("agree"), &plan).map_err(|e| e.to_string())?;
    if a.len() != b.len() || a.len() != plan.len() {
        return Err(format!(
            "{} vectors, {} in-process results, {} testee results",
            plan.len(),
            a.len(),
            b.len()
        )
        .into());
    }
    let key = |r: &VectorResult| {
        (
            r.vector_id.clone(),
            r.verdict,
            r.observed.clone(),
            r.observed_error_code.clone(),
        )
    };
    let diffs: Vec<String> = a
        .iter()
        .zip(&b)
        .filter(|(x, y)| key(x) != key(y))
        .map(|(x, y)| {
            format!(
                "{}: in-process {:?}, testee {:?}",
                x.vector_id,
                key(x),
                key(y)
            )
        })
        .collect();
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("\n").into())
    }
}

/// Two runs of the same code give identical reports outside the `run` block.
fn meta_reports_are_deterministic() -> Result<(), Failed> {
    use swp_conform::report::model::{Report, RunInfo, SutInfo};
    let cat = catalog();
    let sut = Sut::builtin().map_err(|e| e.to_string())?;
    let plan: Vec<_> = cat.vectors.iter().collect();
    let render = |ts: &str| -> Result<String, Failed> {
        let results = CodecMethod::new(&sut, Box::new(InProcess))
            .run(cat, &plan)
            .map_err(|e| e.to_string())?;
        let run = RunInfo {
            pattern: "*".into(),
            no_fallback: true,
            timestamp_utc: ts.into(),
            runner_git_sha: "x".into(),
            duration_ms: ts.len() as u64,
            command: vec![],
            interrupted: false,
            ..Default::default()
        };
        let sut_info = SutInfo {
            name: "n".into(),
            version: "v".into(),
            reported: "r".into(),
        };
        let mut v: serde_json::Value =
            serde_json::from_str(&Report::new(run, sut_info, results, false).to_json())
                .map_err(|e| e.to_string())?;
        v.as_object_mut()
            .ok_or("report is not an object")?
            .remove("run");
        Ok(v.to_string())
    };
    if render("2026-01-01T00:00:00Z")? == render("2027-12-31T23:59:59Z")? {
        Ok(())
    } else {
        Err("two in-process runs differ outside the run block".into())
    }
}

/// The reference manifests the catalog runs against, as trial-name prefixes. `None` is the
/// built-in SUT.
const MODES: [(&str, Option<&str>); 7] = [
    ("inproc", None),
    ("testee", Some("reference-testee.yaml")),
    ("stdio", Some("reference-stdio.yaml")),
    ("tcp", Some("reference-tcp.yaml")),
    ("tls", Some("reference-tls.yaml")),
    ("relay", Some("reference-relay.yaml")),
    ("lenient", Some("reference-lenient.yaml")),
];

/// Manifests other test files run the rest of the catalog against (gateway.rs,
/// mcp_native.rs, mcp_proxy.rs); counted when checking that every vector runs somewhere.
const OTHER_SUITES: [&str; 6] = [
    "gateway-stdio.yaml",
    "gateway-mcp-stdio.yaml",
    "mcp-server-everything.yaml",
    "mcp-server-everything-http.yaml",
    "mcp-server-everything-http-2025-11-25.yaml",
    "mcp-proxy-reference.yaml",
];

/// Vectors no reference manifest runs, each with why; every other vector must run against
/// one. Empty today: add an entry only with its reason.
const RUN_BY_NO_REFERENCE: [(&str, &str); 3] = [
    (
        "policyhint_0108_conflicts_refused",
        "POLICYHINT_CONFLICT_POLICY 2: the reference resolves conflicts (0), it never refuses the set",
    ),
    (
        "events_0112_batch_order_echoed_as_single_events",
        "the other reading of EVENTS_ECHO_BATCH: the reference's echo returns a batch whole",
    ),
    (
        "rpc_0120_replay_while_the_original_runs_told_to_retry",
        "the other reading of RPC_REPLAY_WHILE_RUNNING: the reference's replay waits",
    ),
];

fn load_manifest(file: &str) -> Sut {
    Sut::load(&root().join("implementations/manifests").join(file))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The work files of `name`, and a testee deadline for hangs, not for speed: an 8 MiB frame
/// through a debug-built testee took over 10 s on a loaded 2-core machine.
fn setup(name: &str) -> Setup {
    Setup {
        timeout: std::time::Duration::from_secs(120),
        ..Setup::new(work(name))
    }
}

fn work(name: &str) -> PathBuf {
    root().join("target/catalog-test").join(name)
}

/// One mode's SUT and its method, opened once and shared by the mode's trials (one endpoint
/// process for TCP/TLS, one PKI per run).
struct Mode {
    name: &'static str,
    runner: Mutex<Option<Box<dyn Runner>>>,
}

fn modes() -> &'static [Mode] {
    static MODES_OPEN: OnceLock<Vec<Mode>> = OnceLock::new();
    static SUTS: OnceLock<Vec<Sut>> = OnceLock::new();
    let suts = SUTS.get_or_init(|| {
        MODES
            .iter()
            .map(|(_, m)| match m {
                None => Sut::builtin().unwrap_or_else(|e| panic!("{e}")),
                Some(f) => load_manifest(f),
            })
            .collect()
    });
    MODES_OPEN.get_or_init(|| {
        MODES
            .iter()
            .zip(suts)
            .map(|((name, _), sut)| Mode {
                name,
                runner: Mutex::new(Some(
                    method::open(catalog(), sut, &setup(name))
                        .unwrap_or_else(|e| panic!("{name}: {e}")),
                )),
            })
            .collect()
    })
}

/// Every vector runs against some reference manifest, or says why none.
fn meta_every_vector_runs_somewhere(applies: Vec<(String, bool)>) -> Result<(), Failed> {
    let cat = catalog();
    let suts: Vec<Sut> = OTHER_SUITES.iter().map(|f| load_manifest(f)).collect();
    let mut others: Vec<Box<dyn Runner + '_>> = Vec::new();
    for sut in &suts {
        others.push(method::open(cat, sut, &setup("others")).map_err(|e| e.to_string())?);
    }
    let mut orphans = Vec::new();
    for lv in &cat.vectors {
        let id = &lv.vector.header.id;
        let here = applies.iter().any(|(v, ok)| v == id && *ok);
        let elsewhere = others.iter_mut().any(|r| r.not_applicable(lv).is_none());
        let listed = RUN_BY_NO_REFERENCE.iter().any(|(v, _)| v == id);
        match (here || elsewhere, listed) {
            (true, true) => {
                orphans.push(format!("{id}: listed as run by no reference, but it runs"))
            }
            (false, false) => orphans.push(format!("{id}: no reference manifest runs it")),
            _ => {}
        }
    }
    if orphans.is_empty() {
        Ok(())
    } else {
        Err(orphans.join("\n").into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let cat = catalog();
    let mut trials = vec![
        Trial::test("meta::catalog_index_complete", meta_index_complete),
        Trial::test("meta::schemas_in_sync", meta_schemas_in_sync),
        Trial::test("meta::manifests_load", meta_manifests_load),
        Trial::test(
            "meta::reports_are_deterministic",
            meta_reports_are_deterministic,
        ),
        Trial::test(
            "meta::inproc_and_testee_agree",
            meta_inproc_and_testee_agree,
        ),
    ];
    // Which vectors each mode runs is decided before anything runs, so `--list` shows
    // exactly the trials that execute a vector.
    let mut applies = Vec::new();
    let mut per_mode: Vec<Vec<Trial>> = Vec::new();
    for (i, mode) in modes().iter().enumerate() {
        let mut mine = Vec::new();
        let mut g = mode.runner.lock().unwrap_or_else(|e| e.into_inner());
        let Some(runner) = g.as_mut() else { continue };
        for lv in &cat.vectors {
            let runs = runner.not_applicable(lv).is_none();
            applies.push((lv.vector.header.id.clone(), runs));
            if !runs {
                continue;
            }
            let id = lv.vector.header.id.clone();
            let name = format!(
                "{}::{}::{}",
                mode.name, lv.vector.header.namespace, lv.vector.header.id
            );
            mine.push(
                Trial::test(name, move || {
                    let lv = catalog()
                        .vectors
                        .iter()
                        .find(|v| v.vector.header.id == id)
                        .ok_or("vector vanished")?;
                    let mut g = modes()[i].runner.lock().map_err(|e| e.to_string())?;
                    let r = g.as_mut().ok_or("the mode was closed")?;
                    outcome(
                        modes()[i].name,
                        &r.run_vector(lv, &Cancel::new())
                            .map_err(|e| e.to_string())?,
                    )
                })
                .with_kind(lv.vector.header.namespace.clone()),
            );
        }
        per_mode.push(mine);
    }
    // A mode runs one vector at a time (its runner sits behind a lock), and most of a
    // mode's time is waiting on the SUT's clock (expiries, retries, timeouts), not CPU.
    // Taking the modes' trials in turn, with a worker per mode, lets the modes wait side by
    // side instead of one after another.
    let mut queues: Vec<_> = per_mode.into_iter().map(Vec::into_iter).collect();
    loop {
        let before = trials.len();
        trials.extend(queues.iter_mut().filter_map(Iterator::next));
        if trials.len() == before {
            break;
        }
    }
    let mut args = args;
    args.test_threads.get_or_insert(MODES.len());
    trials.push(Trial::test(
        "meta::every_vector_runs_somewhere",
        move || meta_every_vector_runs_somewhere(applies),
    ));
    let conclusion = libtest_mimic::run(&args, trials);
    // Statics are never dropped: stop the endpoint processes explicitly so no test run
    // leaves a server behind.
    for m in modes() {
        if let Ok(mut g) = m.runner.lock() {
            drop(g.take());
        }
    }
    conclusion.exit();
}
