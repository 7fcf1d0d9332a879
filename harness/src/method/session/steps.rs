//! The step loop of a session vector: wait for each step's clock, confirm pending accepts,
//! perform the action, then judge each expectation. The first failing step decides.

use super::actions::perform;
use super::confirm::{confirm, Pending};
use super::conv::Conv;
use super::judge::{self, Ctx};
use super::{Inputs, StepFailure};
use crate::evaluate::{describe_expected, fold_runs};
use crate::materialize::{ConcreteStep, Expectation};
use crate::model::Verdict;
use std::time::Duration;

/// What a passing vector showed: expected and observed, one entry per step, folded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Expected, per step.
    pub expected: String,
    /// Observed, per step.
    pub observed: String,
    /// The last canonical code observed.
    pub code: Option<String>,
}

/// The label of a step in messages.
fn label(n: usize, s: &ConcreteStep) -> String {
    crate::method::codec::step_label(n, s)
}

/// Whether a step's accepts are confirmed by the answers to its requests.
fn by_answer(expect: &[Expectation]) -> bool {
    expect
        .iter()
        .any(|e| matches!(e, Expectation::Accept { answered: true, .. }))
}

/// Whether a step's accepts allow the addressed profile to refuse the frame.
fn may_refuse(expect: &[Expectation]) -> bool {
    expect.iter().any(|e| {
        matches!(
            e,
            Expectation::Accept {
                profile_may_refuse: true,
                ..
            }
        )
    })
}

/// Whether a step's accept allows a reject too.
fn allows_reject(expect: &[Expectation]) -> bool {
    expect.iter().any(|e| {
        matches!(
            e,
            Expectation::Accept {
                reject_allowed: true,
                ..
            }
        )
    })
}

/// Runs the steps; `now_origin` is the wall-clock ms the vector's clocks count from.
///
/// An endpoint may end the stream after a reject it signalled with an error frame
/// (CORE-039). Where the manifest does not say which it does (`reject_signal.after`), a
/// later step that fails only because the connection closed is inconclusive, not a fail.
pub fn run_steps(
    conv: &mut Conv<'_>,
    steps: &[ConcreteStep],
    inputs: &mut Inputs<'_>,
    now_origin: u64,
) -> Result<Summary, Box<StepFailure>> {
    let mut rejected_at = None;
    let declared = conv.spec.reject_signal.after.is_some();
    run(conv, steps, inputs, now_origin, &mut rejected_at).map_err(|mut f| {
        if let Some(at) = rejected_at {
            if !declared && f.verdict == Verdict::Fail && f.observed == "close" {
                f.verdict = Verdict::Inconclusive;
                f.why = format!(
                    "{} (the endpoint ended the stream after the reject of {at}, which CORE-039 allows: declare reject_signal.after in the manifest to make this a failure or the vector not applicable)",
                    f.why
                );
            }
        }
        f
    })
}

/// Records a judged reject: the code it showed, and the step it happened at (always for a
/// `reject`; for a `denied` only when it came as a reject with a code). A failure carries
/// the last code seen, for the report.
fn graded(
    r: Result<(String, Option<String>), Box<StepFailure>>,
    always_marks: bool,
    label: &str,
    last_code: &mut Option<String>,
    rejected_at: &mut Option<String>,
) -> Result<String, Box<StepFailure>> {
    match r {
        Ok((o, code)) => {
            if always_marks || code.is_some() {
                *rejected_at = Some(label.trim_end_matches(": ").to_owned());
            }
            if code.is_some() {
                *last_code = code;
            }
            Ok(o)
        }
        Err(mut f) => {
            if f.code.is_none() {
                f.code.clone_from(last_code);
            }
            Err(f)
        }
    }
}

fn run(
    conv: &mut Conv<'_>,
    steps: &[ConcreteStep],
    inputs: &mut Inputs<'_>,
    now_origin: u64,
    rejected_at: &mut Option<String>,
) -> Result<Summary, Box<StepFailure>> {
    let mut pending: Vec<Pending> = Vec::new();
    let mut last_code = None;
    let mut summary_exp = Vec::new();
    let mut summary_obs = Vec::new();
    let mut on_second = false;
    for (i, s) in steps.iter().enumerate() {
        let label = label(steps.len(), s);
        let exp_desc = describe_expected(&s.expect);
        // Wait for the step's clock, confirming what is pending before the clock moves on.
        let due = conv.start + Duration::from_millis(s.now_ms.saturating_sub(now_origin));
        if due > conv.clock.now() {
            if due > conv.hard_deadline {
                return Err(StepFailure::new(
                    Verdict::Timeout,
                    format!("{label}the step is due after the vector's hard limit"),
                    &exp_desc,
                    "",
                ));
            }
            confirm(conv, &mut pending, inputs.params, inputs.requests, false)?;
            conv.clock.sleep_until(due);
        }
        if s.second != on_second {
            // Accepts pending on the connection being left are confirmed on it first.
            confirm(conv, &mut pending, inputs.params, inputs.requests, false)?;
            if !conv.switch(if s.second { "second" } else { "first" }) {
                return Err(StepFailure::new(
                    Verdict::HarnessError,
                    format!("{label}the step needs the second connection, which is not open"),
                    &exp_desc,
                    "",
                ));
            }
            on_second = s.second;
        }
        let only_accepts = !s.expect.is_empty()
            && s.expect
                .iter()
                .all(|e| matches!(e, Expectation::Accept { .. }));
        let reject_allowed = allows_reject(&s.expect);
        if !only_accepts || reject_allowed {
            confirm(conv, &mut pending, inputs.params, inputs.requests, false)?;
        }
        let sent = perform(conv, &s.action, s.upstream, inputs, &label, &exp_desc)?;
        if sent.to_endpoint {
            inputs.profiles.sent(conv.t(), &sent.octets);
        }
        if reject_allowed {
            // Earlier accepts are confirmed above, so a close here cannot hide them.
            let c = Ctx {
                label: &label,
                expected: &exp_desc,
            };
            if let Some(o) = judge::reject_allowed(conv, &c)? {
                summary_exp.push(exp_desc);
                summary_obs.push(o);
                continue;
            }
        }
        if only_accepts {
            // Only frames sent to the endpoint have accepts to confirm.
            if sent.to_endpoint {
                pending.push(Pending {
                    label: label.clone(),
                    ids: sent.ids,
                    profile_may_refuse: may_refuse(&s.expect),
                    answered: by_answer(&s.expect),
                });
            }
            summary_exp.push(exp_desc);
            summary_obs.push("accepted".to_owned());
            if i + 1 == steps.len() {
                confirm(conv, &mut pending, inputs.params, inputs.requests, true)?;
            }
            continue;
        }
        let c = Ctx {
            label: &label,
            expected: &exp_desc,
        };
        let mut obs_desc = Vec::new();
        if s.expect.is_empty() {
            obs_desc.push(judge::nothing(conv, &label)?);
        }
        for exp in &s.expect {
            let seen = match exp {
                Expectation::Accept {
                    profile_may_refuse,
                    answered,
                    ..
                } => {
                    pending.push(Pending {
                        label: label.clone(),
                        ids: sent.msg_id.iter().cloned().collect(),
                        profile_may_refuse: *profile_may_refuse,
                        answered: *answered,
                    });
                    Ok("accepted".to_owned())
                }
                Expectation::Reject { terminates, .. } => {
                    let r = judge::reject(conv, exp, *terminates, inputs, &c);
                    graded(r, true, &label, &mut last_code, rejected_at)
                }
                // A refusal in the request's own profile (no code) leaves the stream as it
                // was; a reject is one like any other.
                Expectation::Denied(reject) => {
                    let r = judge::denied(conv, reject, sent.msg_id.as_ref(), inputs, &c);
                    graded(r, false, &label, &mut last_code, rejected_at)
                }
                Expectation::Close => judge::close(conv, &label),
                Expectation::Silence { ms } => judge::silence(conv, *ms, &c),
                Expectation::Reply(p) => judge::reply(conv, p, sent.msg_id.as_ref(), inputs, &c),
                Expectation::A2aTasks(tasks) => {
                    let deadline = conv.step_deadline();
                    let silence = Duration::from_millis(conv.spec.timing.silence_ms);
                    super::a2a::tasks(conv, tasks, deadline, silence, inputs.p1_form).map_err(|f| {
                        match f {
                            super::a2a::TasksFailure::Deadline(why, o) => StepFailure::new(
                                Verdict::Timeout,
                                format!("{label}{why}"),
                                &exp_desc,
                                o,
                            ),
                            super::a2a::TasksFailure::Wrong(why, o) => c.fail(why, o),
                        }
                    })
                }
                Expectation::Stream(st) => judge::stream(conv, st, &sent, &c),
                Expectation::Flow(items) => {
                    super::profiles::flow(conv, &mut inputs.profiles, items, inputs.p1_form, &c)
                }
                Expectation::ErrorJson(j) => judge::error_json(conv, j, &c),
                Expectation::Identity => judge::identity(conv, sent.msg_id.as_ref(), inputs, &c),
                Expectation::Forwarded => judge::forwarded(conv, &sent.octets, s.upstream, &c),
                Expectation::ForwardedPayload => {
                    judge::forwarded_payload(conv, &sent.octets, s.upstream, &c)
                }
                Expectation::Nothing => continue,
            };
            obs_desc.push(seen?);
        }
        summary_exp.push(exp_desc);
        summary_obs.push(obs_desc.join("; "));
    }
    confirm(conv, &mut pending, inputs.params, inputs.requests, true)?;
    Ok(Summary {
        expected: fold_runs(summary_exp),
        observed: fold_runs(summary_obs),
        code: last_code,
    })
}
