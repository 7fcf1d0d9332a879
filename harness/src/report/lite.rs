//! A transcript-free reading of `report.json` for the commands that look across many reports
//! (`matrix`, `history`): only the fields they need are kept, read from a buffered stream, so
//! a report's transcripts (up to tens of megabytes) are parsed past and never held, and one
//! report at a time is all these commands keep beside their own small tables.

use crate::report::result::{NaCause, Verdict};
use serde::Deserialize;
use std::path::Path;

/// A reason longer than this is cut (with `…`): a page cell's hover text, not the transcript.
pub const REASON_CHARS: usize = 400;

/// What the cross-report commands keep of one report.
#[derive(Debug, Clone, Deserialize)]
pub struct LiteReport {
    /// The run block's identity fields (the transcripts in it are skipped).
    pub run: LiteRun,
    /// Harness version.
    #[serde(default)]
    pub harness_version: String,
    /// The SUT.
    pub sut: crate::report::model::SutInfo,
    /// Manifest and catalog digests.
    #[serde(default)]
    pub digests: Option<crate::report::model::Digests>,
    /// The claims the run supports.
    #[serde(default)]
    pub claims: Vec<String>,
    /// The profile claims granted on top of C0 (`SWP-RELAY`, …).
    #[serde(default)]
    pub profile_claims: Vec<String>,
    /// The claim line: the highest class plus every granted profile it does not cover.
    #[serde(default)]
    pub headline_claim: String,
    /// One verdict per class.
    #[serde(default)]
    pub classes: Vec<LiteClass>,
    /// Requirement ids and levels.
    #[serde(default)]
    pub requirements: Vec<LiteRequirement>,
    /// Executed vectors.
    #[serde(default)]
    pub results: Vec<LiteResult>,
    /// Selected vectors not executed.
    #[serde(default)]
    pub not_applicable: Vec<LiteResult>,
    /// Whether the run failed.
    #[serde(default)]
    pub run_failed: bool,
}

/// The run block's identity.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct LiteRun {
    /// UTC start time.
    #[serde(default)]
    pub timestamp_utc: String,
    /// Harness commit.
    #[serde(default)]
    pub runner_git_sha: String,
    /// Wall time.
    #[serde(default)]
    pub duration_ms: u64,
    /// Interrupted by a signal.
    #[serde(default)]
    pub interrupted: bool,
    /// Why the run stopped early.
    #[serde(default)]
    pub stopped_early: Option<String>,
}

/// One class verdict, without its per-vector lists.
#[derive(Debug, Clone, Deserialize)]
pub struct LiteClass {
    /// `C0`..`C5`.
    pub class: String,
    /// `pass`, `fail`, `incomplete`, `unclaimable`.
    pub status: String,
    /// Why, in one line.
    #[serde(default)]
    pub reason: String,
    /// The namespaces the class requires.
    #[serde(default)]
    pub namespaces: Vec<LiteNamespace>,
}

/// A namespace a class requires.
#[derive(Debug, Clone, Deserialize)]
pub struct LiteNamespace {
    /// Its name.
    pub namespace: String,
}

/// A requirement's id and level.
#[derive(Debug, Clone, Deserialize)]
pub struct LiteRequirement {
    /// Canonical id.
    pub id: String,
    /// `MUST`, `SHOULD`, …
    #[serde(default)]
    pub level: String,
}

/// One vector's outcome (a result or a skipped vector: both have these fields).
#[derive(Debug, Clone, Deserialize)]
pub struct LiteResult {
    /// Vector id.
    pub vector_id: String,
    /// What it checks.
    #[serde(default)]
    pub title: String,
    /// Namespace.
    #[serde(default)]
    pub namespace: String,
    /// Verdict.
    pub verdict: Verdict,
    /// Requirements it tests.
    #[serde(default)]
    pub requirements: Vec<String>,
    /// Whether a failure fails the run.
    #[serde(default)]
    pub absolute: bool,
    /// Why, for anything but a pass.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub detail: String,
    /// For not-applicable: the SUT's choice or untested (`na_cause` in results, `cause` in
    /// skipped vectors).
    #[serde(default, alias = "cause")]
    pub na_cause: Option<NaCause>,
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// Why a report could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LiteError {
    /// The file could not be opened.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a report.
    #[error("{path}: not a report.json: {source}")]
    Json {
        /// The file.
        path: String,
        /// Why.
        source: serde_json::Error,
    },
}

impl LiteReport {
    /// Reads `path` as a stream: memory stays at the kept fields whatever the file's size.
    pub fn read(path: &Path) -> Result<LiteReport, LiteError> {
        let f = std::fs::File::open(path).map_err(|source| LiteError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let mut r: LiteReport =
            serde_json::from_reader(std::io::BufReader::new(f)).map_err(|source| {
                LiteError::Json {
                    path: path.display().to_string(),
                    source,
                }
            })?;
        for x in r.results.iter_mut().chain(r.not_applicable.iter_mut()) {
            x.detail = clip(&x.detail, REASON_CHARS);
        }
        Ok(r)
    }

    /// Every selected vector, executed or not, in id order.
    pub fn all(&self) -> impl Iterator<Item = &LiteResult> {
        let mut v: Vec<&LiteResult> = self.results.iter().chain(&self.not_applicable).collect();
        v.sort_by(|a, b| a.vector_id.cmp(&b.vector_id));
        v.into_iter()
    }

    /// The catalog digest the run judged with (empty when the report has none).
    pub fn catalog_digest(&self) -> &str {
        self.digests
            .as_ref()
            .map_or("", |d| d.vector_set_sha256.as_str())
    }
}

/// `s` cut to at most `max` characters, with `…` when cut.
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

/// How a verdict reads across SUTs: whether it says the SUT meets the vector, breaks it, or
/// neither (a matrix row disagrees when one SUT meets a vector another breaks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Pass, or a reject whose code this wire cannot show.
    Meets,
    /// Fail, timeout, crash, or the SUT said it does not support what it claimed.
    Breaks,
    /// Ran, but decided nothing about the SUT (inconclusive, harness error, interrupted).
    Undecided,
    /// Did not run (not applicable, not run).
    Absent,
}

impl Outcome {
    /// The outcome of a verdict.
    pub fn of(v: Verdict) -> Outcome {
        match v {
            Verdict::Pass | Verdict::RejectCodeNotObservable => Outcome::Meets,
            Verdict::Fail | Verdict::Timeout | Verdict::Crash | Verdict::Unsupported => {
                Outcome::Breaks
            }
            Verdict::Inconclusive | Verdict::HarnessError | Verdict::Interrupted => {
                Outcome::Undecided
            }
            Verdict::NotApplicable | Verdict::NotRun => Outcome::Absent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_counts_characters_not_octets() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "abc…");
        assert_eq!(clip("ééé", 2), "éé…");
    }

    #[test]
    fn outcomes_split_verdicts_three_ways() {
        assert_eq!(
            Outcome::of(Verdict::RejectCodeNotObservable),
            Outcome::Meets
        );
        assert_eq!(Outcome::of(Verdict::Unsupported), Outcome::Breaks);
        assert_eq!(Outcome::of(Verdict::HarnessError), Outcome::Undecided);
        assert_eq!(Outcome::of(Verdict::NotRun), Outcome::Absent);
    }
}
