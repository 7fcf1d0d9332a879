//! Judgement of what an endpoint shows after a step, one function per expectation kind.
//! Each returns a few words of what it observed, or the [`StepFailure`] that ends the vector.

use super::confirm::probe_answered;
use super::conv::{Conv, Obs};
use super::{Inputs, StepFailure};
use crate::catalog::vector::WhenSilent;
use crate::method::evaluate::judge_codec_step;
use crate::plan::materialize::{Expectation, ReplyPattern};
use crate::report::result::{Dir, Verdict};
use crate::support::transcript::transcript_hex;
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

/// The `*_ERR` message of the SWP-* profiles whose error carries `code` as field 1, by
/// (profile_id, msg_type). SWP-RPC's `RPC_ERR` is a call's outcome, not a refusal.
const PROFILE_ERRORS: &[(u64, u64, &str)] = &[
    (10, 4, "AGDISC_ERR"),
    (11, 5, "TOOLDISC_ERR"),
    (13, 5, "EVT_ERR"),
    (14, 5, "ART_ERR"),
    (15, 4, "CRED_ERR"),
    (16, 4, "POLICY_ERR"),
    (17, 4, "STATE_ERR"),
    (18, 4, "OBS_ERR"),
    (19, 5, "RELAY_ERR"),
];

/// Field 1 of a profile's error message; the rest is skipped.
#[derive(Clone, PartialEq, prost::Message)]
struct ProfileErr {
    #[prost(string, tag = "1")]
    code: String,
}

/// The name of a profile's error message (`CRED_ERR`), or `?` for a frame that is none.
pub(super) fn profile_err_name(env: &crate::frames::Envelope) -> &'static str {
    PROFILE_ERRORS
        .iter()
        .find(|(p, t, _)| (*p, *t) == (env.profile_id, env.msg_type))
        .map_or("?", |(_, _, n)| n)
}

/// The msg_type of a profile's error message, for the SWP-* profiles that have one.
pub fn profile_err_type(profile_id: u64) -> Option<u64> {
    PROFILE_ERRORS
        .iter()
        .find(|(p, _, _)| *p == profile_id)
        .map(|(_, t, _)| *t)
}

/// A profile's own error message read as a reject (manifest `reject_signal.profile_errors`).
pub(super) fn profile_error(env: &crate::frames::Envelope, form: crate::p1::P1Form) -> Option<Obs> {
    let (_, _, name) = PROFILE_ERRORS
        .iter()
        .find(|(p, t, _)| (*p, *t) == (env.profile_id, env.msg_type))?;
    let bare = form
        .unwrap(env.profile_id, env.msg_type, &env.payload)
        .ok()?;
    let e = <ProfileErr as prost::Message>::decode(&bare[..]).ok()?;
    if e.code.parse::<crate::frames::ErrorCode>().is_ok() {
        return Some(Obs::Error {
            code: e.code,
            msg_id: env.msg_id.clone(),
            frame: Box::new(env.clone()),
        });
    }
    // A profile-specific code (or none) says the frame was refused, not which canonical
    // code applies.
    Some(Obs::Refused(format!("{name} {:?}", e.code)))
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
                        conv.pointer_hint()
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
            let hint = conv.pointer_hint();
            if probe_answered(conv, inputs.params, inputs.requests) {
                return Err(c.fail(
                    format!(
                        "accepted: no reject within {step_ms} ms and the probe was answered{hint}"
                    ),
                    "accepted",
                ));
            }
            return Err(StepFailure::new(
                Verdict::Timeout,
                format!(
                    "{}no reject, no close and no answer within {step_ms} ms{hint}",
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

/// Whether `actual` contains `expected`: objects by subset, everything else exactly.
pub fn json_contains(actual: &serde_json::Value, expected: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|x| json_contains(x, v))),
        _ => actual == expected,
    }
}

/// `${CLIENT_IDENTITY}` in an expected JSON value, replaced by the identity presented.
fn substitute(v: &serde_json::Value, identity: &str) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) if s == "${CLIENT_IDENTITY}" => Value::String(identity.to_owned()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), substitute(x, identity)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute(x, identity)).collect()),
        other => other.clone(),
    }
}

/// The next frame matches the reply pattern (an error frame is a frame too: the pattern
/// sees all of it).
pub fn reply(
    conv: &mut Conv<'_>,
    p: &ReplyPattern,
    sent_id: Option<&Bytes>,
    inputs: &Inputs<'_>,
    c: &Ctx<'_>,
) -> Result<String, Box<StepFailure>> {
    let (identity, p1_form) = (inputs.identity, inputs.p1_form);
    let step_ms = conv.spec.timing.step_ms;
    let deadline = conv.step_deadline();
    let env = match conv.next(deadline) {
        Some(Obs::Reply(e)) => e,
        Some(Obs::Error { frame, .. }) => *frame,
        Some(other) => {
            return Err(c.fail(
                format!("expected a reply, observed {}", other.short()),
                other.short(),
            ))
        }
        None => {
            return match p.when_silent {
                Some(WhenSilent::Pass) => Ok(format!(
                    "no reply within {step_ms} ms, which the spec allows here"
                )),
                Some(WhenSilent::Inconclusive) => Err(StepFailure::new(
                    Verdict::Inconclusive,
                    format!(
                        "{}no reply within {step_ms} ms: nothing to judge, and the spec requires no answer here",
                        c.label
                    ),
                    c.expected,
                    "silence",
                )),
                None => Err(StepFailure::new(
                    Verdict::Timeout,
                    format!("{}no reply within {step_ms} ms", c.label),
                    c.expected,
                    "silence",
                )),
            }
        }
    };
    let mut why = None;
    if p.profile_id.is_some_and(|x| x != env.profile_id)
        || p.msg_type.is_some_and(|m| m != env.msg_type)
    {
        why = Some(format!(
            "reply is profile_id={} msg_type={}",
            env.profile_id, env.msg_type
        ));
    } else if p.same_msg_id && sent_id != Some(&env.msg_id) {
        why = Some(format!(
            "reply msg_id {} does not reuse the request's",
            hex::encode(&env.msg_id)
        ));
    } else if p.payload.as_ref().is_some_and(|x| *x != env.payload) {
        why = Some("reply payload differs".into());
    } else if let Some(pj) = &p.payload_json {
        let want = substitute(pj, identity.unwrap_or(""));
        match serde_json::from_slice::<serde_json::Value>(&env.payload) {
            Ok(v) if json_contains(&v, &want) => {}
            Ok(v) => why = Some(format!("reply payload {v} does not contain {want}")),
            Err(e) => why = Some(format!("reply payload is not JSON: {e}")),
        }
    }
    if why.is_none() {
        if let Some(spec) = &p.payload_p1 {
            why = super::a2a::check_p1_reply(spec, p.p1_canonical, p1_form, &env)
                .err()
                .map(|e| e.to_string());
        }
    }
    match why {
        Some(w) => Err(c.fail(w, "reply")),
        None => Ok("reply".into()),
    }
}

/// The identity probe's answer reports the identity the harness presented.
pub fn identity(
    conv: &mut Conv<'_>,
    sent_id: Option<&Bytes>,
    inputs: &Inputs<'_>,
    c: &Ctx<'_>,
) -> Result<String, Box<StepFailure>> {
    let ptr = inputs
        .identity_probe
        .map(|p| p.pointer.clone())
        .unwrap_or_default();
    let want = inputs.identity.unwrap_or("");
    let deadline = conv.step_deadline();
    let got = loop {
        match conv.next(deadline) {
            Some(Obs::Reply(e)) if Some(&e.msg_id) == sent_id => break Ok(e),
            Some(Obs::Reply(_)) => continue,
            Some(o) => break Err(o.short()),
            None => break Err("silence".into()),
        }
    };
    let env = got.map_err(|o| {
        c.fail(
            format!("expected the identity probe's answer, observed {o}"),
            o,
        )
    })?;
    let seen = serde_json::from_slice::<serde_json::Value>(&env.payload)
        .ok()
        .and_then(|v| v.pointer(&ptr).cloned());
    match seen {
        Some(serde_json::Value::String(s)) if s == want => Ok(format!("identity {s}")),
        other => Err(c.fail(
            format!(
                "the endpoint reports identity {other:?} at {ptr}; the harness presented {want}"
            ),
            format!("{other:?}"),
        )),
    }
}

/// The octets sent in this step arrive unchanged on the other side of the intermediary.
pub fn forwarded(
    conv: &mut Conv<'_>,
    sent: &[u8],
    upstream_step: bool,
    c: &Ctx<'_>,
) -> Result<String, Box<StepFailure>> {
    let n = sent.len();
    let deadline = conv.step_deadline();
    let (got, short) = conv.read_exact_raw(upstream_step, n, deadline);
    let to = if upstream_step { "client" } else { "upstream" };
    if !got.is_empty() {
        conv.log(Dir::Received, format!("{to} {}", transcript_hex(&got)));
    }
    // Report the first differing octet even when fewer octets arrived: an intermediary that
    // rewrites a payload usually changes its length too.
    if let Some(at) = got.iter().zip(sent).position(|(a, b)| a != b) {
        return Err(c.fail(
            format!(
                "the octets reaching the {to} differ from those sent, first at offset {at} ({} octets arrived, {n} sent)",
                got.len()
            ),
            "altered",
        ));
    }
    match short {
        None => Ok(format!("forwarded to {to} unchanged ({n} octets)")),
        Some(e) => Err(c.fail(format!("forwarding to the {to}: {e}"), "not forwarded")),
    }
}

/// The frame sent in this step reaches the other side of the intermediary with its
/// profile_id, msg_type and payload octets unchanged; the rest of the envelope is the
/// intermediary's to set. The msg_id it used is kept, so an upstream answer can reuse it.
pub fn forwarded_payload(
    conv: &mut Conv<'_>,
    sent: &[u8],
    upstream_step: bool,
    c: &Ctx<'_>,
) -> Result<String, Box<StepFailure>> {
    let limits = crate::frames::Limits::unbounded();
    let Some(want) = sent
        .get(4..)
        .and_then(|b| crate::frames::e1::decode(&Bytes::copy_from_slice(b), &limits).ok())
    else {
        return Err(StepFailure::new(
            Verdict::HarnessError,
            format!(
                "{}`forwarded_payload` needs a step that sends one frame",
                c.label
            ),
            c.expected,
            "",
        ));
    };
    let to = if upstream_step { "client" } else { "upstream" };
    let deadline = conv.step_deadline();
    let (mut got, short) = conv.read_exact_raw(upstream_step, 4, deadline);
    if let Some(e) = short {
        return Err(c.fail(format!("forwarding to the {to}: {e}"), "not forwarded"));
    }
    let n = u32::from_be_bytes([got[0], got[1], got[2], got[3]]) as usize;
    // The intermediary may not announce more than the frame bound the harness reads with.
    let bound = conv.spec.timing.max_read_bytes.min(u64::from(u32::MAX)) as usize;
    if n > bound {
        return Err(c.fail(
            format!(
                "the frame reaching the {to} announces {n} octets, above the read bound of {bound}"
            ),
            "oversized",
        ));
    }
    if got.len() < 4 + n {
        let (rest, short) = conv.read_exact_raw(upstream_step, 4 + n - got.len(), deadline);
        got.extend_from_slice(&rest);
        if let Some(e) = short {
            return Err(c.fail(format!("forwarding to the {to}: {e}"), "not forwarded"));
        }
    }
    conv.log(
        Dir::Received,
        format!("{to} {}", transcript_hex(&got[..4 + n])),
    );
    let env = match crate::frames::e1::decode(&Bytes::copy_from_slice(&got[4..4 + n]), &limits) {
        Ok(e) => e,
        Err(e) => {
            return Err(c.fail(
                format!("the frame reaching the {to} does not decode: {e}"),
                "invalid frame",
            ))
        }
    };
    let mut diffs = Vec::new();
    if env.profile_id != want.profile_id {
        diffs.push(format!(
            "profile_id {} (sent {})",
            env.profile_id, want.profile_id
        ));
    }
    if env.msg_type != want.msg_type {
        diffs.push(format!(
            "msg_type {} (sent {})",
            env.msg_type, want.msg_type
        ));
    }
    if env.payload != want.payload {
        let at = env
            .payload
            .iter()
            .zip(want.payload.iter())
            .position(|(a, b)| a != b)
            .unwrap_or(env.payload.len().min(want.payload.len()));
        diffs.push(format!(
            "payload differs from offset {at} ({} octets arrived, {} sent)",
            env.payload.len(),
            want.payload.len()
        ));
    }
    // An answer to the request forwarded upstream must reach the client on the msg_id the
    // client gave that request (MCP mapping §5), whatever msg_id the relay used upstream.
    if let Some((client_id, upstream_id)) = &conv.forwarded {
        if upstream_step && want.msg_id == *upstream_id && env.msg_id != *client_id {
            diffs.push(format!(
                "msg_id {} is not the client's request msg_id {}",
                hex::encode(&env.msg_id),
                hex::encode(client_id)
            ));
        }
    }
    if !diffs.is_empty() {
        return Err(c.fail(
            format!(
                "the frame reaching the {to} is altered: {}",
                diffs.join("; ")
            ),
            "altered",
        ));
    }
    if !upstream_step {
        conv.forwarded = Some((want.msg_id.clone(), env.msg_id.clone()));
    }
    Ok(format!(
        "forwarded to {to}, payload unchanged ({} octets)",
        env.payload.len()
    ))
}

/// The error frame of this step's reject carries `want` in its JSON payload (objects by
/// subset): how a core error is surfaced as JSON-RPC (MCP mapping §6).
pub fn error_json(
    conv: &mut Conv<'_>,
    want: &serde_json::Value,
    c: &Ctx<'_>,
) -> Result<String, Box<StepFailure>> {
    let Some(frame) = conv.last_error_frame.take() else {
        return Err(StepFailure::new(
            Verdict::HarnessError,
            format!(
                "{}`error_json` must follow a `reject` in the same step",
                c.label
            ),
            c.expected,
            "",
        ));
    };
    match serde_json::from_slice::<serde_json::Value>(&frame.payload) {
        Ok(v) if json_contains(&v, want) => Ok(format!("error payload contains {want}")),
        Ok(v) => Err(c.fail(
            format!("the error frame's payload {v} does not contain {want}"),
            "error payload",
        )),
        Err(e) => Err(c.fail(
            format!("the error frame's payload is not JSON: {e}"),
            "error payload",
        )),
    }
}

/// The correlation a partial output must carry: the request's `params._meta.progressToken`
/// when it gave one, else its JSON-RPC `id`. `None` when the request's payload is not JSON.
fn request_correlation(payload: &[u8]) -> Option<serde_json::Value> {
    let req: serde_json::Value = serde_json::from_slice(payload).ok()?;
    req.pointer("/params/_meta/progressToken")
        .or_else(|| req.get("id"))
        .cloned()
}

/// Whether `needle` occurs anywhere in `hay` (as a whole value).
fn json_holds(hay: &serde_json::Value, needle: &serde_json::Value) -> bool {
    use serde_json::Value;
    hay == needle
        || match hay {
            Value::Array(a) => a.iter().any(|x| json_holds(x, needle)),
            Value::Object(m) => m.values().any(|x| json_holds(x, needle)),
            _ => false,
        }
}

/// A streamed answer: frames until the response (msg_type 2) reusing the request's msg_id,
/// each earlier frame a partial output; then the terminal response's JSON. Each frame gets
/// its own step deadline, so a long stream is not cut off by a per-step budget.
pub fn stream(
    conv: &mut Conv<'_>,
    st: &crate::catalog::vector::StreamSpec,
    sent: &super::actions::Sent,
    c: &Ctx<'_>,
) -> Result<String, Box<StepFailure>> {
    const RESPONSE: u64 = 2;
    const NOTIFICATION: u64 = 3;
    let step_ms = conv.spec.timing.step_ms;
    let request = crate::frames::e1::decode(
        &Bytes::copy_from_slice(sent.octets.get(4..).unwrap_or_default()),
        &crate::frames::Limits::unbounded(),
    )
    .ok();
    let Some(request) = request else {
        return Err(StepFailure::new(
            Verdict::HarnessError,
            format!(
                "{}a `stream` expectation needs a step that sends one frame",
                c.label
            ),
            c.expected,
            "",
        ));
    };
    let correlation = request_correlation(&request.payload);
    let mut partials = 0u64;
    let terminal = loop {
        let deadline = conv.step_deadline();
        let env = match conv.next(deadline) {
            Some(Obs::Reply(e)) => e,
            Some(Obs::Error { frame, .. }) => *frame,
            Some(other) => {
                return Err(c.fail(
                    format!(
                        "after {partials} partial output(s), expected more output or the terminal response, observed {}",
                        other.short()
                    ),
                    other.short(),
                ))
            }
            None => {
                return Err(StepFailure::new(
                    Verdict::Timeout,
                    format!(
                        "{}after {partials} partial output(s), nothing for {step_ms} ms and no terminal response",
                        c.label
                    ),
                    c.expected,
                    "silence",
                ))
            }
        };
        if env.msg_type == RESPONSE && env.msg_id == request.msg_id {
            break env;
        }
        partials += 1;
        if st.partials_are_notifications
            && (env.msg_type != NOTIFICATION || env.profile_id != request.profile_id)
        {
            return Err(c.fail(
                format!(
                    "partial output {partials} is profile_id={} msg_type={}; expected a notification (msg_type 3) of profile {}",
                    env.profile_id, env.msg_type, request.profile_id
                ),
                "partial not a notification",
            ));
        }
        if st.partials_correlated {
            let body: Option<serde_json::Value> = serde_json::from_slice(&env.payload).ok();
            let params = body.as_ref().and_then(|b| b.get("params"));
            let ok = match (&correlation, params) {
                (Some(want), Some(p)) => json_holds(p, want),
                _ => false,
            };
            if !ok {
                return Err(c.fail(
                    format!(
                        "partial output {partials} does not carry the request's correlation {} in its params",
                        correlation.as_ref().map_or("(none in the request)".into(), |v| v.to_string())
                    ),
                    "uncorrelated partial",
                ));
            }
        }
    };
    if partials < st.min_partials {
        return Err(c.fail(
            format!(
                "the terminal response came after {partials} partial output(s); expected at least {}",
                st.min_partials
            ),
            format!("{partials} partial(s), then the terminal response"),
        ));
    }
    if let Some(want) = &st.terminal_json {
        match serde_json::from_slice::<serde_json::Value>(&terminal.payload) {
            Ok(v) if json_contains(&v, want) => {}
            Ok(v) => {
                return Err(c.fail(
                    format!("terminal response {v} does not contain {want}"),
                    "terminal response",
                ))
            }
            Err(e) => {
                return Err(c.fail(
                    format!("terminal response is not JSON: {e}"),
                    "terminal response",
                ))
            }
        }
    }
    Ok(format!(
        "{partials} partial output(s), then the terminal response"
    ))
}
