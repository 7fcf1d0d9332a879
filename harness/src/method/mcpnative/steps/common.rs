//! What the step files share: the requirement IDs the steps' own checks name, what a
//! step produced (`Done`), and the helpers that judge plain `jsonrpc_line` steps.

use crate::catalog::mcpnative::{McpExpect, McpStep, Pick};
use crate::catalog::vector::{JsonRpcExpect, JsonRpcStep, ResponseSpec};
use crate::method::mcpnative::conv::{short, Arrived, Conv, Pumped};
use crate::method::mcpnative::judge::{self, Inbound};
use crate::method::mcpnative::record::StepRecord;
use crate::method::mcpnative::stop::Stop;
use crate::report::result::Dir;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Requirement IDs the steps' own checks name.
pub(super) const INITIALIZE: &str = "MCPN-001";
pub(super) const NEGOTIATION: &str = "MCPN-025";
pub(super) const DISCOVER: &str = "MCPN-060";
pub(super) const UNSUPPORTED_VERSION: &str = "MCPN-061";
pub(super) const TOOL_CALL: &str = "MCPN-005";
pub(super) const TOOL_RESULT: &str = "MCPN-030";

/// The requirement a list method's failure breaks.
pub(super) fn list_rule(method: &str) -> &'static str {
    match method {
        "tools/list" => "MCPN-004",
        "resources/list" => "MCPN-006",
        "prompts/list" => "MCPN-007",
        "resources/templates/list" => "MCPN-036",
        _ => "MCPN-020",
    }
}

/// `resources/read` answers with the resource's contents.
pub(super) const RESOURCE_READ: &str = "MCPN-013";

/// Whether a step only gets the vector going: an `open` or a `pick` without expectations
/// of its own that the vector's own steps follow. The last step is always the vector's
/// own (a vector of one `open` is about opening).
pub(super) fn is_setup(s: &JsonRpcStep, last: bool) -> bool {
    !last
        && s.expect.as_slice().is_empty()
        && matches!(s.mcp, Some(McpStep::Open(_)) | Some(McpStep::Pick(_)))
}

/// What a set-up step checks of the server, and so the rules its failure breaks: the
/// session opens; the list it picks from is answered.
pub(super) fn setup_rules(s: &JsonRpcStep) -> Vec<String> {
    let rules: &[&str] = match &s.mcp {
        Some(McpStep::Open(_)) => &[INITIALIZE],
        Some(McpStep::Pick(Pick::Tool | Pick::ToolWithArguments)) => &["MCPN-004"],
        Some(McpStep::Pick(Pick::Resource)) => &["MCPN-006"],
        Some(McpStep::Pick(Pick::BlobResource)) => &["MCPN-006", RESOURCE_READ],
        Some(McpStep::Pick(Pick::Prompt | Pick::PromptWithRequiredArgument)) => &["MCPN-007"],
        Some(McpStep::Pick(Pick::CompletionTarget)) => &["MCPN-007", "MCPN-036"],
        Some(McpStep::Pick(Pick::SamplingTool | Pick::ElicitationTool | Pick::LoggingTool)) => {
            &["MCPN-004"]
        }
        Some(McpStep::Pick(Pick::Template)) => &["MCPN-036"],
        _ => &[],
    };
    rules.iter().map(|r| (*r).to_owned()).collect()
}

/// The `mcp` expectations of a step.
pub(super) fn mcp_expects(s: &JsonRpcStep) -> impl Iterator<Item = &McpExpect> {
    s.expect.as_slice().iter().filter_map(|e| match e {
        JsonRpcExpect::Mcp(x) => Some(x.as_ref()),
        _ => None,
    })
}

/// Whether `actual` contains `expected`: objects by subset, arrays when every expected
/// element matches some actual element (`[]` matches any array), other values exactly.
pub fn json_matches(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|x| json_matches(x, v))),
        (Value::Array(a), Value::Array(e)) => {
            e.iter().all(|ev| a.iter().any(|av| json_matches(av, ev)))
        }
        _ => actual == expected,
    }
}

/// What a step produced, for its expectations.
#[derive(Default)]
pub(super) struct Done {
    /// The response it waited for.
    pub response: Option<Arrived>,
    /// The HTTP exchange it started.
    pub exchange: Option<u64>,
    /// The tool a `tools/call` named.
    pub tool: Option<String>,
    /// The responses of a step that sent several requests (`call_tools`, `await`), with
    /// the tool each called.
    pub calls: Vec<(Option<String>, Arrived)>,
    /// What it showed, for the report.
    pub observed: String,
}

/// The rule that governs the code of the error `a` carries, when the harness knows it apart
/// from the vector: a request for a method the negotiated version does not define gets
/// -32601 (MCPN-009). `None` when the expected codes are not that rule's, or the method
/// is one MCP defines.
pub(super) fn code_rule(conv: &mut Conv<'_>, a: &Arrived, codes: &[i64]) -> Option<&'static str> {
    if codes != [-32601] {
        return None;
    }
    let method = match &a.inbound {
        Inbound::Response {
            method: Some(m), ..
        } => m.clone(),
        _ => a
            .response_id()
            .and_then(|id| conv.method_of(id))
            .map(str::to_owned)?,
    };
    let defined = conv.peer.as_mut()?.defines_method(&method)?;
    (!defined).then_some(judge::METHOD_NOT_FOUND)
}

/// Moves the violations charged while a step ran into the records of the steps they
/// belong to (the step whose request a message answered may be an earlier one).
pub(super) fn take_charged(conv: &mut Conv<'_>, records: &mut [StepRecord]) {
    for (k, stop) in std::mem::take(&mut conv.charged) {
        if let Some(r) = records.get_mut(k) {
            r.failures.push(Stop {
                why: format!("step {}: {}", k + 1, stop.why),
                ..stop
            });
        }
    }
}

/// What a step does, in words.
pub(super) fn describe_step_of(s: &JsonRpcStep) -> String {
    s.mcp
        .as_ref()
        .map_or_else(|| "a JSON-RPC line".to_owned(), describe_step)
}

pub(super) fn unbound(name: &str) -> Stop {
    Stop::harness(format!(
        "${{{name}}} is not bound: the manifest's mcp_native.params or an earlier pick step binds it"
    ))
}

/// `params._meta`, created as needed.
pub(super) fn meta_of(params: &mut Option<Value>) -> &mut Map<String, Value> {
    let p = params.get_or_insert_with(|| json!({}));
    if !p.is_object() {
        *p = json!({});
    }
    let Some(o) = p.as_object_mut() else {
        unreachable!("made an object above")
    };
    let m = o.entry("_meta").or_insert_with(|| json!({}));
    if !m.is_object() {
        *m = json!({});
    }
    match m.as_object_mut() {
        Some(m) => m,
        None => unreachable!("made an object above"),
    }
}

/// Whether the harness may call a tool: named, annotated read-only and closed-world (the
/// annotations' defaults are the opposite), and not requiring task execution.
pub(super) fn callable(t: &Value) -> bool {
    // A tool without a name cannot be called (a broken list is judged where it is listed).
    if !t.get("name").is_some_and(Value::is_string) {
        return false;
    }
    let a = t.get("annotations");
    let hint = |k: &str| a.and_then(|a| a.get(k)).and_then(Value::as_bool);
    hint("readOnlyHint") == Some(true)
        && hint("openWorldHint") == Some(false)
        && t.pointer("/execution/taskSupport").and_then(Value::as_str) != Some("required")
}

/// Tells the judge what a hand-written line asks: a request's id is pending; a line whose
/// id the server cannot read may get an error without one. Returns the id its answer
/// carries (`null` for an unreadable one; `None` for a notification).
pub(super) fn register_line(conv: &mut Conv<'_>, text: &str) -> Option<Value> {
    let parsed = serde_json::from_str::<Value>(text).ok();
    let (id, method) = match &parsed {
        Some(v) => (
            v.get("id")
                .filter(|i| i.is_string() || i.is_number())
                .cloned(),
            v.get("method").and_then(Value::as_str),
        ),
        None => (None, None),
    };
    let readable = parsed.is_some() && id.is_some();
    if let Some(id) = &id {
        conv.sent(id, method.unwrap_or("(no method)"), None);
    }
    if let Some(peer) = &mut conv.peer {
        match (&id, method) {
            (Some(id), Some(m)) => peer.sent_request(id, m, None),
            (Some(id), None) => peer.sent_request(id, "(no method)", None),
            (None, Some(_)) if parsed.as_ref().is_some_and(|v| v.get("id").is_none()) => {}
            _ => peer.sent_unreadable(),
        }
    }
    match (readable, method, &parsed) {
        (true, _, _) => id,
        (false, Some(_), Some(v)) if v.get("id").is_none() => None,
        _ => Some(Value::Null),
    }
}

pub(super) fn describe_step(m: &McpStep) -> String {
    match m {
        McpStep::Open(_) => "the session opens".into(),
        McpStep::Request(r) => format!("a {} result", r.method),
        McpStep::Notify(n) => format!("{} sent", n.method),
        McpStep::Line(_) => "the line sent".into(),
        McpStep::Pick(p) => format!("a {} to pick", p.as_str()),
        McpStep::Walk(w) => format!("every page of {}", w.method),
        McpStep::Http(_) => "an HTTP exchange".into(),
        McpStep::CloseStdin => "stdin closed".into(),
        McpStep::CallTools(_) => "a result from every tool the harness may call".into(),
        McpStep::Await => "a response to every request in flight".into(),
        McpStep::Resume(r) => format!("the response to {} once across a resumption", r.method),
    }
}

/// `${NAME}` replaced by text (plain `jsonrpc_line` steps).
pub(super) fn fill_text(s: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = s.to_owned();
    for (k, v) in vars {
        out = out.replace(&format!("${{{k}}}"), v);
    }
    out
}

pub(super) fn substitute(v: &Value, vars: &BTreeMap<String, String>) -> Value {
    match v {
        Value::String(s) => Value::String(fill_text(s, vars)),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), substitute(x, vars)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute(x, vars)).collect()),
        other => other.clone(),
    }
}

pub(super) fn describe_response(r: &ResponseSpec, vars: &BTreeMap<String, String>) -> String {
    let what = match (&r.result, &r.error) {
        (Some(res), _) => format!("a result containing {}", substitute(res, vars)),
        (None, Some(e)) => {
            let mut w = match e.code {
                Some(c) => format!("an error with code {c}"),
                None => "an error".to_owned(),
            };
            if let Some(m) = &e.message {
                w.push_str(&format!(", message {m:?}"));
            }
            if let Some(d) = &e.data {
                w.push_str(&format!(", data containing {d}"));
            }
            w
        }
        (None, None) => "a result or an error".to_owned(),
    };
    let status = r
        .http_status
        .map(|s| format!(" (HTTP {s} on the http transport)"))
        .unwrap_or_default();
    format!(
        "a JSON-RPC 2.0 response with id {} carrying {what}{status}",
        r.id
    )
}

/// A plain `response` expectation: the response with this id (others are set aside).
pub(crate) fn expect_response(
    conv: &mut Conv<'_>,
    r: &ResponseSpec,
    vars: &BTreeMap<String, String>,
) -> Result<String, Stop> {
    let exp = describe_response(r, vars);
    let deadline = conv.answer_deadline();
    let mut others: Vec<String> = Vec::new();
    let m = loop {
        if let Some(a) = conv.inbox.pop_front() {
            if a.response_id() == Some(&r.id) {
                break a;
            }
            others.push(a.summary());
            conv.log(Dir::Note, "a response to another id (skipped)");
            continue;
        }
        match conv.pump(deadline)? {
            Pumped::Got => {}
            Pumped::Timeout => {
                let obs = if others.is_empty() {
                    "no response".to_owned()
                } else {
                    format!("only responses to other ids: {}", others.join(", "))
                };
                return Err(Stop::fail(
                    format!(
                        "no response with id {} within {} ms",
                        r.id, conv.timing.step_ms
                    ),
                    exp,
                    obs,
                ));
            }
            Pumped::Closed(why) => return Err(Stop::fail(why.clone(), exp, why)),
        }
    };
    let (msg, status) = (m.msg, m.status);
    let obs = short(&msg.to_string());
    let bad = |why: String| Stop::fail(why, exp.clone(), obs.clone());
    if msg.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(bad("the response lacks \"jsonrpc\": \"2.0\"".into()));
    }
    let (res, err) = (msg.get("result"), msg.get("error"));
    match (res, err) {
        (Some(_), Some(_)) => return Err(bad("the response has both result and error".into())),
        (None, None) => return Err(bad("the response has neither result nor error".into())),
        _ => {}
    }
    if let Some(want) = &r.result {
        let Some(got) = res else {
            return Err(bad("an error instead of a result".into()));
        };
        if !json_matches(got, &substitute(want, vars)) {
            return Err(bad("the result does not contain what was expected".into()));
        }
    }
    if let Some(want) = &r.error {
        let Some(got) = err else {
            return Err(bad("a result instead of an error".into()));
        };
        let code = got.get("code").and_then(Value::as_i64);
        if code.is_none() {
            return Err(bad("the error has no integer code".into()));
        }
        if want.code.is_some() && code != want.code {
            return Err(bad(format!(
                "error code {} instead of {}",
                code.unwrap_or_default(),
                want.code.unwrap_or_default()
            )));
        }
        if let Some(m) = &want.message {
            if got.get("message").and_then(Value::as_str) != Some(m.as_str()) {
                return Err(bad(format!("error message other than {m:?}")));
            }
        }
        if let Some(data) = &want.data {
            if !got.get("data").is_some_and(|d| json_matches(d, data)) {
                return Err(bad(format!("error data does not contain {data}")));
            }
        }
    }
    if let (Some(want), Some(got)) = (r.http_status, status) {
        if want != got {
            return Err(bad(format!("HTTP status {got} instead of {want}")));
        }
    }
    Ok(obs)
}

pub(crate) fn expect_no_response(
    conv: &mut Conv<'_>,
    id: Option<&Value>,
    ms: u64,
) -> Result<String, Stop> {
    let exp = match id {
        Some(id) => format!("no response with id {id} within {ms} ms"),
        None => format!("no response within {ms} ms"),
    };
    let deadline = conv.tl.after(ms);
    loop {
        while let Some(a) = conv.inbox.pop_front() {
            if id.is_none_or(|id| a.response_id() == Some(id)) {
                return Err(Stop::fail(
                    "a response arrived",
                    exp,
                    short(&a.msg.to_string()),
                ));
            }
            conv.log(Dir::Note, "a response to another id (skipped)");
        }
        match conv.pump(deadline)? {
            Pumped::Got => {}
            // A server that exits is not answering; later steps show whether it matters.
            Pumped::Timeout => return Ok("none".into()),
            Pumped::Closed(why) => return Ok(why),
        }
    }
}

impl Inbound {
    /// Whether it is a response.
    pub fn is_response(&self) -> bool {
        matches!(self, Inbound::Response { .. })
    }
}
