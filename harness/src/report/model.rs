//! `report.json`: a superset of the spec kit's runner output schema v1. Everything outside
//! the `run` block is a pure function of the results, so two runs diff empty outside it.
//! This file holds the document and what reads it; `report::build` assembles it from the
//! results and the analyses.

use crate::report::analysis::baseline::BaselineOutcome;
use crate::report::analysis::classes::ClassVerdict;
use crate::report::analysis::requirements::RequirementVerdict;
use crate::report::result::{TranscriptEntry, VectorResult, Verdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `run` block: the only place for wall-clock and environment data.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
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
    /// Why the run stopped before its plan ended (`--stop-after-silent`: the SUT answered
    /// nothing in that many vectors in a row); the vectors it did not reach are `not-run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
    /// Transcripts of session-method vectors, by vector id. They hold wall-clock times,
    /// ports, timestamps and TLS records that differ on every run, so they live here, in
    /// the block marked as run-specific; codec-method transcripts (virtual clock) stay in
    /// their results.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub transcripts: BTreeMap<String, Vec<TranscriptEntry>>,
    /// For a merged report: the run block of each shard, in shard order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardRun>,
}

/// What a merged report keeps of one shard's run block.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ShardRun {
    /// Which shard (`K/N`).
    pub shard: String,
    /// Its start time.
    pub timestamp_utc: String,
    /// Its commit.
    pub runner_git_sha: String,
    /// Its wall time.
    pub duration_ms: u64,
}

/// Which part of the plan a sharded run executed: every vector whose position in the
/// id-ordered plan is `index - 1` modulo `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Shard {
    /// 1-based shard number `K`.
    pub index: u32,
    /// Number of shards `N`.
    pub count: u32,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Digests that identify what was tested with what.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Digests {
    /// SHA-256 of the SUT manifest's text.
    pub sut_manifest_sha256: String,
    /// SHA-256 over the catalog: every vector and requirement file, by relative path.
    pub vector_set_sha256: String,
}

/// A vector that was not executed, and why.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Skipped {
    /// Vector id.
    pub vector_id: String,
    /// What the vector checks.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// Namespace.
    #[serde(default)]
    pub namespace: String,
    /// Vector file.
    #[serde(default)]
    pub path: String,
    /// Canonical requirement IDs the vector names.
    #[serde(default)]
    pub requirements: Vec<String>,
    /// Verdict (`not-applicable`, or `not-run` after an early stop).
    pub verdict: Verdict,
    /// Why.
    pub detail: String,
    /// Whether that was the SUT's declared choice or untested (reports before this field
    /// read as untested).
    #[serde(default)]
    pub cause: crate::report::result::NaCause,
    /// The manifest declarations whose absence left it untested.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lacks: Vec<String>,
    /// Defects seen in passing while deciding the vector did not apply (an MCP server's
    /// answers to set-up requests).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incidental: Vec<crate::report::result::Incidental>,
}

/// The report document.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// Output schema version (1: the spec kit's v1 fields, plus additions).
    pub schema_version: u32,
    /// Run metadata (non-deterministic).
    pub run: RunInfo,
    /// Harness name and version.
    pub harness: String,
    /// Harness version alone.
    #[serde(default)]
    pub harness_version: String,
    /// The SUT as it described itself and as its manifest names it.
    pub sut: SutInfo,
    /// Digests of the SUT manifest and of the vector set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digests: Option<Digests>,
    /// Whether SHOULD-level failures failed the run (`--strict`).
    #[serde(default)]
    pub strict: bool,
    /// The part of the plan this run executed, when sharded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Executed vectors.
    pub total: usize,
    /// Passing results.
    pub passed: usize,
    /// Non-passing results.
    pub failed: usize,
    /// Always 0.
    pub fallback_count: usize,
    /// Count per verdict over all selected vectors.
    pub verdicts: BTreeMap<String, usize>,
    /// Whether the run fails: some vector with an absolute requirement did not pass (with a
    /// baseline: some result was not the one the baseline expects).
    pub run_failed: bool,
    /// The class claims this run supports, e.g. `["SWP C0"]`.
    #[serde(default)]
    pub claims: Vec<String>,
    /// A verdict for each conformance class C0..C5.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassVerdict>,
    /// The profiles granted on top of the baseline class C0, by title (`["SWP-RELAY"]`):
    /// each profile whose namespace passed by the class rules, when C0 is granted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile_claims: Vec<String>,
    /// The highest class granted and every granted profile it does not cover, with the
    /// profiles' versions: `SWP C0 + SWP-RELAY (swp-relay Draft v0.1, P1 Draft)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline_claim: Option<String>,
    /// A verdict for every claimable profile (the namespaces of `conformance-classes.md`'s
    /// profiles), judged as the classes are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<crate::report::analysis::claims::ProfileVerdict>,
    /// Requirement verdicts counted by level, then by verdict.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requirement_counts: BTreeMap<String, BTreeMap<String, usize>>,
    /// A verdict for every registered requirement, in document then ID order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requirements: Vec<RequirementVerdict>,
    /// Defects seen in passing (a message about something other than the step being
    /// judged), one per defect whichever vectors saw it; each fails its requirement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incidental: Vec<crate::report::analysis::requirements::IncidentalSeen>,
    /// Steps left unrun in executed vectors (a close ended the vector before them).
    #[serde(default, skip_serializing_if = "crate::report::model::is_zero")]
    pub steps_not_run: usize,
    /// What the baseline expected and where the run deviated from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineOutcome>,
    /// Runs with spec kit fixtures: how many published expectations the SUT meets, and
    /// every one the SUT or the project's reading departs from, with the ruling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<crate::report::analysis::published::Section>,
    /// One entry per executed vector, in id order.
    pub results: Vec<VectorResult>,
    /// The subset of `results` with `pass = false`.
    pub failures: Vec<VectorResult>,
    /// Selected vectors that were not executed.
    pub not_applicable: Vec<Skipped>,
}

/// Identity of the SUT.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SutInfo {
    /// Manifest name.
    pub name: String,
    /// Manifest version.
    pub version: String,
    /// What the connector reported.
    pub reported: String,
}

/// For `skip_serializing_if`.
pub(crate) fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Report {
    /// Every selected vector's result, executed or not, in id order: the inverse of the
    /// split into `results` and `not_applicable` (used by merge and the requirement trace).
    pub fn all_results(&self) -> Vec<VectorResult> {
        let mut all = self.results.clone();
        for s in &self.not_applicable {
            let mut r = VectorResult::new(
                s.vector_id.clone(),
                s.namespace.clone(),
                s.path.clone(),
                s.requirements.clone(),
                false,
            );
            r.title.clone_from(&s.title);
            r.verdict = s.verdict;
            r.detail = Some(s.detail.clone());
            r.na_cause = Some(s.cause);
            r.lacks.clone_from(&s.lacks);
            r.incidental.clone_from(&s.incidental);
            all.push(r);
        }
        all.sort_by(|a, b| a.vector_id.cmp(&b.vector_id));
        all
    }

    /// The transcript of a vector: in its result (codec method) or in the run block.
    pub fn transcript<'a>(&'a self, r: &'a VectorResult) -> &'a [TranscriptEntry] {
        match self.run.transcripts.get(&r.vector_id) {
            Some(t) => t,
            None => &r.transcript,
        }
    }

    /// The same report with its `run` block replaced by fixed values, for committed
    /// snapshots: wall-clock, commit and command are redacted and each run-specific
    /// transcript becomes one note.
    pub fn redacted(&self) -> Report {
        let mut r = self.clone();
        let redact = "[redacted]".to_owned();
        r.run.timestamp_utc = redact.clone();
        r.run.runner_git_sha = redact.clone();
        r.run.duration_ms = 0;
        r.run.command = vec![redact.clone()];
        for t in r.run.transcripts.values_mut() {
            *t = vec![TranscriptEntry {
                t_ms: 0,
                dir: crate::report::result::Dir::Note,
                data: "[run-specific transcript redacted]".into(),
            }];
        }
        for s in &mut r.run.shards {
            s.timestamp_utc = redact.clone();
            s.runner_git_sha = redact.clone();
            s.duration_ms = 0;
        }
        r
    }

    /// Parses a `report.json`.
    pub fn from_json(text: &str) -> Result<Report, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        s.push('\n');
        s
    }
}

/// The harness's commit, or `nogit` (v1's `runner_git_sha`): fixed when the binary was built
/// (build.rs), so a binary copied out of its checkout still says where it came from.
pub fn runner_git_sha() -> String {
    env!("SWP_CONFORM_GIT_SHA").to_owned()
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
