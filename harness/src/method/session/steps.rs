//! The step loop of a session vector: wait for each step's clock, confirm pending accepts,
//! perform the action, enter what was sent in the ledger, then judge each expectation.
//! Every step gets its own verdict: a failing step does not end the vector while the
//! connection stays open, a refusal that arrives late is charged to the step whose frame it
//! refuses, and the steps a close left unrun are listed with the reason.

use super::actions::perform;
use super::confirm::{confirm, drain, Pending};
use super::conv::Conv;
use super::judge::{self, Ctx};
use super::judge_reply;
use super::ledger::{Fate, Late, Signal};
use super::work::{Inputs, StepFailure};
use crate::method::evaluate::describe_expected;
use crate::plan::materialize::{ConcreteStep, Expectation};
use crate::report::result::Verdict;
use std::time::Duration;

/// What one concrete step showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepRecord {
    /// The index of the vector step it comes from.
    pub step: usize,
    /// Its label in messages (`step 3: `, or empty for a one-step vector).
    pub label: String,
    /// What it expected, in one line.
    pub expected: String,
    /// What it observed, in a few words (empty when it did not run).
    pub observed: String,
    /// The canonical code of the reject it judged, if any.
    pub code: Option<String>,
    /// Why it did not pass, first failure first: the first decides its verdict.
    pub failures: Vec<Box<StepFailure>>,
    /// Why it did not run at all.
    pub not_run: Option<String>,
}

impl StepRecord {
    /// Its verdict: `None` when it did not run.
    pub fn verdict(&self) -> Option<Verdict> {
        if self.not_run.is_some() {
            return None;
        }
        Some(self.failures.first().map_or(Verdict::Pass, |f| f.verdict))
    }
}

/// What a session vector's steps showed, one record per concrete step.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Run {
    /// One per concrete step, in order.
    pub records: Vec<StepRecord>,
    /// Failures of the vector as a whole, after its last step (a relay's publisher
    /// acknowledgements against its declaration).
    pub after: Vec<Box<StepFailure>>,
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

/// What a step expects of the frames it sends, for crediting refusals.
fn fate(expect: &[Expectation]) -> Fate {
    if expect.iter().any(|e| {
        matches!(
            e,
            Expectation::Reject { .. } | Expectation::Denied(_) | Expectation::Close
        )
    }) {
        Fate::Reject
    } else if expect
        .iter()
        .any(|e| matches!(e, Expectation::Answer { .. }))
    {
        Fate::Answer
    } else if !expect.is_empty()
        && expect
            .iter()
            .all(|e| matches!(e, Expectation::Accept { .. }))
        && !allows_reject(expect)
    {
        Fate::Accept
    } else {
        Fate::Other
    }
}

/// Whether a code is decided above the core (by the profile the frame was dispatched to).
fn profile_level(code: &str) -> bool {
    code.parse::<crate::frames::ErrorCode>()
        .is_ok_and(|c| c.is_profile_level())
}

/// The records of one vector's run, with the close-after-reject rule (CORE-039) applied
/// where a step's failure is charged.
struct Book {
    records: Vec<StepRecord>,
    /// The label of the last step whose frame was refused, for CORE-039.
    rejected_at: Option<String>,
    /// Whether the manifest says what the endpoint does after a reject.
    after_declared: bool,
}

impl Book {
    /// Charges a failure to concrete step `i`. An endpoint may end the stream after a
    /// reject it signalled with an error frame (CORE-039); where the manifest does not say
    /// which it does (`reject_signal.after`), a step that fails only because the connection
    /// closed after an earlier reject is inconclusive, not a fail.
    fn charge(&mut self, i: usize, mut f: Box<StepFailure>) {
        if let Some(at) = &self.rejected_at {
            if !self.after_declared && f.verdict == Verdict::Fail && f.observed == "close" {
                f.verdict = Verdict::Inconclusive;
                f.why = format!(
                    "{} (the endpoint ended the stream after the reject of {at}, which CORE-039 allows: declare reject_signal.after in the manifest to make this a failure or the vector not applicable)",
                    f.why
                );
            }
        }
        if let Some(r) = self.records.get_mut(i) {
            r.failures.push(f);
        }
    }

    /// Records a judged reject at concrete step `i`: it ends the stream legitimately.
    fn rejected(&mut self, i: usize) {
        if let Some(r) = self.records.get(i) {
            self.rejected_at = Some(r.label.trim_end_matches(": ").to_owned());
        }
    }
}

/// Charges the late observations the ledger took out of the stream to the steps their
/// frames belong to.
fn settle_late(conv: &mut Conv<'_>, steps: &[ConcreteStep], book: &mut Book) {
    for Late {
        frame,
        signal,
        t_ms,
        also_possible,
    } in conv.ledger.take_late()
    {
        let Some(f) = conv.ledger.frames.get(frame).cloned() else {
            continue;
        };
        let Some(i) = f.step else { continue };
        let Some(s) = steps.get(i) else { continue };
        let label = book
            .records
            .get(i)
            .map(|r| r.label.clone())
            .unwrap_or_default();
        let what = signal.describe();
        match f.fate {
            Fate::Accept => {
                // A profile-level refusal shows the core took and dispatched the frame,
                // which is what a core vector (or an accept the profile may refuse) asks; a
                // profile's own error message is one by where it comes from.
                let by_profile = matches!(signal, Signal::ProfileErr { .. })
                    || signal.code().is_some_and(profile_level);
                let dispatched = by_profile && (conv.core_layer || may_refuse(&s.expect));
                if dispatched {
                    conv.note(format!(
                        "{what} credited to {label}is a profile-level refusal: the core accepted and dispatched the frame"
                    ));
                    continue;
                }
                let who = if also_possible.is_empty() {
                    "on its msg_id".to_owned()
                } else {
                    let others: Vec<String> = conv
                        .ledger
                        .steps_of(&also_possible)
                        .iter()
                        .map(|k| (k + 1).to_string())
                        .collect();
                    format!(
                        "carrying no msg_id the harness sent, while only frames expected to be accepted were open (also those of concrete step(s) {})",
                        others.join(", ")
                    )
                };
                let mut failure = StepFailure::new(
                    Verdict::Fail,
                    format!(
                        "{label}refused with {what} ({who}, {} ms after it was sent), expected accept",
                        t_ms.saturating_sub(f.t_ms)
                    ),
                    "accept",
                    format!("reject {}", signal.code().unwrap_or("(no canonical code)")),
                );
                failure.code = signal.code().map(str::to_owned);
                book.charge(i, failure);
            }
            Fate::Reject => conv.note(format!(
                "{what} credited to {label}a frame already judged as refused or not"
            )),
            Fate::Answer | Fate::Other | Fate::Probe => {
                if let Signal::Error(code) = &signal {
                    conv.note(format!(
                        "error frame {code} credited to {label}after its step was judged"
                    ));
                }
            }
        }
    }
}

/// Runs the steps; `now_origin` is the wall-clock ms the vector's clocks count from.
pub fn run_steps(
    conv: &mut Conv<'_>,
    steps: &[ConcreteStep],
    inputs: &mut Inputs<'_>,
    now_origin: u64,
) -> Run {
    let mut book = Book {
        records: Vec::with_capacity(steps.len()),
        rejected_at: None,
        after_declared: conv.spec.reject_signal.after.is_some(),
    };
    let mut pending: Vec<Pending> = Vec::new();
    let mut on_second = false;
    let mut stopped: Option<String> = None;
    for (i, s) in steps.iter().enumerate() {
        let label = label(steps.len(), s);
        let exp_desc = describe_expected(&s.expect);
        book.records.push(StepRecord {
            step: s.step,
            label: label.clone(),
            expected: exp_desc.clone(),
            observed: String::new(),
            code: None,
            failures: Vec::new(),
            not_run: stopped.clone(),
        });
        if stopped.is_some() {
            continue;
        }
        conv.ledger.current = Some(i);
        if let Err(f) = step(
            conv,
            steps,
            i,
            &label,
            &exp_desc,
            inputs,
            now_origin,
            &mut pending,
            &mut on_second,
            &mut book,
        ) {
            let at = f.at.unwrap_or(i);
            book.charge(at, f);
        }
        settle_late(conv, steps, &mut book);
        if conv.is_closed() && i + 1 < steps.len() {
            stopped = Some(format!(
                "not run: the connection closed during {}",
                if label.is_empty() {
                    "the vector".to_owned()
                } else {
                    label.trim_end_matches(": ").to_owned()
                }
            ));
        }
    }
    conv.ledger.current = None;
    if stopped.is_none() {
        if let Err(f) = confirm(conv, &mut pending, inputs.params, inputs.requests, true) {
            let at = f.at.unwrap_or(steps.len().saturating_sub(1));
            book.charge(at, f);
        }
        drain(conv, inputs.params, inputs.requests);
    }
    settle_late(conv, steps, &mut book);
    let mut after = Vec::new();
    if let Some(l) = &conv.publisher_acks {
        if let Err(why) = l.check() {
            after.push(StepFailure::new(
                Verdict::Fail,
                why,
                "publisher acknowledgements as declared",
                "",
            ));
        }
    }
    Run {
        records: book.records,
        after,
    }
}

/// One concrete step: its clock, its connection, the confirmation of earlier accepts, its
/// action and its expectations. `Err` is a failure, charged to the step it names (`at`)
/// or to this one.
#[expect(
    clippy::too_many_arguments,
    reason = "the loop's state, passed down once"
)]
fn step(
    conv: &mut Conv<'_>,
    steps: &[ConcreteStep],
    i: usize,
    label: &str,
    exp_desc: &str,
    inputs: &mut Inputs<'_>,
    now_origin: u64,
    pending: &mut Vec<Pending>,
    on_second: &mut bool,
    book: &mut Book,
) -> Result<(), Box<StepFailure>> {
    let s = &steps[i];
    // Wait for the step's clock, confirming what is pending before the clock moves on.
    let due = conv.tl.start + Duration::from_millis(s.now_ms.saturating_sub(now_origin));
    if due > conv.tl.now() {
        if due > conv.tl.hard_deadline {
            return Err(StepFailure::new(
                Verdict::Timeout,
                format!("{label}the step is due after the vector's hard limit"),
                exp_desc,
                "",
            ));
        }
        confirm(conv, pending, inputs.params, inputs.requests, false)?;
        // A cancelled run stops waiting; its outcome is the interruption's (`drive`).
        conv.tl.sleep_until(due);
    }
    if s.second != *on_second {
        // Accepts pending on the connection being left are confirmed on it first.
        confirm(conv, pending, inputs.params, inputs.requests, false)?;
        if !conv.switch(if s.second { "second" } else { "first" }) {
            return Err(StepFailure::new(
                Verdict::HarnessError,
                format!("{label}the step needs the second connection, which is not open"),
                exp_desc,
                "",
            ));
        }
        *on_second = s.second;
    }
    let only_accepts = !s.expect.is_empty()
        && s.expect
            .iter()
            .all(|e| matches!(e, Expectation::Accept { .. }));
    let reject_allowed = allows_reject(&s.expect);
    if !only_accepts || reject_allowed {
        confirm(conv, pending, inputs.params, inputs.requests, false)?;
    }
    let sent = perform(conv, &s.action, s.upstream, inputs, label, exp_desc)?;
    if sent.to_endpoint {
        inputs.profiles.sent(conv.t(), &sent.octets);
        let t = conv.t();
        let f = fate(&s.expect);
        if sent.ids.is_empty() {
            // Octets whose msg_id cannot be read: a refusal of them can carry no msg_id
            // of ours, so it is credited to them while they are the one frame open.
            if !sent.octets.is_empty() {
                conv.ledger.sent(Some(i), None, f, t);
            }
        } else {
            for id in &sent.ids {
                conv.ledger.sent(Some(i), Some(id.clone()), f, t);
            }
        }
    }
    let record = |book: &mut Book, observed: String| {
        if let Some(r) = book.records.get_mut(i) {
            r.observed = observed;
        }
    };
    if reject_allowed {
        // Earlier accepts are confirmed above, so a close here cannot hide them.
        let c = Ctx {
            label,
            expected: exp_desc,
        };
        if let Some(o) = judge::reject_allowed(conv, &c)? {
            record(book, o);
            conv.ledger.settle_step(i, None);
            return Ok(());
        }
    }
    if only_accepts {
        // Only frames sent to the endpoint have accepts to confirm.
        if sent.to_endpoint {
            pending.push(Pending {
                step: i,
                label: label.to_owned(),
                ids: sent.ids,
                profile_may_refuse: may_refuse(&s.expect),
                answered: by_answer(&s.expect),
            });
        }
        record(book, "accepted".to_owned());
        conv.ledger.settle_step(i, Some(Fate::Accept));
        return Ok(());
    }
    let c = Ctx {
        label,
        expected: exp_desc,
    };
    let mut obs_desc = Vec::new();
    let mut failure = None;
    if s.expect.is_empty() {
        match judge::nothing(conv, label) {
            Ok(o) => obs_desc.push(o),
            Err(f) => failure = Some(f),
        }
    }
    for exp in &s.expect {
        if failure.is_some() {
            break;
        }
        let seen = match exp {
            Expectation::Accept {
                profile_may_refuse,
                answered,
                ..
            } => {
                pending.push(Pending {
                    step: i,
                    label: label.to_owned(),
                    ids: sent.msg_id.iter().cloned().collect(),
                    profile_may_refuse: *profile_may_refuse,
                    answered: *answered,
                });
                Ok("accepted".to_owned())
            }
            Expectation::Reject { terminates, .. } => {
                let r = judge::reject(conv, exp, *terminates, inputs, &c);
                graded(r, true, i, book)
            }
            // A refusal in the request's own profile (no code) leaves the stream as it
            // was; a reject is one like any other.
            Expectation::Denied(reject) => {
                let r = judge::denied(conv, reject, sent.msg_id.as_ref(), inputs, &c);
                graded(r, false, i, book)
            }
            Expectation::Answer { code, also } => {
                judge::answer(conv, &sent, code.as_deref(), also, &c)
            }
            Expectation::Close => judge::close(conv, label),
            Expectation::Silence {
                ms,
                refusal_allowed,
            } => judge::silence(conv, *ms, *refusal_allowed, &c),
            Expectation::Reply(p) => judge_reply::reply(conv, p, sent.msg_id.as_ref(), inputs, &c),
            Expectation::A2aTasks(tasks) => {
                let deadline = conv.step_deadline();
                let silence = Duration::from_millis(conv.spec.timing.silence_ms);
                super::a2a::tasks(conv, tasks, deadline, silence, inputs.p1_form).map_err(|f| {
                    match f {
                        super::a2a::TasksFailure::Deadline(why, o) => {
                            StepFailure::new(Verdict::Timeout, format!("{label}{why}"), exp_desc, o)
                        }
                        super::a2a::TasksFailure::Wrong(why, o) => c.fail(why, o),
                    }
                })
            }
            Expectation::Stream(st) => judge_reply::stream(conv, st, &sent, &c),
            Expectation::Flow(items) => {
                super::profiles::flow(conv, &mut inputs.profiles, items, inputs.p1_form, &c)
            }
            Expectation::ErrorJson(j) => judge_reply::error_json(conv, j, &c),
            Expectation::Identity => judge_reply::identity(conv, sent.msg_id.as_ref(), inputs, &c),
            Expectation::Forwarded => judge_reply::forwarded(conv, &sent.octets, s.upstream, &c),
            Expectation::ForwardedPayload => {
                judge_reply::forwarded_payload(conv, &sent.octets, s.upstream, &c)
            }
            Expectation::Nothing => continue,
        };
        match seen {
            Ok(o) => obs_desc.push(o),
            Err(f) => failure = Some(f),
        }
    }
    // Accepts of this step stay open until confirmed; everything else it sent is judged.
    conv.ledger.settle_step(i, Some(Fate::Accept));
    if let Some(f) = failure {
        record(book, f.observed.clone());
        if let Some(r) = book.records.get_mut(i) {
            r.code.clone_from(&f.code);
        }
        return Err(f);
    }
    record(book, obs_desc.join("; "));
    Ok(())
}

/// Records a judged reject: the code it showed, and the step it happened at (always for a
/// `reject`; for a `denied` only when it came as a reject with a code).
fn graded(
    r: Result<(String, Option<String>), Box<StepFailure>>,
    always_marks: bool,
    i: usize,
    book: &mut Book,
) -> Result<String, Box<StepFailure>> {
    match r {
        Ok((o, code)) => {
            if always_marks || code.is_some() {
                book.rejected(i);
            }
            if let Some(r) = book.records.get_mut(i) {
                if code.is_some() {
                    r.code.clone_from(&code);
                }
            }
            Ok(o)
        }
        Err(f) => {
            // A reject whose code cannot be observed, or that carried another code, is
            // still a reject: the stream may end after it (CORE-039).
            if f.code.is_some()
                || matches!(
                    f.verdict,
                    Verdict::RejectCodeNotObservable | Verdict::Inconclusive
                )
                || f.code_only.is_some()
            {
                book.rejected(i);
            }
            Err(f)
        }
    }
}
