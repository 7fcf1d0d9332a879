//! `report.json`: a superset of the spec kit's runner output schema v1. Everything outside
//! the `run` block is a pure function of the results, so two runs diff empty outside it.

use crate::model::{VectorResult, Verdict};
use serde::Serialize;
use std::collections::BTreeMap;

/// The `run` block: the only place for wall-clock and environment data.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    /// Effective selection, as v1's `pattern`.
    pub pattern: String,
    /// Always true: this runner has no fallback evaluation.
    pub no_fallback: bool,
    /// UTC RFC 3339 start time.
    pub timestamp_utc: String,
    /// Commit of the harness, or `nogit`.
    pub runner_git_sha: String,
    /// Wall time of the run.
    pub duration_ms: u64,
    /// The command line.
    pub command: Vec<String>,
    /// The run was interrupted (Ctrl-C): the results are partial.
    pub interrupted: bool,
    /// Transcripts of session-method vectors, by vector id. They hold wall-clock times,
    /// ports, timestamps and TLS records that differ on every run, so they live here, in
    /// the block marked as run-specific; codec-method transcripts (virtual clock) stay in
    /// their results.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub transcripts: BTreeMap<String, Vec<crate::model::TranscriptEntry>>,
}

/// A vector that was not executed, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// Vector id.
    pub vector_id: String,
    /// Verdict (`not-applicable`).
    pub verdict: Verdict,
    /// Why.
    pub detail: String,
}

/// The report document.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Output schema version (1: the spec kit's v1 fields, plus additions).
    pub schema_version: u32,
    /// Run metadata (non-deterministic).
    pub run: RunInfo,
    /// Harness name and version.
    pub harness: String,
    /// The SUT as it described itself and as its manifest names it.
    pub sut: SutInfo,
    /// Executed vectors.
    pub total: usize,
    /// Passing results.
    pub passed: usize,
    /// Non-passing results.
    pub failed: usize,
    /// Always 0.
    pub fallback_count: usize,
    /// Count per verdict over all selected vectors.
    pub verdicts: BTreeMap<&'static str, usize>,
    /// Whether the run fails: some vector with an absolute requirement did not pass.
    pub run_failed: bool,
    /// One entry per executed vector, in id order.
    pub results: Vec<VectorResult>,
    /// The subset of `results` with `pass = false`.
    pub failures: Vec<VectorResult>,
    /// Selected vectors that were not executed.
    pub not_applicable: Vec<Skipped>,
}

/// Identity of the SUT.
#[derive(Debug, Clone, Serialize)]
pub struct SutInfo {
    /// Manifest name.
    pub name: String,
    /// Manifest version.
    pub version: String,
    /// What the connector reported.
    pub reported: String,
}

/// Whether a result fails the run.
pub fn fails_run(r: &VectorResult, strict: bool) -> bool {
    (r.verdict.is_failure() && (r.absolute || strict))
        || (r.verdict == Verdict::RejectCodeNotObservable && strict)
}

impl Report {
    /// Builds the report; `results` may be in any order.
    pub fn new(mut run: RunInfo, sut: SutInfo, mut all: Vec<VectorResult>, strict: bool) -> Report {
        all.sort_by(|a, b| a.vector_id.cmp(&b.vector_id));
        for r in &mut all {
            if matches!(r.method.as_deref(), Some("session" | "mcp_native"))
                && !r.transcript.is_empty()
            {
                run.transcripts
                    .insert(r.vector_id.clone(), std::mem::take(&mut r.transcript));
            }
        }
        let mut verdicts = BTreeMap::new();
        for r in &all {
            *verdicts.entry(r.verdict.as_str()).or_insert(0) += 1;
        }
        let run_failed = all.iter().any(|r| fails_run(r, strict));
        let (results, skipped): (Vec<_>, Vec<_>) =
            all.into_iter().partition(|r| r.verdict.executed());
        let passed = results.iter().filter(|r| r.pass).count();
        let failures: Vec<_> = results.iter().filter(|r| !r.pass).cloned().collect();
        Report {
            schema_version: 1,
            run,
            harness: format!("swp-conform {}", env!("CARGO_PKG_VERSION")),
            sut,
            total: results.len(),
            passed,
            failed: results.len() - passed,
            fallback_count: 0,
            verdicts,
            run_failed,
            failures,
            not_applicable: skipped
                .into_iter()
                .map(|r| Skipped {
                    vector_id: r.vector_id,
                    verdict: r.verdict,
                    detail: r.detail.unwrap_or_default(),
                })
                .collect(),
            results,
        }
    }

    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        s.push('\n');
        s
    }
}

/// The harness's commit, or `nogit` (v1's `runner_git_sha`).
pub fn runner_git_sha() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "nogit".into())
}

/// RFC 3339 UTC from a Unix time in seconds (civil-from-days, Howard Hinnant's algorithm),
/// so the harness needs no date crate.
pub fn rfc3339(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_known_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_767_225_600), "2026-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
