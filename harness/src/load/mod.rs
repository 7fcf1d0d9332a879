//! The load mode, `swp-conform load --sut MANIFEST`: N connections to a session-method
//! endpoint, each keeping K copies of the manifest's probe in flight (a fresh msg_id each)
//! for a duration, then draining. It reports throughput, latency percentiles, error answers
//! by code, lost replies, connection failures and, for an endpoint the harness started, its
//! memory and descriptors over time (`docs/load.md`).
//!
//! Its rooms: [`book`] (the sans-IO bookkeeping: in-flight table, histogram, counts),
//! [`codes`] (error frames by code, bounded whatever codes the SUT makes up), [`conn`] (one connection's loop on a blocking wire and thread), [`sample`] (`/proc`
//! readings), [`report`] (the report, its verdict and its formats). Reaching the endpoint,
//! its PKI and its process are the session method's own ([`Endpoint`]), so load runs on
//! exactly the connections conformance runs use.

pub mod book;
pub mod codes;
pub mod conn;
pub mod report;
pub mod sample;
#[cfg(test)]
mod tests;

use crate::catalog::vector::{ConnectSpec, Topology};
use crate::frames::{e1, take_frame};
use crate::method::conv::clock::{Clock, SYSTEM};
use crate::method::session::conv::reply_limits;
use crate::method::session::endpoint::Endpoint;
use crate::support::cancel::Cancel;
use crate::sut::{Reach, RejectMode, Sut, SutKind, Transport};
use book::{latencies, Book, Counts, Matcher};
use conn::{Build, Drive, Phases, Template};
use report::{LoadReport, Resources, RunSetup};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The most connections one run opens.
pub const MAX_CONNECTIONS: u32 = 10_000;
/// The most requests in flight on one connection.
pub const MAX_IN_FLIGHT: u32 = 10_000;

/// What `load` was asked for.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Connections (N).
    pub connections: u32,
    /// Requests in flight per connection (K).
    pub in_flight: u32,
    /// How long requests are sent.
    pub duration: Duration,
    /// How long unanswered requests are awaited after that.
    pub drain: Duration,
    /// When a request counts as lost; default: the manifest's `session.timing.step_ms`.
    pub reply_timeout: Option<Duration>,
    /// How often the SUT's memory and descriptors are read.
    pub sample_every: Duration,
    /// Where the report, the SUT's stderr log, its port file and the PKI go.
    pub out: PathBuf,
}

/// Why a load run did not take place.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The manifest or the options cannot be run (exit status 2).
    #[error("{0}")]
    Usage(String),
    /// The endpoint could not be started or reached, or the harness could not set up what
    /// it needs (the PKI, the output directory).
    #[error("{0}")]
    Setup(String),
}

fn usage(manifest: &str, what: impl std::fmt::Display) -> LoadError {
    LoadError::Usage(format!("{manifest}: {what}"))
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Runs the load and returns its report (also written to `opts.out`).
pub fn run(sut: &Sut, opts: &LoadOptions, cancel: &Cancel) -> Result<LoadReport, LoadError> {
    let manifest = sut
        .path
        .as_ref()
        .map_or("<builtin manifest>".to_owned(), |p| p.display().to_string());
    let (spec, reach) = match &sut.manifest.kind {
        SutKind::Endpoint { session, reach } => ((**session).clone(), reach.clone()),
        k => {
            return Err(usage(
                &manifest,
                format!(
                    "kind `{}`: load drives endpoints (kind: endpoint) through the session method",
                    k.kind().as_str()
                ),
            ))
        }
    };
    let Some(probe) = spec.probe.clone() else {
        return Err(usage(
            &manifest,
            "no `session.probe`: load sends the manifest's probe as its request and matches its answer by `reply_profile_id` and `reply_msg_type`; add one (docs/sut-manifest.md)",
        ));
    };
    if spec.topology == Topology::Intermediary {
        return Err(usage(
            &manifest,
            "`session.topology: intermediary`: load drives endpoints, not relays (they need the harness's upstream)",
        ));
    }
    if !(1..=MAX_CONNECTIONS).contains(&opts.connections) {
        return Err(LoadError::Usage(format!(
            "--connections must be 1..={MAX_CONNECTIONS}"
        )));
    }
    if !(1..=MAX_IN_FLIGHT).contains(&opts.in_flight) {
        return Err(LoadError::Usage(format!(
            "--in-flight must be 1..={MAX_IN_FLIGHT}"
        )));
    }
    if spec.transport == Transport::Stdio && opts.connections != 1 {
        return Err(usage(
            &manifest,
            "a stdio endpoint has one connection (its stdin and stdout); use --connections 1",
        ));
    }
    if opts.duration.is_zero() {
        return Err(LoadError::Usage("--duration must be above zero".into()));
    }
    let limits = reply_limits(sut.manifest.limits.max_frame_bytes);
    // The probe, materialised as a conformance run would, under an id of the load's length.
    let build: Build = {
        let sut = sut.clone();
        let frame = probe.frame.clone();
        Arc::new(move || {
            let f = crate::plan::materialize::build_frame(
                &frame,
                &sut.params(unix_ms()),
                Some(Book::msg_id(0, 0)),
            )
            .map_err(|e| e.to_string())?;
            let (body, _) = take_frame(&f, &limits)
                .map_err(|e| e.to_string())?
                .ok_or("the probe is not a whole frame")?;
            e1::decode(&body, &limits).map_err(|e| e.to_string())
        })
    };
    build().map_err(|e| usage(&manifest, format!("`session.probe` cannot be built: {e}")))?;
    let error_frame = match spec.reject_signal.mode {
        RejectMode::Close => None,
        RejectMode::ErrorFrame | RejectMode::Both => spec.reject_signal.error_frame.clone(),
    };
    let matcher = Matcher::new(&probe, error_frame);
    let reply_timeout = opts
        .reply_timeout
        .unwrap_or(Duration::from_millis(spec.timing.step_ms));

    std::fs::create_dir_all(&opts.out)
        .map_err(|e| LoadError::Setup(format!("{}: {e}", opts.out.display())))?;
    // Relative paths would be resolved against the SUT's own working directory.
    let out = std::path::absolute(&opts.out)
        .map_err(|e| LoadError::Setup(format!("{}: {e}", opts.out.display())))?;
    let transport = spec.transport;
    let started_by_us = matches!(reach, Reach::Start(_));
    let mut endpoint = Endpoint::new(spec, reach, sut.base_dir(), &out)
        .map_err(|e| LoadError::Setup(e.to_string()))?;
    endpoint
        .ensure_server()
        .map_err(|e| LoadError::Setup(format!("the endpoint could not be started: {e}")))?;

    // Connect everything before the window opens, so set-up is not measured.
    let mut wires = Vec::with_capacity(opts.connections as usize);
    let mut stdio_proc = None;
    for _ in 0..opts.connections {
        match endpoint.open(&ConnectSpec::default()) {
            Ok((w, p)) => {
                wires.push(Ok(w));
                if p.is_some() {
                    stdio_proc = p;
                }
            }
            Err(e) => wires.push(Err(format!("connect: {e}"))),
        }
    }
    let pid = match (&stdio_proc, started_by_us) {
        (Some(p), _) => Some(p.pid()),
        (None, true) => endpoint.server_pid(),
        (None, false) => None,
    };

    let clock = &SYSTEM;
    let t0 = clock.now();
    let started_unix_ms = unix_ms();
    let phases = Phases {
        window_end: t0 + opts.duration,
        drain_end: t0 + opts.duration + opts.drain,
    };
    let sampler = pid.and_then(|p| sample::Sampler::start(p, opts.sample_every, t0));
    let endpoint = Mutex::new(endpoint);
    let reconnect = |/* a new connection while the window is open */| {
        endpoint
            .lock()
            .map_err(|_| "the endpoint's lock is poisoned".to_owned())?
            .open(&ConnectSpec::default())
            .map(|(w, _)| w)
            .map_err(|e| format!("connect: {e}"))
    };
    let drive = Drive {
        matcher: &matcher,
        reply_limits: limits,
        phases,
        cancel,
        clock,
        reconnect: (transport != Transport::Stdio).then_some(&reconnect as conn::Connect<'_>),
    };
    let books: Vec<Book> = std::thread::scope(|s| {
        let handles: Vec<_> = wires
            .into_iter()
            .enumerate()
            .map(|(i, first)| {
                let drive = &drive;
                let build = build.clone();
                s.spawn(move || {
                    let mut book = Book::new(
                        u32::try_from(i).unwrap_or(u32::MAX),
                        opts.in_flight as usize,
                        phases.window_end,
                        reply_timeout,
                    );
                    let wire = match first {
                        Ok(w) => {
                            book.opened();
                            Some(w)
                        }
                        Err(why) => {
                            book.closed(&why);
                            None
                        }
                    };
                    // Built once above, so it builds again.
                    if let Ok(mut tmpl) = Template::new(build, clock.now()) {
                        conn::run(wire, &mut book, &mut tmpl, drive);
                    }
                    book
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });

    // Shorter than asked when interrupted: throughput is over the window that ran.
    let window = clock
        .now()
        .min(phases.window_end)
        .saturating_duration_since(t0);
    let mut counts = Counts::default();
    let mut all = latencies();
    let mut reasons = Vec::new();
    let mut merge_failed = false;
    for b in &books {
        counts.add(&b.counts);
        merge_failed |= all.add(&b.latencies).is_err();
        for r in &b.failure_reasons {
            if reasons.len() < book::MAX_FAILURE_REASONS && !reasons.contains(r) {
                reasons.push(r.clone());
            }
        }
    }
    let samples = sampler.map(sample::Sampler::stop);
    let resources = match (pid, samples) {
        (Some(p), Some(s)) => Resources::sampled(
            p,
            u64::try_from(opts.sample_every.as_millis()).unwrap_or(u64::MAX),
            s,
        ),
        (Some(_), None) => Resources::not_sampled("not sampled: no /proc on this platform"),
        (None, _) => Resources::not_sampled(
            "not sampled: the endpoint was already listening (not started by the harness)",
        ),
    };
    let mut endpoint = endpoint.into_inner().unwrap_or_else(|e| e.into_inner());
    let exited = match stdio_proc.as_mut() {
        Some(p) => p.exited(),
        None => endpoint.server_exited(),
    };
    let setup = RunSetup {
        sut: format!("{} {}", sut.manifest.name, sut.manifest.version),
        manifest,
        transport: transport.as_str().to_owned(),
        connections: opts.connections,
        in_flight: opts.in_flight,
        duration_ms: u64::try_from(opts.duration.as_millis()).unwrap_or(u64::MAX),
        window_ms: u64::try_from(window.as_millis()).unwrap_or(u64::MAX),
        drain_ms: u64::try_from(opts.drain.as_millis()).unwrap_or(u64::MAX),
        reply_timeout_ms: u64::try_from(reply_timeout.as_millis()).unwrap_or(u64::MAX),
        started_unix_ms,
    };
    let mut report = LoadReport::new(
        setup,
        counts,
        &all,
        reasons,
        resources,
        cancel.is_cancelled(),
    );
    if let Some(e) = exited {
        report.fail(format!("the endpoint {e} during the run"));
    }
    if merge_failed {
        report.fail("a latency histogram could not be merged; the percentiles miss some replies");
    }
    report
        .write(&out)
        .map_err(|e| LoadError::Setup(format!("{}: {e}", out.display())))?;
    Ok(report)
}
