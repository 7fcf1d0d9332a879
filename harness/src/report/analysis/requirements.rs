//! Requirement verdicts: one verdict for every registered requirement, derived from the
//! vector results of a report and the catalog's requirement → vector trace.

use crate::catalog::requirements::Testable;
use crate::catalog::Catalog;
use crate::model::{VectorResult, Verdict};
use crate::report::model::Report;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// The verdict on one requirement.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ReqVerdict {
    /// A vector naming it failed and it is absolute (MUST, SHALL, REQUIRED).
    Fail,
    /// A vector naming it failed and it is not absolute (a SHOULD or MAY that failed).
    Warn,
    /// Every executed vector naming it passed.
    Pass,
    /// Its vectors ran, none applied to this SUT (manifest claims, SUT support).
    NotApplicable,
    /// No test can check it (a process duty), or this SUT's wire hides what would show it.
    NotTestable,
    /// Testable, but no vector in the catalog names it.
    Uncovered,
    /// It has vectors, but none of them was in this run's selection (or shard).
    NotRun,
}

impl ReqVerdict {
    /// Every verdict, in display order (worst first).
    pub const ALL: [ReqVerdict; 7] = [
        ReqVerdict::Fail,
        ReqVerdict::Warn,
        ReqVerdict::Pass,
        ReqVerdict::NotApplicable,
        ReqVerdict::NotTestable,
        ReqVerdict::Uncovered,
        ReqVerdict::NotRun,
    ];

    /// Kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReqVerdict::Fail => "fail",
            ReqVerdict::Warn => "warn",
            ReqVerdict::Pass => "pass",
            ReqVerdict::NotApplicable => "not-applicable",
            ReqVerdict::NotTestable => "not-testable",
            ReqVerdict::Uncovered => "uncovered",
            ReqVerdict::NotRun => "not-run",
        }
    }
}

/// One requirement's verdict with what it rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RequirementVerdict {
    /// Canonical ID.
    pub id: String,
    /// Source document stem.
    pub document: String,
    /// Section of the document.
    pub section: String,
    /// RFC 2119 level.
    pub level: String,
    /// The verdict.
    pub verdict: ReqVerdict,
    /// The vectors of this run that name it, in id order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vectors: Vec<String>,
    /// Why, for not-applicable, not-testable, uncovered and not-run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// One line in our words.
    pub summary: String,
}

/// A verdict for every requirement of the catalog, in document then ID order.
pub fn verdicts(cat: &Catalog, rep: &Report) -> Vec<RequirementVerdict> {
    let all = rep.all_results();
    let mut by_req: HashMap<&str, Vec<&VectorResult>> = HashMap::new();
    for r in &all {
        for id in &r.requirements {
            by_req.entry(id.as_str()).or_default().push(r);
        }
    }
    crate::trace::rows(cat)
        .into_iter()
        .map(|row| {
            // A restatement is the same rule: the vectors of what it restates test it too.
            let mut ran = by_req.get(row.id.as_str()).cloned().unwrap_or_default();
            for t in &row.via {
                for r in by_req.get(t.as_str()).into_iter().flatten() {
                    if !ran.iter().any(|x| x.vector_id == r.vector_id) {
                        ran.push(r);
                    }
                }
            }
            ran.sort_by(|a, b| a.vector_id.cmp(&b.vector_id));
            let (verdict, mut reason) = judge(&row, &ran);
            if row.testable == Testable::Process {
                // The registry says why no test can check it.
                if let Some(why) = cat
                    .requirements
                    .by_id
                    .get(&row.id)
                    .and_then(|e| e.req.reason.clone())
                {
                    reason = Some(format!("process duty: {why}"));
                }
            }
            RequirementVerdict {
                vectors: ran.iter().map(|r| r.vector_id.clone()).collect(),
                id: row.id,
                document: row.document,
                section: row.section,
                level: row.level.as_str().to_owned(),
                verdict,
                reason,
                summary: row.summary,
            }
        })
        .collect()
}

fn judge(row: &crate::trace::Row, ran: &[&VectorResult]) -> (ReqVerdict, Option<String>) {
    if row.testable == Testable::Process {
        return (ReqVerdict::NotTestable, Some("process duty".into()));
    }
    if row.vectors.is_empty() && ran.is_empty() {
        return (ReqVerdict::Uncovered, None);
    }
    if ran.is_empty() {
        return (
            ReqVerdict::NotRun,
            Some(format!(
                "none of its {} vector(s) was in this run",
                row.vectors.len()
            )),
        );
    }
    if ran.iter().any(|r| r.verdict.is_failure()) {
        let v = if row.level.is_absolute() {
            ReqVerdict::Fail
        } else {
            ReqVerdict::Warn
        };
        return (v, None);
    }
    if ran.iter().any(|r| r.verdict == Verdict::Pass) {
        return (ReqVerdict::Pass, None);
    }
    if ran
        .iter()
        .any(|r| r.verdict == Verdict::RejectCodeNotObservable)
    {
        return (
            ReqVerdict::NotTestable,
            Some("the reject code is not observable on this SUT's wire".into()),
        );
    }
    let why = ran
        .iter()
        .find_map(|r| r.detail.clone())
        .unwrap_or_else(|| "no vector applies to this SUT".into());
    (ReqVerdict::NotApplicable, Some(why))
}

/// Verdicts counted by level, then by verdict name.
pub fn counts(v: &[RequirementVerdict]) -> BTreeMap<String, BTreeMap<String, usize>> {
    let mut m: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for r in v {
        *m.entry(r.level.clone())
            .or_default()
            .entry(r.verdict.as_str().to_owned())
            .or_default() += 1;
    }
    m
}

/// Verdicts counted by verdict alone, in [`ReqVerdict::ALL`] order (zeros included).
pub fn totals(v: &[RequirementVerdict]) -> Vec<(ReqVerdict, usize)> {
    ReqVerdict::ALL
        .iter()
        .map(|k| (*k, v.iter().filter(|r| r.verdict == *k).count()))
        .collect()
}
