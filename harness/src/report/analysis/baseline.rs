//! Baselines: a file listing a SUT's expected failures, so a nightly run fails on change
//! rather than on known gaps. A listed vector that fails as listed is expected; one that
//! passes, or fails differently, is a deviation, and so is an unlisted failure. A flaky
//! declaration lets the run retry a vector whose result was unexpected (never one whose
//! result was expected).

use crate::report::result::{fails_run, VectorResult, Verdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The baseline file (YAML).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// Vectors expected not to pass.
    #[serde(default)]
    pub expected_failures: Vec<ExpectedFailure>,
    /// Vectors whose unexpected results are retried.
    #[serde(default)]
    pub flaky: Vec<Flaky>,
}

/// One expected failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectedFailure {
    /// Vector id.
    pub vector: String,
    /// The verdict expected (any failing verdict when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The observation expected, exactly (any when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
    /// Why it is expected (kept by `--update-baseline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A flaky declaration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Flaky {
    /// Vector id.
    pub vector: String,
    /// How many times an unexpected result is retried (default 2, at most 10).
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

fn default_retries() -> u32 {
    2
}

/// Upper bound on retries, so a typo cannot make a run endless.
pub const MAX_RETRIES: u32 = 10;

/// A baseline file could not be used.
pub type BaselineError = crate::support::diag::FileError;

/// How a result departs from the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DeviationKind {
    /// Listed as failing, but passed.
    UnexpectedPass,
    /// Listed as failing, and failed with another verdict or observation.
    FailedDifferently,
    /// Not listed, and failed the run.
    UnexpectedFailure,
}

impl DeviationKind {
    /// Kebab-case name, as in report.json.
    pub fn as_str(self) -> &'static str {
        match self {
            DeviationKind::UnexpectedPass => "unexpected-pass",
            DeviationKind::FailedDifferently => "failed-differently",
            DeviationKind::UnexpectedFailure => "unexpected-failure",
        }
    }
}

/// One deviation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Deviation {
    /// Vector id.
    pub vector_id: String,
    /// How it deviates.
    pub kind: DeviationKind,
    /// What the baseline expected.
    pub expected: String,
    /// What the run gave.
    pub got: String,
}

/// A flaky vector that was retried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Retry {
    /// Vector id.
    pub vector_id: String,
    /// Runs in total, the first included.
    pub attempts: u32,
    /// Whether the last attempt gave the expected result.
    pub settled: bool,
}

/// The baseline's judgement of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BaselineOutcome {
    /// Listed failures that failed as listed.
    pub expected_failures: usize,
    /// Results the baseline did not expect; any fails the run.
    pub deviations: Vec<Deviation>,
    /// Listed vectors that were not executed in this run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<String>,
    /// Flaky vectors retried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retried: Vec<Retry>,
}

impl Baseline {
    /// Loads a baseline file; a missing file is an empty baseline only when `missing_ok`
    /// (`--update-baseline` creating it).
    pub fn load(path: &std::path::Path, missing_ok: bool) -> Result<Baseline, BaselineError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if missing_ok && e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Baseline::default())
            }
            Err(e) => return Err(crate::support::diag::FileError::io(path)(e)),
        };
        Ok(Baseline::parse(&text, path)?)
    }

    /// Parses baseline YAML; `path` names it in problems.
    pub fn parse(
        text: &str,
        path: &std::path::Path,
    ) -> Result<Baseline, crate::support::diag::LoadError> {
        if text.trim().is_empty() {
            return Ok(Baseline::default());
        }
        let mut sink = crate::support::diag::Sink::default();
        if let Some(b) = sink.parse::<Baseline>(path, text) {
            for f in b.flaky.iter().filter(|f| f.retries > MAX_RETRIES) {
                sink.at(
                    path,
                    text,
                    &f.vector,
                    format!(
                        "flaky {}: retries {} exceeds {MAX_RETRIES}",
                        f.vector, f.retries
                    ),
                );
            }
            if sink.problems.is_empty() {
                return Ok(b);
            }
        }
        Err(crate::support::diag::LoadError {
            what: "the baseline",
            problems: sink.problems,
        })
    }

    fn listed(&self, id: &str) -> Option<&ExpectedFailure> {
        self.expected_failures.iter().find(|e| e.vector == id)
    }

    /// How `r` departs from the baseline, if it does.
    pub fn deviation(&self, r: &VectorResult, strict: bool) -> Option<Deviation> {
        let got = describe(r.verdict, &r.observed);
        match self.listed(&r.vector_id) {
            None if r.verdict.executed() && fails_run(r, strict) => Some(Deviation {
                vector_id: r.vector_id.clone(),
                kind: DeviationKind::UnexpectedFailure,
                expected: "pass".into(),
                got,
            }),
            None => None,
            Some(_) if !r.verdict.executed() => None,
            Some(e) => {
                let expected = match &e.verdict {
                    Some(v) => describe(*v, e.observed.as_deref().unwrap_or("")),
                    None => "a failure".into(),
                };
                if r.verdict == Verdict::Pass {
                    return Some(Deviation {
                        vector_id: r.vector_id.clone(),
                        kind: DeviationKind::UnexpectedPass,
                        expected,
                        got,
                    });
                }
                let verdict_ok = match e.verdict {
                    Some(v) => v == r.verdict,
                    None => r.verdict.is_failure() || r.verdict == Verdict::RejectCodeNotObservable,
                };
                let observed_ok = e.observed.as_ref().is_none_or(|o| *o == r.observed);
                (!(verdict_ok && observed_ok)).then(|| Deviation {
                    vector_id: r.vector_id.clone(),
                    kind: DeviationKind::FailedDifferently,
                    expected,
                    got,
                })
            }
        }
    }

    /// How many times an unexpected result of `id` may be retried.
    pub fn retries(&self, id: &str) -> u32 {
        self.flaky
            .iter()
            .find(|f| f.vector == id)
            .map_or(0, |f| f.retries.min(MAX_RETRIES))
    }

    /// Judges every selected result (executed or not), in id order.
    pub fn judge(&self, all: &[VectorResult], strict: bool) -> BaselineOutcome {
        let mut out = BaselineOutcome::default();
        for r in all {
            match self.deviation(r, strict) {
                Some(d) => out.deviations.push(d),
                None if r.verdict.executed() && self.listed(&r.vector_id).is_some() => {
                    out.expected_failures += 1
                }
                None => {}
            }
        }
        for e in &self.expected_failures {
            if !all
                .iter()
                .any(|r| r.vector_id == e.vector && r.verdict.executed())
            {
                out.not_run.push(e.vector.clone());
            }
        }
        out.not_run.sort();
        out
    }

    /// The baseline that expects exactly this run's failures: every executed result that
    /// fails the run under `strict` is listed with its verdict and observation; reasons and
    /// flaky declarations of `self` are kept.
    pub fn updated(&self, all: &[VectorResult], strict: bool) -> Baseline {
        Baseline {
            expected_failures: all
                .iter()
                .filter(|r| r.verdict.executed() && r.verdict != Verdict::Pass)
                .filter(|r| fails_run(r, strict) || self.listed(&r.vector_id).is_some())
                .map(|r| ExpectedFailure {
                    vector: r.vector_id.clone(),
                    verdict: Some(r.verdict),
                    observed: Some(r.observed.clone()),
                    reason: self.listed(&r.vector_id).and_then(|e| e.reason.clone()),
                })
                .collect(),
            flaky: self.flaky.clone(),
        }
    }

    /// YAML text, with a header saying how it was made. Strings are written as JSON
    /// strings, which YAML reads as double-quoted scalars.
    pub fn to_yaml(&self) -> String {
        let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let mut s = String::from(
            "# swp-conform baseline: the vectors this SUT is expected to fail.\n\
             # Rewritten by `swp-conform run --baseline FILE --update-baseline`; reasons and\n\
             # flaky declarations are kept.\n",
        );
        if self.expected_failures.is_empty() {
            s.push_str("expected_failures: []\n");
        } else {
            s.push_str("expected_failures:\n");
        }
        for e in &self.expected_failures {
            let _ = writeln!(s, "  - vector: {}", q(&e.vector));
            if let Some(v) = e.verdict {
                let _ = writeln!(s, "    verdict: {}", v.as_str());
            }
            if let Some(o) = &e.observed {
                let _ = writeln!(s, "    observed: {}", q(o));
            }
            if let Some(r) = &e.reason {
                let _ = writeln!(s, "    reason: {}", q(r));
            }
        }
        if self.flaky.is_empty() {
            s.push_str("flaky: []\n");
        } else {
            s.push_str("flaky:\n");
        }
        for f in &self.flaky {
            let _ = writeln!(s, "  - vector: {}", q(&f.vector));
            let _ = writeln!(s, "    retries: {}", f.retries);
            if let Some(r) = &f.reason {
                let _ = writeln!(s, "    reason: {}", q(r));
            }
        }
        s
    }
}

fn describe(v: Verdict, observed: &str) -> String {
    if observed.is_empty() || v == Verdict::Pass {
        v.as_str().to_owned()
    } else {
        format!("{} ({observed})", v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, verdict: Verdict, observed: &str) -> VectorResult {
        let mut r = VectorResult::new(id.into(), "core".into(), "p".into(), vec![], true);
        r.verdict = verdict;
        r.pass = verdict == Verdict::Pass;
        r.observed = observed.into();
        r
    }

    #[test]
    fn judges_expected_unexpected_and_different() {
        let b = Baseline::parse(
            "expected_failures:\n  - vector: a\n    verdict: fail\n    observed: \"x\"\n  - vector: b\n  - vector: c\n    verdict: timeout\n  - vector: gone\nflaky:\n  - vector: d\n", std::path::Path::new("b.yaml"))
        .unwrap();
        let rs = vec![
            result("a", Verdict::Fail, "x"),
            result("b", Verdict::Pass, ""),
            result("c", Verdict::Fail, "y"),
            result("d", Verdict::Fail, "z"),
            result("e", Verdict::Pass, ""),
        ];
        let o = b.judge(&rs, false);
        assert_eq!(o.expected_failures, 1);
        let kinds: Vec<_> = o
            .deviations
            .iter()
            .map(|d| (d.vector_id.as_str(), d.kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("b", DeviationKind::UnexpectedPass),
                ("c", DeviationKind::FailedDifferently),
                ("d", DeviationKind::UnexpectedFailure),
            ]
        );
        assert_eq!(o.not_run, vec!["gone".to_owned()]);
        assert_eq!(b.retries("d"), 2);
        assert_eq!(b.retries("a"), 0);
    }

    #[test]
    fn update_round_trips_and_then_expects_the_run() {
        let old = Baseline::parse(
            "expected_failures:\n  - vector: a\n    reason: \"known: quote \\\" and colon\"\nflaky:\n  - vector: d\n    retries: 3\n", std::path::Path::new("b.yaml"))
        .unwrap();
        let rs = vec![
            result("a", Verdict::Fail, "x: \"y\""),
            result("b", Verdict::Pass, ""),
            result("c", Verdict::Crash, "exit 3"),
        ];
        let new = old.updated(&rs, false);
        let text = new.to_yaml();
        let back = Baseline::parse(&text, std::path::Path::new("b.yaml")).unwrap();
        assert_eq!(back, new);
        assert_eq!(back.expected_failures.len(), 2);
        assert_eq!(
            back.expected_failures[0].reason.as_deref(),
            Some("known: quote \" and colon")
        );
        assert_eq!(back.flaky[0].retries, 3);
        assert!(back.judge(&rs, false).deviations.is_empty());
    }

    #[test]
    fn rejects_unknown_fields_and_endless_retries() {
        assert!(Baseline::parse("expected_failure: []\n", std::path::Path::new("b.yaml")).is_err());
        assert!(Baseline::parse(
            "flaky:\n  - vector: a\n    retries: 1000\n",
            std::path::Path::new("b.yaml")
        )
        .is_err());
    }
}
