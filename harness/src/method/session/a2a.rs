//! Profile-specific reading of replies: P1 payloads checked against their message and, for
//! A2A (profile 2), the tasks an agent runs judged per task (order, finality, outcome).

use super::conv::Conv;
use super::obs::Obs;
use crate::frames::Envelope;
use crate::p1::P1Form;
use std::time::{Duration, Instant};

/// A2A's profile_id (the profile registry).
const A2A: u64 = 2;

/// Checks a reply's P1 payload against the expected message and fields (and its canonical
/// encoding, when asked); A2A replies also owe the required fields of their class (§4).
pub fn check_p1_reply(
    spec: &crate::p1::P1Spec,
    canonical: bool,
    form: P1Form,
    env: &Envelope,
) -> Result<(), crate::p1::P1Error> {
    let bare = form.unwrap(env.profile_id, env.msg_type, &env.payload)?;
    crate::p1::check(spec, &bare)?;
    if canonical {
        let (name, _, _) = crate::p1::parts(spec)?;
        canonical_in_form(form, name, &bare, &env.payload)?;
    }
    if env.profile_id == A2A {
        crate::rules::check_message(env.profile_id, env.msg_type, &bare).map_err(|e| {
            crate::p1::P1Error::Payload(format!("the reply breaks a2a-profile: {e}"))
        })?;
    }
    Ok(())
}

/// Canonical in its form: the bare message as a deterministic serializer writes it, wrapped
/// (or not) the one way the form allows (P1 §4).
fn canonical_in_form(
    form: P1Form,
    name: &str,
    bare: &[u8],
    payload: &[u8],
) -> Result<(), crate::p1::P1Error> {
    crate::p1::check_canonical_named(name, bare)?;
    if form.wrap(name, bare.to_vec())? != payload {
        return Err(crate::p1::P1Error::Payload(format!(
            "the {} wrapper is not serialized deterministically (P1 §4)",
            form.as_str()
        )));
    }
    Ok(())
}

/// Why the tasks did not complete as expected: a deadline passed, or what arrived is wrong.
pub enum TasksFailure {
    /// Some task has no Result by the deadline: why, and what was observed.
    Deadline(String, String),
    /// The agent sent something the tasks do not allow: why, and what was observed.
    Wrong(String, String),
}

/// Collects A2A frames until every listed task has its Result (or `deadline`), then for a
/// quiet window, and judges each task: P1-valid messages, the listed number of Events (any
/// number when none is listed) before exactly one Result with the listed outcome, nothing after it (a2a-profile §6).
/// Tasks may interleave; only per-task order is judged.
pub fn tasks(
    conv: &mut Conv,
    tasks: &[crate::catalog::vector::TaskOutcome],
    deadline: Instant,
    silence: Duration,
    form: P1Form,
) -> Result<String, TasksFailure> {
    use crate::p1::pb::types::a2a::{Event, Result as A2aResult};
    // The catalog loader refused malformed `hex:` values, so this cannot fail here.
    let bytes_of = |s: &str| crate::p1::bytes_value(s).unwrap_or_default();
    // Per listed task: events seen, the Result once seen.
    let mut state: Vec<(Vec<u8>, u64, Option<A2aResult>)> = tasks
        .iter()
        .map(|t| (bytes_of(&t.task_id), 0, None))
        .collect();
    let mut frames = 0usize;
    let mut quiet_until: Option<Instant> = None;
    loop {
        let until = quiet_until.unwrap_or(deadline);
        let o = match conv.next(until) {
            Some(o) => o,
            None if quiet_until.is_some() => break,
            None => {
                let open: Vec<String> = tasks
                    .iter()
                    .zip(&state)
                    .filter(|(_, s)| s.2.is_none())
                    .map(|(t, s)| format!("{} ({} event(s) so far)", t.task_id, s.1))
                    .collect();
                return Err(TasksFailure::Deadline(
                    format!("no Result for task(s) {}", open.join(", ")),
                    format!("{frames} A2A frame(s), then silence"),
                ));
            }
        };
        let env = match o {
            Obs::Reply(e) if e.profile_id == 2 => e,
            other => {
                return Err(TasksFailure::Wrong(
                    format!(
                        "expected A2A Events and Results, observed {}",
                        other.short()
                    ),
                    other.short(),
                ))
            }
        };
        frames += 1;
        let bare = match form.unwrap(env.profile_id, env.msg_type, &env.payload) {
            Ok(b) => b,
            Err(e) => {
                return Err(TasksFailure::Wrong(
                    format!("an A2A message that is not valid P1 in its form: {e}"),
                    "malformed payload".into(),
                ))
            }
        };
        // The required fields of the class (§4: an Event's content, a failure's reason) are
        // judged by the harness's own rules, whatever the step lists.
        if let Err(e) = crate::rules::check_message(env.profile_id, env.msg_type, &bare) {
            return Err(TasksFailure::Wrong(
                format!("an A2A message that breaks a2a-profile: {e}"),
                "a message without its required fields".into(),
            ));
        }
        let (task_id, is_result) = match env.msg_type {
            3 => match <Event as prost::Message>::decode(&bare[..]) {
                Ok(e) => (e.task_id.to_vec(), None),
                Err(e) => {
                    return Err(TasksFailure::Wrong(
                        format!("an Event that is not valid P1: {e}"),
                        "malformed Event".into(),
                    ))
                }
            },
            4 => match <A2aResult as prost::Message>::decode(&bare[..]) {
                Ok(r) => (r.task_id.to_vec(), Some(r)),
                Err(e) => {
                    return Err(TasksFailure::Wrong(
                        format!("a Result that is not valid P1: {e}"),
                        "malformed Result".into(),
                    ))
                }
            },
            t => {
                return Err(TasksFailure::Wrong(
                    format!(
                        "an A2A msg_type {t} frame where only Events (3) and Results (4) belong"
                    ),
                    format!("msg_type {t}"),
                ))
            }
        };
        let Some(i) = state.iter().position(|s| s.0 == task_id) else {
            return Err(TasksFailure::Wrong(
                format!(
                    "an A2A message for task_id {}, which no Task of this step opened",
                    hex::encode(&task_id)
                ),
                "a message for an unknown task".into(),
            ));
        };
        if tasks[i].p1_canonical {
            let name = if is_result.is_some() {
                "a2a.Result"
            } else {
                "a2a.Event"
            };
            if let Err(e) = canonical_in_form(form, name, &bare, &env.payload) {
                return Err(TasksFailure::Wrong(
                    format!("task {}: {e}", tasks[i].task_id),
                    "a payload not serialized deterministically".into(),
                ));
            }
        }
        let s = &mut state[i];
        if s.2.is_some() {
            return Err(TasksFailure::Wrong(
                format!(
                    "a {} for task {} after its terminal Result",
                    if is_result.is_some() {
                        "Result"
                    } else {
                        "Event"
                    },
                    tasks[i].task_id
                ),
                "a message after the terminal Result".into(),
            ));
        }
        match is_result {
            None => s.1 += 1,
            Some(r) => s.2 = Some(r),
        }
        if quiet_until.is_none() && state.iter().all(|s| s.2.is_some()) {
            quiet_until = Some(conv.tl.now() + silence);
        }
    }
    let mut seen = Vec::new();
    for (t, (_, events, result)) in tasks.iter().zip(&state) {
        let Some(r) = result else { continue };
        if let Some(want) = t.events.filter(|w| w != events) {
            return Err(TasksFailure::Wrong(
                format!(
                    "task {}: {events} Event(s) before the Result, expected {want}",
                    t.task_id
                ),
                format!("{events} event(s)"),
            ));
        }
        if r.ok != t.ok {
            return Err(TasksFailure::Wrong(
                format!(
                    "task {}: Result ok={} ({:?}), expected ok={}",
                    t.task_id, r.ok, r.error_message, t.ok
                ),
                format!("ok={}", r.ok),
            ));
        }
        if let Some(out) = &t.output {
            if r.output[..] != bytes_of(out)[..] {
                return Err(TasksFailure::Wrong(
                    format!(
                        "task {}: Result output {:?}, expected {out:?}",
                        t.task_id,
                        String::from_utf8_lossy(&r.output)
                    ),
                    "another output".into(),
                ));
            }
        }
        if let Some(sub) = &t.error_contains {
            if !r.error_message.contains(sub.as_str()) {
                return Err(TasksFailure::Wrong(
                    format!(
                        "task {}: error_message {:?} does not contain {sub:?}",
                        t.task_id, r.error_message
                    ),
                    "another error_message".into(),
                ));
            }
        }
        seen.push(format!("{}: {events} event(s), ok={}", t.task_id, r.ok));
    }
    Ok(seen.join("; "))
}
