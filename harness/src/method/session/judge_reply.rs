//! The session judges of what the endpoint answers or forwards: a reply's shape and JSON,
//! the identity it reports, what an intermediary forwards upstream, an error frame's JSON,
//! and streamed answers. One function per expectation.

use super::conv::Conv;
use super::judge::Ctx;
use super::obs::Obs;
use super::work::{Inputs, StepFailure};
use crate::catalog::vector::WhenSilent;
use crate::plan::materialize::ReplyPattern;
use crate::report::result::{Dir, Verdict};
use crate::support::transcript::transcript_hex;
use bytes::Bytes;

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
        None => Err(c.fail(
            format!("the endpoint reports no identity at {ptr}; the harness presented {want}"),
            "nothing",
        )),
        Some(other) => Err(c.fail(
            format!("the endpoint reports identity {other} at {ptr}; the harness presented {want}"),
            other.to_string(),
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
