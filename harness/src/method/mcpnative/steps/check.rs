//! The checks of a step's `mcp` expectations (one function per expectation), hand-written
//! HTTP exchanges, and the plain `jsonrpc_line` steps.

use super::common::*;
use super::runner::Runner;
use crate::catalog::mcpnative::{HttpSpec, McpExpect, SessionHeader};
use crate::catalog::vector::{JsonRpcExpect, JsonRpcStep, Num};
use crate::method::mcpnative::args;
use crate::method::mcpnative::conv::{short, Arrived, Conv, Pumped};
use crate::method::mcpnative::http::{Exchange, Verb};
use crate::method::mcpnative::stop::Stop;
use crate::report::result::NaCause;
use serde_json::{json, Value};
use std::time::Duration;

impl<'v> Runner<'v> {
    pub(super) fn http(&mut self, conv: &mut Conv<'_>, h: &HttpSpec) -> Result<Done, Stop> {
        let verb = match h.method.as_deref().unwrap_or("POST") {
            "POST" => Verb::Post,
            "GET" => Verb::Get,
            "DELETE" => Verb::Delete,
            other => return Err(Stop::harness(format!("http: unknown method {other}"))),
        };
        let which = h.session.unwrap_or(SessionHeader::Current);
        if which != SessionHeader::Current
            && self.opened
            && conv.http_session().is_none()
            && conv.session_ended.is_none()
        {
            return Err(Stop::not_applicable(
                NaCause::SutChoice,
                "the server assigned no Mcp-Session-Id (a server without sessions)",
            ));
        }
        let body = match &h.body {
            Some(b) => {
                let b = self.fill(b)?;
                if let (Some(id), Some(m)) = (b.get("id"), b.get("method").and_then(Value::as_str))
                {
                    conv.sent(id, m, None);
                }
                if let Some(peer) = &mut conv.peer {
                    match (b.get("id"), b.get("method").and_then(Value::as_str)) {
                        (Some(id), Some(m)) => peer.sent_request(id, m, None),
                        (None, Some("notifications/initialized")) => peer.initialized = true,
                        _ => {}
                    }
                }
                b.to_string().into_bytes()
            }
            None => Vec::new(),
        };
        let session = match which {
            SessionHeader::Current => conv.http_session(),
            SessionHeader::None => None,
            SessionHeader::Ended => conv.session_ended.clone(),
        };
        let protocol_version = match &h.protocol_version {
            Some(v) if v.is_empty() => None,
            Some(v) => Some(self.fill_str(v)?),
            None => conv.protocol_header.clone(),
        };
        let headers = h
            .headers
            .iter()
            .map(|(k, v)| Ok((k.clone(), self.fill_str(v)?)))
            .collect::<Result<Vec<_>, Stop>>()?;
        let n = conv
            .http(Exchange {
                verb,
                body,
                session,
                protocol_version,
                headers,
            })
            .map_err(|e| Stop::harness(e.0))?;
        if verb == Verb::Delete {
            let d = conv.answer_deadline();
            let st = conv.wait_status(n, d)?;
            if st.status == Some(405) {
                return Err(Stop::not_applicable(
                    NaCause::SutChoice,
                    "the server does not let clients end sessions (DELETE answered 405, which it may)",
                ));
            }
            if st.status.is_some_and(|s| (200..300).contains(&s)) {
                conv.end_http_session();
            }
        }
        Ok(Done {
            exchange: Some(n),
            ..Done::default()
        })
    }

    /// Checks one expectation against what the step produced.
    pub(super) fn check(
        &mut self,
        conv: &mut Conv<'_>,
        e: &McpExpect,
        done: &Done,
        notes_from: usize,
    ) -> Result<(String, String), Stop> {
        let mut acc = Checked::default();
        self.expect_http_status(conv, e, done, notes_from, &mut acc)?;
        self.expect_http_answer(conv, e, done, notes_from, &mut acc)?;
        self.expect_result(conv, e, done, notes_from, &mut acc)?;
        self.expect_empty(conv, e, done, notes_from, &mut acc)?;
        self.expect_error(conv, e, done, notes_from, &mut acc)?;
        self.expect_error_or_is_error(conv, e, done, notes_from, &mut acc)?;
        self.expect_base64_blobs(conv, e, done, notes_from, &mut acc)?;
        self.expect_tool_output(conv, e, done, notes_from, &mut acc)?;
        self.expect_notification(conv, e, done, notes_from, &mut acc)?;
        self.expect_quiet(conv, e, done, notes_from, &mut acc)?;
        self.expect_exit(conv, e, done, notes_from, &mut acc)?;
        self.check_more(conv, e, done, notes_from, &mut acc)?;
        Ok((acc.expected.join("; "), acc.observed))
    }

    /// The `HTTP status` expectation, when `e` has one.
    fn expect_http_status(
        &mut self,
        conv: &mut Conv<'_>,
        e: &McpExpect,
        done: &Done,
        _notes_from: usize,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        if e.http_status.is_empty() {
            return Ok(());
        }
        let Checked { expected, observed } = acc;
        let want: Vec<String> = e.http_status.iter().map(u16::to_string).collect();
        expected.push(format!("HTTP status {}", want.join(" or ")));
        let Some(n) = done.exchange else {
            return Err(Stop::harness(
                "`http_status` on a step without an HTTP exchange",
            ));
        };
        let d = conv.answer_deadline();
        let st = conv.wait_status(n, d)?;
        let got = match (st.status, &st.failed) {
            (Some(s), _) => s,
            (None, Some(f)) => {
                return Err(Stop::fail(
                    format!("the exchange failed: {f}"),
                    expected.join("; "),
                    f.clone(),
                ))
            }
            (None, None) => 0,
        };
        *observed = format!("HTTP {got}");
        if !e.http_status.contains(&got) {
            return Err(Stop::fail(
                format!("HTTP status {got} instead of {}", want.join(" or ")),
                expected.join("; "),
                observed.clone(),
            ));
        }
        Ok(())
    }
    /// The `Content-Type and body` expectation, when `e` has one.
    fn expect_http_answer(
        &mut self,
        conv: &mut Conv<'_>,
        e: &McpExpect,
        done: &Done,
        _notes_from: usize,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        if e.http_content_type.is_empty() && !e.http_no_body {
            return Ok(());
        }
        let Checked { expected, observed } = acc;
        let Some(n) = done.exchange else {
            return Err(Stop::harness(
                "an HTTP expectation on a step without an HTTP exchange",
            ));
        };
        let d = conv.answer_deadline();
        let st = conv.wait_status(n, d)?;
        if !e.http_content_type.is_empty() && st.status.is_some_and(|s| (200..300).contains(&s)) {
            expected.push(format!("Content-Type {}", e.http_content_type.join(" or ")));
            let mime = st
                .content_type
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            *observed = format!(
                "HTTP {} with Content-Type {:?}",
                st.status.unwrap_or_default(),
                st.content_type
            );
            if !e
                .http_content_type
                .iter()
                .any(|c| c.eq_ignore_ascii_case(&mime))
            {
                return Err(Stop::fail(
                    format!("a request answered with Content-Type {:?}", st.content_type),
                    expected.join("; "),
                    observed.clone(),
                ));
            }
        }
        if e.http_no_body {
            expected.push("no body".into());
            let ended = loop {
                if let Some(x) = conv
                    .exchanges
                    .get(&n)
                    .and_then(|x| x.ended.clone().or(x.failed.clone()))
                {
                    break x;
                }
                match conv.pump(d)? {
                    Pumped::Got => {}
                    Pumped::Timeout | Pumped::Closed(_) => break "the body did not end".into(),
                }
            };
            if ended != "no body" {
                return Err(Stop::fail(
                    format!("the answer has a body ({ended})"),
                    expected.join("; "),
                    ended,
                ));
            }
        }
        Ok(())
    }
    /// The `result` expectation, when `e` has one.
    fn expect_result(
        &mut self,
        _conv: &mut Conv<'_>,
        e: &McpExpect,
        done: &Done,
        _notes_from: usize,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        let Some(want) = &e.result else {
            return Ok(());
        };
        let Checked { expected, observed } = acc;
        let want = self.fill(want)?;
        expected.push(format!("a result containing {want}"));
        let a = resp(done)?;
        *observed = short(&a.msg.to_string());
        let Some(got) = result_of(a) else {
            return Err(Stop::fail(
                "an error instead of a result",
                expected.join("; "),
                observed.clone(),
            ));
        };
        if !json_matches(&got, &want) {
            return Err(Stop::fail(
                "the result does not contain what was expected",
                expected.join("; "),
                observed.clone(),
            ));
        }
        Ok(())
    }
    /// The `empty result` expectation, when `e` has one.
    fn expect_empty(
        &mut self,
        _conv: &mut Conv<'_>,
        e: &McpExpect,
        done: &Done,
        _notes_from: usize,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        if !(e.empty) {
            return Ok(());
        }
        let Checked { expected, observed } = acc;
        expected.push("an empty result".into());
        let a = resp(done)?;
        *observed = short(&a.msg.to_string());
        let Some(got) = result_of(a) else {
            return Err(Stop::fail(
                "an error instead of a result",
                expected.join("; "),
                observed.clone(),
            ));
        };
        let extra: Vec<&String> = got
            .as_object()
            .map(|o| {
                o.keys()
                    .filter(|k| !matches!(k.as_str(), "_meta" | "resultType"))
                    .collect()
            })
            .unwrap_or_default();
        if !got.is_object() || !extra.is_empty() {
            return Err(Stop::fail(
                format!(
                    "the result is not empty: it has {}",
                    crate::support::show::quoted_list(&extra)
                ),
                expected.join("; "),
                observed.clone(),
            ));
        }
        Ok(())
    }
    /// The `error response` expectation, when `e` has one.
    fn expect_error(
        &mut self,
        conv: &mut Conv<'_>,
        e: &McpExpect,
        done: &Done,
        _notes_from: usize,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        let Some(want) = &e.error else {
            return Ok(());
        };
        let Checked { expected, observed } = acc;
        let codes: Vec<String> = want.codes.iter().map(i64::to_string).collect();
        expected.push(if codes.is_empty() {
            "an error response".into()
        } else {
            format!("an error with code {}", codes.join(" or "))
        });
        let a = resp(done)?;
        *observed = short(&a.msg.to_string());
        let Some(err) = a.msg.get("error") else {
            let is_error = a.msg.pointer("/result/isError") == Some(&json!(true));
            let why = if is_error {
                "a result with isError: true instead of a JSON-RPC error response"
            } else {
                "a result instead of an error"
            };
            return Err(Stop::fail(why, expected.join("; "), observed.clone()));
        };
        let code = err.get("code").and_then(Value::as_i64).unwrap_or_default();
        if !want.codes.is_empty() && !want.codes.contains(&code) {
            let stop = Stop::fail(
                format!("error code {code} instead of {}", codes.join(" or ")),
                expected.join("; "),
                observed.clone(),
            );
            // The code of an error to a method MCP does not define is MCPN-009's: a
            // vector that only uses such a request (to see the session go on, or count
            // answers) does not fail for its code (mcpnative_0028, 0029).
            match code_rule(conv, a, &want.codes) {
                Some(rule) => self.judged_by(
                    conv,
                    rule,
                    "an unknown method answered with a code other than -32601",
                    stop,
                )?,
                None => return Err(stop),
            }
        }
        for k in &want.data_has {
            if err.get("data").and_then(|d| d.get(k)).is_none() {
                return Err(Stop::fail(
                    format!("the error's data lacks `{k}`"),
                    expected.join("; "),
                    observed.clone(),
                ));
            }
        }
        Ok(())
    }
    /// The `error or isError` expectation, when `e` has one.
    fn expect_error_or_is_error(
        &mut self,
        _conv: &mut Conv<'_>,
        e: &McpExpect,
        done: &Done,
        _notes_from: usize,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        if !(e.error_or_is_error) {
            return Ok(());
        }
        let Checked { expected, observed } = acc;
        expected.push("an error response or a result with isError: true".into());
        let a = resp(done)?;
        *observed = short(&a.msg.to_string());
        let refused =
            a.msg.get("error").is_some() || a.msg.pointer("/result/isError") == Some(&json!(true));
        if !refused {
            return Err(Stop::fail(
                "a successful result for arguments that break the tool's inputSchema",
                expected.join("; "),
                observed.clone(),
            ));
        }
        Ok(())
    }
    /// The `base64 blobs` expectation, when `e` has one.
    fn expect_base64_blobs(
        &mut self,
        _conv: &mut Conv<'_>,
        e: &McpExpect,
        done: &Done,
        _notes_from: usize,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        if !(e.base64_blobs) {
            return Ok(());
        }
        let Checked { expected, observed } = acc;
        use base64::Engine as _;
        expected.push("blob contents in base64".into());
        let a = resp(done)?;
        *observed = short(&a.msg.to_string());
        let blobs: Vec<&str> = a
            .msg
            .pointer("/result/contents")
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .filter_map(|x| x.get("blob").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default();
        if blobs.is_empty() {
            return Err(Stop::fail(
                "no blob contents in the result",
                expected.join("; "),
                observed.clone(),
            ));
        }
        for b in blobs {
            if base64::engine::general_purpose::STANDARD.decode(b).is_err() {
                return Err(Stop::fail(
                    format!("a blob that is not base64: {}", short(b)),
                    expected.join("; "),
                    observed.clone(),
                ));
            }
        }
        Ok(())
    }
    /// The `tool output` expectation, when `e` has one.
    fn expect_tool_output(
        &mut self,
        conv: &mut Conv<'_>,
        e: &McpExpect,
        done: &Done,
        _notes_from: usize,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        if !(e.tool_output) {
            return Ok(());
        }
        let Checked { expected, observed } = acc;
        expected.push(
            "a tool result whose structuredContent conforms to the tool's outputSchema".into(),
        );
        let a = resp(done)?;
        *observed = short(&a.msg.to_string());
        // Each check names its rule: a step that does not test that rule (a progress
        // vector calling a tool) records another rule's defect in passing.
        'tool: {
            let Some(r) = result_of(a) else {
                let stop = Stop::fail(
                    format!("{TOOL_CALL}: calling a listed tool with arguments valid against its inputSchema was answered with an error"),
                    expected.join("; "),
                    observed.clone(),
                );
                self.judged_by(
                    conv,
                    TOOL_CALL,
                    "a listed tool called with valid arguments answered with an error",
                    stop,
                )?;
                break 'tool;
            };
            let out = done
                .tool
                .as_ref()
                .and_then(|t| self.tools.get(t))
                .and_then(|t| t.get("outputSchema"))
                .cloned();
            if r.get("isError") == Some(&json!(true)) {
                break 'tool;
            }
            let Some(schema) = out else { break 'tool };
            let problem = match r.get("structuredContent") {
                None => Some((
                    "a result without structuredContent",
                    "the tool declares an outputSchema, and its result has no structuredContent",
                )),
                Some(sc) => match args::is_valid(&schema, sc) {
                    Some(true) => None,
                    Some(false) => Some((
                        "structuredContent breaking the outputSchema",
                        "structuredContent does not conform to the tool's outputSchema",
                    )),
                    None => Some((
                        "an outputSchema the harness cannot compile",
                        "the tool's outputSchema is not a JSON Schema the harness can compile",
                    )),
                },
            };
            if let Some((class, why)) = problem {
                let stop = Stop::fail(
                    format!("{TOOL_RESULT}: {why}"),
                    expected.join("; "),
                    observed.clone(),
                );
                self.judged_by(conv, TOOL_RESULT, class, stop)?;
            }
        }
        Ok(())
    }
    /// The `notification` expectation, when `e` has one.
    fn expect_notification(
        &mut self,
        conv: &mut Conv<'_>,
        e: &McpExpect,
        _done: &Done,
        notes_from: usize,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        let Some(nx) = &e.notification else {
            return Ok(());
        };
        let Checked { expected, observed } = acc;
        let params = nx.params.as_ref().map(|p| self.fill(p)).transpose()?;
        expected.push(format!("a {} notification", nx.method));
        let d = conv.answer_deadline();
        loop {
            let hit = conv.notifications[notes_from..].iter().any(|(_, m, p)| {
                m == &nx.method && params.as_ref().is_none_or(|want| json_matches(p, want))
            });
            if hit {
                *observed = format!("{} arrived", nx.method);
                break;
            }
            match conv.pump(d)? {
                Pumped::Got => {}
                Pumped::Timeout | Pumped::Closed(_) => {
                    return Err(Stop::fail(
                        format!("no {} notification arrived", nx.method),
                        expected.join("; "),
                        "none",
                    ))
                }
            }
        }
        Ok(())
    }
    /// The `quiet window` expectation, when `e` has one.
    fn expect_quiet(
        &mut self,
        conv: &mut Conv<'_>,
        e: &McpExpect,
        _done: &Done,
        _notes_from: usize,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        let Some(ms) = e.quiet_ms else {
            return Ok(());
        };
        let Checked { expected, observed } = acc;
        // Everything that arrives is judged: a reply to a notification, a second
        // response or one to an unknown id fails there. Responses to requests still in
        // flight (`wait: false`) are what they should be.
        expected.push(format!(
            "nothing but answers to requests in flight within {ms} ms"
        ));
        conv.settle(ms)?;
        if conv.peer.is_none() {
            if let Some(a) = conv.inbox.pop_front() {
                return Err(Stop::fail(
                    "a response arrived",
                    expected.join("; "),
                    short(&a.msg.to_string()),
                ));
            }
        }
        if observed.is_empty() {
            *observed = "nothing else".into();
        }
        Ok(())
    }
    /// The `exit` expectation, when `e` has one.
    fn expect_exit(
        &mut self,
        conv: &mut Conv<'_>,
        e: &McpExpect,
        _done: &Done,
        _notes_from: usize,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        let Some(ms) = e.exit_ms else {
            return Ok(());
        };
        let Checked { expected, observed } = acc;
        expected.push(format!("the server exits with status 0 within {ms} ms"));
        match conv
            .proc
            .as_mut()
            .and_then(|p| p.wait_exit(Duration::from_millis(ms)))
        {
            Some(x) if x.success => *observed = format!("the server {}", x.text),
            Some(x) => {
                return Err(Stop::fail(
                    format!("the server {} when its stdin closed", x.text),
                    expected.join("; "),
                    x.text,
                ))
            }
            None => {
                return Err(Stop::fail(
                    format!("the server was still running {ms} ms after its stdin closed"),
                    expected.join("; "),
                    "still running",
                ))
            }
        }
        Ok(())
    }

    /// A `jsonrpc_line` step with `response` / `no_response` / `nothing`.
    pub(super) fn line_step(
        &mut self,
        conv: &mut Conv<'_>,
        s: &JsonRpcStep,
    ) -> Result<(String, String), Stop> {
        let Some(line) = s.send.as_ref().and_then(|x| x.jsonrpc_line.as_ref()) else {
            return Err(Stop::harness("the step has no jsonrpc_line"));
        };
        let tv = self.text_vars();
        let line = fill_text(line, &tv);
        register_line(conv, &line);
        conv.send_text(&line)
            .map_err(|e| Stop::fail(e.0.clone(), "the server reads its input", e.0))?;
        let (mut last_e, mut last_o) = (String::new(), String::new());
        for e in s.expect.as_slice() {
            match e {
                JsonRpcExpect::Response(r) => {
                    last_o = expect_response(conv, r, &tv)?;
                    last_e = describe_response(r, &tv);
                }
                JsonRpcExpect::NoResponse(nr) => {
                    let ms = match &nr.ms {
                        Num::Lit(m) => *m,
                        Num::Expr(x) => {
                            crate::plan::expr::eval(x, &crate::plan::expr::Params::new())
                                .map_err(|e| Stop::harness(format!("`{x}`: {e}")))?
                        }
                    };
                    last_o = expect_no_response(conv, nr.id.as_ref(), ms)?;
                    last_e = format!("no response within {ms} ms");
                }
                JsonRpcExpect::Nothing => {}
                JsonRpcExpect::Mcp(_) => {
                    return Err(Stop::harness(
                        "an `mcp` (SWP-mapped) expectation is not an mcp_native expectation",
                    ))
                }
            }
        }
        Ok((last_e, last_o))
    }
}

/// What the expectations of one step expected and observed so far.
#[derive(Default)]
pub(super) struct Checked {
    /// Each expectation checked, in order.
    pub expected: Vec<String>,
    /// What the last of them observed.
    pub observed: String,
}

/// The response a step waited for, which the expectation needs.
fn resp(done: &Done) -> Result<&Arrived, Stop> {
    done.response
        .as_ref()
        .ok_or_else(|| Stop::harness("this expectation needs a step that waits for a response"))
}

/// The result of a response (none: an error).
fn result_of(a: &Arrived) -> Option<Value> {
    a.msg.get("result").cloned()
}
