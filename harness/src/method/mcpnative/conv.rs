//! One vector's conversation with an MCP server: the client end of the transport (stdio
//! lines, Streamable HTTP exchanges, WebSocket messages), every message the server sends
//! read, judged by [`super::judge`] when the vector is an `mcp_native` one, server requests
//! answered, and what the steps wait for (responses, notifications, HTTP statuses) kept
//! until a step takes it.

use super::chan::{Got, TransportError, WsChan};
use super::http::{Exchange, HttpClient, HttpEvent, Verb};
use super::judge::{self, Inbound, Peer};
use crate::connect::process::Supervised;
use crate::connect::wire::{Recv, StdioWire, Wire};
use crate::model::{Dir, NaCause, TranscriptEntry, Verdict};
use crate::sut::Timing;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// Longest line or message the harness accepts from a server.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Characters of a message kept in transcripts.
const TRANSCRIPT_CHARS: usize = 600;

/// The client end of the transport.
pub(super) enum Chan {
    /// Newline-delimited JSON-RPC on the server's stdin/stdout.
    Stdio(StdioWire),
    /// MCP Streamable HTTP.
    Http(HttpClient),
    /// One message per WebSocket text frame (gateways).
    Ws(WsChan),
}

/// Why a vector stopped before its end.
#[derive(Debug, Clone)]
pub(super) struct Stop {
    pub verdict: Verdict,
    pub why: String,
    pub expected: String,
    pub observed: String,
    /// The requirements the failure broke (empty: the vector's own).
    pub broke: Vec<String>,
    /// For not-applicable: whose choice.
    pub na: Option<NaCause>,
}

impl Stop {
    pub fn fail(
        why: impl Into<String>,
        expected: impl Into<String>,
        observed: impl Into<String>,
    ) -> Stop {
        Stop {
            verdict: Verdict::Fail,
            why: why.into(),
            expected: expected.into(),
            observed: observed.into(),
            broke: Vec::new(),
            na: None,
        }
    }

    pub fn harness(why: impl Into<String>) -> Stop {
        Stop {
            verdict: Verdict::HarnessError,
            ..Stop::fail(why, "", "")
        }
    }

    pub fn not_applicable(cause: NaCause, why: impl Into<String>) -> Stop {
        Stop {
            verdict: Verdict::NotApplicable,
            na: Some(cause),
            ..Stop::fail(why, "", "")
        }
    }

    /// The same stop, attributed to `rules` (none: unchanged).
    pub fn breaking(mut self, rules: &[String]) -> Stop {
        if !rules.is_empty() {
            self.broke = rules.to_vec();
        }
        self
    }
}

/// A message the server sent that a step may still take.
#[derive(Debug, Clone)]
pub(super) struct Arrived {
    pub msg: Value,
    pub inbound: Inbound,
    /// The HTTP status of the response that carried it.
    pub status: Option<u16>,
}

impl Arrived {
    /// The id of a response.
    pub fn response_id(&self) -> Option<&Value> {
        match &self.inbound {
            Inbound::Response { id, .. } => Some(id),
            _ => None,
        }
    }
}

/// What one HTTP exchange has shown so far.
#[derive(Debug, Clone, Default)]
pub(super) struct ExState {
    pub status: Option<u16>,
    pub content_type: String,
    pub ended: Option<String>,
    pub failed: Option<String>,
}

/// One read from the transport.
enum Raw {
    Text(Vec<u8>, Option<u16>),
    /// Something about an HTTP exchange (its status, its end) was recorded.
    Event,
    Timeout,
    Closed(String),
}

/// What [`Conv::pump`] did.
pub(super) enum Pumped {
    /// A message was taken in.
    Got,
    /// Nothing before the deadline.
    Timeout,
    /// The server ended the conversation; why.
    Closed(String),
}

pub(super) fn short(s: &str) -> String {
    if s.chars().count() <= TRANSCRIPT_CHARS {
        s.to_owned()
    } else {
        let head: String = s.chars().take(TRANSCRIPT_CHARS).collect();
        format!("{head}… ({} octets)", s.len())
    }
}

/// One vector's conversation.
pub(super) struct Conv<'a> {
    pub chan: Chan,
    pub proc: &'a mut Supervised,
    pub timing: Timing,
    pub buf: Vec<u8>,
    pub start: Instant,
    pub hard_deadline: Instant,
    pub read_total: u64,
    pub closed: Option<String>,
    pub transcript: Vec<TranscriptEntry>,
    /// The judge of every server message (`mcp_native` vectors; `None` for gateways).
    pub peer: Option<Peer>,
    /// Responses no step has taken yet.
    pub inbox: VecDeque<Arrived>,
    /// Notifications, in arrival order, with the step they arrived in.
    pub notifications: Vec<(usize, String, Value)>,
    /// The step being run.
    pub step: usize,
    /// HTTP exchanges by number.
    pub exchanges: BTreeMap<u64, ExState>,
    /// The exchange the last message was posted on.
    pub last_exchange: Option<u64>,
    /// Start-up time a stdio server may still use before its first answer.
    pub grace: Option<Duration>,
    /// The `MCP-Protocol-Version` header sent on HTTP (set once negotiated).
    pub protocol_header: Option<String>,
    /// The session id a `DELETE` ended.
    pub session_ended: Option<String>,
    /// The HTTP exchange each request went out on, by id text.
    pub request_exchange: BTreeMap<String, u64>,
}

impl Conv<'_> {
    pub fn t(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    pub fn log(&mut self, dir: Dir, s: &str) {
        let t = self.t();
        self.transcript.push(TranscriptEntry {
            t_ms: t,
            dir,
            data: short(s),
        });
    }

    /// Deadline `ms` from now, within the vector's hard limit.
    pub fn deadline(&self, ms: u64) -> Instant {
        (Instant::now() + Duration::from_millis(ms)).min(self.hard_deadline)
    }

    /// The deadline of a step's answer: `step_ms`, plus the start-up grace of a stdio
    /// server that has not answered anything yet.
    pub fn answer_deadline(&self) -> Instant {
        let grace = self.grace.unwrap_or_default();
        (Instant::now() + Duration::from_millis(self.timing.step_ms) + grace)
            .min(self.hard_deadline)
    }

    /// Sends one message: a line on stdio, a POST on HTTP, a text frame on WebSocket.
    pub fn send_text(&mut self, text: &str) -> Result<(), TransportError> {
        self.log(Dir::Sent, text);
        match &mut self.chan {
            Chan::Stdio(w) => {
                let mut b = text.as_bytes().to_vec();
                b.push(b'\n');
                w.send(&b)
                    .map_err(|e| TransportError(format!("cannot write to the server's stdin: {e}")))
            }
            Chan::Http(h) => {
                let ex = Exchange {
                    verb: Verb::Post,
                    body: text.as_bytes().to_vec(),
                    session: h.session(),
                    protocol_version: self.protocol_header.clone(),
                    headers: Vec::new(),
                };
                let n = h.start(ex);
                self.last_exchange = Some(n);
                self.exchanges.insert(n, ExState::default());
                // Like a real client, the next message waits until this one was taken:
                // the server's answer head (a 202, or the start of a JSON or SSE answer).
                let d = self.deadline(self.timing.step_ms);
                match self.wait_status(n, d) {
                    Ok(_) => Ok(()),
                    Err(stop) => Err(TransportError(stop.why)),
                }
            }
            Chan::Ws(w) => w.send(text.as_bytes()),
        }
    }

    /// Starts an HTTP exchange written by hand.
    pub fn http(&mut self, ex: Exchange) -> Result<u64, TransportError> {
        let Chan::Http(h) = &mut self.chan else {
            return Err(TransportError(
                "an HTTP exchange needs the http transport".into(),
            ));
        };
        let line = format!(
            "{} (Mcp-Session-Id: {}, MCP-Protocol-Version: {}{}) {}",
            ex.verb.as_str(),
            ex.session.as_deref().unwrap_or("none"),
            ex.protocol_version.as_deref().unwrap_or("none"),
            ex.headers
                .iter()
                .map(|(k, v)| format!(", {k}: {v}"))
                .collect::<String>(),
            String::from_utf8_lossy(&ex.body)
        );
        let n = h.start(ex);
        self.log(Dir::Sent, &line);
        self.last_exchange = Some(n);
        self.exchanges.insert(n, ExState::default());
        Ok(n)
    }

    /// Closes the write side (stdio: the server's stdin).
    pub fn close_input(&mut self) -> Result<(), TransportError> {
        self.log(Dir::Note, "closed the server's stdin");
        match &mut self.chan {
            Chan::Stdio(w) => w
                .half_close()
                .map_err(|e| TransportError(format!("cannot close stdin: {e}"))),
            _ => Err(TransportError("only stdio has a stdin to close".into())),
        }
    }

    /// The session id the HTTP server assigned.
    pub fn http_session(&self) -> Option<String> {
        match &self.chan {
            Chan::Http(h) => h.session(),
            _ => None,
        }
    }

    /// Forgets the HTTP session (a `DELETE` ended it).
    pub fn end_http_session(&mut self) {
        if let Chan::Http(h) = &self.chan {
            self.session_ended = h.session();
            h.forget_session();
        }
    }

    fn http_event(&mut self, e: HttpEvent) -> Option<Raw> {
        let n = e.exchange();
        let st = self.exchanges.entry(n).or_default();
        match e {
            HttpEvent::Head {
                status,
                content_type,
                ..
            } => {
                st.status = Some(status);
                st.content_type = content_type.clone();
                let ct = if content_type.is_empty() {
                    "no Content-Type".to_owned()
                } else {
                    content_type
                };
                self.log(Dir::Note, &format!("HTTP {status} ({ct}), exchange {n}"));
                None
            }
            HttpEvent::Message { status, body, .. } => {
                self.read_total += body.len() as u64;
                Some(Raw::Text(body, Some(status)))
            }
            HttpEvent::End { what, .. } => {
                st.ended = Some(what.clone());
                self.log(Dir::Note, &format!("exchange {n}: {what}"));
                None
            }
            HttpEvent::Failed { why, .. } => {
                st.failed = Some(why.clone());
                self.log(Dir::Note, &format!("exchange {n} failed: {why}"));
                None
            }
        }
    }

    /// The next message octets before `deadline`.
    fn raw(&mut self, deadline: Instant) -> Result<Raw, Stop> {
        let deadline = deadline.min(self.hard_deadline);
        if let Chan::Http(_) = self.chan {
            let e = match &self.chan {
                Chan::Http(h) => h.next(deadline),
                _ => None,
            };
            let Some(e) = e else { return Ok(Raw::Timeout) };
            return Ok(self.http_event(e).unwrap_or(Raw::Event));
        }
        if let Chan::Ws(w) = &mut self.chan {
            return Ok(match w.next(deadline) {
                Got::Msg(m) => {
                    self.read_total += m.body.len() as u64;
                    Raw::Text(m.body, m.status)
                }
                Got::Timeout => Raw::Timeout,
                Got::Closed(why) => Raw::Closed(why),
            });
        }
        let Chan::Stdio(wire) = &mut self.chan else {
            return Ok(Raw::Timeout);
        };
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let mut l: Vec<u8> = self.buf.drain(..=i).collect();
                l.pop();
                if l.last() == Some(&b'\r') {
                    l.pop();
                }
                return Ok(Raw::Text(l, None));
            }
            if self.buf.len() > MAX_LINE_BYTES {
                return Err(Stop::fail(
                    format!("the server wrote a line longer than {MAX_LINE_BYTES} octets"),
                    "newline-delimited JSON-RPC messages",
                    "an unbounded line",
                ));
            }
            if let Some(c) = &self.closed {
                return Ok(Raw::Closed(c.clone()));
            }
            match wire.recv(deadline) {
                Recv::Data(d) => {
                    self.read_total += d.len() as u64;
                    if self.read_total > self.timing.max_read_bytes {
                        return Err(Stop::fail(
                            format!(
                                "the server wrote more than {} octets in one vector (harness bound)",
                                self.timing.max_read_bytes
                            ),
                            "",
                            "a flood",
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
                Recv::Timeout => return Ok(Raw::Timeout),
            }
        }
    }

    /// Takes in the next message before `deadline`: judged, a server request answered, a
    /// notification recorded, a response queued for the steps.
    pub fn pump(&mut self, deadline: Instant) -> Result<Pumped, Stop> {
        let (bytes, status) = match self.raw(deadline)? {
            Raw::Text(b, s) => (b, s),
            Raw::Event => return Ok(Pumped::Got),
            Raw::Timeout => return Ok(Pumped::Timeout),
            Raw::Closed(why) => return Ok(Pumped::Closed(why)),
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if text.trim().is_empty() {
            return Ok(Pumped::Got);
        }
        self.grace = None;
        self.log(Dir::Received, &text);
        let v: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => {
                let (what, rule, want) = match self.chan {
                    Chan::Stdio(_) => (
                        "a line on stdout",
                        "an MCP stdio server writes only MCP messages to its stdout",
                        "JSON-RPC messages, one per line",
                    ),
                    Chan::Http(_) => (
                        "an HTTP message",
                        "an MCP HTTP server answers with JSON-RPC messages",
                        "a JSON-RPC message as a JSON body or SSE event",
                    ),
                    Chan::Ws(_) => (
                        "a WebSocket message",
                        "each WebSocket text message carries one JSON-RPC message",
                        "a JSON-RPC message per WebSocket message",
                    ),
                };
                let stop = Stop::fail(
                    format!("the server sent {what} that is not JSON ({e}); {rule}"),
                    want,
                    short(&text),
                );
                return Err(if self.peer.is_some() {
                    Stop {
                        why: format!("{}: {}", judge::SCHEMA, stop.why),
                        ..stop
                    }
                    .breaking(&[judge::SCHEMA.to_owned()])
                } else {
                    stop
                });
            }
        };
        let batch = matches!(&v, Value::Array(_))
            && self
                .peer
                .as_ref()
                .is_some_and(|p| p.judged_version() == "2025-03-26");
        let msgs = match v {
            Value::Array(a) if batch => a,
            other => vec![other],
        };
        for m in msgs {
            self.take(m, status)?;
        }
        Ok(Pumped::Got)
    }

    fn take(&mut self, m: Value, status: Option<u16>) -> Result<(), Stop> {
        let inbound = match &mut self.peer {
            Some(peer) => {
                let (inbound, violation) = peer
                    .judge(&m, status)
                    .map_err(|e| Stop::harness(e.to_string()))?;
                if let Some(v) = violation {
                    return Err(Stop::fail(
                        format!("{}: {}", v.rule, v.why),
                        "every message valid for the negotiated version and the session",
                        short(&m.to_string()),
                    )
                    .breaking(&[v.rule.to_owned()]));
                }
                inbound
            }
            None => match (
                m.get("method").and_then(Value::as_str).map(str::to_owned),
                m.get("id"),
            ) {
                _ if !m.is_object() => {
                    self.log(Dir::Note, "not a JSON object (skipped)");
                    return Ok(());
                }
                (Some(method), Some(id)) => Inbound::Request {
                    id: id.clone(),
                    method,
                    params: m.get("params").cloned().unwrap_or(Value::Null),
                },
                (Some(method), None) => Inbound::Notification {
                    method,
                    params: m.get("params").cloned().unwrap_or(Value::Null),
                },
                (None, _) => Inbound::Response {
                    id: m.get("id").cloned().unwrap_or(Value::Null),
                    method: None,
                    msg: m.clone(),
                },
            },
        };
        match &inbound {
            Inbound::Request { id, method, params } => {
                let reply = self.answer(id, method, params);
                self.log(Dir::Note, &format!("server request {method}: answered"));
                if let Err(e) = self.send_text(&reply.to_string()) {
                    self.log(Dir::Note, &format!("could not answer: {e}"));
                }
            }
            Inbound::Notification { method, params } => {
                self.log(Dir::Note, "notification");
                self.notifications
                    .push((self.step, method.clone(), params.clone()));
            }
            Inbound::Response { .. } => self.inbox.push_back(Arrived {
                msg: m,
                inbound,
                status,
            }),
            Inbound::Garbage => {}
        }
        Ok(())
    }

    /// The harness's answer to a server request: what a client that declared the
    /// capability answers (the judge already failed requests for undeclared ones).
    fn answer(&self, id: &Value, method: &str, params: &Value) -> Value {
        let legacy = self.peer.is_none();
        let result = match method {
            "roots/list" => Some(json!({"roots": []})),
            "ping" if !legacy => Some(json!({})),
            "sampling/createMessage" if !legacy => Some(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "swp-conform declines to sample"},
                "model": "swp-conform",
                "stopReason": "endTurn"
            })),
            "elicitation/create" if !legacy => Some(json!({"action": "decline"})),
            _ => None,
        };
        let _ = params;
        match result {
            Some(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
            None => json!({"jsonrpc": "2.0", "id": id,
                           "error": {"code": -32601, "message": "Method not found"}}),
        }
    }

    /// Waits for the response with `id` before `deadline`; other responses stay queued. On
    /// HTTP, an exchange refused with an error status and no JSON-RPC message stands for an
    /// error response (code 0, the status in the message): the request was not processed.
    pub fn wait_response(&mut self, id: &Value, deadline: Instant) -> Result<Arrived, Stop> {
        loop {
            if let Some(i) = self.inbox.iter().position(|a| a.response_id() == Some(id)) {
                if let Some(a) = self.inbox.remove(i) {
                    return Ok(a);
                }
            }
            let refused = self
                .request_exchange
                .get(&id.to_string())
                .and_then(|n| self.exchanges.get(n))
                .filter(|x| x.status.is_some_and(|s| s >= 400) && x.ended.is_some())
                .cloned();
            if let Some(x) = refused {
                let status = x.status.unwrap_or_default();
                let why = format!("HTTP {status} ({})", x.ended.unwrap_or_default());
                self.log(
                    Dir::Note,
                    &format!("request {id} refused at the HTTP level: {why}"),
                );
                return Ok(Arrived {
                    msg: json!({"jsonrpc": "2.0", "id": id,
                                "error": {"code": 0, "message": format!("refused with {why}, no JSON-RPC response")}}),
                    inbound: Inbound::Response {
                        id: id.clone(),
                        method: None,
                        msg: Value::Null,
                    },
                    status: Some(status),
                });
            }
            match self.pump(deadline)? {
                Pumped::Got => {}
                Pumped::Timeout => {
                    let others: Vec<String> = self
                        .inbox
                        .iter()
                        .filter_map(|a| a.response_id().map(Value::to_string))
                        .collect();
                    let obs = if others.is_empty() {
                        "no response".to_owned()
                    } else {
                        format!("only responses to other ids: {}", others.join(", "))
                    };
                    return Err(Stop::fail(
                        format!("no response with id {id} in time"),
                        format!("a response with id {id}"),
                        obs,
                    ));
                }
                Pumped::Closed(why) => {
                    return Err(Stop::fail(
                        why.clone(),
                        format!("a response with id {id}"),
                        why,
                    ))
                }
            }
        }
    }

    /// Waits until the HTTP exchange `n` has its status (or failed) before `deadline`.
    pub fn wait_status(&mut self, n: u64, deadline: Instant) -> Result<ExState, Stop> {
        loop {
            if let Some(st) = self.exchanges.get(&n) {
                if st.status.is_some() || st.failed.is_some() {
                    return Ok(st.clone());
                }
            }
            match self.pump(deadline)? {
                Pumped::Got => {}
                Pumped::Timeout => {
                    return Err(Stop::fail(
                        format!("no HTTP response to exchange {n} in time"),
                        "an HTTP response",
                        "none",
                    ))
                }
                Pumped::Closed(why) => {
                    return Err(Stop::fail(why.clone(), "an HTTP response", why))
                }
            }
        }
    }

    /// Takes in everything that arrives for `ms`: late duplicates and stray messages are
    /// judged too.
    pub fn drain(&mut self, ms: u64) -> Result<(), Stop> {
        let deadline = self.deadline(ms);
        loop {
            match self.pump(deadline)? {
                Pumped::Got => {}
                Pumped::Timeout | Pumped::Closed(_) => return Ok(()),
            }
        }
    }
}
