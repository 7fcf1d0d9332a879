//! `${NAME}` placeholders in the JSON a vector sends or expects, filled from the manifest's
//! top-level `params`: what this SUT calls the things a portable vector needs (a method
//! that fails internally, one that streams). A vector naming a parameter the manifest does
//! not give is not applicable, so no vector depends on the reference's own methods.

use crate::catalog::vector::{Data, Expect, FieldsSpec, FrameSpec, Part, Send, Vector};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// Names filled at run time by the judge, never by the manifest.
pub const RUNTIME: &[&str] = &["CLIENT_IDENTITY"];

/// Triggers of optional features: a manifest without one declares that the SUT lacks the
/// feature, which the spec allows (MCP mapping §7: "if incremental output is supported";
/// the "(optional)" message classes of SWP-RPC and SWP-EVENTS, SWP-RPC's policy gate, and
/// SWP-ARTIFACT's resume tokens, an alternative to the range restart rule, §4, and
/// SWP-STATE's optional STATE_DELTA, §2; SWP-CRED's optional CRED_REVOKE, §2; SWP-RELAY's
/// optional RELAY_NACK, §2, as the dead letter's signal to a publisher and as a consumer's
/// answer, and its policy gate;
/// docs/spec-issues.md SI-026).
pub const FEATURE_PARAMS: &[&str] = &[
    // A2A defines no task kinds (a2a-profile §4: `kind` is the agent's own), so the kinds
    // the a2a vectors need are the SUT's to name; an agent without one runs none of them.
    "A2A_ECHO_KIND",
    "A2A_EVENTS_KIND",
    "A2A_FAIL_KIND",
    "A2A_MALFORMED_KIND",
    "A2A_MALFORMED_INPUT",
    // 1: the agent keeps one lifecycle per task_id for the channel, so a peer's Event or
    // Result for a Task the agent received is taken (SI-031(a); SI-P-A2A-V3).
    "A2A_CHANNEL_LIFECYCLE",
    "STREAM_METHOD",
    "STREAM_PARAMS",
    "STREAM_FAIL_PARAMS",
    "RPC_STREAM_METHOD",
    "RPC_STREAM_PARAMS",
    "RPC_SLOW_METHOD",
    "RPC_SLOW_PARAMS",
    "RPC_CANCEL_CODE",
    "RPC_GATED_METHOD",
    // A method gated to the first identity only: needs a policy with an allowed identity.
    "RPC_OWNER_METHOD",
    // 1: the SUT takes a peer's RPC_STREAM_ITEM, an optional class (swp-rpc §2; SI-P-RPC-V2).
    "RPC_TAKES_STREAM_ITEMS",
    // 1: the SUT refuses a callee's replay outcome other than the original (SI-P-RPC-V4).
    "RPC_CHECKS_REPLAY_OUTCOMES",
    // 1: past RPC_REPLAY_WINDOW_MS the SUT has forgotten the key (swp-rpc §6 says nothing past
    // the window; SI-P-RPC-V6).
    "RPC_KEY_FREED_AFTER_WINDOW",
    // A method failing with retryable true: §7 obliges no SUT to have one (SI-P-RPC-V8).
    "RPC_RETRY_METHOD",
    "EVENTS_ECHO_FILTER",
    "EVENTS_TICKS_FILTER",
    "EVENTS_BATCH_FILTER",
    // 1: the SUT takes a peer's EVT_BATCH, an optional class (swp-events §2; SI-P-EVENTS-V1).
    "EVENTS_TAKES_BATCH",
    // How the echo stream delivers a published EVT_BATCH: 1 as one EVT_BATCH, 0 as one
    // EVT_PUBLISH per event, in order (SI-P-EVENTS-V2).
    "EVENTS_ECHO_BATCH",
    // A filter the SUT refuses with EVT_ERR: filter syntax is its own (SI-P-EVENTS-V3).
    "EVENTS_REFUSED_FILTER",
    // 1: the SUT refuses a peer's event reusing an event_id for other content (SI-P-EVENTS-V4).
    "EVENTS_REJECTS_ID_REUSE",
    // 1: the SUT refuses a peer's event whose severity is outside its enumeration (SI-P-EVENTS-V5).
    "EVENTS_REJECTS_UNKNOWN_SEVERITY",
    "ARTIFACT_RESUME_TOKEN",
    // Tokens on range transfers too are the sender's choice (§4 token or range restart).
    "ARTIFACT_RANGE_RESUME_TOKEN",
    // 1: the SUT answers an offer with a GET; no clause obliges it (swp-artifact §5; SI-P-ARTIFACT-V6).
    "ARTIFACT_FETCHES_OFFERS",
    // 1: chunk i covers [i*C, (i+1)*C) of the artifact, whatever the range (§4; SI-P-ARTIFACT-V5).
    "ARTIFACT_GLOBAL_CHUNKS",
    // 1: the SUT resumes from a token its peer put on a chunk; range restart only: none (§4).
    "ARTIFACT_PEER_TOKENS",
    // 1: the SUT takes a peer's ART_ACK, an optional class (§2; SI-P-ARTIFACT-V7).
    "ARTIFACT_TAKES_ACK",
    // The hash_alg name under which the SUT verifies SHA-256; none named by §4 (SI-P-ARTIFACT-V8).
    "ARTIFACT_SHA256_NAME",
    // 1: a traceparent of a later version is parsed, as W3C says it SHOULD be (SI-P-OBS-V3).
    "OBS_LATER_VERSIONS",
    // 1: the SUT refuses a peer's OBS_DOC that does not return the context it set (SI-P-OBS-V4).
    "OBS_CHECKS_DOCS",
    // 1: the intermediary forwards SWP-OBS payloads octet for octet (P1 §4; SI-P-OBS-V5).
    "OBS_FORWARDS_OCTETS",
    "STATE_DELTA_ID",
    // An id the SUT's scheme refuses in form: a SUT whose ids take any octets has none.
    "STATE_MALFORMED_ID",
    // Deltas are optional (swp-state §2): the result ids of state_0106 and state_0108.
    "STATE_DELTA_SHORT_ID",
    "STATE_DELTA_LONG_ID",
    // Content-addressed state ids are a SHOULD (swp-state §4): an id that does not fit a blob.
    "STATE_WRONG_ID",
    "CRED_REVOKE_REASON",
    // SWP-AGDISC (docs/profiles.md): validators and explicit freshness are SHOULDs
    // (§5), AGDISC_NOT_MODIFIED an optional class (§2), and an invalid stored card, a
    // refused peer or an internal failure a state a SUT may have no way to be put in.
    "AGDISC_ETAG",
    "AGDISC_NOT_MODIFIED_ETAG",
    "AGDISC_MAX_AGE_MS",
    "AGDISC_INVALID_AGENT_ID",
    "AGDISC_INVALID_CARD_CODE",
    "AGDISC_UNAUTHORIZED_AGENT_ID",
    "AGDISC_UNAUTHORIZED_CODE",
    "AGDISC_INTERNAL_AGENT_ID",
    "AGDISC_INTERNAL_CODE",
    // SWP-TOOLDISC: paging and filtering are a SHOULD (§5).
    "TOOLDISC_PAGE_TOKEN",
    "TOOLDISC_FILTER",
    "RELAY_EXHAUSTED_REASON",
    "RELAY_NACK_REASON",
    "RELAY_GATED_TOPIC",
    // SWP-POLICYHINT: a second scope the SUT keeps apart from POLICYHINT_SCOPE_A.
    "POLICYHINT_SCOPE_B",
    // SWP-AGDISC: the receiver implements the optional AGDISC_NOT_MODIFIED (codec vectors).
    "AGDISC_TAKES_NOT_MODIFIED",
    // SWP-TOOLDISC: sha256:/sha384:/sha512: schema refs read as content hashes, not URIs.
    "TOOLDISC_CONTENT_HASH_FORMS",
    // SWP-CRED: credentials bound to the presenting identity (bearer stacks have none).
    "CRED_OTHER_CREDENTIAL",
    // SWP-CRED: as CRED_OTHER_CREDENTIAL, for the harness's second identity.
    "CRED_SECOND_CREDENTIAL",
    // SWP-CRED: a type the SUT's policy refuses (a carrier taking every type has none).
    "CRED_UNSUPPORTED_TYPE",
    // SWP-CRED: octets that are no credential (a carrier of opaque octets has none).
    "CRED_INVALID_CREDENTIAL",
    // SWP-CRED: entry lifetimes capped at CRED_MAX_TTL_MS.
    "CRED_TTL_CAPPED",
    // SWP-CRED: a chain takes no entry once one of its entries has expired.
    "CRED_CHAIN_EXPIRES_WITH_ENTRY",
    // SWP-CRED: expiry and its bound compared to the millisecond, no leeway.
    "CRED_EXPIRY_EXACT",
    // SWP-CRED: an open chain's root presented again is refused as a replay.
    "CRED_ROOT_REPLAY_REFUSED",
    // SWP-CRED: chains keyed by (identity, chain_id), not by chain_id alone.
    "CRED_CHAIN_IDS_PER_IDENTITY",
    // SWP-RELAY: a duplicate publish gets no answer at all (SI-P19-5).
    "RELAY_DUPLICATE_UNANSWERED",
    // SWP-RELAY: a consumer's retryable NACK uses up one of RELAY_MAX_ATTEMPTS.
    "RELAY_NACK_COUNTS_AS_ATTEMPT",
];

/// The manifest's values.
pub type Params = BTreeMap<String, Value>;

/// Why a vector's placeholders cannot be filled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FillError {
    /// The manifest gives no value for these names.
    #[error("the manifest declares no params {}", .0.iter().cloned().collect::<Vec<_>>().join(", "))]
    Missing(BTreeSet<String>),
    /// A structured value (object, array) used inside a longer string.
    #[error("the manifest's params {0} is {1}; the vector uses it inside a string, where only a string, number or boolean fits")]
    NotScalar(String, &'static str),
}

/// The vector with every manifest placeholder filled; borrowed when it has none.
pub fn fill<'v>(v: &'v Vector, params: &Params) -> Result<Cow<'v, Vector>, FillError> {
    // Vectors are small; one owned copy serves both the scan and the filling.
    let mut out = v.clone();
    let mut used = BTreeSet::new();
    visit_mut(&mut out, &mut |j| names(j, &mut used));
    // Expression parameters the run supplies (`NOW_MS`, the limits) are written into P1
    // field values when the vector is materialised (`materialize`), not by the manifest.
    used.retain(|n| {
        !RUNTIME.contains(&n.as_str())
            && (!crate::plan::expr::is_param(n)
                || crate::plan::expr::MANIFEST_PARAM_NAMES.contains(&n.as_str())
                || FEATURE_PARAMS.contains(&n.as_str()))
    });
    if used.is_empty() {
        return Ok(Cow::Borrowed(v));
    }
    let missing: BTreeSet<String> = used
        .iter()
        .filter(|n| !params.contains_key(*n))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(FillError::Missing(missing));
    }
    let mut err = None;
    visit_mut(&mut out, &mut |j| {
        if err.is_none() {
            if let Err(e) = substitute(j, params) {
                err = Some(e);
            }
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(Cow::Owned(out)),
    }
}

/// Every `${NAME}` in the strings of `j`.
fn names(j: &Value, out: &mut BTreeSet<String>) {
    match j {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(i) = rest.find("${") {
                let tail = &rest[i + 2..];
                let Some(end) = tail.find('}') else { break };
                let name = &tail[..end];
                if is_name(name) {
                    out.insert(name.to_owned());
                }
                rest = &tail[end..];
            }
        }
        Value::Array(a) => a.iter().for_each(|x| names(x, out)),
        Value::Object(m) => m.values().for_each(|x| names(x, out)),
        _ => {}
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Fills `j` in place: a string that is exactly `${NAME}` becomes the value (any JSON
/// type); a placeholder inside a longer string takes the value's text.
fn substitute(j: &mut Value, params: &Params) -> Result<(), FillError> {
    match j {
        Value::String(s) => {
            if let Some(name) = s.strip_prefix("${").and_then(|t| t.strip_suffix('}')) {
                if let Some(v) = params.get(name).filter(|_| is_name(name)) {
                    *j = v.clone();
                    return Ok(());
                }
            }
            let mut text = s.clone();
            for (k, v) in params {
                let pat = format!("${{{k}}}");
                if !text.contains(&pat) {
                    continue;
                }
                let with = match v {
                    Value::String(x) => x.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    Value::Null => return Err(FillError::NotScalar(k.clone(), "null")),
                    Value::Array(_) => return Err(FillError::NotScalar(k.clone(), "an array")),
                    Value::Object(_) => return Err(FillError::NotScalar(k.clone(), "an object")),
                };
                text = text.replace(&pat, &with);
            }
            *s = text;
            Ok(())
        }
        Value::Array(a) => a.iter_mut().try_for_each(|x| substitute(x, params)),
        Value::Object(m) => m.values_mut().try_for_each(|x| substitute(x, params)),
        _ => Ok(()),
    }
}

/// Calls `f` on every JSON value a vector sends or expects on the SWP wire.
fn visit_mut(v: &mut Vector, f: &mut dyn FnMut(&mut Value)) {
    for s in &mut v.steps {
        if let Some(send) = &mut s.send {
            send_json(send, f);
        }
        let list: &mut [Expect] = match &mut s.expect {
            crate::catalog::vector::Expectations::Many(v) => v,
            crate::catalog::vector::Expectations::One(e) => std::slice::from_mut(e.as_mut()),
        };
        for e in list {
            match e {
                Expect::Reply(r) => {
                    if let Some(j) = &mut r.payload_json {
                        f(j);
                    }
                    if let Some(d) = &mut r.payload {
                        data_json(d, f);
                    }
                    if let Some(spec) = &mut r.payload_p1 {
                        p1_json(spec, f);
                    }
                }
                Expect::Stream(st) => {
                    if let Some(j) = &mut st.terminal_json {
                        f(j);
                    }
                }
                Expect::Flow(items) => {
                    for m in items {
                        p1_json(&mut m.p1, f);
                    }
                }
                Expect::Accept(a) => {
                    if let Some(fs) = &mut a.fields {
                        fields_json(fs, f);
                    }
                }
                // A profile's error code is the SUT's own string (`${AGDISC_NOT_FOUND_CODE}`).
                Expect::Answer(a) => {
                    if let Some(code) = &mut a.err.code {
                        let mut j = Value::String(std::mem::take(code));
                        f(&mut j);
                        *code = match j {
                            Value::String(s) => s,
                            other => other.to_string(),
                        };
                    }
                }
                _ => {}
            }
        }
    }
}

fn send_json(s: &mut Send, f: &mut dyn FnMut(&mut Value)) {
    if let Some(fr) = &mut s.frame {
        frame_json(fr, f);
    }
    if let Some(parts) = &mut s.raw {
        parts_json(parts, f);
    }
    if let Some(d) = &mut s.slow_request {
        data_json(d, f);
    }
}

fn parts_json(ps: &mut [Part], f: &mut dyn FnMut(&mut Value)) {
    for p in ps {
        match p {
            Part::Frame(fr) | Part::Body(fr) => frame_json(fr, f),
            Part::Prefixed(inner) => parts_json(inner, f),
            _ => {}
        }
    }
}

fn frame_json(fr: &mut FrameSpec, f: &mut dyn FnMut(&mut Value)) {
    for d in [&mut fr.msg_id, &mut fr.payload].into_iter().flatten() {
        data_json(d, f);
    }
    for x in &mut fr.extensions {
        data_json(&mut x.value, f);
    }
}

fn fields_json(fs: &mut FieldsSpec, f: &mut dyn FnMut(&mut Value)) {
    for d in [&mut fs.msg_id, &mut fs.payload].into_iter().flatten() {
        data_json(d, f);
    }
    if let Some(exts) = &mut fs.extensions {
        for x in exts {
            data_json(&mut x.value, f);
        }
    }
}

fn data_json(d: &mut Data, f: &mut dyn FnMut(&mut Value)) {
    match d {
        Data::Json(j) => f(j),
        Data::P1(spec) => p1_json(spec, f),
        _ => {}
    }
}

/// A P1 spec's field values (`{rpc.RpcReq: {method: "${RPC_ECHO_METHOD}"}}`): the SUT's
/// names for the things SWP-* vectors need (docs/profiles.md).
fn p1_json(spec: &mut crate::p1::P1Spec, f: &mut dyn FnMut(&mut Value)) {
    let mut j = Value::Object(std::mem::take(spec));
    f(&mut j);
    if let Value::Object(m) = j {
        *spec = m;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params() -> Params {
        let mut p = Params::new();
        p.insert("M".into(), json!("tools/fail"));
        p.insert("ARGS".into(), json!({"count": 3}));
        p
    }

    #[test]
    fn whole_string_takes_any_json_and_inner_takes_text() {
        let mut j = json!({"method": "${M}", "params": "${ARGS}", "note": "x ${M} y"});
        substitute(&mut j, &params()).unwrap();
        assert_eq!(
            j,
            json!({"method": "tools/fail", "params": {"count": 3}, "note": "x tools/fail y"})
        );
    }

    #[test]
    fn p1_payloads_take_the_manifest_names() {
        let yaml = r#"
id: rpc_0000_x
title: t
namespace: rpc
requirements: []
methods: [session]
steps:
  - send: {frame: {payload: {p1: {rpc.RpcReq: {rpc_id: r, method: "${M}"}}}}}
    expect: {flow: [{p1: {rpc.RpcResp: {result: "got ${M}"}}}]}
"#;
        let v: Vector = serde_saphyr::from_str(yaml).unwrap();
        let filled = fill(&v, &params()).unwrap();
        let text = serde_json::to_string(&filled.steps).unwrap();
        assert!(text.contains(r#""method":"tools/fail""#), "{text}");
        assert!(text.contains(r#""result":"got tools/fail""#), "{text}");
        assert!(matches!(
            fill(&v, &Params::new()),
            Err(FillError::Missing(m)) if m.contains("M")
        ));
    }

    #[test]
    fn a_profile_error_code_takes_the_manifest_name() {
        let yaml = r#"
id: agdisc_0000_x
title: t
namespace: agdisc
requirements: []
methods: [session]
steps:
  - send: {frame: {payload: {p1: {agdisc.AgdiscGet: {agent_id: a}}}}}
    expect: {answer: {err: {code: "${M}", also: [ERR_NOT_FOUND]}}}
"#;
        let v: Vector = serde_saphyr::from_str(yaml).unwrap();
        let filled = fill(&v, &params()).unwrap();
        let text = serde_json::to_string(&filled.steps).unwrap();
        assert!(text.contains(r#""code":"tools/fail""#), "{text}");
        assert!(matches!(
            fill(&v, &Params::new()),
            Err(FillError::Missing(m)) if m.contains("M")
        ));
    }

    #[test]
    fn a_structured_value_inside_a_string_is_refused() {
        let mut j = json!("a ${ARGS}");
        assert_eq!(
            substitute(&mut j, &params()),
            Err(FillError::NotScalar("ARGS".into(), "an object"))
        );
    }

    #[test]
    fn names_are_found_and_runtime_ones_are_not_required() {
        let mut out = BTreeSet::new();
        names(
            &json!(["${A_1}", {"k": "p${B}q"}, "${lower}", "${CLIENT_IDENTITY}"]),
            &mut out,
        );
        let want: BTreeSet<String> = ["A_1", "B", "CLIENT_IDENTITY"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(out, want);
    }
}
