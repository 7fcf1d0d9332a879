//! What running one vector's steps established, step by step, and the vector's outcome
//! made of it, sans-IO: a step that fails fails the vector with the requirements it broke,
//! and the steps after it still run while the session is usable; a set-up step that fails
//! leaves the vector undecided (its defect is an incidental observation, counted once per
//! run); the steps a closed transport or the vector's time left are listed as not run, with
//! the reason (`docs/mcp-native.md`, Attribution).

use super::stop::Stop;
use crate::method::contract::Outcome;
use crate::report::result::{Incidental, StepResult, Verdict};

/// One step of a vector, as it ran.
#[derive(Debug, Clone, Default)]
pub(super) struct StepRecord {
    /// The step ran (else `not_run` says why not).
    pub ran: bool,
    /// The requirements the step tests (IDs or aliases, as the vector writes them).
    pub requirements: Vec<String>,
    /// What it failed, in the order seen: its own checks and the violations charged to it.
    pub failures: Vec<Stop>,
    /// A set-up step that could not do its part: a defect, but not the vector's own (an
    /// incidental observation), and the vector cannot go on.
    pub setup_failure: Option<Stop>,
    /// Why it did not run.
    pub not_run: Option<String>,
    /// What it expected and observed, when it passed.
    pub expected: String,
    pub observed: String,
}

/// Why a vector's steps stopped before the last.
#[derive(Debug, Clone)]
pub(super) enum End {
    /// The vector does not apply (a capability, a version, nothing the harness may use).
    NotApplicable(Stop),
    /// The harness could not run it (the vector or the harness is wrong).
    Harness(Stop),
    /// A set-up step failed at this index: the vector could not get going.
    SetUp(usize),
    /// The transport closed, or the vector's time ran out: no later step can run. The
    /// verdict when no step failed, and why.
    Cut(Verdict, String),
}

/// A vector's steps, run.
#[derive(Debug, Clone, Default)]
pub(super) struct Ran {
    pub records: Vec<StepRecord>,
    pub end: Option<End>,
}

/// How much a failure weighs when several steps failed: a timeout outweighs a plain
/// failure (the vector's limit ended it), the rest are failures.
fn weight(v: Verdict) -> u8 {
    match v {
        Verdict::HarnessError => 3,
        Verdict::Timeout => 2,
        _ => 1,
    }
}

/// The vector's outcome: its verdict, the deciding step's evidence, the steps on their own
/// (for a vector of several steps that did not pass), and the incidental observations.
pub(super) fn outcome(ran: Ran, incidental: Vec<Incidental>) -> Outcome {
    let Ran { records, end } = ran;
    let not_run: Vec<(usize, &str)> = records
        .iter()
        .enumerate()
        .filter_map(|(k, r)| r.not_run.as_deref().map(|why| (k, why)))
        .collect();
    // The vector's own failures: every step's, but not a set-up step's inability to get
    // the vector going (that is not what the vector tests).
    let failing: Vec<(usize, &Stop)> = records
        .iter()
        .enumerate()
        .filter_map(|(k, r)| r.failures.first().map(|f| (k, f)))
        .collect();
    let mut o = if let Some(End::Harness(stop)) = &end {
        Outcome {
            expected: stop.expected.clone(),
            observed: stop.observed.clone(),
            ..Outcome::stop(Verdict::HarnessError, stop.why.clone())
        }
    } else if let Some(&(_, first)) = failing.first() {
        // The first failing step decides, unless a later one weighs more (the vector's
        // time ran out there).
        let deciding = failing.iter().fold(first, |best, (_, f)| {
            if weight(f.verdict) > weight(best.verdict) {
                f
            } else {
                best
            }
        });
        // Each failure is charged to the rules it broke, or to its step's requirements.
        let mut broke: Vec<String> = Vec::new();
        for (k, _) in &failing {
            let r = &records[*k];
            for f in &r.failures {
                if f.broke.is_empty() {
                    broke.extend(r.requirements.iter().cloned());
                } else {
                    broke.extend(f.broke.iter().cloned());
                }
            }
        }
        broke.sort();
        broke.dedup();
        let mut detail = deciding.why.clone();
        let mut extra = Vec::new();
        if failing.len() > 1 {
            extra.push(format!("{} more step(s) failed", failing.len() - 1));
        }
        if let Some((_, why)) = not_run.first() {
            extra.push(format!("{} later step(s) not run: {why}", not_run.len()));
        }
        if !extra.is_empty() {
            detail = format!("{detail} ({})", extra.join("; "));
        }
        Outcome {
            expected: deciding.expected.clone(),
            observed: deciding.observed.clone(),
            broke,
            ..Outcome::stop(deciding.verdict, detail)
        }
    } else {
        match &end {
            Some(End::NotApplicable(stop)) => Outcome {
                na_cause: stop.na,
                ..Outcome::stop(Verdict::NotApplicable, stop.why.clone())
            },
            Some(End::SetUp(k)) => {
                let stop = records.get(*k).and_then(|r| r.setup_failure.as_ref());
                let why = stop.map_or(String::new(), |s| s.why.clone());
                let rules = stop.map_or(String::new(), |s| s.broke.join(", "));
                Outcome {
                    expected: stop.map_or(String::new(), |s| s.expected.clone()),
                    observed: stop.map_or(String::new(), |s| s.observed.clone()),
                    ..Outcome::stop(
                        Verdict::Inconclusive,
                        format!(
                            "the vector could not get going: {why} (a set-up step, so this is no failure of the vector; the defect counts once per run under {rules})"
                        ),
                    )
                }
            }
            Some(End::Cut(verdict, why)) => Outcome::stop(*verdict, why.clone()),
            _ => {
                let last = records.iter().rev().find(|r| r.ran);
                Outcome::pass(
                    last.map_or(String::new(), |r| r.expected.clone()),
                    last.map_or(String::new(), |r| r.observed.clone()),
                )
            }
        }
    };
    if o.verdict != Verdict::Pass && o.verdict != Verdict::NotApplicable && records.len() > 1 {
        o.steps = records
            .iter()
            .enumerate()
            .map(|(k, r)| step_result(k, r))
            .collect();
    }
    o.incidental = incidental;
    o
}

/// One step's own result.
fn step_result(k: usize, r: &StepRecord) -> StepResult {
    let (verdict, mut broke, detail) = if !r.ran {
        (None, Vec::new(), r.not_run.clone())
    } else if let Some(f) = r.failures.first().or(r.setup_failure.as_ref()) {
        // Each failure is charged to the rules it broke, or to all the step tests.
        let broke: Vec<String> = r
            .failures
            .iter()
            .chain(r.setup_failure.iter())
            .flat_map(|f| {
                if f.broke.is_empty() {
                    r.requirements.clone()
                } else {
                    f.broke.clone()
                }
            })
            .collect();
        (Some(f.verdict), broke, Some(f.why.clone()))
    } else {
        (Some(Verdict::Pass), Vec::new(), None)
    };
    broke.sort();
    broke.dedup();
    let mut all = r.requirements.clone();
    all.sort();
    all.dedup();
    if broke == all {
        // Not narrower than what the step tests.
        broke.clear();
    }
    StepResult {
        step: k + 1,
        verdict,
        requirements: r.requirements.clone(),
        broke,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(reqs: &[&str]) -> StepRecord {
        StepRecord {
            ran: true,
            requirements: reqs.iter().map(|r| r.to_string()).collect(),
            ..StepRecord::default()
        }
    }

    #[test]
    fn a_failing_step_fails_the_vector_with_what_it_broke() {
        let mut a = rec(&["MCPN-021"]);
        let b = rec(&["MCPN-021"]);
        a.failures
            .push(Stop::fail("step 1: x", "e", "o").breaking(&["MCPN-020".into()]));
        let o = outcome(
            Ran {
                records: vec![a, b],
                end: None,
            },
            Vec::new(),
        );
        assert_eq!(o.verdict, Verdict::Fail);
        assert_eq!(o.broke, vec!["MCPN-020".to_owned()]);
        assert_eq!(o.steps.len(), 2);
        assert_eq!(o.steps[0].verdict, Some(Verdict::Fail));
        assert_eq!(o.steps[0].broke, vec!["MCPN-020".to_owned()]);
        assert_eq!(o.steps[1].verdict, Some(Verdict::Pass));
    }

    #[test]
    fn a_failed_set_up_leaves_the_vector_undecided_and_later_steps_unrun() {
        let mut a = rec(&["MCPN-001"]);
        a.setup_failure = Some(
            Stop::fail("step 1: initialize answered with an error", "e", "o")
                .breaking(&["MCPN-001".into()]),
        );
        let b = StepRecord {
            not_run: Some("not run: step 1 (set-up) failed".into()),
            requirements: vec!["MCPN-004".into()],
            ..StepRecord::default()
        };
        let o = outcome(
            Ran {
                records: vec![a, b],
                end: Some(End::SetUp(0)),
            },
            Vec::new(),
        );
        assert_eq!(o.verdict, Verdict::Inconclusive);
        assert!(o.broke.is_empty());
        assert_eq!(o.steps[0].verdict, Some(Verdict::Fail));
        assert_eq!(o.steps[1].verdict, None);
        assert!(o.steps[1]
            .detail
            .as_deref()
            .unwrap_or("")
            .contains("set-up"));
    }

    #[test]
    fn a_cut_without_a_failure_is_no_pass() {
        let a = rec(&["MCPN-021"]);
        let b = StepRecord {
            not_run: Some("not run: the vector's time ran out".into()),
            ..StepRecord::default()
        };
        let o = outcome(
            Ran {
                records: vec![a, b],
                end: Some(End::Cut(Verdict::Timeout, "out of time".into())),
            },
            Vec::new(),
        );
        assert_eq!(o.verdict, Verdict::Timeout);
        assert_eq!(o.steps[1].verdict, None);
    }

    #[test]
    fn a_passing_vector_lists_no_steps_but_keeps_its_incidentals() {
        let i = Incidental {
            requirement: "MCPN-020".into(),
            key: "MCPN-020 stdout: not a JSON-RPC message".into(),
            detail: "banner".into(),
        };
        let o = outcome(
            Ran {
                records: vec![rec(&["MCPN-004"]), rec(&["MCPN-004"])],
                end: None,
            },
            vec![i.clone()],
        );
        assert_eq!(o.verdict, Verdict::Pass);
        assert!(o.steps.is_empty());
        assert_eq!(o.incidental, vec![i]);
    }
}
