//! `history.json`: for each SUT (by label) the runs in time order, and for each of its
//! vectors whose verdict ever changed: when it last changed, between which SUT and harness
//! versions, whether it is a regression (and since which run), and whether it is flaky (a
//! change with no change of SUT version, harness version or catalog digest). Built from the
//! reports alone; verdicts are kept as one octet per vector and run.

use crate::report::lite::{LiteReport, Outcome};
use crate::report::result::Verdict;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The document.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct History {
    /// Format version (1).
    pub schema_version: u32,
    /// One entry per SUT label, by label.
    pub suts: Vec<SutHistory>,
    /// Regressions in each SUT's newest run, as `label vector_id`.
    pub newest_regressions: Vec<String>,
}

/// One SUT across runs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SutHistory {
    /// The label.
    pub label: String,
    /// Its runs, oldest first.
    pub runs: Vec<RunPoint>,
    /// Vectors whose verdict changed, most recent change first.
    pub changes: Vec<VectorChange>,
    /// Vectors whose verdict never changed across the runs that have it.
    pub stable: usize,
}

/// One run of one SUT.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunPoint {
    /// Its report's start time (the run's key).
    pub timestamp_utc: String,
    /// Where its report was read.
    pub report: String,
    /// The SUT's version (manifest version, and what it reported when it did).
    pub sut_version: String,
    /// Harness version and commit.
    pub harness: String,
    /// The catalog digest it was judged with.
    pub catalog_sha256: String,
    /// Its claims.
    pub claims: Vec<String>,
    /// Count per verdict.
    pub counts: BTreeMap<String, usize>,
}

/// How a vector's verdict moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Trend {
    /// It breaks now, and met the vector in an earlier run.
    Regression,
    /// It meets the vector now, and broke it in an earlier run.
    Fixed,
    /// Any other change.
    Changed,
}

/// One SUT × vector whose verdict changed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct VectorChange {
    /// Vector id.
    pub vector_id: String,
    /// Its verdict in the newest run that has it.
    pub now: Verdict,
    /// Regression, fixed or changed.
    pub trend: Trend,
    /// The last change.
    pub last_change: Step,
    /// For a regression: the first run of the current breaking streak.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failing_since: Option<String>,
    /// How many times the verdict changed.
    pub changes: usize,
    /// Some change came with no change of SUT version, harness or catalog.
    pub flaky: bool,
    /// The runs whose change was such (their timestamps).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky_at: Vec<String>,
}

/// One change between two consecutive runs that have the vector.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    /// The earlier run.
    pub from_run: String,
    /// The later run.
    pub to_run: String,
    /// The earlier verdict.
    pub from: Verdict,
    /// The later verdict.
    pub to: Verdict,
    /// SUT version before → after, when it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sut_version: Option<(String, String)>,
    /// Harness before → after, when it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<(String, String)>,
    /// The catalog changed too.
    pub catalog_changed: bool,
}

const VERDICTS: [Verdict; 11] = [
    Verdict::Pass,
    Verdict::Fail,
    Verdict::RejectCodeNotObservable,
    Verdict::Inconclusive,
    Verdict::NotApplicable,
    Verdict::Unsupported,
    Verdict::Timeout,
    Verdict::Crash,
    Verdict::HarnessError,
    Verdict::Interrupted,
    Verdict::NotRun,
];
const ABSENT: u8 = u8::MAX;

fn code(v: Verdict) -> u8 {
    VERDICTS
        .iter()
        .position(|x| *x == v)
        .and_then(|p| u8::try_from(p).ok())
        .unwrap_or(ABSENT)
}

/// One run as the builder keeps it: its point and one octet per interned vector.
struct Kept {
    point: RunPoint,
    order: usize,
    verdicts: Vec<u8>,
}

/// Builds the history one report at a time.
#[derive(Default)]
pub struct Builder {
    ids: BTreeMap<String, usize>,
    names: Vec<String>,
    suts: BTreeMap<String, Vec<Kept>>,
    added: usize,
}

impl Builder {
    /// Adds one SUT's report of one run; `label` keys the SUT, `report` names the file.
    pub fn add(&mut self, label: &str, report: &str, r: &LiteReport) {
        let mut verdicts = Vec::new();
        let mut counts = BTreeMap::new();
        for x in r.all() {
            let next = self.names.len();
            let i = *self.ids.entry(x.vector_id.clone()).or_insert(next);
            if i == next {
                self.names.push(x.vector_id.clone());
            }
            if verdicts.len() <= i {
                verdicts.resize(i + 1, ABSENT);
            }
            verdicts[i] = code(x.verdict);
            *counts.entry(x.verdict.as_str().to_owned()).or_insert(0) += 1;
        }
        let sut_version = if r.sut.reported.is_empty() || r.sut.reported == r.sut.version {
            r.sut.version.clone()
        } else {
            format!("{} ({})", r.sut.version, r.sut.reported)
        };
        let point = RunPoint {
            timestamp_utc: r.run.timestamp_utc.clone(),
            report: report.to_owned(),
            sut_version,
            harness: format!("{} {}", r.harness_version, r.run.runner_git_sha),
            catalog_sha256: r.catalog_digest().to_owned(),
            claims: r.claims.clone(),
            counts,
        };
        self.suts.entry(label.to_owned()).or_default().push(Kept {
            point,
            order: self.added,
            verdicts,
        });
        self.added += 1;
    }

    /// The finished document.
    pub fn finish(mut self) -> History {
        let mut suts = Vec::new();
        let mut newest_regressions = Vec::new();
        for (label, mut runs) in std::mem::take(&mut self.suts) {
            // Runs are keyed by time; two with one timestamp keep the order they were given.
            runs.sort_by(|a, b| {
                (&a.point.timestamp_utc, a.order).cmp(&(&b.point.timestamp_utc, b.order))
            });
            let (changes, stable) = self.changes(&runs);
            let newest = runs.last().map(|k| k.point.timestamp_utc.clone());
            for c in &changes {
                if c.trend == Trend::Regression && Some(&c.last_change.to_run) == newest.as_ref() {
                    newest_regressions.push(format!("{label} {}", c.vector_id));
                }
            }
            suts.push(SutHistory {
                label,
                runs: runs.into_iter().map(|k| k.point).collect(),
                changes,
                stable,
            });
        }
        History {
            schema_version: 1,
            suts,
            newest_regressions,
        }
    }

    fn changes(&self, runs: &[Kept]) -> (Vec<VectorChange>, usize) {
        let mut out = Vec::new();
        let mut stable = 0;
        for (i, name) in self.names.iter().enumerate() {
            // The runs that have the vector, with its verdict there.
            let seen: Vec<(&Kept, Verdict)> = runs
                .iter()
                .filter_map(|k| {
                    let c = *k.verdicts.get(i)?;
                    VERDICTS.get(usize::from(c)).map(|v| (k, *v))
                })
                .collect();
            if seen.is_empty() {
                continue;
            }
            let mut steps = Vec::new();
            let mut flaky_at = Vec::new();
            for w in seen.windows(2) {
                let ((a, va), (b, vb)) = (w[0], w[1]);
                if va == vb {
                    continue;
                }
                let step = step(&a.point, &b.point, va, vb);
                if step.sut_version.is_none() && step.harness.is_none() && !step.catalog_changed {
                    flaky_at.push(b.point.timestamp_utc.clone());
                }
                steps.push(step);
            }
            let Some(last) = steps.last().cloned() else {
                stable += 1;
                continue;
            };
            let now = last.to;
            let broke_before = seen.iter().any(|(_, v)| Outcome::of(*v) == Outcome::Breaks);
            let met_before = seen.iter().any(|(_, v)| Outcome::of(*v) == Outcome::Meets);
            let (trend, failing_since) = match Outcome::of(now) {
                Outcome::Breaks if met_before => {
                    // The current streak of breaking runs starts after the last run that
                    // did not break.
                    let start = seen
                        .iter()
                        .rposition(|(_, v)| Outcome::of(*v) != Outcome::Breaks)
                        .map_or(0, |p| p + 1);
                    (
                        Trend::Regression,
                        seen.get(start).map(|(k, _)| k.point.timestamp_utc.clone()),
                    )
                }
                Outcome::Meets if broke_before => (Trend::Fixed, None),
                _ => (Trend::Changed, None),
            };
            out.push(VectorChange {
                vector_id: name.clone(),
                now,
                trend,
                last_change: last,
                failing_since,
                changes: steps.len(),
                flaky: !flaky_at.is_empty(),
                flaky_at,
            });
        }
        out.sort_by(|a, b| {
            b.last_change
                .to_run
                .cmp(&a.last_change.to_run)
                .then_with(|| a.vector_id.cmp(&b.vector_id))
        });
        (out, stable)
    }
}

fn step(a: &RunPoint, b: &RunPoint, from: Verdict, to: Verdict) -> Step {
    let pair = |x: &str, y: &str| (x != y).then(|| (x.to_owned(), y.to_owned()));
    Step {
        from_run: a.timestamp_utc.clone(),
        to_run: b.timestamp_utc.clone(),
        from,
        to,
        sut_version: pair(&a.sut_version, &b.sut_version),
        harness: pair(&a.harness, &b.harness),
        catalog_changed: a.catalog_sha256 != b.catalog_sha256,
    }
}
