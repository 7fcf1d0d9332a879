//! Judgement of what an endpoint shows after a step, one function per expectation kind.
//! Each returns a few words of what it observed, or the [`StepFailure`] that ends the vector.

use super::confirm::probe_answered;
use super::conv::Conv;
use super::obs::Obs;
use super::refusal::{profile_err_name, profile_err_type, profile_error, ProfileErr};
use super::work::{Inputs, StepFailure};
use crate::method::evaluate::judge_codec_step;
use crate::plan::materialize::Expectation;
use crate::report::result::Verdict;
use crate::sut::RejectMode;
use bytes::Bytes;
use swp_testee_proto::Event;

/// What a step expects, with its label and one-line description, for messages.
pub struct Ctx<'s> {
    /// `step N: ` or empty.
    pub label: &'s str,
    /// The step's expectations in one line.
    pub expected: &'s str,
}

impl Ctx<'_> {
    /// A plain failure of this step: `why` after the label.
    pub fn fail(
        &self,
        why: impl std::fmt::Display,
        observed: impl Into<String>,
    ) -> Box<StepFailure> {
        StepFailure::new(
            Verdict::Fail,
            format!("{}{why}", self.label),
            self.expected,
            observed,
        )
    }
}

/// A step that expects `nothing`: no frame and no close within the quiet window.
pub fn nothing(conv: &mut Conv<'_>, label: &str) -> Result<String, Box<StepFailure>> {
    let deadline = conv.after(conv.spec.timing.silence_ms);
    match conv.next(deadline) {
        Some(o) => Err(StepFailure::new(
            Verdict::Fail,
            format!("{label}expected nothing, observed {}", o.short()),
            "nothing",
            o.short(),
        )),
        None => Ok("nothing".into()),
    }
}

/// A reject: an error frame with an allowed code or, where the manifest allows it, a close;
/// replies in between are skipped. Silence is resolved by the probe: answered means the
/// frame was accepted, unanswered means the endpoint hung.
pub fn reject(
    conv: &mut Conv<'_>,
    exp: &Expectation,
    terminates: Option<bool>,
    inputs: &mut Inputs<'_>,
    c: &Ctx<'_>,
) -> Result<(String, Option<String>), Box<StepFailure>> {
    conv.watch();
    let deadline = conv.step_deadline();
    let got = loop {
        match conv.next(deadline) {
            Some(Obs::Reply(env)) => {
                if conv.spec.reject_signal.profile_errors {
                    if let Some(o) = profile_error(&env, inputs.p1_form) {
                        break Some(o);
                    }
                }
            }
            other => break other,
        }
    };
    if let Some(f) = uncredited(conv, got.as_ref(), c) {
        return Err(f);
    }
    reject_observed(conv, got, exp, terminates, inputs, c)
}

/// A refusal (or a close) that cannot be credited to this step's frame alone: it carried no
/// msg_id of this step and other frames were open too. Nothing on the wire says which frame
/// it refuses, so the step is inconclusive, with the reason.
fn uncredited(conv: &Conv<'_>, got: Option<&Obs>, c: &Ctx<'_>) -> Option<Box<StepFailure>> {
    use super::ledger::Credit;
    let current = conv.ledger.current?;
    let others = match got? {
        Obs::Error { .. } | Obs::Refused(_) => match &conv.last_credit {
            Some(Credit::Ambiguous(frames)) => frames
                .iter()
                .copied()
                .filter(|i| {
                    conv.ledger
                        .frames
                        .get(*i)
                        .is_some_and(|f| f.step != Some(current))
                })
                .collect(),
            _ => Vec::new(),
        },
        Obs::Closed(_) => conv.ledger.others_open(current),
        _ => Vec::new(),
    };
    if others.is_empty() {
        return None;
    }
    let steps: Vec<String> = conv
        .ledger
        .steps_of(&others)
        .iter()
        .map(|k| (k + 1).to_string())
        .collect();
    let what = got.map(Obs::short).unwrap_or_default();
    Some(StepFailure::new(
        Verdict::Inconclusive,
        format!(
            "{}{what} arrived carrying no msg_id of this step's frame, while frames of {} were open too: it cannot be credited to one of them (declare error frames that carry the refused frame's msg_id, or see docs/sut-manifest.md, Attribution)",
            c.label,
            if steps.is_empty() { "a probe".to_owned() } else { format!("concrete step(s) {}", steps.join(", ")) }
        ),
        c.expected,
        what,
    ))
}

/// `answer`: the request this step sent is answered by its profile's own error message (a
/// not-found `ART_ERR`, an `AGDISC_ERR` for an unknown agent), which the spec allows as the
/// answer to a valid request. Frames of other profiles are skipped; an error frame passes
/// only with a code in `also`.
pub fn answer(
    conv: &mut Conv<'_>,
    sent: &super::actions::Sent,
    code: Option<&str>,
    also: &[crate::frames::ErrorCode],
    c: &Ctx<'_>,
) -> Result<String, Box<StepFailure>> {
    let step_ms = conv.spec.timing.step_ms;
    let request = crate::frames::e1::decode(
        &Bytes::copy_from_slice(sent.octets.get(4..).unwrap_or_default()),
        &crate::frames::Limits::unbounded(),
    )
    .ok();
    let Some((profile_id, err_type)) = request
        .as_ref()
        .and_then(|r| Some((r.profile_id, profile_err_type(r.profile_id)?)))
    else {
        return Err(StepFailure::new(
            Verdict::HarnessError,
            format!(
                "{}`answer: {{err}}` needs a step that sends one frame of an SWP-* profile with an error message",
                c.label
            ),
            c.expected,
            "",
        ));
    };
    let deadline = conv.step_deadline();
    loop {
        match conv.next(deadline) {
            Some(Obs::Reply(env)) if env.profile_id != profile_id => {}
            Some(Obs::Reply(env)) if env.msg_type == err_type => {
                let name = profile_err_name(&env);
                let got = conv
                    .form
                    .unwrap(env.profile_id, env.msg_type, &env.payload)
                    .ok()
                    .and_then(|b| <ProfileErr as prost::Message>::decode(&b[..]).ok());
                let Some(e) = got else {
                    return Err(c.fail(
                        format!("the {name} answering the request does not decode in the SUT's P1 form"),
                        "malformed answer",
                    ));
                };
                return match code {
                    Some(want) if e.code != want => Err(c.fail(
                        format!("answered {name} with code {:?}, expected {want:?}", e.code),
                        format!("{name} {:?}", e.code),
                    )),
                    _ => Ok(format!("answered {name} {:?}", e.code)),
                };
            }
            Some(Obs::Reply(env)) => {
                return Err(c.fail(
                    format!(
                        "answered with msg_type {} of profile {profile_id}, expected its error message (msg_type {err_type})",
                        env.msg_type
                    ),
                    format!("msg_type {}", env.msg_type),
                ))
            }
            Some(Obs::Error { code: got, .. }) => {
                if also.iter().any(|a| a.as_str() == got) {
                    return Ok(format!("answered with error frame {got}"));
                }
                return Err(c.fail(
                    format!("refused with error frame {got}, expected an answer by the profile"),
                    format!("reject {got}"),
                ));
            }
            Some(Obs::Closed(why)) => {
                return Err(c.fail(
                    format!("the connection {why}, expected an answer"),
                    "close",
                ))
            }
            Some(o @ (Obs::Garbage(_) | Obs::Refused(_))) => {
                return Err(c.fail(o.short(), "invalid output"))
            }
            None => {
                return Err(StepFailure::new(
                    Verdict::Timeout,
                    format!("{}no answer within {step_ms} ms", c.label),
                    c.expected,
                    "silence",
                ))
            }
        }
    }
}

/// A request refused, not carried out (`denied`): the reject `exp`, or an answer that
/// refuses in the request's own profile. Frames that answer something else are skipped.
pub fn denied(
    conv: &mut Conv<'_>,
    exp: &Expectation,
    msg_id: Option<&bytes::Bytes>,
    inputs: &mut Inputs<'_>,
    c: &Ctx<'_>,
) -> Result<(String, Option<String>), Box<StepFailure>> {
    let terminates = match exp {
        Expectation::Reject { terminates, .. } => *terminates,
        _ => None,
    };
    conv.watch();
    let deadline = conv.step_deadline();
    let got = loop {
        match conv.next(deadline) {
            Some(Obs::Reply(env)) => match read_answer(&env, msg_id, inputs.p1_form) {
                Answer::Refused(d) => return Ok((d, None)),
                Answer::CarriedOut(d) => {
                    return Err(c.fail(
                        format!("the request was carried out, not refused: {d}"),
                        "carried out",
                    ))
                }
                Answer::Other => continue,
            },
            other => break other,
        }
    };
    reject_observed(conv, got, exp, terminates, inputs, c)
}

/// What a frame says about a request under `denied`.
enum Answer {
    /// It refuses the request in the request's profile.
    Refused(String),
    /// It shows the request was carried out.
    CarriedOut(String),
    /// It is about something else.
    Other,
}

/// Reads a frame as the answer to the request sent with `msg_id`: a JSON-RPC response on
/// that msg_id (profile 1), or the first A2A Event or Result (profile 2: an agent's task
/// messages carry the task_id, not the Task frame's msg_id, and a denial vector sends one
/// task).
fn read_answer(
    env: &crate::frames::Envelope,
    msg_id: Option<&bytes::Bytes>,
    form: crate::p1::P1Form,
) -> Answer {
    use crate::p1::pb::types::a2a::{Event, Result as A2aResult};
    use prost::Message;
    match env.profile_id {
        1 if env.msg_type == 2 && msg_id.is_some_and(|m| *m == env.msg_id) => {
            let v: serde_json::Value = match serde_json::from_slice(&env.payload) {
                Ok(v) => v,
                Err(_) => return Answer::Other,
            };
            if let Some(e) = v.get("error") {
                let code = e.get("code").map(ToString::to_string).unwrap_or_default();
                Answer::Refused(format!("JSON-RPC error {code}"))
            } else if v.get("result").is_some() {
                Answer::CarriedOut("a JSON-RPC result".into())
            } else {
                Answer::Other
            }
        }
        2 => {
            let Ok(bare) = form.unwrap(env.profile_id, env.msg_type, &env.payload) else {
                return Answer::Other;
            };
            // Only a message valid for its class (the harness's own A2A rules) answers.
            if crate::rules::check_message(env.profile_id, env.msg_type, &bare).is_err() {
                return Answer::Other;
            }
            match env.msg_type {
                4 => match A2aResult::decode(&bare[..]) {
                    Ok(r) if !r.ok => {
                        Answer::Refused(format!("A2A Result ok=false ({:?})", r.error_message))
                    }
                    Ok(_) => Answer::CarriedOut("an A2A Result with ok=true".into()),
                    Err(_) => Answer::Other,
                },
                3 if Event::decode(&bare[..]).is_ok() => {
                    Answer::CarriedOut("an A2A Event: the task is running".into())
                }
                _ => Answer::Other,
            }
        }
        _ => Answer::Other,
    }
}

/// Judges the first observation that is not a reply against the reject `exp`.
fn reject_observed(
    conv: &mut Conv<'_>,
    got: Option<Obs>,
    exp: &Expectation,
    terminates: Option<bool>,
    inputs: &mut Inputs<'_>,
    c: &Ctx<'_>,
) -> Result<(String, Option<String>), Box<StepFailure>> {
    let step_ms = conv.spec.timing.step_ms;
    let ev = match got {
        Some(Obs::Error { code, frame, .. }) => {
            conv.last_error_frame = Some(frame);
            let terminated = match terminates {
                Some(true) => {
                    let d2 = conv.step_deadline();
                    let closed = loop {
                        match conv.next(d2) {
                            Some(Obs::Closed(_)) => break true,
                            Some(_) => continue,
                            None => break false,
                        }
                    };
                    Some(closed)
                }
                _ => None,
            };
            let canonical = code.parse::<crate::frames::ErrorCode>().is_ok();
            Event::Reject {
                code: canonical.then(|| code.clone()),
                alias: (!canonical).then(|| code.clone()),
                detail: None,
                terminated,
            }
        }
        Some(Obs::Closed(why)) => {
            let unknown_profile = matches!(exp, Expectation::Reject { allowed, .. }
                if allowed.contains(&crate::frames::ErrorCode::UnknownProfile));
            if conv.spec.reject_signal.mode == RejectMode::ErrorFrame
                && !(unknown_profile && inputs.unknown_profile_closes)
            {
                return Err(c.fail(
                    format!(
                        "the connection {why} without the error frame the manifest promises{}",
                        conv.unclaimed_hint()
                    ),
                    "close",
                ));
            }
            Event::Reject {
                code: None,
                alias: None,
                detail: Some(why),
                terminated: Some(true),
            }
        }
        Some(Obs::Refused(what)) => Event::Reject {
            code: None,
            alias: None,
            detail: Some(what),
            terminated: None,
        },
        Some(Obs::Garbage(g)) => return Err(c.fail(g, "invalid output")),
        // Replies were skipped above, so only a timeout reaches here: accepted, or hung?
        Some(Obs::Reply(_)) | None => {
            let hint = conv.unclaimed_hint();
            let probed = probe_answered(conv, inputs.params, inputs.requests);
            if probed.is_ok() {
                return Err(c.fail(
                    format!(
                        "accepted: no reject within {step_ms} ms and the probe was answered{hint}"
                    ),
                    "accepted",
                ));
            }
            let elsewhere = match probed {
                Err(Some(m)) => format!(" ({m})"),
                _ => String::new(),
            };
            return Err(StepFailure::new(
                Verdict::Timeout,
                format!(
                    "{}no reject, no close and no answer within {step_ms} ms{hint}{elsewhere}",
                    c.label
                ),
                c.expected,
                "silence",
            ));
        }
    };
    let j = judge_codec_step(std::slice::from_ref(exp), std::slice::from_ref(&ev));
    let code = j.observed_code.map(|c| c.as_str().to_owned());
    if j.verdict != Verdict::Pass {
        return Err(Box::new(StepFailure {
            verdict: j.verdict,
            why: format!("{}{}", c.label, j.detail.unwrap_or_default()),
            expected: c.expected.to_owned(),
            observed: j.observed,
            code,
            code_only: j.code_only,
            at: None,
            broke: Vec::new(),
        }));
    }
    Ok((j.observed, code))
}

/// An accept where the spec allows a reject as well (`reject_allowed`, a session vector's last
/// step only): an error frame or a close within the quiet window is the allowed reject;
/// `None` means neither came, and the accept is confirmed as any other. Replies are skipped.
pub fn reject_allowed(
    conv: &mut Conv<'_>,
    c: &Ctx<'_>,
) -> Result<Option<String>, Box<StepFailure>> {
    let deadline = conv.after(conv.spec.timing.silence_ms);
    loop {
        match conv.next(deadline) {
            Some(Obs::Reply(_)) => {}
            Some(Obs::Error { code, .. }) => {
                return Ok(Some(format!("reject {code} (allowed)")));
            }
            Some(Obs::Closed(why)) => {
                return Ok(Some(format!("the connection {why}: a reject (allowed)")));
            }
            Some(Obs::Refused(what)) => return Ok(Some(format!("{what} (allowed)"))),
            Some(Obs::Garbage(g)) => return Err(c.fail(g, "invalid output")),
            None => return Ok(None),
        }
    }
}

/// The connection closes with zero frames before it (octets that are not framing, such as a
/// TLS alert sent in the clear to a plaintext client, are not frames).
pub fn close(conv: &mut Conv<'_>, label: &str) -> Result<String, Box<StepFailure>> {
    let step_ms = conv.spec.timing.step_ms;
    let deadline = conv.step_deadline();
    let mut frames = 0;
    let got = loop {
        match conv.next(deadline) {
            Some(Obs::Closed(w)) => break Some(w),
            Some(Obs::Garbage(_)) => {}
            Some(_) => frames += 1,
            None => break None,
        }
    };
    let fail = |why: String, obs: &str| StepFailure::new(Verdict::Fail, why, "close", obs);
    match got {
        Some(_) if frames == 0 => Ok("close".into()),
        Some(_) => Err(fail(
            format!("{label}the connection closed after {frames} frame(s); expected a close with zero bytes"),
            "frames then close",
        )),
        None => Err(fail(
            format!("{label}the connection stayed open for {step_ms} ms; expected it to close"),
            "open",
        )),
    }
}

/// Nothing at all for `ms`. A window that would end after the vector's hard limit is the
/// vector's mistake: cut short, it would pass on less silence than it claims.
pub fn silence(
    conv: &mut Conv<'_>,
    ms: u64,
    refusal_allowed: bool,
    c: &Ctx<'_>,
) -> Result<String, Box<StepFailure>> {
    let d = conv.after(ms);
    if d > conv.tl.hard_deadline {
        return Err(StepFailure::new(
            Verdict::HarnessError,
            format!(
                "{}a silence of {ms} ms does not fit in the vector's {} ms limit (session.timing.vector_ms)",
                c.label, conv.spec.timing.vector_ms
            ),
            c.expected,
            "",
        ));
    }
    match conv.next(d) {
        Some(o @ (Obs::Error { .. } | Obs::Closed(_) | Obs::Refused(_))) if refusal_allowed => Ok(
            format!("refused ({}), which the spec allows here", o.short()),
        ),
        Some(o) => Err(c.fail(
            format!("expected silence for {ms} ms, observed {}", o.short()),
            o.short(),
        )),
        None => Ok(format!("silence {ms} ms")),
    }
}
