//! The `mcp_native` method: drives a plain MCP server or gateway (no SWP on the client
//! side) over stdio (newline-delimited JSON-RPC), HTTP (`POST /mcp`) or WebSocket (`/mcp`),
//! one server process per vector, and judges the JSON-RPC responses it sends. Server notifications are skipped and server requests answered, so
//! neither is ever taken for the response a step waits for.

use super::{Cancel, Fatal, NotApplicable, Outcome, TestMethod};
use crate::catalog::vector::{Expect, Method, ResponseSpec, Step, Vector};
use crate::connect::process::{self, Supervised};
use crate::connect::wire::{Recv, StdioWire, Wire};
use crate::materialize::MaterialiseError;
use crate::model::{Dir, TranscriptEntry, Verdict};
use crate::sut::{McpNativeSpec, McpTransport, Start, Sut};
use chan::{Got, HttpChan, WsChan};

pub mod chan;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Longest line the harness accepts from a server.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Characters of a line kept in transcripts.
const TRANSCRIPT_CHARS: usize = 600;

/// Runs `mcpnative` and `gateway` vectors against one plain MCP server or gateway.
pub struct McpNativeMethod<'a> {
    sut: &'a Sut,
    spec: McpNativeSpec,
    start: Start,
    base: PathBuf,
    work: PathBuf,
}

/// A vector stopped: verdict, why, expected, observed.
struct Stop(Verdict, String, String, String);

/// One vector's conversation with the server.
struct Conv<'a> {
    chan: Chan,
    proc: &'a mut Supervised,
    spec: &'a McpNativeSpec,
    buf: Vec<u8>,
    start: Instant,
    hard_deadline: Instant,
    read_total: u64,
    closed: Option<String>,
    transcript: Vec<TranscriptEntry>,
    /// Whether the server has answered anything yet: its first answer also waits out its
    /// start-up (an interpreter loading its SDK on a loaded machine), so it gets `start_ms`.
    answered: bool,
}

/// The client end of the transport.
enum Chan {
    Stdio(StdioWire),
    Http(HttpChan),
    Ws(WsChan),
}

/// One read of a line.
enum Line {
    /// A complete line without its newline, and its HTTP status (HTTP only).
    Text(Vec<u8>, Option<u16>),
    /// Nothing before the deadline.
    Timeout,
    /// The server's stdout ended; why.
    Closed(String),
}

/// What the server wrote, one line.
enum Msg {
    /// A JSON-RPC response (no `method`; `id`, `result` or `error`), with its HTTP status
    /// (HTTP only).
    Response(Value, Option<u16>),
    /// The connection ended or broke; why.
    Closed(String),
}

fn short(s: &str) -> String {
    if s.chars().count() <= TRANSCRIPT_CHARS {
        s.to_owned()
    } else {
        let head: String = s.chars().take(TRANSCRIPT_CHARS).collect();
        format!("{head}… ({} octets)", s.len())
    }
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

/// The `${NAME}` values of a manifest: `PROTOCOL_VERSION` and `mcp_native.params`.
type Vars = BTreeMap<String, String>;

fn vars_of(spec: &McpNativeSpec) -> Vars {
    let mut v = spec.params.clone();
    v.insert("PROTOCOL_VERSION".into(), spec.protocol_version.clone());
    v
}

/// Replaces every `${NAME}` of `vars` in a string.
fn fill(s: &str, vars: &Vars) -> String {
    let mut out = s.to_owned();
    for (k, v) in vars {
        out = out.replace(&format!("${{{k}}}"), v);
    }
    out
}

/// The `${NAME}`s a text uses that `vars` does not define.
fn undefined(s: &str, vars: &Vars, out: &mut BTreeSet<String>) {
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        let tail = &rest[i + 2..];
        let Some(j) = tail.find('}') else { break };
        if !vars.contains_key(&tail[..j]) {
            out.insert(tail[..j].to_owned());
        }
        rest = &tail[j..];
    }
}

/// The variables a vector needs that the manifest does not give.
fn missing_vars(steps: &[Step], vars: &Vars) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in steps {
        if let Some(l) = s.send.as_ref().and_then(|x| x.jsonrpc_line.as_ref()) {
            undefined(l, vars, &mut out);
        }
        for e in s.expect.as_slice() {
            if let Expect::Response(r) = e {
                for v in [&r.result, &Some(r.id.clone())].into_iter().flatten() {
                    undefined(&v.to_string(), vars, &mut out);
                }
            }
        }
    }
    out
}

/// Replaces `${NAME}`s inside JSON string values.
fn substitute(v: &Value, pv: &Vars) -> Value {
    match v {
        Value::String(s) => Value::String(fill(s, pv)),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), substitute(x, pv)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute(x, pv)).collect()),
        other => other.clone(),
    }
}

fn describe_response(r: &ResponseSpec, pv: &Vars) -> String {
    let what = match (&r.result, &r.error) {
        (Some(res), _) => format!("a result containing {}", substitute(res, pv)),
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

impl Conv<'_> {
    fn t(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn log(&mut self, dir: Dir, s: &str) {
        let t = self.t();
        self.transcript.push(TranscriptEntry {
            t_ms: t,
            dir,
            data: short(s),
        });
    }

    fn send_line(&mut self, line: &str) -> Result<(), chan::TransportError> {
        self.log(Dir::Sent, line);
        match &mut self.chan {
            Chan::Stdio(w) => {
                let mut b = line.as_bytes().to_vec();
                b.push(b'\n');
                w.send(&b).map_err(|e| {
                    chan::TransportError(format!("cannot write to the server's stdin: {e}"))
                })
            }
            Chan::Http(h) => {
                let deadline = (Instant::now() + Duration::from_millis(self.spec.timing.step_ms))
                    .min(self.hard_deadline);
                let r = h.send(line.as_bytes(), deadline);
                for n in std::mem::take(&mut h.notes) {
                    self.log(Dir::Note, &n);
                }
                r
            }
            Chan::Ws(w) => w.send(line.as_bytes()),
        }
    }

    /// The next complete line before `deadline`.
    fn line(&mut self, deadline: Instant) -> Result<Line, Stop> {
        let deadline = deadline.min(self.hard_deadline);
        let got = match &mut self.chan {
            Chan::Stdio(_) => None,
            Chan::Http(h) => Some(h.pop()),
            Chan::Ws(w) => Some(w.next(deadline)),
        };
        if let Some(got) = got {
            return Ok(match got {
                Got::Msg(m) => {
                    self.read_total += m.body.len() as u64;
                    if let Some(st) = m.status {
                        self.log(Dir::Note, &format!("HTTP {st}"));
                    }
                    Line::Text(m.body, m.status)
                }
                Got::Timeout => Line::Timeout,
                Got::Closed(why) => Line::Closed(why),
            });
        }
        let Chan::Stdio(wire) = &mut self.chan else {
            return Ok(Line::Timeout);
        };
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let mut l: Vec<u8> = self.buf.drain(..=i).collect();
                l.pop();
                if l.last() == Some(&b'\r') {
                    l.pop();
                }
                return Ok(Line::Text(l, None));
            }
            if self.buf.len() > MAX_LINE_BYTES {
                return Err(Stop(
                    Verdict::Fail,
                    format!("the server wrote a line longer than {MAX_LINE_BYTES} octets"),
                    "newline-delimited JSON-RPC messages".into(),
                    "an unbounded line".into(),
                ));
            }
            if let Some(c) = &self.closed {
                return Ok(Line::Closed(c.clone()));
            }
            match wire.recv(deadline) {
                Recv::Data(d) => {
                    self.read_total += d.len() as u64;
                    if self.read_total > self.spec.timing.max_read_bytes {
                        return Err(Stop(
                            Verdict::Fail,
                            format!(
                                "the server wrote more than {} octets in one vector (harness bound)",
                                self.spec.timing.max_read_bytes
                            ),
                            String::new(),
                            "a flood".into(),
                        ));
                    }
                    self.buf.extend_from_slice(&d);
                }
                Recv::Eof => {
                    self.closed = Some(match self.proc.wait_exit(Duration::from_millis(200)) {
                        Some(st) => format!("the server closed its stdout and {st}"),
                        None => "the server closed its stdout".into(),
                    })
                }
                Recv::Broken(e) => self.closed = Some(format!("reading stdout failed: {e}")),
                Recv::Timeout => return Ok(Line::Timeout),
            }
        }
    }

    /// The next response before `deadline` (`Ok(None)` on timeout); notifications are
    /// skipped and server requests answered on the way.
    fn next(&mut self, deadline: Instant) -> Result<Option<Msg>, Stop> {
        loop {
            let (l, status) = match self.line(deadline)? {
                Line::Text(l, status) => (l, status),
                Line::Timeout => return Ok(None),
                Line::Closed(why) => return Ok(Some(Msg::Closed(why))),
            };
            let text = String::from_utf8_lossy(&l).into_owned();
            if text.trim().is_empty() {
                continue;
            }
            self.log(Dir::Received, &text);
            let v: Value = match serde_json::from_slice(&l) {
                Ok(v) => v,
                Err(e) => {
                    // The rule broken depends on what carried the text.
                    let (what, rule, want) = match self.chan {
                        Chan::Stdio(_) => (
                            "a line on stdout",
                            "an MCP stdio server writes only MCP messages to its stdout",
                            "JSON-RPC messages, one per line",
                        ),
                        Chan::Http(_) => (
                            "an HTTP response body",
                            "an MCP HTTP server answers a POSTed request with a JSON-RPC message",
                            "a JSON-RPC message as the response body",
                        ),
                        Chan::Ws(_) => (
                            "a WebSocket message",
                            "each WebSocket text message carries one JSON-RPC message",
                            "a JSON-RPC message per WebSocket message",
                        ),
                    };
                    return Err(Stop(
                        Verdict::Fail,
                        format!("the server sent {what} that is not JSON ({e}); {rule}"),
                        want.into(),
                        short(&text),
                    ));
                }
            };
            let Some(obj) = v.as_object() else {
                self.log(Dir::Note, "not a JSON object (skipped)");
                continue;
            };
            match (obj.get("method"), obj.get("id")) {
                (Some(m), Some(id)) => {
                    let method = m.as_str().unwrap_or_default().to_owned();
                    let reply = if method == "roots/list" {
                        json!({"jsonrpc": "2.0", "id": id, "result": {"roots": []}})
                    } else {
                        json!({"jsonrpc": "2.0", "id": id,
                               "error": {"code": -32601, "message": "Method not found"}})
                    };
                    self.log(Dir::Note, &format!("server request {method}: answered"));
                    if let Err(e) = self.send_line(&reply.to_string()) {
                        return Ok(Some(Msg::Closed(e.0)));
                    }
                }
                (Some(_), None) => self.log(Dir::Note, "notification (skipped)"),
                (None, _) => return Ok(Some(Msg::Response(v, status))),
            }
        }
    }

    fn expect_response(&mut self, r: &ResponseSpec) -> Result<String, Stop> {
        let pv = vars_of(self.spec);
        let exp = describe_response(r, &pv);
        let wait_ms = if self.answered {
            self.spec.timing.step_ms
        } else {
            self.spec.timing.step_ms.max(self.spec.timing.start_ms)
        };
        let deadline = Instant::now() + Duration::from_millis(wait_ms);
        let mut others: Vec<String> = Vec::new();
        loop {
            let m = match self.next(deadline)? {
                None => {
                    let obs = if others.is_empty() {
                        "no response".to_owned()
                    } else {
                        format!("only responses to other ids: {}", others.join(", "))
                    };
                    return Err(Stop(
                        Verdict::Fail,
                        format!("no response with id {} within {wait_ms} ms", r.id),
                        exp,
                        obs,
                    ));
                }
                Some(Msg::Closed(why)) => {
                    return Err(Stop(Verdict::Fail, why.clone(), exp, why));
                }
                Some(Msg::Response(v, status)) => (v, status),
            };
            let (m, status) = m;
            self.answered = true;
            let obs = short(&m.to_string());
            if m.get("id") != Some(&r.id) {
                others.push(m.get("id").map_or("(none)".into(), Value::to_string));
                self.log(Dir::Note, "a response to another id (skipped)");
                continue;
            }
            let bad = |why: String| Stop(Verdict::Fail, why, exp.clone(), obs.clone());
            if m.get("jsonrpc") != Some(&json!("2.0")) {
                return Err(bad("the response lacks \"jsonrpc\": \"2.0\"".into()));
            }
            let (res, err) = (m.get("result"), m.get("error"));
            match (res, err) {
                (Some(_), Some(_)) => {
                    return Err(bad("the response has both result and error".into()))
                }
                (None, None) => {
                    return Err(bad("the response has neither result nor error".into()))
                }
                _ => {}
            }
            if let Some(want) = &r.result {
                let Some(got) = res else {
                    return Err(bad("an error instead of a result".into()));
                };
                if !json_matches(got, &substitute(want, &pv)) {
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
                if let Some(msg) = &want.message {
                    if got.get("message").and_then(Value::as_str) != Some(msg.as_str()) {
                        return Err(bad(format!("error message other than {msg:?}")));
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
            return Ok(obs);
        }
    }

    fn expect_no_response(&mut self, id: Option<&Value>, ms: u64) -> Result<String, Stop> {
        let exp = match id {
            Some(id) => format!("no response with id {id} within {ms} ms"),
            None => format!("no response within {ms} ms"),
        };
        let deadline = Instant::now() + Duration::from_millis(ms);
        loop {
            match self.next(deadline)? {
                None => return Ok("none".into()),
                // A server that exits is not answering; later steps show whether it matters.
                Some(Msg::Closed(why)) => return Ok(why),
                Some(Msg::Response(v, _)) => {
                    if id.is_none_or(|id| v.get("id") == Some(id)) {
                        let obs = short(&v.to_string());
                        return Err(Stop(Verdict::Fail, "a response arrived".into(), exp, obs));
                    }
                    self.log(Dir::Note, "a response to another id (skipped)");
                }
            }
        }
    }
}

impl<'a> McpNativeMethod<'a> {
    /// Prepares the method for a plain MCP server; `work` holds the server's stderr log and
    /// port file.
    pub fn new(sut: &'a Sut, spec: McpNativeSpec, start: Start, work: &Path) -> Self {
        McpNativeMethod {
            sut,
            spec,
            start,
            base: sut.base_dir(),
            work: work.to_owned(),
        }
    }
}

impl TestMethod for McpNativeMethod<'_> {
    type Concrete = ();

    fn describe(&self) -> String {
        format!(
            "mcp-native {}: {} {} (protocol {})",
            self.spec.transport.as_str(),
            self.start.command,
            self.start.args.join(" "),
            self.spec.protocol_version
        )
    }

    fn admit(&self, v: &Vector) -> Result<Method, NotApplicable> {
        let Some(method) = v
            .methods
            .iter()
            .find(|m| m.is_jsonrpc() && self.sut.manifest.methods.contains(m))
        else {
            return Err(
                "not an mcp_native or mcp_gateway vector; this SUT is a plain MCP server".into(),
            );
        };
        let missing = missing_vars(&v.steps, &vars_of(&self.spec));
        if !missing.is_empty() {
            let names: Vec<String> = missing.into_iter().collect();
            return Err(NotApplicable::untested(format!(
                "the manifest gives no mcp_native.params {} (what this server names them)",
                names.join(", ")
            )));
        }
        Ok(*method)
    }

    fn materialise(&mut self, _v: &Vector, _m: Method) -> Result<(), MaterialiseError> {
        Ok(())
    }

    fn drive(&mut self, v: &Vector, _c: (), _cancel: &Cancel) -> Result<Outcome, Fatal> {
        let log = self.work.join("sut-stderr.log");
        let port_file = self.work.join("port");
        let _ = std::fs::remove_file(&port_file);
        let mut vars = BTreeMap::new();
        vars.insert("PORT_FILE", port_file.display().to_string());
        let stdio = self.spec.transport == McpTransport::Stdio;
        let mut p = match process::spawn(&self.start, &self.base, &vars, stdio, &log) {
            Ok(p) => p,
            Err(e) => {
                return Ok(Outcome::stop(
                    Verdict::Crash,
                    format!("the server could not be started: {e}"),
                ))
            }
        };
        let start_t = Instant::now();
        let chan = match self.connect(&mut p, &port_file) {
            Ok(c) => c,
            Err((verdict, why)) => return Ok(Outcome::stop(verdict, why)),
        };
        let mut conv = Conv {
            chan,
            proc: &mut p,
            spec: &self.spec,
            buf: Vec::new(),
            start: start_t,
            hard_deadline: start_t + Duration::from_millis(self.spec.timing.vector_ms),
            read_total: 0,
            closed: None,
            answered: false,
            transcript: Vec::new(),
        };
        conv.log(Dir::Note, &format!("started {}", self.describe()));
        let outcome = run_steps(&mut conv, &v.steps);
        let transcript = std::mem::take(&mut conv.transcript);
        let hard = Instant::now() >= conv.hard_deadline;
        let exited = conv.proc.exited();
        drop(conv);
        let mut o = match outcome {
            Ok((e, o)) => Outcome::pass(e, o),
            Err(Stop(verdict, why, e, o)) => Outcome {
                verdict: if hard { Verdict::Timeout } else { verdict },
                expected: e,
                observed: o,
                ..Outcome::stop(verdict, why)
            },
        }
        .with_transcript(transcript);
        // The harness has not closed stdin yet: an exit with a failure status is a crash.
        if let Some(st) = exited.filter(|s| !s.success) {
            o.verdict = Verdict::Crash;
            o.detail = Some(format!(
                "the server {st} during the vector; {}",
                o.detail.take().unwrap_or_default()
            ));
        }
        Ok(o)
    }
}

impl McpNativeMethod<'_> {
    /// Opens the client end of the transport to a started server.
    fn connect(&self, p: &mut Supervised, port_file: &Path) -> Result<Chan, (Verdict, String)> {
        let timing = &self.spec.timing;
        if self.spec.transport == McpTransport::Stdio {
            let (i, o) = p
                .take_pipes()
                .ok_or((Verdict::HarnessError, "stdio pipes unavailable".to_owned()))?;
            return Ok(Chan::Stdio(StdioWire::new(i, o)));
        }
        let port = process::wait_port_file(port_file, p, Duration::from_millis(timing.start_ms))
            .map_err(|e| (Verdict::Crash, e.to_string()))?;
        let addr = format!("127.0.0.1:{port}");
        Ok(match self.spec.transport {
            McpTransport::Http => Chan::Http(HttpChan::new(addr, MAX_LINE_BYTES)),
            _ => {
                let deadline = Instant::now() + Duration::from_millis(timing.step_ms);
                Chan::Ws(
                    WsChan::connect(&addr, MAX_LINE_BYTES, deadline)
                        .map_err(|e| (Verdict::Fail, format!("WebSocket /mcp: {e}")))?,
                )
            }
        })
    }
}

fn run_steps(conv: &mut Conv<'_>, steps: &[Step]) -> Result<(String, String), Stop> {
    let pv = vars_of(conv.spec);
    let (mut last_e, mut last_o) = (String::new(), String::new());
    for (n, s) in steps.iter().enumerate() {
        if let Some(note) = &s.note {
            conv.log(Dir::Note, &format!("step {n}: {note}"));
        }
        let Some(line) = s.send.as_ref().and_then(|x| x.jsonrpc_line.as_ref()) else {
            return Err(Stop(
                Verdict::HarnessError,
                format!("step {n} has no jsonrpc_line"),
                String::new(),
                String::new(),
            ));
        };
        let line = fill(line, &pv);
        conv.send_line(&line).map_err(|e| {
            Stop(
                Verdict::Fail,
                format!("step {n}: {e}"),
                "the server reads its stdin".into(),
                e.0,
            )
        })?;
        for e in s.expect.as_slice() {
            let step_err = |Stop(v, why, ex, ob): Stop| Stop(v, format!("step {n}: {why}"), ex, ob);
            match e {
                Expect::Response(r) => {
                    last_o = conv.expect_response(r).map_err(step_err)?;
                    last_e = describe_response(r, &pv);
                }
                Expect::NoResponse(nr) => {
                    let ms = match &nr.ms {
                        crate::catalog::vector::Num::Lit(m) => *m,
                        crate::catalog::vector::Num::Expr(x) => {
                            crate::expr::eval(x, &crate::expr::Params::new()).map_err(|e| {
                                Stop(
                                    Verdict::HarnessError,
                                    format!("step {n}: `{x}`: {e}"),
                                    String::new(),
                                    String::new(),
                                )
                            })?
                        }
                    };
                    last_o = conv
                        .expect_no_response(nr.id.as_ref(), ms)
                        .map_err(step_err)?;
                    last_e = format!("no response within {ms} ms");
                }
                Expect::Nothing => {}
                other => {
                    return Err(Stop(
                        Verdict::HarnessError,
                        format!("step {n}: {other:?} is not an mcp_native expectation"),
                        String::new(),
                        String::new(),
                    ))
                }
            }
        }
    }
    Ok((last_e, last_o))
}
