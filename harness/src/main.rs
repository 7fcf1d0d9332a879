//! `swp-conform`: the command line over the harness library.

use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use swp_conform::catalog::{self, Catalog};
use swp_conform::driver::inproc::InProcess;
use swp_conform::driver::testee::TesteeDriver;
use swp_conform::driver::CodecDriver;
use swp_conform::engine::Engine;
use swp_conform::mcpnative::McpNativeEngine;
use swp_conform::report::json::{Report, RunInfo, SutInfo};
use swp_conform::select::{select, Selection};
use swp_conform::session::run::SessionEngine;
use swp_conform::sut::{Kind, Sut};

#[derive(Parser)]
#[command(
    name = "swp-conform",
    version,
    about = "Conformance harness for SWP and MCP"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Args, Clone)]
struct Select {
    /// Vector catalog directory (default: ./vectors, else the workspace's vectors/).
    #[arg(long)]
    vectors: Option<PathBuf>,
    /// Comma-separated id globs, e.g. `core_*,e1_0002*`.
    #[arg(long)]
    filter: Vec<String>,
    /// Only these namespaces.
    #[arg(long = "namespace")]
    namespaces: Vec<String>,
    /// Only the namespaces a class requires (C0..C5).
    #[arg(long)]
    class: Option<String>,
    /// Only vectors naming this requirement (ID or alias).
    #[arg(long = "requirement")]
    requirements: Vec<String>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run vectors against a SUT and write reports.
    Run {
        #[command(flatten)]
        sel: Select,
        /// SUT manifest (default: the built-in reference implementation).
        #[arg(long)]
        sut: Option<PathBuf>,
        /// Write the reports into DIR (report.json).
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Failed SHOULD-level vectors fail the run too.
        #[arg(long)]
        strict: bool,
        /// Per-request deadline for out-of-process SUTs, in ms.
        #[arg(long, default_value_t = 10_000)]
        timeout_ms: u64,
        /// Print transcripts of failures.
        #[arg(long)]
        transcripts: bool,
    },
    /// List the selected vectors.
    List {
        #[command(flatten)]
        sel: Select,
    },
    /// Requirement → vectors, uncovered requirements, counts by level.
    Trace {
        #[command(flatten)]
        sel: Select,
        /// Only list testable requirements without a vector.
        #[arg(long)]
        uncovered: bool,
    },
    /// Write the JSON Schemas of the file formats to DIR.
    Schema {
        /// Output directory.
        #[arg(default_value = "docs/schema")]
        dir: PathBuf,
    },
}

fn catalog_dir(arg: &Option<PathBuf>) -> PathBuf {
    if let Some(d) = arg {
        return d.clone();
    }
    let here = PathBuf::from("vectors");
    if here.is_dir() {
        here
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors")
    }
}

fn load(sel: &Select) -> Result<Catalog, String> {
    let dir = catalog_dir(&sel.vectors);
    catalog::load::load(&dir).map_err(|e| e.to_string())
}

fn selection(sel: &Select) -> Selection {
    Selection {
        filter: sel.filter.clone(),
        namespaces: sel.namespaces.clone(),
        class: sel.class.clone(),
        requirements: sel.requirements.clone(),
    }
}

fn run(
    sel: &Select,
    sut_path: &Option<PathBuf>,
    out: &Option<PathBuf>,
    strict: bool,
    timeout_ms: u64,
    transcripts: bool,
) -> Result<bool, String> {
    let started = Instant::now();
    let ts = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let dir = catalog_dir(&sel.vectors);
    if swp_conform::legacy::is_legacy_dir(&dir) {
        return swp_conform::legacy::run_cli(&dir, sut_path, out, timeout_ms);
    }
    let cat = load(sel)?;
    let sut = match sut_path {
        Some(p) => Sut::load(p).map_err(|e| e.to_string())?,
        None => Sut::builtin().map_err(|e| e.to_string())?,
    };
    let plan = select(&cat, &selection(sel)).map_err(|e| e.to_string())?;
    let work = out
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("swp-conform"));
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let (results, reported) = match sut.manifest.kind {
        Kind::McpServer => {
            let mut engine = McpNativeEngine::new(&cat, &sut, &work)?;
            let r = engine.run(&plan, |_| {});
            (r, engine.describe())
        }
        Kind::McpProxy => {
            let mut engine = swp_conform::mcpproxy::McpProxyEngine::new(&cat, &sut, &work)?;
            let r = engine.run(&plan, |_| {});
            (r, engine.describe())
        }
        Kind::Endpoint => {
            let mut engine = SessionEngine::new(&cat, &sut, &work)?;
            let r = engine.run(&plan, |_| {});
            (r, engine.describe())
        }
        Kind::Builtin | Kind::Testee => {
            let mut driver: Box<dyn CodecDriver> = if sut.manifest.kind == Kind::Builtin {
                Box::new(InProcess)
            } else {
                let start = sut
                    .manifest
                    .start
                    .clone()
                    .ok_or("testee manifest without start")?;
                let base = sut.base_dir();
                Box::new(TesteeDriver::new(
                    start,
                    base,
                    Duration::from_millis(timeout_ms),
                    work.join("sut-stderr.log"),
                ))
            };
            let mut engine = Engine {
                catalog: &cat,
                sut: &sut,
                driver: driver.as_mut(),
            };
            let r = engine.run(&plan, |_| {});
            (r, driver.describe())
        }
    };
    let interrupted = swp_conform::session::process::interrupted();
    let pattern = {
        let mut p: Vec<String> = sel.filter.clone();
        p.extend(sel.namespaces.iter().map(|n| format!("{n}_*")));
        if let Some(c) = &sel.class {
            p.push(format!("class:{c}"));
        }
        p.extend(sel.requirements.iter().map(|r| format!("requirement:{r}")));
        if p.is_empty() {
            "*".into()
        } else {
            p.join(",")
        }
    };
    let report = Report::new(
        RunInfo {
            pattern,
            no_fallback: true,
            timestamp_utc: swp_conform::report::json::rfc3339(ts),
            runner_git_sha: swp_conform::report::json::runner_git_sha(),
            duration_ms: started.elapsed().as_millis() as u64,
            command: std::env::args().collect(),
            interrupted,
            transcripts: Default::default(),
        },
        SutInfo {
            name: sut.manifest.name.clone(),
            version: sut.manifest.version.clone(),
            reported,
        },
        results,
        strict,
    );
    if let Some(o) = out {
        std::fs::create_dir_all(o).map_err(|e| format!("{}: {e}", o.display()))?;
        let p = o.join("report.json");
        std::fs::write(&p, report.to_json()).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    print!(
        "{}",
        swp_conform::report::console::summary(&report, strict, transcripts)
    );
    if interrupted {
        println!("run INTERRUPTED: the report holds the vectors that finished");
    }
    if let Some(o) = out {
        println!("report: {}", o.join("report.json").display());
    }
    Ok(!report.run_failed)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r: Result<bool, String> = match &cli.cmd {
        Cmd::Run {
            sel,
            sut,
            out,
            strict,
            timeout_ms,
            transcripts,
        } => run(
            sel,
            sut,
            &Some(out.clone()),
            *strict,
            *timeout_ms,
            *transcripts,
        ),
        Cmd::List { sel } => load(sel).and_then(|cat| {
            let plan = select(&cat, &selection(sel)).map_err(|e| e.to_string())?;
            for lv in &plan {
                println!(
                    "{:<52} {:<24} {}",
                    lv.vector.id,
                    lv.vector.requirements.join(","),
                    lv.vector.title
                );
            }
            println!("{} vectors", plan.len());
            Ok(true)
        }),
        Cmd::Trace { sel, uncovered } => load(sel).map(|cat| {
            print!("{}", swp_conform::trace::render(&cat, *uncovered));
            true
        }),
        Cmd::Schema { dir } => (|| {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
            for (name, text) in swp_conform::schema::all() {
                std::fs::write(dir.join(name), text).map_err(|e| e.to_string())?;
            }
            Ok(true)
        })(),
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("swp-conform: {e}");
            ExitCode::from(2)
        }
    }
}
