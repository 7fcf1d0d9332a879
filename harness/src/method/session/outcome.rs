//! A session vector's outcome from its steps: the vector's verdict (the first failing step
//! decides; then inconclusive, then a reject whose code could not be seen), the deciding
//! step's evidence, and one result per vector step with the requirements it tests, so the
//! report fails only the requirements of the steps that failed.

use super::steps::{Run, StepRecord};
use super::work::StepFailure;
use crate::catalog::vector::Vector;
use crate::method::contract::{weight, Judged, Outcome};
use crate::method::evaluate::fold_runs;
use crate::report::result::{StepResult, Verdict};

/// The failure that decides a group of records (the earliest of the heaviest verdict), with
/// its index in `records`.
pub(super) fn deciding<'a>(records: &[&'a StepRecord]) -> Option<(usize, &'a StepFailure)> {
    records
        .iter()
        .enumerate()
        .filter_map(|(k, r)| r.failures.first().map(|f| (k, f.as_ref())))
        .max_by(|(ka, a), (kb, b)| {
            weight(a.verdict)
                .cmp(&weight(b.verdict))
                // The earliest of equal weight.
                .then(kb.cmp(ka))
        })
}

/// The vector's outcome from its run.
pub fn of(v: &Vector, run: Run) -> Outcome {
    let all: Vec<&StepRecord> = run.records.iter().collect();
    let after = run.after.first();
    let decided = deciding(&all);
    let not_run = run.records.iter().filter(|r| r.not_run.is_some()).count();
    let last_code = run.records.iter().rev().find_map(|r| r.code.clone());
    let mut o = match (decided, after) {
        (Some((_, f)), a) if a.is_none() || f.verdict.is_failure() => failed(f),
        (_, Some(a)) => failed(a),
        _ => {
            let mut o = Outcome::pass(
                fold_runs(run.records.iter().map(|r| r.expected.clone())),
                fold_runs(run.records.iter().map(|r| r.observed.clone())),
            );
            o.observed_error_code = last_code.clone();
            o
        }
    };
    if o.observed_error_code.is_none() {
        o.observed_error_code = last_code;
    }
    let failing: Vec<&StepFailure> = run
        .records
        .iter()
        .filter_map(|r| r.failures.first())
        .map(AsRef::as_ref)
        .filter(|f| f.verdict.is_failure())
        .chain(run.after.iter().map(AsRef::as_ref))
        .collect();
    // The vector failed only on codes when every failing step did.
    o.code_only = if failing.is_empty() {
        None
    } else {
        failing
            .iter()
            .map(|f| f.code_only.clone())
            .collect::<Option<Vec<Vec<String>>>>()
            .map(|lists| {
                let mut all: Vec<String> = lists.into_iter().flatten().collect();
                all.sort();
                all.dedup();
                all
            })
    };
    // The rules the endpoint's messages broke join the vector's requirements.
    let mut broke: Vec<String> = failing.iter().flat_map(|f| f.broke.clone()).collect();
    broke.sort();
    broke.dedup();
    o.broke = broke;
    if o.verdict != Verdict::Pass {
        let mut extra = Vec::new();
        let more = failing.len().saturating_sub(1);
        if more > 0 {
            extra.push(format!("{more} more step(s) failed"));
        }
        if not_run > 0 {
            let why = run
                .records
                .iter()
                .find_map(|r| r.not_run.clone())
                .unwrap_or_default();
            extra.push(format!("{not_run} later step(s) {why}"));
        }
        if !extra.is_empty() {
            o.detail = Some(format!(
                "{} ({})",
                o.detail.take().unwrap_or_default(),
                extra.join("; ")
            ));
        }
        o.steps = step_results(v, &run.records);
    }
    o
}

fn failed(f: &StepFailure) -> Outcome {
    Outcome {
        expected: f.expected.clone(),
        observed: f.observed.clone(),
        observed_error_code: f.code.clone(),
        ..Outcome::stop(f.verdict, f.why.clone())
    }
}

/// One result per vector step, from the records.
fn step_results(v: &Vector, records: &[StepRecord]) -> Vec<StepResult> {
    let judged: Vec<Judged> = records
        .iter()
        .map(|r| {
            let first = r.failures.first();
            Judged {
                step: r.step,
                verdict: r.verdict(),
                why: r.not_run.clone().or_else(|| first.map(|f| f.why.clone())),
                // A failure charged elsewhere than to the step's requirements: a reject's
                // code, or the rule a message broke.
                code_only: first.and_then(|f| {
                    f.code_only
                        .clone()
                        .or_else(|| (!f.broke.is_empty()).then(|| f.broke.clone()))
                }),
            }
        })
        .collect();
    crate::method::contract::step_results(v, &judged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(step: usize, f: Option<Verdict>, not_run: bool) -> StepRecord {
        StepRecord {
            step,
            label: format!("step {}: ", step + 1),
            expected: "x".into(),
            observed: "y".into(),
            code: None,
            failures: f
                .map(|v| StepFailure::new(v, format!("step {}: why", step + 1), "x", "y"))
                .into_iter()
                .collect(),
            not_run: not_run.then(|| "not run: the connection closed during step 2".into()),
        }
    }

    fn vector() -> Vector {
        serde_saphyr::from_str(
            r#"
id: core_9999_x
title: t
namespace: core
requirements: [CORE-001, CORE-002]
methods: [session]
steps:
  - send: {raw: [{hex: "00"}]}
    expect: {accept: {}}
    requirements: [CORE-002]
  - send: {raw: [{hex: "00"}]}
    expect: {reject: {code: ERR_INVALID_FRAME, code_requirements: [ERR-004]}}
  - send: {raw: [{hex: "00"}]}
    expect: {accept: {}}
"#,
        )
        .unwrap()
    }

    #[test]
    fn the_first_failing_step_decides_and_each_step_keeps_its_requirements() {
        let v = vector();
        let run = Run {
            records: vec![
                rec(0, None, false),
                rec(1, Some(Verdict::Fail), false),
                rec(2, Some(Verdict::Inconclusive), false),
            ],
            after: Vec::new(),
        };
        let o = of(&v, run);
        assert_eq!(o.verdict, Verdict::Fail);
        assert!(
            o.detail.as_deref().unwrap().starts_with("step 2: why"),
            "{:?}",
            o.detail
        );
        assert_eq!(o.steps.len(), 3);
        assert_eq!(o.steps[0].requirements, ["CORE-002"]);
        assert_eq!(o.steps[0].verdict, Some(Verdict::Pass));
        assert_eq!(o.steps[1].requirements, ["CORE-001", "CORE-002", "ERR-004"]);
        assert_eq!(o.steps[2].verdict, Some(Verdict::Inconclusive));
    }

    #[test]
    fn steps_a_close_left_are_listed_not_run_and_do_not_decide() {
        let v = vector();
        let run = Run {
            records: vec![
                rec(0, None, false),
                rec(1, Some(Verdict::RejectCodeNotObservable), false),
                rec(2, None, true),
            ],
            after: Vec::new(),
        };
        let o = of(&v, run);
        assert_eq!(o.verdict, Verdict::RejectCodeNotObservable);
        assert_eq!(o.steps[2].verdict, None);
        assert!(o.detail.unwrap().contains("1 later step(s) not run"));
    }

    #[test]
    fn a_pass_lists_no_steps() {
        let v = vector();
        let run = Run {
            records: vec![
                rec(0, None, false),
                rec(1, None, false),
                rec(2, None, false),
            ],
            after: Vec::new(),
        };
        let o = of(&v, run);
        assert_eq!(o.verdict, Verdict::Pass);
        assert!(o.steps.is_empty());
    }
}
