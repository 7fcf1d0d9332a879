//! Every vector of the catalog as its own test, run in-process and through the reference
//! testee (`inproc::core::core_0005_...`, `testee::core::core_0005_...`), plus checks on the
//! catalog itself: the spec kit's catalog IDs are all accounted for, the checked-in JSON
//! Schemas match the Rust types, and in-process and testee verdicts agree.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use swp_conform::catalog::LoadedVector;
use swp_conform::catalog::{self, Catalog};
use swp_conform::connect::driver::CodecDriver;
use swp_conform::connect::inproc::InProcess;
use swp_conform::connect::testee::TesteeDriver;
use swp_conform::method::codec::CodecMethod;
use swp_conform::method::{self, Cancel, Runner, Setup};
use swp_conform::model::{VectorResult, Verdict};
use swp_conform::sut::Sut;

/// Runs one vector by the codec method through `driver`.
fn codec_one(
    sut: &Sut,
    driver: impl CodecDriver,
    lv: &LoadedVector,
) -> Result<VectorResult, Failed> {
    let mut m = CodecMethod::new(sut, Box::new(driver));
    method::run_vector(&mut m, catalog(), sut, lv, &Cancel::new()).map_err(|e| e.to_string().into())
}

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

fn outcome(r: &VectorResult) -> Result<(), Failed> {
    match r.verdict {
        Verdict::Pass | Verdict::NotApplicable => Ok(()),
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
        root().join("../shared/swp-spec-kit/conformance/vectors/catalog.md"),
    )
    .unwrap_or_default();
    if spec.is_empty() {
        // The spec kit sits beside the repo (../shared), as in CI; a clone elsewhere still
        // checks that every indexed ID is covered, excluded or pending, and says what it
        // could not check.
        eprintln!("meta::catalog_index_complete: ../shared/swp-spec-kit not found; the index is not compared with catalog.md");
    }
    for e in &cat.index.catalog {
        let has = cat.vectors.iter().any(|v| v.vector.id == e.id);
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
    for (name, text) in swp_conform::schema::all() {
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

fn meta_inproc_and_testee_agree(testee: Arc<Mutex<TesteeDriver>>) -> Result<(), Failed> {
    let cat = catalog();
    let sut = Sut::builtin().map_err(|e| e.to_string())?;
    let plan: Vec<_> = cat.vectors.iter().collect();
    let a = CodecMethod::new(&sut, Box::new(InProcess))
        .run(cat, &plan)
        .map_err(|e| e.to_string())?;
    let mut guard = testee.lock().map_err(|e| e.to_string())?;
    let b = CodecMethod::new(&sut, Box::new(&mut *guard))
        .run(cat, &plan)
        .map_err(|e| e.to_string())?;
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

/// The session method opened once per transport, shared by that transport's trials (one
/// endpoint process for TCP/TLS, one PKI per run).
type Shared = Mutex<Option<Box<dyn Runner>>>;

fn session(transport: &'static str) -> &'static Shared {
    static STDIO: OnceLock<Shared> = OnceLock::new();
    static TLS: OnceLock<Shared> = OnceLock::new();
    static SUTS: OnceLock<(Sut, Sut)> = OnceLock::new();
    let suts = SUTS.get_or_init(|| {
        let m = root().join("implementations/manifests");
        let load = |f: &str| Sut::load(&m.join(f)).unwrap_or_else(|e| panic!("{e}"));
        (load("reference-stdio.yaml"), load("reference-tls.yaml"))
    });
    let (cell, sut) = if transport == "stdio" {
        (&STDIO, &suts.0)
    } else {
        (&TLS, &suts.1)
    };
    cell.get_or_init(|| {
        let work = root().join(format!("target/swp-conform-test-{transport}"));
        Mutex::new(Some(
            method::open(catalog(), sut, &Setup::new(work)).unwrap_or_else(|e| panic!("{e}")),
        ))
    })
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

fn main() {
    let args = Arguments::from_args();
    let cat = catalog();
    let sut = Arc::new(Sut::builtin().unwrap_or_else(|e| panic!("{e}")));
    let log = root().join("target/swp-ref-testee-stderr.log");
    let testee = Arc::new(Mutex::new(TesteeDriver::new(
        swp_conform::sut::Start {
            command: "${SWP_REF}".into(),
            args: vec!["testee".into()],
            env: Default::default(),
            cwd: None,
        },
        root(),
        Duration::from_secs(30),
        log,
    )));
    let mut trials = vec![
        Trial::test("meta::catalog_index_complete", meta_index_complete),
        Trial::test("meta::schemas_in_sync", meta_schemas_in_sync),
        Trial::test("meta::manifests_load", meta_manifests_load),
        Trial::test(
            "meta::reports_are_deterministic",
            meta_reports_are_deterministic,
        ),
        {
            let t = testee.clone();
            Trial::test("meta::inproc_and_testee_agree", move || {
                meta_inproc_and_testee_agree(t)
            })
        },
    ];
    for lv in &cat.vectors {
        if !lv
            .vector
            .methods
            .contains(&swp_conform::catalog::vector::Method::Session)
        {
            continue;
        }
        for transport in ["stdio", "tls"] {
            let id = lv.vector.id.clone();
            let name = format!("{transport}::{}::{}", lv.vector.namespace, lv.vector.id);
            trials.push(
                Trial::test(name, move || {
                    let cat = catalog();
                    let lv = cat
                        .vectors
                        .iter()
                        .find(|v| v.vector.id == id)
                        .ok_or("vector vanished")?;
                    let mut g = session(transport).lock().map_err(|e| e.to_string())?;
                    let eng = g.as_mut().ok_or("no engine")?;
                    outcome(
                        &eng.run_vector(lv, &Cancel::new())
                            .map_err(|e| e.to_string())?,
                    )
                })
                .with_kind(lv.vector.namespace.clone()),
            );
        }
    }
    for lv in &cat.vectors {
        let na = method::applicability(&lv.vector, &sut).is_some();
        for mode in ["inproc", "testee"] {
            let id = lv.vector.id.clone();
            let sut = sut.clone();
            let testee = testee.clone();
            let name = format!("{mode}::{}::{}", lv.vector.namespace, lv.vector.id);
            let trial = Trial::test(name, move || {
                let cat = catalog();
                let lv = cat
                    .vectors
                    .iter()
                    .find(|v| v.vector.id == id)
                    .ok_or("vector vanished")?;
                let r = if mode == "inproc" {
                    codec_one(&sut, InProcess, lv)?
                } else {
                    let mut g = testee.lock().map_err(|e| e.to_string())?;
                    codec_one(&sut, &mut *g, lv)?
                };
                outcome(&r)
            })
            .with_kind(lv.vector.namespace.clone())
            .with_ignored_flag(na);
            trials.push(trial);
        }
    }
    let conclusion = libtest_mimic::run(&args, trials);
    // Statics are never dropped: stop the endpoint processes explicitly so no test run
    // leaves a server behind.
    for t in ["stdio", "tls"] {
        if let Ok(mut g) = session(t).lock() {
            drop(g.take());
        }
    }
    conclusion.exit();
}
