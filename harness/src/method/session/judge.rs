//! Judgement of what an endpoint shows after a step, one function per expectation kind.
//! Each returns a few words of what it observed, or the [`StepFailure`] that ends the vector.

use super::confirm::probe_answered;
use super::conv::{Conv, Obs};
use super::{Inputs, StepFailure};
use crate::evaluate::judge_codec_step;
use crate::materialize::{Expectation, ReplyPattern};
use crate::model::{Dir, Verdict};
use crate::sut::RejectMode;
use crate::transcript::transcript_hex;
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
    let step_ms = conv.spec.timing.step_ms;
    let deadline = conv.step_deadline();
    let got = loop {
        match conv.next(deadline) {
            Some(Obs::Reply(_)) => continue,
            other => break other,
        }
    };
    let ev = match got {
        Some(Obs::Error { code, .. }) => {
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
            if conv.spec.reject_signal.mode == RejectMode::ErrorFrame {
                return Err(c.fail(
                    format!("the connection {why} without the error frame the manifest promises"),
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
        Some(Obs::Garbage(g)) => return Err(c.fail(g, "invalid output")),
        // Replies were skipped above, so only a timeout reaches here: accepted, or hung?
        Some(Obs::Reply(_)) | None => {
            if probe_answered(conv, inputs.params, inputs.requests) {
                return Err(c.fail(
                    format!("accepted: no reject within {step_ms} ms and the probe was answered"),
                    "accepted",
                ));
            }
            return Err(StepFailure::new(
                Verdict::Timeout,
                format!(
                    "{}no reject, no close and no answer within {step_ms} ms",
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
        }));
    }
    Ok((j.observed, code))
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
pub fn silence(conv: &mut Conv<'_>, ms: u64, c: &Ctx<'_>) -> Result<String, Box<StepFailure>> {
    let d = conv.after(ms);
    if d > conv.hard_deadline {
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
    identity: Option<&str>,
    c: &Ctx<'_>,
) -> Result<String, Box<StepFailure>> {
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
            return Err(StepFailure::new(
                Verdict::Timeout,
                format!("{}no reply within {step_ms} ms", c.label),
                c.expected,
                "silence",
            ))
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
            why = super::a2a::check_p1_reply(spec, p.p1_canonical, &env)
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
