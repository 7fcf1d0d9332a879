//! `matrix.json`: one row per vector, one column per SUT (or intermediary pair), a cell per
//! verdict with its reason, and the rows where SUTs disagree. Built from the reports alone,
//! one report at a time, so a matrix of many SUTs holds only its cells. Everything outside
//! the `run` block is a pure function of the reports.

use crate::matrix::spec::Pair;
use crate::report::lite::{LiteReport, Outcome};
use crate::report::result::Verdict;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The document.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Matrix {
    /// Format version (1).
    pub schema_version: u32,
    /// Wall-clock data of the matrix run: the only part that differs between two runs.
    pub run: MatrixRun,
    /// Harness version that built the matrix.
    pub harness_version: String,
    /// One column per SUT or pair, in the order given.
    pub columns: Vec<Column>,
    /// One row per vector any column selected, by namespace, requirement, id.
    pub rows: Vec<Row>,
    /// Every row where one SUT meets the vector and another breaks it, by id.
    pub disagreements: Vec<Disagreement>,
    /// Totals the page shows (and the browser check recounts).
    pub counts: Counts,
    /// The intermediary pairs: intermediary × upstream.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<PairCell>,
    /// The catalog digests the columns were judged with; more than one means the columns
    /// did not all run the same vectors, and the page says so.
    pub catalogs: Vec<String>,
}

/// The matrix run's wall-clock data.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct MatrixRun {
    /// UTC start time.
    pub timestamp_utc: String,
    /// The command line.
    pub command: Vec<String>,
    /// SUT runs at once.
    pub jobs: u32,
    /// Wall time of the whole matrix.
    pub duration_ms: u64,
    /// Each column's run, in column order.
    pub runs: Vec<ColumnRun>,
    /// The matrix process's own peak resident memory, in KiB (Linux `VmHWM`), read after the
    /// page was built: what the matrix itself held, its column runs apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_kib: Option<u64>,
}

/// How one column's run ended.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ColumnRun {
    /// The column.
    pub label: String,
    /// The `run` process's exit status (0 conformant, 1 failures, 2 could not run), or none
    /// when the matrix was only rebuilt from reports or the process was killed.
    pub exit_code: Option<i32>,
    /// Its wall time.
    pub duration_ms: u64,
}

/// Whether a column's verdicts cover its selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ColumnStatus {
    /// The run ended normally.
    Complete,
    /// The run was interrupted or stopped early: some verdicts are missing.
    Incomplete,
    /// The run left no readable report.
    NoReport,
}

/// One SUT (or pair) as a column.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Column {
    /// The label (its report directory).
    pub label: String,
    /// The manifest's name.
    pub name: String,
    /// The manifest's version.
    pub version: String,
    /// What the SUT reported of itself.
    pub reported: String,
    /// For a pair: the intermediary and the upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<Pair>,
    /// Its report, relative to the matrix directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
    /// Its HTML report, relative to the matrix directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    /// Whether its verdicts are complete.
    pub status: ColumnStatus,
    /// Why not, when not.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
    /// The claims its run supports (`SWP C0`, …); empty when none.
    pub claims: Vec<String>,
    /// The profile claims its run supports beside the classes (`SWP-RELAY`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile_claims: Vec<String>,
    /// Its claim line (the highest class and the profiles it does not cover), when any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub headline: String,
    /// Each class's status and reason.
    pub classes: Vec<ClassCell>,
    /// Count per verdict over its cells.
    pub counts: BTreeMap<String, usize>,
    /// The harness commit that ran it.
    pub runner_git_sha: String,
    /// The catalog digest it was judged with.
    pub catalog_sha256: String,
}

/// One class of a column.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ClassCell {
    /// `C0`..`C5`.
    pub class: String,
    /// Its status.
    pub status: String,
    /// Why.
    pub reason: String,
}

/// One vector as a row.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Row {
    /// Vector id.
    pub vector_id: String,
    /// What it checks.
    pub title: String,
    /// Namespace.
    pub namespace: String,
    /// The first requirement it names (the row's group), or `-`.
    pub requirement: String,
    /// Every requirement it names.
    pub requirements: Vec<String>,
    /// The strongest level among its requirements (`MUST`, `SHOULD`, `MAY`), or `-`.
    pub level: String,
    /// The lowest class whose namespaces include the vector's, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// One cell per column, in column order.
    pub cells: Vec<Cell>,
    /// One column meets the vector and another breaks it.
    pub disagree: bool,
    /// Some column breaks it.
    pub any_breaks: bool,
}

/// One verdict.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Cell {
    /// The verdict; absent when the column's run did not select the vector or left no report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Why, for anything but a pass (cut to a few hundred characters).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// A row where SUTs disagree.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Disagreement {
    /// Vector id.
    pub vector_id: String,
    /// The lowest class that requires it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Columns that meet it.
    pub meets: Vec<String>,
    /// Columns that break it.
    pub breaks: Vec<String>,
}

/// Totals.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub columns: usize,
    /// Cells by verdict (`absent` for a cell without one).
    pub cells: BTreeMap<String, usize>,
    /// Rows where SUTs disagree.
    pub disagreements: usize,
    /// Rows some column breaks.
    pub rows_with_breaks: usize,
}

/// One intermediary pair's summary.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PairCell {
    /// The intermediary.
    pub intermediary: String,
    /// The upstream stack.
    pub upstream: String,
    /// The column.
    pub label: String,
    /// Cells that meet their vector.
    pub meets: usize,
    /// Cells that break it.
    pub breaks: usize,
    /// Its claims.
    pub claims: Vec<String>,
}

/// What the matrix knows of a column before its report is read.
#[derive(Debug, Clone)]
pub struct ColumnSeed {
    /// The label.
    pub label: String,
    /// For a pair.
    pub pair: Option<Pair>,
    /// How its run ended, when it was run.
    pub run: Option<ColumnRun>,
    /// Why there is no report (its reading error, or the run's own words).
    pub missing: Option<String>,
}

/// Builds the matrix one report at a time.
pub struct Builder {
    columns: Vec<Column>,
    rows: BTreeMap<String, Row>,
    levels: BTreeMap<String, String>,
    class_of_ns: BTreeMap<String, String>,
}

/// `MUST` > `SHOULD` > `MAY`: the rank a row's level is chosen by.
fn rank(level: &str) -> u8 {
    match level.to_ascii_uppercase().as_str() {
        "MUST" | "MUST NOT" | "SHALL" | "SHALL NOT" | "REQUIRED" => 3,
        "SHOULD" | "SHOULD NOT" | "RECOMMENDED" => 2,
        "MAY" | "OPTIONAL" => 1,
        _ => 0,
    }
}

impl Builder {
    /// A builder for these columns, in this order.
    pub fn new(seeds: &[ColumnSeed]) -> Builder {
        let columns = seeds
            .iter()
            .map(|s| Column {
                label: s.label.clone(),
                name: String::new(),
                version: String::new(),
                reported: String::new(),
                pair: s.pair.clone(),
                report: None,
                page: None,
                status: ColumnStatus::NoReport,
                why: s.missing.clone().unwrap_or_default(),
                claims: Vec::new(),
                profile_claims: Vec::new(),
                headline: String::new(),
                classes: Vec::new(),
                counts: BTreeMap::new(),
                runner_git_sha: String::new(),
                catalog_sha256: String::new(),
            })
            .collect();
        Builder {
            columns,
            rows: BTreeMap::new(),
            levels: BTreeMap::new(),
            class_of_ns: BTreeMap::new(),
        }
    }

    /// Adds column `i`'s report (read from `<label>/report.json`).
    pub fn add(&mut self, i: usize, r: &LiteReport) {
        let n = self.columns.len();
        let Some(col) = self.columns.get_mut(i) else {
            return;
        };
        col.name.clone_from(&r.sut.name);
        col.version.clone_from(&r.sut.version);
        col.reported.clone_from(&r.sut.reported);
        col.report = Some(format!("{}/report.json", col.label));
        col.page = Some(format!("{}/report.html", col.label));
        col.claims.clone_from(&r.claims);
        col.profile_claims.clone_from(&r.profile_claims);
        col.headline.clone_from(&r.headline_claim);
        col.classes = r
            .classes
            .iter()
            .map(|c| ClassCell {
                class: c.class.clone(),
                status: c.status.clone(),
                reason: c.reason.clone(),
            })
            .collect();
        col.runner_git_sha.clone_from(&r.run.runner_git_sha);
        col.catalog_sha256 = r.catalog_digest().to_owned();
        (col.status, col.why) = if r.run.interrupted {
            (ColumnStatus::Incomplete, "the run was interrupted".into())
        } else if let Some(s) = &r.run.stopped_early {
            (ColumnStatus::Incomplete, format!("stopped early: {s}"))
        } else {
            (ColumnStatus::Complete, String::new())
        };
        for q in &r.requirements {
            self.levels
                .entry(q.id.clone())
                .or_insert_with(|| q.level.clone());
        }
        // The lowest class listing a namespace is the vector's class (classes are
        // cumulative, so a later class lists it again).
        let mut classes: Vec<_> = r.classes.iter().collect();
        classes.sort_by(|a, b| a.class.cmp(&b.class));
        for c in classes {
            for ns in &c.namespaces {
                self.class_of_ns
                    .entry(ns.namespace.clone())
                    .or_insert_with(|| c.class.clone());
            }
        }
        for x in r.all() {
            let row = self.rows.entry(x.vector_id.clone()).or_insert_with(|| Row {
                vector_id: x.vector_id.clone(),
                title: x.title.clone(),
                namespace: x.namespace.clone(),
                requirement: x
                    .requirements
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "-".into()),
                requirements: x.requirements.clone(),
                level: String::new(),
                class: None,
                cells: vec![Cell::default(); n],
                disagree: false,
                any_breaks: false,
            });
            if let Some(cell) = row.cells.get_mut(i) {
                *cell = Cell {
                    verdict: Some(x.verdict),
                    reason: if x.verdict == Verdict::Pass {
                        String::new()
                    } else {
                        x.detail.clone()
                    },
                };
            }
        }
    }

    /// Column `i` has no report: `why` says what was found instead.
    pub fn set_missing(&mut self, i: usize, why: String) {
        if let Some(c) = self.columns.get_mut(i) {
            c.status = ColumnStatus::NoReport;
            c.why = why;
        }
    }

    /// The finished document (`run` is the caller's).
    pub fn finish(mut self, run: MatrixRun) -> Matrix {
        let mut rows: Vec<Row> = std::mem::take(&mut self.rows).into_values().collect();
        let mut counts = Counts {
            columns: self.columns.len(),
            ..Counts::default()
        };
        let mut disagreements = Vec::new();
        for row in &mut rows {
            row.level = row
                .requirements
                .iter()
                .filter_map(|q| self.levels.get(q))
                .max_by_key(|l| rank(l))
                .cloned()
                .unwrap_or_else(|| "-".into());
            row.class = self.class_of_ns.get(&row.namespace).cloned();
            let (mut meets, mut breaks) = (Vec::new(), Vec::new());
            for (c, cell) in self.columns.iter_mut().zip(&row.cells) {
                let key = cell.verdict.map_or("absent", Verdict::as_str).to_owned();
                *c.counts.entry(key.clone()).or_default() += 1;
                *counts.cells.entry(key).or_default() += 1;
                match cell.verdict.map(Outcome::of) {
                    Some(Outcome::Meets) => meets.push(c.label.clone()),
                    Some(Outcome::Breaks) => breaks.push(c.label.clone()),
                    _ => {}
                }
            }
            row.any_breaks = !breaks.is_empty();
            row.disagree = !meets.is_empty() && !breaks.is_empty();
            if row.disagree {
                disagreements.push(Disagreement {
                    vector_id: row.vector_id.clone(),
                    class: row.class.clone(),
                    meets,
                    breaks,
                });
            }
        }
        rows.sort_by(|a, b| {
            (&a.namespace, &a.requirement, &a.vector_id).cmp(&(
                &b.namespace,
                &b.requirement,
                &b.vector_id,
            ))
        });
        counts.rows = rows.len();
        counts.disagreements = disagreements.len();
        counts.rows_with_breaks = rows.iter().filter(|r| r.any_breaks).count();
        let pairs = self
            .columns
            .iter()
            .filter_map(|c| {
                let p = c.pair.as_ref()?;
                let n = |k: &[&str]| {
                    k.iter()
                        .map(|v| c.counts.get(*v).copied().unwrap_or(0))
                        .sum()
                };
                Some(PairCell {
                    intermediary: p.intermediary.clone(),
                    upstream: p.upstream.clone(),
                    label: c.label.clone(),
                    meets: n(&["pass", "reject-code-not-observable"]),
                    breaks: n(&["fail", "timeout", "crash", "unsupported"]),
                    claims: c.claims.clone(),
                })
            })
            .collect();
        let catalogs: BTreeSet<String> = self
            .columns
            .iter()
            .map(|c| c.catalog_sha256.clone())
            .filter(|d| !d.is_empty())
            .collect();
        Matrix {
            schema_version: 1,
            run,
            harness_version: env!("CARGO_PKG_VERSION").to_owned(),
            columns: self.columns,
            rows,
            disagreements,
            counts,
            pairs,
            catalogs: catalogs.into_iter().collect(),
        }
    }
}

impl Matrix {
    /// The same document with its `run` block fixed, for committed snapshots.
    pub fn redacted(&self) -> Matrix {
        let mut m = self.clone();
        m.run = MatrixRun {
            timestamp_utc: "[redacted]".into(),
            command: vec!["[redacted]".into()],
            jobs: m.run.jobs,
            duration_ms: 0,
            peak_rss_kib: None,
            runs: m
                .run
                .runs
                .iter()
                .map(|r| ColumnRun {
                    duration_ms: 0,
                    ..r.clone()
                })
                .collect(),
        };
        for c in &mut m.columns {
            c.runner_git_sha = "[redacted]".into();
        }
        m
    }

    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        s.push('\n');
        s
    }
}
