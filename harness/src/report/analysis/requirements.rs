//! Requirement verdicts: one verdict for every registered requirement, derived from the
//! vector results of a report and the catalog's requirement → vector trace.

use crate::catalog::requirements::Testable;
use crate::catalog::Catalog;
use crate::report::result::{StepResult, VectorResult, Verdict};
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

/// A verdict for every requirement of the catalog, in document then ID order, from every
/// selected vector's result (`all`, executed or not) and the defects seen in passing.
pub fn verdicts(
    cat: &Catalog,
    all: &[VectorResult],
    seen: &[IncidentalSeen],
) -> Vec<RequirementVerdict> {
    let mut by_req: HashMap<&str, Vec<&VectorResult>> = HashMap::new();
    for r in all {
        for id in &r.requirements {
            by_req.entry(id.as_str()).or_default().push(r);
        }
    }
    crate::catalog::trace::rows(cat)
        .into_iter()
        .map(|row| {
            // A restatement is the same rule: the vectors of what it restates test it too.
            let mut ran: Vec<(&VectorResult, Verdict)> = by_req
                .get(row.id.as_str())
                .into_iter()
                .flatten()
                .map(|r| (*r, for_requirement(r, &row.id)))
                .collect();
            for t in &row.via {
                for r in by_req.get(t.as_str()).into_iter().flatten() {
                    if !ran.iter().any(|(x, _)| x.vector_id == r.vector_id) {
                        ran.push((r, for_requirement(r, t)));
                    }
                }
            }
            ran.sort_by(|a, b| a.0.vector_id.cmp(&b.0.vector_id));
            let (mut verdict, mut reason) = judge(&row, &ran);
            // A defect seen in passing counts once, under its own requirement, whatever
            // the vectors that name it showed.
            if let Some(i) = seen
                .iter()
                .find(|i| i.requirement == row.id || row.via.contains(&i.requirement))
            {
                verdict = if row.level.is_absolute() {
                    ReqVerdict::Fail
                } else {
                    ReqVerdict::Warn
                };
                reason = Some(format!(
                    "seen in passing while running {}: {}",
                    i.vectors.join(", "),
                    i.detail
                ));
            }
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
                vectors: ran.iter().map(|(r, _)| r.vector_id.clone()).collect(),
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

/// What vector result `r` says of requirement `req`: its verdict, or, where it judged its
/// steps one by one, the verdict of the steps that test `req`. A step that failed on
/// something else (its failure charged to other requirements) held for `req`; a step that
/// did not run shows nothing.
pub(crate) fn for_requirement(r: &VectorResult, req: &str) -> Verdict {
    let steps: Vec<&StepResult> = r
        .steps
        .iter()
        .filter(|s| s.requirements.iter().any(|x| x == req))
        .collect();
    if steps.is_empty() {
        return r.verdict;
    }
    let of = |s: &StepResult| match s.verdict {
        None => Verdict::Inconclusive,
        Some(v) if v.is_failure() && !s.broke.is_empty() && !s.broke.iter().any(|b| b == req) => {
            Verdict::Pass
        }
        Some(v) => v,
    };
    let rank = |v: Verdict| match v {
        _ if v.is_failure() => 4,
        Verdict::Pass => 0,
        Verdict::RejectCodeNotObservable => 1,
        _ => 2,
    };
    steps
        .iter()
        .map(|s| of(s))
        .max_by_key(|v| rank(*v))
        .unwrap_or(r.verdict)
}

/// A defect seen in passing, once per run: its requirement, what it was, and the vectors
/// that saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IncidentalSeen {
    /// The requirement it breaks.
    pub requirement: String,
    /// What makes observations the same defect.
    pub key: String,
    /// What was seen (the first observation's words).
    pub detail: String,
    /// The vectors that saw it, in id order.
    pub vectors: Vec<String>,
}

/// The incidental observations of a run, one per defect (requirement and key), in
/// requirement then key order.
pub fn incidental(all: &[VectorResult]) -> Vec<IncidentalSeen> {
    let mut by: BTreeMap<(String, String), IncidentalSeen> = BTreeMap::new();
    for r in all {
        for i in &r.incidental {
            let e = by
                .entry((i.requirement.clone(), i.key.clone()))
                .or_insert_with(|| IncidentalSeen {
                    requirement: i.requirement.clone(),
                    key: i.key.clone(),
                    detail: i.detail.clone(),
                    vectors: Vec::new(),
                });
            if !e.vectors.contains(&r.vector_id) {
                e.vectors.push(r.vector_id.clone());
            }
        }
    }
    let mut out: Vec<IncidentalSeen> = by.into_values().collect();
    for i in &mut out {
        i.vectors.sort();
    }
    out
}

fn judge(
    row: &crate::catalog::trace::Row,
    ran: &[(&VectorResult, Verdict)],
) -> (ReqVerdict, Option<String>) {
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
    if ran.iter().any(|(_, v)| v.is_failure()) {
        let v = if row.level.is_absolute() {
            ReqVerdict::Fail
        } else {
            ReqVerdict::Warn
        };
        return (v, None);
    }
    if ran.iter().any(|(_, v)| *v == Verdict::Pass) {
        return (ReqVerdict::Pass, None);
    }
    if ran
        .iter()
        .any(|(_, v)| *v == Verdict::RejectCodeNotObservable)
    {
        return (
            ReqVerdict::NotTestable,
            Some("the reject code is not observable on this SUT's wire".into()),
        );
    }
    let why = ran
        .iter()
        .find_map(|(r, _)| r.detail.clone())
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
