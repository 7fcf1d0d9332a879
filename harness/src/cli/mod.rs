//! The command line's work after the engine dispatch: shard the plan, run it with progress,
//! retry flaky vectors the baseline allows, build the one report, judge it against the
//! baseline and write every format. `main.rs` only parses arguments and picks the engine.

pub mod claim;
pub mod history;
pub mod matrix;
pub mod progress;
pub mod signing;

/// What stopped a command; printed as `swp-conform: …` with exit status 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A file or directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A report file is not a report.
    #[error("{path}: {source}")]
    Json {
        /// The file.
        path: String,
        /// Why.
        source: serde_json::Error,
    },
    /// The catalog did not load.
    #[error(transparent)]
    Catalog(#[from] crate::support::diag::LoadError),
    /// The selection is invalid.
    #[error(transparent)]
    Select(#[from] crate::plan::select::SelectError),
    /// The manifest did not load.
    #[error(transparent)]
    Sut(#[from] crate::sut::SutError),
    /// The baseline did not load.
    #[error(transparent)]
    Baseline(#[from] crate::report::analysis::baseline::BaselineError),
    /// The shard reports do not merge.
    #[error(transparent)]
    Merge(#[from] crate::report::analysis::merge::MergeError),
    /// A report could not be rendered or written.
    #[error(transparent)]
    Render(#[from] crate::report::render::RenderError),
    /// The SUT cannot be driven at all.
    #[error(transparent)]
    Fatal(#[from] crate::method::Fatal),
    /// The vector directories could not be put together.
    #[error(transparent)]
    Sets(#[from] crate::catalog::load::SetsError),
    /// The MCP schemas could not be fetched.
    #[error(transparent)]
    Fetch(#[from] crate::method::mcpnative::pins::FetchError),
    /// The built-in catalog could not be written out.
    #[error(transparent)]
    Embedded(#[from] crate::catalog::embedded::EmbeddedError),
    /// A signing key could not be made or read.
    #[error(transparent)]
    Key(#[from] crate::evidence::keys::KeyError),
    /// An evidence bundle could not be opened.
    #[error(transparent)]
    Bundle(#[from] crate::evidence::unpack::BundleError),
    /// An argument is invalid.
    #[error("{0}")]
    Usage(String),
    /// The run stopped before its plan ended because the SUT answered nothing
    /// (`--stop-after-silent`); the reports, written first, list the vectors not run.
    #[error("{0}")]
    StoppedEarly(String),
}

/// The error of an I/O operation on `path`.
pub fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CliError + '_ {
    move |source| CliError::Io {
        path: path.display().to_string(),
        source,
    }
}

use crate::catalog::{Catalog, LoadedVector};
use crate::method::{run_plan, run_plan_jobs, Cancel, Runner, Silence};
use crate::report::analysis::baseline::{Baseline, Retry};
use crate::report::model::{Digests, Report, RunInfo, Shard, SutInfo};
use crate::report::result::VectorResult;
use crate::sut::Sut;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// What `run` was asked to do besides selecting.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The selection, as v1's `pattern`.
    pub pattern: String,
    /// SHOULD-level failures fail the run.
    pub strict: bool,
    /// Print whole transcripts in the console summary.
    pub transcripts: bool,
    /// Expected failures.
    pub baseline: Option<PathBuf>,
    /// Rewrite the baseline from this run.
    pub update_baseline: bool,
    /// Run only this part of the plan.
    pub shard: Option<Shard>,
    /// Write the reports here.
    pub out: Option<PathBuf>,
    /// No progress output.
    pub quiet: bool,
    /// Stop the run after this many silent vectors in a row (`method::silence`); 0 never.
    pub stop_after_silent: u32,
}

/// Parses `K/N` with 1 ≤ K ≤ N ≤ 1000.
pub fn parse_shard(s: &str) -> Result<Shard, CliError> {
    let bad = || {
        CliError::Usage(format!(
            "--shard {s:?}: expected K/N with 1 <= K <= N <= 1000"
        ))
    };
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let index: u32 = k.trim().parse().map_err(|_| bad())?;
    let count: u32 = n.trim().parse().map_err(|_| bad())?;
    if index == 0 || index > count || count > 1000 {
        return Err(bad());
    }
    Ok(Shard { index, count })
}

/// The part of an id-ordered plan shard `k` runs: positions `k.index - 1` modulo
/// `k.count`. Deterministic, and the shards of one plan are disjoint and cover it.
pub(crate) fn shard_plan<'a>(plan: &[&'a LoadedVector], k: Shard) -> Vec<&'a LoadedVector> {
    let n = k.count.max(1) as usize;
    let i = (k.index.max(1) - 1) as usize;
    plan.iter()
        .enumerate()
        .filter(|(p, _)| p % n == i)
        .map(|(_, lv)| *lv)
        .collect()
}

/// SHA-256 of a text, hex.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 over every `.yaml` file under the catalog directory (vectors, requirements,
/// index), each as relative path, NUL, length and content, in path order: a change to any
/// of them changes the digest.
pub fn catalog_digest(dir: &Path) -> Result<String, CliError> {
    digest_of(dir, &[])
}

/// The digest of a run's vector set: [`catalog_digest`] of the YAML catalog, with every file
/// of each published set in it too (`published/<set>/<file>`).
pub(crate) fn vector_set_digest(cat: &Catalog) -> Result<String, CliError> {
    digest_of(&cat.dir, &cat.published)
}

fn digest_of(dir: &Path, published: &[PathBuf]) -> Result<String, CliError> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d).map_err(io_error(&d))?;
        for e in rd {
            let p = e.map_err(io_error(&d))?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                files.push(p);
            }
        }
    }
    let mut rel: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|p| (crate::report::result::display_path(dir, &p), p))
        .collect();
    for set in published {
        let name = set
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let rd = std::fs::read_dir(set).map_err(io_error(set))?;
        for e in rd {
            let p = e.map_err(io_error(set))?.path();
            let f = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if p.is_file()
                && (f.ends_with(".json") || f.ends_with(".bin") || f.ends_with(".evidence.md"))
            {
                rel.push((format!("published/{name}/{f}"), p));
            }
        }
    }
    rel.sort();
    let mut h = Sha256::new();
    for (name, p) in &rel {
        let body = std::fs::read(p).map_err(io_error(p))?;
        h.update(name.as_bytes());
        h.update([0]);
        h.update((body.len() as u64).to_le_bytes());
        h.update(&body);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The digests of a run.
pub fn digests(cat: &Catalog, sut: &Sut) -> Result<Digests, CliError> {
    Ok(Digests {
        sut_manifest_sha256: sha256_hex(sut.text.as_bytes()),
        vector_set_sha256: vector_set_digest(cat)?,
    })
}

/// Runs `plan` (sharded if asked) through `runner`, retries flaky vectors, and builds the
/// report with its trace, classes and baseline judgement. Writes no report ([`finish`]
/// does); the one file it writes is the baseline, when `opts.update_baseline` asks for it
/// to be rewritten from this run, before the run is judged against it.
pub fn run_report<'r>(
    cat: &Catalog,
    sut: &Sut,
    plan: &[&LoadedVector],
    opts: &RunOptions,
    runner: &mut (dyn Runner + 'r),
    helpers: &mut [Box<dyn Runner + 'r>],
    cancel: &Cancel,
) -> Result<Report, CliError> {
    let started = Instant::now();
    let ts = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let plan = match opts.shard {
        Some(k) => shard_plan(plan, k),
        None => plan.to_vec(),
    };
    let baseline = match &opts.baseline {
        Some(p) => Some(Baseline::load(p, opts.update_baseline)?),
        None => None,
    };
    let mut progress = progress::Progress::new(plan.len(), opts.quiet);
    let mut silence = Silence::new(opts.stop_after_silent);
    let mut results = run_plan_jobs(runner, helpers, &plan, cancel, &mut silence, &mut |r| {
        progress.tick(r)
    })?;
    progress.finish();
    let stopped = silence.stopped().cloned();
    if let Some(stop) = &stopped {
        // Every vector of the plan is in the report: those not reached, as not run.
        let ran: std::collections::HashSet<String> =
            results.iter().map(|r| r.vector_id.clone()).collect();
        for lv in plan.iter().filter(|lv| !ran.contains(&lv.vector.header.id)) {
            results.push(stop.not_run(crate::method::result_base(cat, lv)));
        }
    }
    let mut retried = Vec::new();
    if let Some(b) = &baseline {
        retried = retry_flaky(b, opts.strict, &plan, &mut results, runner, cancel)?;
    }
    let mut report = Report::new(
        RunInfo {
            pattern: opts.pattern.clone(),
            no_fallback: true,
            timestamp_utc: crate::report::model::rfc3339(ts),
            runner_git_sha: crate::report::model::runner_git_sha(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            command: std::env::args().collect(),
            interrupted: cancel.is_cancelled(),
            stopped_early: stopped.map(|s| s.to_string()),
            ..Default::default()
        },
        SutInfo {
            name: sut.manifest.name.clone(),
            version: sut.manifest.version.clone(),
            reported: runner.describe(),
        },
        results,
        opts.strict,
    );
    report.shard = opts.shard;
    report.attach(cat, digests(cat, sut)?);
    if let (Some(b), Some(path)) = (baseline, &opts.baseline) {
        let all = report.all_results();
        let b = if opts.update_baseline {
            let new = b.updated(&all, opts.strict);
            std::fs::write(path, new.to_yaml()).map_err(io_error(path))?;
            eprintln!("baseline written: {}", path.display());
            new
        } else {
            b
        };
        let mut outcome = b.judge(&all, opts.strict);
        outcome.retried = retried;
        report.run_failed = !outcome.deviations.is_empty();
        report.baseline = Some(outcome);
    }
    Ok(report)
}

/// Re-runs vectors the baseline declares flaky while their result is unexpected, up to
/// their retry count; expected results are never retried. The last attempt's result stands.
fn retry_flaky(
    b: &Baseline,
    strict: bool,
    plan: &[&LoadedVector],
    results: &mut [VectorResult],
    runner: &mut dyn Runner,
    cancel: &Cancel,
) -> Result<Vec<Retry>, CliError> {
    let mut retried: Vec<Retry> = Vec::new();
    let max = plan
        .iter()
        .map(|lv| b.retries(&lv.vector.header.id))
        .max()
        .unwrap_or(0);
    for attempt in 1..=max {
        let todo: Vec<&LoadedVector> = plan
            .iter()
            .copied()
            .filter(|lv| b.retries(&lv.vector.header.id) >= attempt)
            .filter(|lv| {
                results
                    .iter()
                    .find(|r| r.vector_id == lv.vector.header.id)
                    .is_some_and(|r| b.deviation(r, strict).is_some())
            })
            .collect();
        if todo.is_empty() || cancel.is_cancelled() {
            break;
        }
        let again = run_plan(runner, &todo, cancel, &mut Silence::never(), &mut |_| {})?;
        for r in again {
            let settled = b.deviation(&r, strict).is_none();
            match retried.iter_mut().find(|x| x.vector_id == r.vector_id) {
                Some(x) => {
                    x.attempts += 1;
                    x.settled = settled;
                }
                None => retried.push(Retry {
                    vector_id: r.vector_id.clone(),
                    attempts: 2,
                    settled,
                }),
            }
            if let Some(slot) = results.iter_mut().find(|x| x.vector_id == r.vector_id) {
                *slot = r;
            }
        }
    }
    retried.sort_by(|x, y| x.vector_id.cmp(&y.vector_id));
    Ok(retried)
}

/// Writes the reports and prints the summary; answers whether the run passed.
pub fn finish(report: &Report, opts: &RunOptions) -> Result<bool, CliError> {
    if let Some(o) = &opts.out {
        crate::report::write_all(report, o)?;
    }
    print!(
        "{}",
        crate::report::render::console::summary(report, opts.strict, opts.transcripts)
    );
    if !report.claims.is_empty() {
        println!("claims: {}", report.claims.join(", "));
    }
    if !report.profile_claims.is_empty() {
        println!(
            "profile claims (on C0): {}",
            report.profile_claims.join(", ")
        );
    }
    if let Some(b) = &report.baseline {
        println!(
            "baseline: {} expected failure(s), {} deviation(s)",
            b.expected_failures,
            b.deviations.len()
        );
        for d in &b.deviations {
            println!(
                "  {} {}: expected {}, got {}",
                d.kind.as_str(),
                d.vector_id,
                d.expected,
                d.got
            );
        }
    }
    if report.run.interrupted {
        println!("run INTERRUPTED: the report holds the vectors that finished");
    }
    if let Some(o) = &opts.out {
        println!(
            "reports: {} (report.json, junit.xml, report.md, report.html)",
            o.display()
        );
    }
    if let Some(why) = &report.run.stopped_early {
        return Err(CliError::StoppedEarly(why.clone()));
    }
    // An interrupted run decided nothing about the vectors it did not reach.
    Ok(!report.run_failed && !report.run.interrupted)
}

/// Reads a `report.json`.
pub(crate) fn read_report(p: &Path) -> Result<Report, CliError> {
    let text = std::fs::read_to_string(p).map_err(io_error(p))?;
    Report::from_json(&text).map_err(|source| CliError::Json {
        path: p.display().to_string(),
        source,
    })
}

/// `swp-conform merge`: reads shard reports, merges them against the catalog, writes the
/// merged reports; answers whether the merged run passed.
pub fn merge_cli(cat: &Catalog, inputs: &[PathBuf], out: &Path) -> Result<bool, CliError> {
    let mut shards = Vec::new();
    for p in inputs {
        shards.push((p.display().to_string(), read_report(p)?));
    }
    let digest = vector_set_digest(cat)?;
    let merged =
        crate::report::analysis::merge::merge(shards, cat, &digest, std::env::args().collect())?;
    crate::report::write_all(&merged, out)?;
    print!(
        "{}",
        crate::report::render::console::summary(&merged, merged.strict, false)
    );
    println!(
        "merged {} shard(s): {} (report.json, junit.xml, report.md, report.html)",
        inputs.len(),
        out.display()
    );
    Ok(!merged.run_failed)
}

/// `swp-conform diff OLD NEW`: prints the changes; answers false on a regression.
pub fn diff_cli(old: &Path, new: &Path) -> Result<bool, CliError> {
    let (a, b) = (read_report(old)?, read_report(new)?);
    let changes = crate::report::analysis::diff::changes(&a, &b);
    print!(
        "{}",
        crate::report::analysis::diff::render(&a, &b, &changes)
    );
    Ok(!changes
        .iter()
        .any(|c| c.kind == crate::report::analysis::diff::Kind::Regression))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::result::Verdict;

    fn catalog() -> Catalog {
        crate::catalog::load::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors"))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn shards_are_disjoint_and_cover_the_plan() {
        let cat = catalog();
        let plan: Vec<&LoadedVector> = cat.vectors.iter().collect();
        let mut seen = Vec::new();
        for index in 1..=4 {
            let ids = |p: Vec<&LoadedVector>| -> Vec<String> {
                p.iter().map(|lv| lv.vector.header.id.clone()).collect()
            };
            let part = ids(shard_plan(&plan, Shard { index, count: 4 }));
            assert_eq!(part, ids(shard_plan(&plan, Shard { index, count: 4 })));
            seen.extend(part);
        }
        seen.sort();
        let all: Vec<String> = plan.iter().map(|lv| lv.vector.header.id.clone()).collect();
        assert_eq!(seen, all);
        assert!(parse_shard("0/2").is_err() && parse_shard("3/2").is_err());
        assert!(parse_shard("x").is_err() && parse_shard("1/1001").is_err());
        assert_eq!(
            parse_shard("2/3").map(|s| s.to_string()).ok(),
            Some("2/3".into())
        );
    }

    /// A fake SUT: each vector fails until it has been run `fails_before_pass` times.
    #[test]
    fn flaky_vectors_are_retried_only_while_unexpected() {
        let cat = catalog();
        let plan: Vec<&LoadedVector> = cat.vectors.iter().take(3).collect();
        let ids: Vec<String> = plan.iter().map(|lv| lv.vector.header.id.clone()).collect();
        // ids[0]: flaky, fails once then passes → retried once, settles.
        // ids[1]: flaky, listed as an expected failure and fails → never retried.
        // ids[2]: flaky with 2 retries, always fails unexpectedly → run 3 times.
        let b = Baseline::parse(&format!(
            "expected_failures:\n  - vector: {1}\nflaky:\n  - vector: {0}\n  - vector: {1}\n  - vector: {2}\n",
            ids[0], ids[1], ids[2]
        ), std::path::Path::new("b.yaml"))
        .unwrap();
        /// Counts runs per vector; `passes` passes from its second run on.
        struct Fake {
            runs: std::collections::BTreeMap<String, u32>,
            passes: String,
        }
        impl Runner for Fake {
            fn describe(&self) -> String {
                "fake".into()
            }
            fn run_vector(
                &mut self,
                lv: &LoadedVector,
                _: &Cancel,
            ) -> Result<VectorResult, crate::method::Fatal> {
                let n = self.runs.entry(lv.vector.header.id.clone()).or_default();
                *n += 1;
                let mut r = VectorResult::new(
                    lv.vector.header.id.clone(),
                    lv.vector.header.namespace.clone(),
                    String::new(),
                    vec![],
                    true,
                );
                let pass = lv.vector.header.id == self.passes && *n > 1;
                r.verdict = if pass { Verdict::Pass } else { Verdict::Fail };
                r.pass = pass;
                Ok(r)
            }
            fn not_applicable(&mut self, _: &LoadedVector) -> Option<crate::method::NotApplicable> {
                None
            }
        }
        let mut fake = Fake {
            runs: Default::default(),
            passes: ids[0].clone(),
        };
        let cancel = Cancel::new();
        let mut results = run_plan(
            &mut fake,
            &plan,
            &cancel,
            &mut Silence::never(),
            &mut |_| {},
        )
        .unwrap();
        let retried = retry_flaky(&b, false, &plan, &mut results, &mut fake, &cancel).unwrap();
        let runs = &fake.runs;
        assert_eq!(runs[&ids[0]], 2);
        assert_eq!(runs[&ids[1]], 1, "an expected result is never retried");
        assert_eq!(runs[&ids[2]], 3);
        assert_eq!(results[0].verdict, Verdict::Pass);
        let mut want = vec![
            Retry {
                vector_id: ids[0].clone(),
                attempts: 2,
                settled: true,
            },
            Retry {
                vector_id: ids[2].clone(),
                attempts: 3,
                settled: false,
            },
        ];
        want.sort_by(|x, y| x.vector_id.cmp(&y.vector_id));
        assert_eq!(retried, want);
    }

    /// `--jobs`: every vector runs once, results come back in plan order whatever the
    /// scheduling, and an `exclusive` vector runs with nothing else in flight, on the
    /// primary runner.
    #[test]
    fn jobs_keep_plan_order_and_run_exclusive_vectors_alone() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::{Arc, Mutex};
        let mut cat = catalog();
        for lv in cat.vectors.iter_mut().skip(3).step_by(7) {
            lv.vector.header.exclusive = true;
        }
        let plan: Vec<&LoadedVector> = cat.vectors.iter().take(40).collect();
        struct Fake {
            name: usize,
            busy: Arc<AtomicUsize>,
            log: Arc<Mutex<Vec<(usize, String, usize)>>>,
        }
        impl Runner for Fake {
            fn describe(&self) -> String {
                "fake".into()
            }
            fn run_vector(
                &mut self,
                lv: &LoadedVector,
                _: &Cancel,
            ) -> Result<VectorResult, crate::method::Fatal> {
                let others = self.busy.fetch_add(1, Ordering::SeqCst);
                // Stay in flight a little, so overlapping runs would be seen.
                std::thread::sleep(std::time::Duration::from_millis(2));
                if let Ok(mut l) = self.log.lock() {
                    l.push((self.name, lv.vector.header.id.clone(), others));
                }
                self.busy.fetch_sub(1, Ordering::SeqCst);
                let mut r = VectorResult::new(
                    lv.vector.header.id.clone(),
                    lv.vector.header.namespace.clone(),
                    String::new(),
                    vec![],
                    true,
                );
                r.verdict = Verdict::Pass;
                r.pass = true;
                Ok(r)
            }
            fn not_applicable(&mut self, _: &LoadedVector) -> Option<crate::method::NotApplicable> {
                None
            }
        }
        let busy = Arc::new(AtomicUsize::new(0));
        let log = Arc::new(Mutex::new(Vec::new()));
        let fake = |name| Fake {
            name,
            busy: busy.clone(),
            log: log.clone(),
        };
        let mut primary = fake(0);
        let mut helpers: Vec<Box<dyn Runner>> = (1..4)
            .map(|n| Box::new(fake(n)) as Box<dyn Runner>)
            .collect();
        let mut ticks = 0;
        let results = run_plan_jobs(
            &mut primary,
            &mut helpers,
            &plan,
            &Cancel::new(),
            &mut Silence::never(),
            &mut |_| ticks += 1,
        )
        .unwrap();
        let ids = |v: &[&LoadedVector]| {
            v.iter()
                .map(|lv| lv.vector.header.id.clone())
                .collect::<Vec<_>>()
        };
        let got: Vec<String> = results.iter().map(|r| r.vector_id.clone()).collect();
        assert_eq!(got, ids(&plan), "plan order");
        assert_eq!(ticks, plan.len());
        let log = log.lock().unwrap();
        assert_eq!(log.len(), plan.len(), "each vector runs once");
        let exclusive: Vec<_> = log
            .iter()
            .filter(|(_, id, _)| {
                plan.iter()
                    .any(|lv| &lv.vector.header.id == id && lv.vector.header.exclusive)
            })
            .collect();
        assert!(!exclusive.is_empty());
        for (runner, id, others) in exclusive {
            assert_eq!(
                (*runner, *others),
                (0, 0),
                "{id} ran beside others or off the primary"
            );
        }
        assert!(log.iter().any(|(n, _, _)| *n != 0), "the helpers took work");
    }
}
