//! `swp-conform`: the command line over the harness library.

use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use swp_conform::catalog::class::{Class, Profile};
use swp_conform::catalog::{self, Catalog};
use swp_conform::cli::{io_error, CliError, RunOptions};
use swp_conform::method::silence::DEFAULT_STOP_AFTER_SILENT;
use swp_conform::method::{Cancel, Runner, Setup};
use swp_conform::plan::select::{select, Selection};
use swp_conform::sut::Sut;

#[derive(Parser)]
#[command(
    name = "swp-conform",
    about = "Conformance harness for SWP and MCP",
    disable_version_flag = true,
    arg_required_else_help = true
)]
struct Cli {
    /// Print the harness version, its commit, the built-in catalog's digest and the versions
    /// of the spec documents the catalog was written against.
    #[arg(short = 'V', long)]
    version: bool,
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(clap::Args, Clone)]
struct Select {
    /// Vector directory: the YAML catalog (default: the catalog built into this binary) or a
    /// spec kit published set (`<id>.json` + `<id>.bin`), detected by its
    /// shape. Give it twice to run a published set with the catalog.
    #[arg(long)]
    vectors: Vec<PathBuf>,
    /// Comma-separated id globs, e.g. `core_*,e1_0002*`.
    #[arg(long)]
    filter: Vec<String>,
    /// Only these namespaces.
    #[arg(long = "namespace")]
    namespaces: Vec<String>,
    /// Only the namespaces a class requires (C0..C5).
    #[arg(long)]
    class: Option<Class>,
    /// Only vectors naming this requirement (ID or alias).
    #[arg(long = "requirement")]
    requirements: Vec<String>,
}

/// What `schemas` does.
#[derive(Subcommand)]
enum SchemasCmd {
    /// Download the official MCP schemas the harness pins (or copy them from a mirror),
    /// check each against its SHA-256, and cache them for the MCP-native method.
    Fetch {
        /// A mirror: a directory or an http(s) base holding `<version>/schema.json`
        /// (default: the MCP specification's repository).
        #[arg(long)]
        from: Option<String>,
    },
}

#[derive(Subcommand)]
enum Cmd {
    /// The official MCP schemas the MCP-native method judges with.
    Schemas {
        #[command(subcommand)]
        action: SchemasCmd,
    },
    /// Run vectors against a SUT and write reports.
    Run {
        #[command(flatten)]
        sel: Select,
        /// SUT manifest (default: the built-in reference implementation).
        #[arg(long)]
        sut: Option<PathBuf>,
        /// Write the reports into DIR (report.json, junit.xml, report.md, report.html).
        #[arg(long, default_value = "out")]
        out: PathBuf,
        #[command(flatten)]
        change: Change,
        /// Failed SHOULD-level vectors fail the run too.
        #[arg(long)]
        strict: bool,
        /// Per-request deadline for out-of-process SUTs, in ms.
        #[arg(long, default_value_t = 10_000)]
        timeout_ms: u64,
        /// Print transcripts of failures.
        #[arg(long)]
        transcripts: bool,
        /// Stop the run once the SUT has answered nothing (a timeout, not one octet from
        /// it) in N driven vectors in a row; the rest are reported as not-run. 0: never.
        #[arg(long, value_name = "N", default_value_t = DEFAULT_STOP_AFTER_SILENT)]
        stop_after_silent: u32,
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
    /// Run a class's namespaces and those of the profiles added to it; print the claim only
    /// if all pass, else every cause at once; write an evidence bundle.
    Claim {
        /// The class, C0..C5 (default C0 with --profile).
        #[arg(long, required_unless_present = "profiles")]
        class: Option<Class>,
        /// Profiles claimed on top of the class, by namespace, comma-separated
        /// (`relay,cred`): each needs its namespace to pass by the class rules.
        #[arg(long = "profile", value_delimiter = ',')]
        profiles: Vec<Profile>,
        /// SUT manifest (default: the built-in reference implementation).
        #[arg(long)]
        sut: Option<PathBuf>,
        /// Vector directories, as for `run`.
        #[arg(long)]
        vectors: Vec<PathBuf>,
        /// Reports and `evidence-<class>.tar.gz` go here.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Per-request deadline for out-of-process SUTs, in ms.
        #[arg(long, default_value_t = 10_000)]
        timeout_ms: u64,
        /// As for `run`: stop after N silent vectors in a row; 0: never.
        #[arg(long, value_name = "N", default_value_t = DEFAULT_STOP_AFTER_SILENT)]
        stop_after_silent: u32,
        /// Sign the bundle's MANIFEST with this Ed25519 secret key (PKCS#8 PEM, as
        /// `keygen` writes it); the bundle then carries MANIFEST.sig and MANIFEST.pub.
        #[arg(long, value_name = "KEYFILE")]
        sign: Option<PathBuf>,
    },
    /// Write a fresh Ed25519 key pair for `claim --sign`: KEYFILE (secret, owner-only) and
    /// KEYFILE.pub; refuses to overwrite either.
    Keygen {
        /// The secret key file to write.
        #[arg(long, value_name = "KEYFILE")]
        out: PathBuf,
    },
    /// Check an evidence bundle: its signature, every digest, that its files are exactly
    /// those listed, and that the class rules grant its claim on its report.json. Exit 0
    /// when all hold, 1 with one line per problem, 2 on usage errors.
    Verify {
        /// The bundle (`evidence-<class>.tar.gz`).
        bundle: PathBuf,
        /// The signer's public key (PEM, KEYFILE.pub); without it the bundle's own key is
        /// used and the signer is only self-asserted.
        #[arg(long, value_name = "PUBKEY")]
        key: Option<PathBuf>,
        /// Vector directories: the catalog the claim was judged against, as for `run`.
        #[arg(long)]
        vectors: Vec<PathBuf>,
    },
    /// Run one selection against every SUT of a list, N at once, each in its own `run`
    /// process; write each SUT's reports under DIR/<label>/ and, across them, DIR/matrix.json
    /// and DIR/matrix.html. Exit 0 when every column has a complete report, 1 otherwise.
    Matrix(swp_conform::cli::matrix::MatrixArgs),
    /// When each verdict last changed across report directories of successive runs
    /// (nights), and which changed with no change of SUT, harness or catalog (flaky); writes
    /// DIR/history.json and DIR/history.html. Exit 1 when the newest run regressed.
    History(swp_conform::cli::history::HistoryArgs),
    /// Changes between two report.json files, regressions first; exit 1 on a regression.
    Diff {
        /// The earlier report.json.
        old: PathBuf,
        /// The later report.json.
        new: PathBuf,
    },
    /// Merge the report.json files of the shards of one run into one set of reports.
    Merge {
        /// Shard report.json files (K = 1..N, each once).
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// Vector directories (must be the ones the shards ran).
        #[arg(long)]
        vectors: Vec<PathBuf>,
        /// Write the merged reports into DIR.
        #[arg(long, default_value = "out")]
        out: PathBuf,
    },
    /// Load a session-method endpoint: N connections × K probes in flight for a duration;
    /// report throughput, latency percentiles, errors, lost replies and the SUT's resources.
    /// Exit 0 when nothing was lost and nothing failed, 1 otherwise, 2 on usage errors.
    Load {
        /// SUT manifest (kind endpoint, with a `session.probe`).
        #[arg(long)]
        sut: PathBuf,
        /// Connections (N); a stdio endpoint has one.
        #[arg(long, default_value_t = 1)]
        connections: u32,
        /// Requests in flight per connection (K).
        #[arg(long = "in-flight", default_value_t = 1)]
        in_flight: u32,
        /// How long requests are sent, e.g. 60s, 500ms, 2m.
        #[arg(long, default_value = "10s", value_parser = duration_arg)]
        duration: Duration,
        /// How long unanswered requests are awaited after the duration.
        #[arg(long, default_value = "2s", value_parser = duration_arg)]
        drain: Duration,
        /// A request unanswered this long is lost (default: the manifest's step_ms).
        #[arg(long = "reply-timeout", value_parser = duration_arg)]
        reply_timeout: Option<Duration>,
        /// How often the SUT's memory and descriptors are sampled.
        #[arg(long = "sample-every", default_value = "1s", value_parser = duration_arg)]
        sample_every: Duration,
        /// Write load-report.json and load-report.md (and the SUT's logs) into DIR.
        #[arg(long, default_value = "out")]
        out: PathBuf,
    },
    /// Write the JSON Schemas of the file formats to DIR.
    Schema {
        /// Output directory.
        #[arg(default_value = "docs/schema")]
        dir: PathBuf,
    },
}

/// Baselines, shards and progress: what `run` adds for CI over a plain run.
#[derive(clap::Args, Clone)]
struct Change {
    /// Expected failures (YAML); a listed vector that passes or fails differently, or an
    /// unlisted failure, fails the run.
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Rewrite the --baseline file from this run's failures.
    #[arg(long, requires = "baseline")]
    update_baseline: bool,
    /// Run only part K of N of the plan (deterministic); `merge` joins the parts.
    #[arg(long)]
    shard: Option<String>,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
    /// Run N vectors at once, each worker with its own connection (and its own SUT process
    /// where the manifest starts one); vectors marked `exclusive` run alone afterwards.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
}

/// The catalog and published sets `--vectors` names, each detected by its shape; the
/// catalog built into the binary when none is a YAML catalog.
fn load_vectors(dirs: &[PathBuf]) -> Result<Catalog, CliError> {
    Ok(catalog::load::load_sets(dirs, &catalog::embedded::dir()?)?)
}

/// `schemas fetch`: every pinned schema, checked, into the cache.
fn fetch_schemas(from: Option<&str>) -> Result<bool, CliError> {
    use swp_conform::method::mcpnative::pins;
    let into = pins::cache_dir().ok_or(pins::FetchError::NoCache)?;
    let done = pins::fetch(from, &into)?;
    println!(
        "cached {} MCP schema(s) in {}: {}",
        done.len(),
        into.display(),
        done.join(", ")
    );
    Ok(true)
}

/// `--version`: what a report's reader needs to know which harness and catalog made it.
fn version() -> Result<bool, CliError> {
    let dir = catalog::embedded::dir()?;
    let cat = catalog::load::load(&dir)?;
    println!(
        "swp-conform {} (commit {})",
        env!("CARGO_PKG_VERSION"),
        swp_conform::report::model::runner_git_sha()
    );
    println!(
        "catalog: built in, {} vectors, sha256 {}",
        cat.vectors.len(),
        swp_conform::cli::catalog_digest(&dir)?
    );
    println!("spec documents the catalog was written against:");
    for (doc, title) in &cat.requirements.documents {
        let v = cat
            .requirements
            .versions
            .get(doc)
            .map_or("-", String::as_str);
        println!("  {doc:<36} {v:<28} {title}");
    }
    Ok(true)
}

fn load(sel: &Select) -> Result<Catalog, CliError> {
    load_vectors(&sel.vectors)
}

fn selection(sel: &Select) -> Selection {
    Selection {
        filter: sel.filter.clone(),
        namespaces: sel.namespaces.clone(),
        class: sel.class,
        requirements: sel.requirements.clone(),
    }
}

/// The method the manifest calls for, opened; Ctrl-C cancels the run and kills the SUT.
fn open<'a>(
    cat: &'a Catalog,
    sut: &'a Sut,
    work: &Path,
    timeout_ms: u64,
    cancel: &Cancel,
) -> Result<Box<dyn Runner + 'a>, CliError> {
    swp_conform::connect::process::install_interrupt_handler(cancel);
    let setup = Setup {
        work: work.to_path_buf(),
        timeout: Duration::from_millis(timeout_ms),
    };
    Ok(swp_conform::method::open(cat, sut, &setup)?)
}

fn load_sut(sut_path: &Option<PathBuf>) -> Result<Sut, CliError> {
    Ok(match sut_path {
        Some(p) => Sut::load(p)?,
        None => Sut::builtin()?,
    })
}

fn pattern(sel: &Select) -> String {
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
}

/// What `run` was asked for besides the selection.
struct RunArgs<'a> {
    sut: &'a Option<PathBuf>,
    out: &'a Path,
    strict: bool,
    timeout_ms: u64,
    transcripts: bool,
    stop_after_silent: u32,
    change: &'a Change,
}

fn run(sel: &Select, a: RunArgs<'_>) -> Result<bool, CliError> {
    let cat = load(sel)?;
    let sut = load_sut(a.sut)?;
    let plan = select(&cat, &selection(sel))?;
    std::fs::create_dir_all(a.out).map_err(io_error(a.out))?;
    let opts = RunOptions {
        pattern: pattern(sel),
        strict: a.strict,
        transcripts: a.transcripts,
        baseline: a.change.baseline.clone(),
        update_baseline: a.change.update_baseline,
        shard: a
            .change
            .shard
            .as_deref()
            .map(swp_conform::cli::parse_shard)
            .transpose()?,
        out: Some(a.out.to_path_buf()),
        quiet: a.change.quiet,
        stop_after_silent: a.stop_after_silent,
    };
    let cancel = Cancel::new();
    let mut runner = open(&cat, &sut, a.out, a.timeout_ms, &cancel)?;
    // Each extra worker keeps its port file, PKI and SUT log in its own directory.
    let mut helpers = Vec::new();
    for k in 2..=a.change.jobs {
        let work = a.out.join(format!("job-{k}"));
        std::fs::create_dir_all(&work).map_err(io_error(&work))?;
        helpers.push(open(&cat, &sut, &work, a.timeout_ms, &cancel)?);
    }
    let report = swp_conform::cli::run_report(
        &cat,
        &sut,
        &plan,
        &opts,
        runner.as_mut(),
        &mut helpers,
        &cancel,
    )?;
    swp_conform::cli::finish(&report, &opts)
}

/// What `claim` was asked for.
struct ClaimArgs<'a> {
    class: Class,
    profiles: &'a [Profile],
    sut: &'a Option<PathBuf>,
    vectors: &'a [PathBuf],
    out: &'a Path,
    timeout_ms: u64,
    stop_after_silent: u32,
    sign: Option<&'a Path>,
}

fn claim(a: ClaimArgs<'_>) -> Result<bool, CliError> {
    let ClaimArgs {
        class,
        profiles,
        sut: sut_path,
        vectors,
        out,
        timeout_ms,
        stop_after_silent,
        sign,
    } = a;
    swp_conform::cli::claim::check_profiles(class, profiles)?;
    // The key is read first: a run of minutes should not end in "no such key file".
    let key = sign
        .map(swp_conform::evidence::keys::SecretKey::read)
        .transpose()?;
    let cat = load_vectors(vectors)?;
    let sut = load_sut(sut_path)?;
    std::fs::create_dir_all(out).map_err(io_error(out))?;
    let cancel = Cancel::new();
    let mut runner = open(&cat, &sut, out, timeout_ms, &cancel)?;
    let o = swp_conform::cli::claim::claim(
        &cat,
        &sut,
        class,
        out,
        runner.as_mut(),
        &cancel,
        swp_conform::cli::claim::ClaimOptions {
            stop_after_silent,
            key: key.as_ref(),
            profiles,
        },
    )?;
    // The claim, or every cause that withholds it, grouped, so the vendor knows all there
    // is to fix or declare in one round.
    print!("{}", o.message());
    println!("evidence: {}", o.bundle.display());
    if let Some(k) = &key {
        println!("signed: MANIFEST by {}", k.public().fingerprint());
    }
    Ok(o.claim.is_some())
}

fn list(sel: &Select) -> Result<bool, CliError> {
    let cat = load(sel)?;
    let plan = select(&cat, &selection(sel))?;
    for lv in &plan {
        println!(
            "{:<52} {:<24} {}",
            lv.vector.header.id,
            lv.vector.header.requirements.join(","),
            lv.vector.header.title
        );
    }
    println!("{} vectors", plan.len());
    Ok(true)
}

fn duration_arg(s: &str) -> Result<Duration, String> {
    swp_conform::load::report::parse_duration(s)
}

/// `load`: usage and manifest problems are errors (status 2); a run that did not hold, or
/// an endpoint that could not be started or reached, is status 1 with the reason on stderr.
fn load_cmd(sut: &Path, opts: &swp_conform::load::LoadOptions) -> Result<bool, CliError> {
    use swp_conform::load::{self as l, LoadError};
    let sut = Sut::load(sut)?;
    let cancel = Cancel::new();
    swp_conform::connect::process::install_interrupt_handler(&cancel);
    match l::run(&sut, opts, &cancel) {
        Ok(r) => {
            print!("{}", r.summary());
            println!("report: {}", opts.out.join("load-report.json").display());
            for why in &r.reasons {
                eprintln!("swp-conform: load did not hold: {why}");
            }
            Ok(r.held)
        }
        Err(LoadError::Usage(m)) => Err(CliError::Usage(m)),
        Err(LoadError::Setup(m)) => {
            eprintln!("swp-conform: load: {m}");
            Ok(false)
        }
    }
}

fn schema(dir: &Path) -> Result<bool, CliError> {
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    for (name, text) in swp_conform::support::schema::all() {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(io_error(&p))?;
    }
    Ok(true)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Some(cmd) = cli.cmd.as_ref().filter(|_| !cli.version) else {
        return match version() {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("swp-conform: {e}");
                ExitCode::from(2)
            }
        };
    };
    let r: Result<bool, CliError> = match cmd {
        Cmd::Run {
            sel,
            sut,
            out,
            strict,
            timeout_ms,
            transcripts,
            stop_after_silent,
            change,
        } => run(
            sel,
            RunArgs {
                sut,
                out,
                strict: *strict,
                timeout_ms: *timeout_ms,
                transcripts: *transcripts,
                stop_after_silent: *stop_after_silent,
                change,
            },
        ),
        Cmd::Claim {
            class,
            profiles,
            sut,
            vectors,
            out,
            timeout_ms,
            stop_after_silent,
            sign,
        } => claim(ClaimArgs {
            class: class.unwrap_or(swp_conform::report::analysis::claims::BASELINE),
            profiles,
            sut,
            vectors,
            out,
            timeout_ms: *timeout_ms,
            stop_after_silent: *stop_after_silent,
            sign: sign.as_deref(),
        }),
        Cmd::Keygen { out } => swp_conform::cli::signing::keygen_cli(out),
        Cmd::Verify {
            bundle,
            key,
            vectors,
        } => load_vectors(vectors)
            .and_then(|cat| swp_conform::cli::signing::verify_cli(bundle, key.as_deref(), &cat)),
        Cmd::Matrix(a) => swp_conform::cli::matrix::matrix_cli(a),
        Cmd::History(a) => swp_conform::cli::history::history_cli(a),
        Cmd::Diff { old, new } => swp_conform::cli::diff_cli(old, new),
        Cmd::Merge {
            reports,
            vectors,
            out,
        } => load_vectors(vectors).and_then(|cat| swp_conform::cli::merge_cli(&cat, reports, out)),
        Cmd::List { sel } => list(sel),
        Cmd::Trace { sel, uncovered } => load(sel).map(|cat| {
            print!("{}", swp_conform::catalog::trace::render(&cat, *uncovered));
            true
        }),
        Cmd::Load {
            sut,
            connections,
            in_flight,
            duration,
            drain,
            reply_timeout,
            sample_every,
            out,
        } => load_cmd(
            sut,
            &swp_conform::load::LoadOptions {
                connections: *connections,
                in_flight: *in_flight,
                duration: *duration,
                drain: *drain,
                reply_timeout: *reply_timeout,
                sample_every: *sample_every,
                out: out.clone(),
            },
        ),
        Cmd::Schema { dir } => schema(dir),
        Cmd::Schemas {
            action: SchemasCmd::Fetch { from },
        } => fetch_schemas(from.as_deref()),
    };
    // Every SUT was stopped with all it started; what remains below the harness is an
    // orphan that shed its tag, and it goes too.
    swp_conform::connect::reap::sweep();
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("swp-conform: {e}");
            ExitCode::from(2)
        }
    }
}
