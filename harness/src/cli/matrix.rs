//! `swp-conform matrix`'s processes: one `swp-conform run` per column, at most `jobs` at
//! once, each with its own report directory and log, so a column is isolated as a normal run
//! is and its transcripts go to disk, never into this process. The page is then built from
//! the reports (`matrix::build`).

use crate::cli::{io_error, CliError};
use crate::matrix::model::{ColumnRun, ColumnSeed, Matrix, MatrixRun};
use crate::matrix::spec::Entry;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What `matrix` was asked for.
#[derive(Debug, Clone)]
pub struct MatrixOptions {
    /// The columns.
    pub entries: Vec<Entry>,
    /// Column runs at once.
    pub jobs: usize,
    /// The matrix directory.
    pub out: PathBuf,
    /// Arguments every `run` gets (selection, vectors, timeout, its own `--jobs`).
    pub run_args: Vec<String>,
    /// Only rebuild the page from the reports already in `out`.
    pub rebuild: bool,
    /// The matrix's own command line, for the run block.
    pub command: Vec<String>,
    /// No progress lines.
    pub quiet: bool,
}

struct Running {
    index: usize,
    child: Child,
    started: Instant,
}

/// Runs the columns (unless rebuilding), then builds and writes `matrix.json` and
/// `matrix.html`.
pub fn matrix(o: &MatrixOptions) -> Result<Matrix, CliError> {
    std::fs::create_dir_all(&o.out).map_err(io_error(&o.out))?;
    let started = Instant::now();
    let timestamp = crate::report::model::rfc3339(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    );
    let mut seeds: Vec<ColumnSeed> = o
        .entries
        .iter()
        .map(|e| ColumnSeed {
            label: e.label.clone(),
            pair: e.pair.clone(),
            run: None,
            missing: None,
        })
        .collect();
    if !o.rebuild {
        run_columns(o, &mut seeds)?;
    }
    let run = MatrixRun {
        timestamp_utc: timestamp,
        command: o.command.clone(),
        jobs: u32::try_from(o.jobs).unwrap_or(u32::MAX),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        runs: seeds.iter().filter_map(|s| s.run.clone()).collect(),
        peak_rss_kib: None,
    };
    let mut m = crate::matrix::build(&o.out, &seeds, run);
    m.run.peak_rss_kib = peak_rss_kib();
    crate::matrix::write(&o.out, &m).map_err(io_error(&o.out))?;
    Ok(m)
}

/// This process's peak resident set (`VmHWM` of /proc/self/status), where Linux has it.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn run_columns(o: &MatrixOptions, seeds: &mut [ColumnSeed]) -> Result<(), CliError> {
    let exe = std::env::current_exe().map_err(io_error(Path::new("swp-conform")))?;
    let mut queue: std::collections::VecDeque<usize> = (0..o.entries.len()).collect();
    let mut running: Vec<Running> = Vec::new();
    let jobs = o.jobs.max(1);
    while !queue.is_empty() || !running.is_empty() {
        while running.len() < jobs {
            let Some(i) = queue.pop_front() else { break };
            let e = &o.entries[i];
            let dir = o.out.join(&e.label);
            std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
            // A report left by an earlier matrix must not stand in for this run's.
            for f in ["report.json", "report.md", "report.html", "junit.xml"] {
                let p = dir.join(f);
                if p.exists() {
                    std::fs::remove_file(&p).map_err(io_error(&p))?;
                }
            }
            match spawn(&exe, e, &dir, &o.run_args) {
                Ok(child) => {
                    if !o.quiet {
                        eprintln!("matrix: {} started", e.label);
                    }
                    running.push(Running {
                        index: i,
                        child,
                        started: Instant::now(),
                    });
                }
                Err(err) => {
                    seeds[i].missing = Some(format!("could not start `swp-conform run`: {err}"));
                }
            }
        }
        let mut k = 0;
        while k < running.len() {
            match running[k].child.try_wait() {
                Ok(Some(status)) => {
                    let r = running.swap_remove(k);
                    finished(o, seeds, r, status.code());
                }
                Ok(None) => k += 1,
                Err(_) => {
                    let mut r = running.swap_remove(k);
                    let _ = r.child.kill();
                    let code = r.child.wait().ok().and_then(|s| s.code());
                    finished(o, seeds, r, code);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

fn spawn(exe: &Path, e: &Entry, dir: &Path, run_args: &[String]) -> std::io::Result<Child> {
    let log = std::fs::File::create(dir.join("run.log"))?;
    let mut cmd = Command::new(exe);
    cmd.arg("run").arg("--quiet").arg("--out").arg(dir);
    if let Some(m) = &e.manifest {
        cmd.arg("--sut").arg(m);
    }
    cmd.args(run_args)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    cmd.spawn()
}

fn finished(o: &MatrixOptions, seeds: &mut [ColumnSeed], r: Running, code: Option<i32>) {
    let label = &o.entries[r.index].label;
    let ms = u64::try_from(r.started.elapsed().as_millis()).unwrap_or(u64::MAX);
    if !o.quiet {
        eprintln!(
            "matrix: {label} done in {:.1} s ({})",
            ms as f64 / 1000.0,
            code.map_or_else(|| "killed".to_owned(), |c| format!("exit {c}"))
        );
    }
    seeds[r.index].run = Some(ColumnRun {
        label: label.clone(),
        exit_code: code,
        duration_ms: ms,
    });
}

/// `swp-conform matrix`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct MatrixArgs {
    /// A column: `[LABEL=]MANIFEST` (the label defaults to the manifest's file stem);
    /// repeatable.
    #[arg(long = "sut", value_name = "[LABEL=]MANIFEST")]
    pub suts: Vec<String>,
    /// A matrix file (YAML) with `suts: [{label, manifest}]` and `pairs: [{label, manifest,
    /// intermediary, upstream}]`; its columns come after any --sut.
    #[arg(long)]
    pub matrix: Option<PathBuf>,
    /// Column runs at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// Vectors at once within each column's run (`run --jobs`).
    #[arg(long = "run-jobs", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub run_jobs: u16,
    /// The matrix directory: `<label>/` reports, matrix.json, matrix.html.
    #[arg(long, default_value = "matrix")]
    pub out: PathBuf,
    /// Vector directories, as for `run`.
    #[arg(long)]
    pub vectors: Vec<PathBuf>,
    /// Id globs, as for `run`.
    #[arg(long)]
    pub filter: Vec<String>,
    /// Only these namespaces, as for `run`.
    #[arg(long = "namespace")]
    pub namespaces: Vec<String>,
    /// Only a class's namespaces, as for `run`.
    #[arg(long)]
    pub class: Option<String>,
    /// Per-request deadline for out-of-process SUTs, in ms, as for `run`.
    #[arg(long, default_value_t = 10_000)]
    pub timeout_ms: u64,
    /// Run nothing: rebuild matrix.json and matrix.html from the reports in --out.
    #[arg(long)]
    pub rebuild: bool,
    /// No progress lines.
    #[arg(long, short)]
    pub quiet: bool,
}

impl MatrixArgs {
    /// The options, with every column listed and every `run` argument spelled out.
    pub fn options(&self) -> Result<MatrixOptions, CliError> {
        let spec = |e: crate::matrix::spec::SpecError| CliError::Usage(e.to_string());
        let mut entries = if self.suts.is_empty() {
            Vec::new()
        } else {
            crate::matrix::spec::from_args(&self.suts).map_err(spec)?
        };
        if let Some(f) = &self.matrix {
            entries.extend(crate::matrix::spec::load(f).map_err(spec)?);
        }
        if entries.is_empty() {
            return Err(spec(crate::matrix::spec::SpecError::Empty));
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(dup) = entries.iter().find(|e| !seen.insert(e.label.clone())) {
            return Err(CliError::Usage(format!(
                "label {:?} is used twice (--sut and the matrix file)",
                dup.label
            )));
        }
        let mut run_args: Vec<String> = Vec::new();
        let os = |p: &PathBuf| p.to_string_lossy().into_owned();
        for v in &self.vectors {
            run_args.extend(["--vectors".to_owned(), os(v)]);
        }
        for f in &self.filter {
            run_args.extend(["--filter".to_owned(), f.clone()]);
        }
        for n in &self.namespaces {
            run_args.extend(["--namespace".to_owned(), n.clone()]);
        }
        if let Some(c) = &self.class {
            run_args.extend(["--class".to_owned(), c.clone()]);
        }
        run_args.extend([
            "--timeout-ms".to_owned(),
            self.timeout_ms.to_string(),
            "--jobs".to_owned(),
            self.run_jobs.to_string(),
        ]);
        Ok(MatrixOptions {
            entries,
            jobs: usize::from(self.jobs),
            out: self.out.clone(),
            run_args,
            rebuild: self.rebuild,
            command: std::env::args().collect(),
            quiet: self.quiet,
        })
    }
}

/// The command: runs, builds, prints where the page is; `Ok(false)` (exit 1) when some
/// column has no complete report.
pub fn matrix_cli(a: &MatrixArgs) -> Result<bool, CliError> {
    let o = a.options()?;
    let m = matrix(&o)?;
    println!(
        "matrix: {} vectors × {} columns, {} rows where SUTs disagree, {} rows some SUT breaks",
        m.counts.rows, m.counts.columns, m.counts.disagreements, m.counts.rows_with_breaks
    );
    for c in &m.columns {
        let claim = if !c.headline.is_empty() {
            c.headline.clone()
        } else if c.claims.is_empty() {
            "no claim".to_owned()
        } else {
            c.claims.join(", ")
        };
        let why = if c.why.is_empty() {
            String::new()
        } else {
            format!(" ({}: {})", status_word(c.status), c.why)
        };
        println!("  {:<24} {claim}{why}", c.label);
    }
    println!("wrote {}", o.out.join("matrix.html").display());
    Ok(m.columns
        .iter()
        .all(|c| c.status == crate::matrix::model::ColumnStatus::Complete))
}

fn status_word(s: crate::matrix::model::ColumnStatus) -> &'static str {
    match s {
        crate::matrix::model::ColumnStatus::Complete => "complete",
        crate::matrix::model::ColumnStatus::Incomplete => "incomplete",
        crate::matrix::model::ColumnStatus::NoReport => "no report",
    }
}
