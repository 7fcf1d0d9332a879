//! `${NAME}` placeholders in the JSON a vector sends or expects, filled from the manifest's
//! top-level `params`: what this SUT calls the things a portable vector needs (a method
//! that fails internally, one that streams). A vector naming a parameter the manifest does
//! not give is not applicable, so no vector depends on the reference's own methods.

use crate::catalog::vector::{Body, Data, FieldsSpec, FrameExpect, FrameSpec, Part, Send, Vector};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// Names filled at run time by the judge, never by the manifest.
pub const RUNTIME: &[&str] = &["CLIENT_IDENTITY"];

pub use super::features::FEATURE_PARAMS;

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

/// Calls `f` on every JSON value a vector sends or expects on the SWP wire: only codec and
/// session vectors have one (the MCP methods fill their own `${NAME}`s while running).
fn visit_mut(v: &mut Vector, f: &mut dyn FnMut(&mut Value)) {
    let Body::Frames(b) = &mut v.body else {
        return;
    };
    for s in &mut b.steps {
        if let Some(send) = &mut s.send {
            send_json(send, f);
        }
        for e in &mut s.expect {
            match e {
                FrameExpect::Reply(r) => {
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
                FrameExpect::Stream(st) => {
                    if let Some(j) = &mut st.terminal_json {
                        f(j);
                    }
                }
                FrameExpect::Flow(items) => {
                    for m in items {
                        p1_json(&mut m.p1, f);
                    }
                }
                FrameExpect::Accept(a) => {
                    if let Some(fs) = &mut a.fields {
                        fields_json(fs, f);
                    }
                }
                // A profile's error code is the SUT's own string (`${AGDISC_NOT_FOUND_CODE}`).
                FrameExpect::Answer(a) => {
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

    /// What the frames steps of `v` send and expect, as JSON where it is JSON.
    fn sent_and_expected(v: &Vector) -> String {
        let Body::Frames(b) = &v.body else {
            return String::new();
        };
        let mut out = String::new();
        for s in &b.steps {
            out += &serde_json::to_string(&s.send).unwrap();
            for e in &s.expect {
                out += &match e {
                    FrameExpect::Flow(items) => serde_json::to_string(items).unwrap(),
                    FrameExpect::Answer(a) => serde_json::to_string(a).unwrap(),
                    other => format!("{other:?}"),
                };
            }
        }
        out
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
        let text = sent_and_expected(&filled);
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
        let text = sent_and_expected(&filled);
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
