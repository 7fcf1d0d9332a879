//! The load report: what `swp-conform load` writes (`load-report.json`, `load-report.md`)
//! and prints, built from the summed counts and the merged histogram, and the verdict it
//! carries (held: nothing lost, no error; else why not). Pure: no I/O but the writer.

use super::book::{Counts, Latencies};
use super::sample::Sample;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What was run against what.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RunSetup {
    /// The SUT's name and version from its manifest.
    pub sut: String,
    /// The manifest file.
    pub manifest: String,
    /// `tcp`, `tls` or `stdio`.
    pub transport: String,
    /// Connections (N).
    pub connections: u32,
    /// Requests in flight per connection (K).
    pub in_flight: u32,
    /// The measuring window asked for, ms.
    pub duration_ms: u64,
    /// The window that actually ran, ms: `duration_ms`, or less when interrupted.
    pub window_ms: u64,
    /// How long unanswered requests were awaited after the window, ms.
    pub drain_ms: u64,
    /// A request unanswered this long is lost, ms.
    pub reply_timeout_ms: u64,
    /// When the window opened, ms since the Unix epoch.
    pub started_unix_ms: u64,
}

/// Latency percentiles of the answered requests, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Percentiles {
    /// Answers measured.
    pub count: u64,
    /// Shortest.
    pub min: u64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p99_9: u64,
    /// Longest.
    pub max: u64,
}

impl Percentiles {
    /// The percentiles of `h`, `None` when it is empty.
    pub fn of(h: &Latencies) -> Option<Percentiles> {
        if h.is_empty() {
            return None;
        }
        Some(Percentiles {
            count: h.len(),
            min: h.min(),
            mean: (h.mean() * 10.0).round() / 10.0,
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p99_9: h.value_at_quantile(0.999),
            max: h.max(),
        })
    }
}

/// The SUT's resources over the run.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Resources {
    /// Whether they were sampled.
    pub sampled: bool,
    /// Why not, or of which process.
    pub note: String,
    /// The sampling interval, ms.
    pub interval_ms: u64,
    /// Largest resident set seen, KiB.
    pub rss_kib_max: Option<u64>,
    /// Most open descriptors seen.
    pub fds_max: Option<u64>,
    /// Every reading, in order.
    pub samples: Vec<Sample>,
}

impl Resources {
    /// Not sampled, and why.
    pub fn not_sampled(why: impl Into<String>) -> Resources {
        Resources {
            sampled: false,
            note: why.into(),
            interval_ms: 0,
            rss_kib_max: None,
            fds_max: None,
            samples: Vec::new(),
        }
    }

    /// The readings of process `pid`.
    pub fn sampled(pid: u32, interval_ms: u64, samples: Vec<Sample>) -> Resources {
        Resources {
            sampled: true,
            note: format!("process {pid}, from /proc/{pid}/status (VmRSS) and /proc/{pid}/fd"),
            interval_ms,
            rss_kib_max: samples.iter().filter_map(|s| s.rss_kib).max(),
            fds_max: samples.iter().filter_map(|s| s.fds).max(),
            samples,
        }
    }
}

/// The whole report.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LoadReport {
    /// The run's setup.
    pub setup: RunSetup,
    /// Answers within the window per second of the window.
    pub throughput_rps: f64,
    /// Latencies of the requests answered with the probe's reply (error answers are
    /// counted by code, not timed).
    pub latency_us: Option<Percentiles>,
    /// Requests answered with an error frame.
    pub errors: u64,
    /// Requests never answered.
    pub lost: u64,
    /// Every count.
    pub counts: Counts,
    /// Why connections failed (examples; the count is in `counts`).
    pub connection_failure_reasons: Vec<String>,
    /// The SUT's memory and descriptors.
    pub resources: Resources,
    /// The run was interrupted (Ctrl-C, SIGTERM) before its end.
    pub interrupted: bool,
    /// Nothing lost, no error frame, no connection failure, nothing undecodable.
    pub held: bool,
    /// Why it did not hold.
    pub reasons: Vec<String>,
}

/// Why a run with these counts did not hold (empty: it held).
pub fn reasons(c: &Counts, interrupted: bool) -> Vec<String> {
    let mut r = Vec::new();
    if interrupted {
        r.push("the run was interrupted".to_owned());
    }
    if c.sent == 0 {
        r.push("no request was sent".to_owned());
    }
    if c.lost() > 0 {
        r.push(format!(
            "{} replies lost ({} timed out, {} on closed connections, {} unanswered at the end)",
            c.lost(),
            c.lost_timed_out,
            c.lost_on_close,
            c.lost_at_end
        ));
    }
    let errors = c.errors() + c.unmatched_errors();
    if errors > 0 {
        let mut by: Vec<String> = c
            .error_codes
            .by_code
            .iter()
            .chain(&c.unmatched_error_codes.by_code)
            .map(|(k, v)| format!("{k} ×{v}"))
            .collect();
        let other = c.error_codes.other + c.unmatched_error_codes.other;
        if other > 0 {
            by.push(format!("other codes ×{other}"));
        }
        r.push(format!("{errors} error frames ({})", by.join(", ")));
    }
    if c.connection_failures > 0 {
        r.push(format!("{} connection failures", c.connection_failures));
    }
    if c.undecodable > 0 {
        r.push(format!("{} undecodable outputs", c.undecodable));
    }
    r
}

impl LoadReport {
    /// The report of a run.
    pub fn new(
        setup: RunSetup,
        mut counts: Counts,
        latencies: &Latencies,
        connection_failure_reasons: Vec<String>,
        resources: Resources,
        interrupted: bool,
    ) -> LoadReport {
        // The connections' codes summed may be many; the report names the most frequent.
        counts.error_codes.keep_top(super::codes::REPORTED_CODES);
        counts
            .unmatched_error_codes
            .keep_top(super::codes::REPORTED_CODES);
        let secs = setup.window_ms as f64 / 1000.0;
        let throughput_rps = if secs > 0.0 {
            (counts.replies_in_window as f64 / secs * 10.0).round() / 10.0
        } else {
            0.0
        };
        let reasons = reasons(&counts, interrupted);
        LoadReport {
            setup,
            throughput_rps,
            latency_us: Percentiles::of(latencies),
            errors: counts.errors() + counts.unmatched_errors(),
            lost: counts.lost(),
            counts,
            connection_failure_reasons,
            resources,
            interrupted,
            held: reasons.is_empty(),
            reasons,
        }
    }

    /// Marks the run as not held, for a reason beyond the counts (the endpoint died).
    pub fn fail(&mut self, why: impl Into<String>) {
        self.reasons.push(why.into());
        self.held = false;
    }

    /// One paragraph for the terminal.
    pub fn summary(&self) -> String {
        let s = &self.setup;
        let mut o = format!(
            "{} over {}: {} connections × {} in flight for {} ms\n",
            s.sut, s.transport, s.connections, s.in_flight, s.duration_ms
        );
        let _ = writeln!(
            o,
            "  {} requests, {} replies, {:.1} replies/s, {} errors, {} lost, {} connection failures",
            self.counts.sent,
            self.counts.replies,
            self.throughput_rps,
            self.errors,
            self.lost,
            self.counts.connection_failures
        );
        match &self.latency_us {
            Some(p) => {
                let _ = writeln!(
                    o,
                    "  latency µs: p50 {} p90 {} p99 {} p99.9 {} max {}",
                    p.p50, p.p90, p.p99, p.p99_9, p.max
                );
            }
            None => o.push_str("  latency: no reply measured\n"),
        }
        match (self.resources.rss_kib_max, self.resources.fds_max) {
            (Some(r), f) if self.resources.sampled => {
                let _ = writeln!(
                    o,
                    "  SUT: max RSS {r} KiB, max descriptors {}",
                    f.map_or("?".into(), |f| f.to_string())
                );
            }
            _ => {
                let _ = writeln!(o, "  SUT resources: {}", self.resources.note);
            }
        }
        o
    }

    /// The markdown report.
    pub fn markdown(&self) -> String {
        let s = &self.setup;
        let c = &self.counts;
        let mut o = format!(
            "# Load report: {}\n\n{} over {} (`{}`), {} connections × {} requests in flight, {} ms window, {} ms drain, {} ms reply timeout.\n\n",
            s.sut,
            if self.held { "**Held**" } else { "**Did not hold**" },
            s.transport,
            s.manifest,
            s.connections,
            s.in_flight,
            s.duration_ms,
            s.drain_ms,
            s.reply_timeout_ms
        );
        for r in &self.reasons {
            let _ = writeln!(o, "- {r}");
        }
        if !self.reasons.is_empty() {
            o.push('\n');
        }
        o.push_str("| figure | value |\n| --- | --- |\n");
        let mut row = |k: &str, v: String| {
            let _ = writeln!(o, "| {k} | {v} |");
        };
        row(
            "throughput (replies/s)",
            format!("{:.1}", self.throughput_rps),
        );
        row("requests sent", c.sent.to_string());
        row("replies", c.replies.to_string());
        row("error answers", self.errors.to_string());
        row("lost", self.lost.to_string());
        row("unknown-id replies", c.unknown_replies.to_string());
        row("other frames", c.other_frames.to_string());
        row("connections opened", c.connections_opened.to_string());
        row("connection failures", c.connection_failures.to_string());
        if let Some(p) = &self.latency_us {
            row("latency p50 (µs)", p.p50.to_string());
            row("latency p90 (µs)", p.p90.to_string());
            row("latency p99 (µs)", p.p99.to_string());
            row("latency p99.9 (µs)", p.p99_9.to_string());
            row("latency max (µs)", p.max.to_string());
        }
        match (self.resources.sampled, self.resources.rss_kib_max) {
            (true, Some(r)) => {
                row("SUT max RSS (KiB)", r.to_string());
                row(
                    "SUT max descriptors",
                    self.resources.fds_max.map_or("?".into(), |f| f.to_string()),
                );
            }
            _ => row("SUT resources", self.resources.note.clone()),
        }
        for (k, v) in c
            .error_codes
            .by_code
            .iter()
            .chain(&c.unmatched_error_codes.by_code)
        {
            row(&format!("error {k}"), v.to_string());
        }
        let other = c.error_codes.other + c.unmatched_error_codes.other;
        if other > 0 {
            row("errors with other codes", other.to_string());
        }
        o
    }

    /// Writes `load-report.json` and `load-report.md` into `dir`; their paths.
    pub fn write(&self, dir: &Path) -> std::io::Result<(PathBuf, PathBuf)> {
        let json = dir.join("load-report.json");
        let md = dir.join("load-report.md");
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&json, text + "\n")?;
        std::fs::write(&md, self.markdown())?;
        Ok((json, md))
    }
}

/// A duration such as `60s`, `500ms`, `2m` or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (e.g. 60s, 500ms, 2m)"))?;
    let ms = match unit {
        "ms" => Some(n),
        "" | "s" => n.checked_mul(1000),
        "m" => n.checked_mul(60_000),
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (ms, s or m)")),
    }
    .ok_or_else(|| format!("{s:?} is too long"))?;
    Ok(std::time::Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::book::latencies;

    fn setup() -> RunSetup {
        RunSetup {
            sut: "x 1".into(),
            manifest: "m.yaml".into(),
            transport: "tcp".into(),
            connections: 2,
            in_flight: 1,
            duration_ms: 2000,
            window_ms: 2000,
            drain_ms: 500,
            reply_timeout_ms: 3000,
            started_unix_ms: 0,
        }
    }

    #[test]
    fn durations_take_ms_s_and_m() {
        assert_eq!(parse_duration("60s").unwrap().as_millis(), 60_000);
        assert_eq!(parse_duration("250ms").unwrap().as_millis(), 250);
        assert_eq!(parse_duration("2m").unwrap().as_millis(), 120_000);
        assert_eq!(parse_duration("3").unwrap().as_millis(), 3000);
        assert!(parse_duration("1h").is_err());
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("99999999999999999999s").is_err());
    }

    #[test]
    fn a_clean_run_holds_and_its_throughput_counts_the_window() {
        let c = Counts {
            sent: 100,
            replies: 100,
            replies_in_window: 98,
            connections_opened: 2,
            ..Counts::default()
        };
        let mut h = latencies();
        h.record(250).unwrap();
        let r = LoadReport::new(setup(), c, &h, vec![], Resources::not_sampled("x"), false);
        assert!(r.held, "{:?}", r.reasons);
        assert_eq!(r.throughput_rps, 49.0);
        assert!(r.latency_us.is_some_and(|p| p.count == 1));
        assert!(r.markdown().contains("**Held**"));
    }

    #[test]
    fn lost_replies_errors_and_failures_each_break_the_hold() {
        let lost = Counts {
            sent: 3,
            lost_at_end: 1,
            ..Counts::default()
        };
        assert!(reasons(&lost, false)[0].starts_with("1 replies lost"));
        let mut errs = Counts {
            sent: 3,
            ..Counts::default()
        };
        errs.error_codes.count("ERR_RATE_LIMIT_EXCEEDED");
        errs.error_codes.count("ERR_RATE_LIMIT_EXCEEDED");
        assert_eq!(
            reasons(&errs, false),
            ["2 error frames (ERR_RATE_LIMIT_EXCEEDED ×2)"]
        );
        let failed = Counts {
            sent: 3,
            connection_failures: 1,
            ..Counts::default()
        };
        assert_eq!(reasons(&failed, false), ["1 connection failures"]);
        assert_eq!(
            reasons(&Counts::default(), true),
            ["the run was interrupted", "no request was sent"]
        );
    }

    #[test]
    fn throughput_is_over_the_window_that_ran() {
        // Interrupted after 500 ms of a 2 s window.
        let s = RunSetup {
            window_ms: 500,
            ..setup()
        };
        let c = Counts {
            sent: 10,
            replies: 10,
            replies_in_window: 10,
            ..Counts::default()
        };
        let r = LoadReport::new(
            s,
            c,
            &latencies(),
            vec![],
            Resources::not_sampled("x"),
            true,
        );
        assert_eq!(r.throughput_rps, 20.0);
        assert!(!r.held);
    }

    #[test]
    fn no_reply_means_no_percentiles() {
        assert_eq!(Percentiles::of(&latencies()), None);
    }

    #[test]
    fn resources_keep_their_maxima() {
        let s = |t, r, f| Sample {
            t_ms: t,
            rss_kib: r,
            fds: f,
        };
        let r = Resources::sampled(
            7,
            1000,
            vec![s(0, Some(5000), Some(9)), s(1000, Some(6000), None)],
        );
        assert_eq!((r.rss_kib_max, r.fds_max), (Some(6000), Some(9)));
    }
}
