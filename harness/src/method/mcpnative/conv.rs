//! One vector's conversation with an MCP server: the client end of the transport (stdio
//! lines, Streamable HTTP exchanges, WebSocket messages), every message the server sends
//! read, judged by [`super::judge`] when the vector is an `mcp_native` one, server requests
//! answered, and what the steps wait for (responses, notifications, HTTP statuses) kept
//! until a step takes it. A rule a message breaks is charged to the step whose request it
//! answers (or that watches for it); one that belongs to no step of the vector, and noise
//! that is no JSON-RPC message at all, is an incidental observation, never a stop.

use super::chan::{Got, TransportError, WsChan};
use super::http::{Exchange, HttpClient, HttpEvent, Verb};
use super::judge::{self, Inbound, Peer, Violation};
use crate::connect::process::Supervised;
use crate::connect::wire::{Recv, StdioWire, Wire};
use crate::report::result::{Dir, Incidental, NaCause, TranscriptEntry, Verdict};
use crate::sut::Timing;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
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
    /// The defect's class without ids or times (`initialize unanswered`), for the key of an
    /// incidental observation when the stop belongs to no step of the vector. Boxed: the
    /// stop travels in every `Err`, so it stays small.
    pub key: Option<Box<str>>,
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
            key: None,
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

    /// The same stop, attributed to `rule` unless it already names one.
    pub fn or_breaking(self, rule: &str) -> Stop {
        if self.broke.is_empty() {
            self.breaking(&[rule.to_owned()])
        } else {
            self
        }
    }

    /// The same stop with the class of its defect, unless it already has one.
    pub fn keyed(mut self, key: impl Into<String>) -> Stop {
        if self.key.is_none() {
            self.key = Some(key.into().into_boxed_str());
        }
        self
    }
}

/// What the step being run judges (`docs/mcp-native.md`, Attribution).
#[derive(Debug, Clone, Default)]
pub(super) struct Focus {
    /// The step, 0-based.
    pub step: usize,
    /// The step watches everything that arrives (a quiet window): a message that answers
    /// no request of another step is its business.
    pub watch_all: bool,
    /// The notifications the step waits for.
    pub expects: Vec<String>,
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

/// The step a violation is charged to, or `None` for an incidental observation (sans-IO).
/// `answers` is the step the message belongs to: the one whose request it answers or whose
/// progress token it carries, or the step being run when it waits for that notification.
/// A message that belongs to no step is the business of a step that watches everything (a
/// quiet window). `ours`: the rule is one the vector itself tests, which makes the message
/// the vector's wherever it is seen, even in the answer to a set-up request.
pub(super) fn charged_step(
    answers: Option<usize>,
    focus: &Focus,
    ours: bool,
    setup: &[bool],
) -> Option<usize> {
    let step = answers.or_else(|| (focus.watch_all || ours).then_some(focus.step))?;
    let set_up = setup.get(step).copied().unwrap_or(false);
    (ours || !set_up).then_some(step)
}

pub(super) fn short(s: &str) -> String {
    crate::support::transcript::clip_text(s, TRANSCRIPT_CHARS)
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
    /// What the step being run judges.
    pub focus: Focus,
    /// Per step, whether it only gets the vector going (an `open` or `pick` the vector's
    /// own steps follow): what its requests are answered with is not the vector's matter.
    pub setup: Vec<bool>,
    /// The rules the vector itself tests: a violation of one of them is the vector's
    /// wherever in its session it is seen (a vector about one response per request watches
    /// every response).
    pub vector_rules: BTreeSet<String>,
    /// The step that sent each request, with its method, by id text.
    owners: BTreeMap<String, (usize, String)>,
    /// The step whose request carries each progress token, by token text.
    token_owners: BTreeMap<String, usize>,
    /// Violations charged to a step of the vector, in arrival order.
    pub charged: Vec<(usize, Stop)>,
    /// Defects that belong to no step of the vector, one per key.
    pub incidental: Vec<Incidental>,
    /// Why the transport is gone (the server closed it, or it broke).
    pub gone: Option<String>,
    /// The vector's time (`vector_ms`) ran out.
    pub out_of_time: bool,
    /// Messages skipped because they were no JSON-RPC messages.
    pub skipped: usize,
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

impl<'a> Conv<'a> {
    /// A conversation over `chan` with the started server `proc`, begun at `start`; `peer`
    /// judges every message (`mcp_native`), `grace` is a stdio server's start-up time.
    pub fn new(
        chan: Chan,
        proc: &'a mut Supervised,
        timing: Timing,
        start: Instant,
        peer: Option<Peer>,
        grace: Option<Duration>,
    ) -> Conv<'a> {
        Conv {
            chan,
            proc,
            timing,
            buf: Vec::new(),
            start,
            hard_deadline: start + Duration::from_millis(timing.vector_ms),
            read_total: 0,
            closed: None,
            transcript: Vec::new(),
            peer,
            inbox: VecDeque::new(),
            notifications: Vec::new(),
            focus: Focus::default(),
            setup: Vec::new(),
            vector_rules: BTreeSet::new(),
            owners: BTreeMap::new(),
            token_owners: BTreeMap::new(),
            charged: Vec::new(),
            incidental: Vec::new(),
            gone: None,
            out_of_time: false,
            skipped: 0,
            exchanges: BTreeMap::new(),
            last_exchange: None,
            grace,
            protocol_header: None,
            session_ended: None,
            request_exchange: BTreeMap::new(),
        }
    }
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

    /// The step being run sent a request with `id` (and `token`, its progress token): its
    /// answer, and progress on the token, are charged to this step.
    pub fn sent(&mut self, id: &Value, method: &str, token: Option<&Value>) {
        let step = self.focus.step;
        self.owners
            .insert(id.to_string(), (step, method.to_owned()));
        if let Some(t) = token {
            self.token_owners.insert(t.to_string(), step);
        }
    }

    /// The method of the request sent with `id`.
    pub fn method_of(&self, id: &Value) -> Option<&str> {
        self.owners.get(&id.to_string()).map(|(_, m)| m.as_str())
    }

    /// Whether step `n` only gets the vector going.
    pub fn is_setup(&self, n: usize) -> bool {
        self.setup.get(n).copied().unwrap_or(false)
    }

    /// Records a defect that belongs to no step of the vector: once per key (the report
    /// counts it once per run, whichever vectors saw it).
    pub fn note_incidental(&mut self, requirement: &str, key: String, detail: String) {
        self.log(
            Dir::Note,
            &format!(
                "{requirement}: {detail} (an incidental observation, not this vector's failure)"
            ),
        );
        if self
            .incidental
            .iter()
            .any(|i| i.requirement == requirement && i.key == key)
        {
            return;
        }
        self.incidental.push(Incidental {
            requirement: requirement.to_owned(),
            key,
            detail: short(&detail),
        });
    }

    /// The name of the transport, for keys and messages.
    fn where_messages_travel(&self) -> &'static str {
        match self.chan {
            Chan::Stdio(_) => "stdout",
            Chan::Http(_) => "HTTP",
            Chan::Ws(_) => "WebSocket",
        }
    }

    /// Something that is no JSON-RPC message arrived where messages travel: one defect of
    /// the transport, whatever vector sees it, so it is recorded once and skipped, and the
    /// steps go on with the messages that are valid.
    fn noise(&mut self, detail: String) {
        self.skipped += 1;
        let key = format!(
            "{} {}: {}",
            judge::SCHEMA,
            self.where_messages_travel(),
            judge::NOT_A_MESSAGE
        );
        self.note_incidental(judge::SCHEMA, key, detail);
    }

    /// Charges a violation to the step it belongs to: the step whose request the message
    /// answers, or whose request carries the progress token, or the step being run when it
    /// waits for that notification or watches everything; a violation of a rule the vector
    /// itself tests is the vector's wherever it is seen. Anything else (the answer to a
    /// set-up request, a notification or server request unrelated to the step, an answer
    /// to no request at all) is an incidental observation.
    fn charge(&mut self, inbound: &Inbound, v: Violation, msg: &Value) {
        let owner = match inbound {
            Inbound::Response { id, .. } if !id.is_null() => {
                self.owners.get(&id.to_string()).map(|(s, _)| *s)
            }
            Inbound::Notification { method, params } if method == "notifications/progress" => {
                params
                    .get("progressToken")
                    .and_then(|t| self.token_owners.get(&t.to_string()))
                    .copied()
            }
            Inbound::Notification { method, .. } if self.focus.expects.contains(method) => {
                Some(self.focus.step)
            }
            _ => None,
        };
        let ours = self.vector_rules.contains(v.rule);
        match charged_step(owner, &self.focus, ours, &self.setup) {
            Some(step) => {
                self.log(
                    Dir::Note,
                    &format!("{}: {} (charged to step {})", v.rule, v.why, step + 1),
                );
                let stop = Stop::fail(
                    format!("{}: {}", v.rule, v.why),
                    "every message valid for the negotiated version and the session",
                    short(&msg.to_string()),
                )
                .breaking(&[v.rule.to_owned()]);
                self.charged.push((step, stop));
            }
            _ => self.note_incidental(v.rule, v.key, v.why),
        }
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
        let deadline = deadline.min(self.hard_deadline);
        let (bytes, status) = match self.raw(deadline)? {
            Raw::Text(b, s) => (b, s),
            Raw::Event => return Ok(Pumped::Got),
            Raw::Timeout => {
                // A wait cut short by the vector's own limit: no later step can run.
                if deadline >= self.hard_deadline {
                    self.out_of_time = true;
                }
                return Ok(Pumped::Timeout);
            }
            Raw::Closed(why) => {
                self.gone.get_or_insert_with(|| why.clone());
                return Ok(Pumped::Closed(why));
            }
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
                let why = format!("the server sent {what} that is not JSON ({e}); {rule}");
                if self.peer.is_some() {
                    self.noise(format!("{why}: {}", short(&text)));
                    return Ok(Pumped::Got);
                }
                // A gateway has no judge: what the step waits for decides.
                return Err(Stop::fail(why, want, short(&text)));
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
                match (violation, &inbound) {
                    (Some(v), Inbound::Garbage) => {
                        self.noise(format!("{}: {}", v.why, short(&m.to_string())));
                        return Ok(());
                    }
                    (Some(v), _) => self.charge(&inbound, v, &m),
                    (None, _) => {}
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
                    .push((self.focus.step, method.clone(), params.clone()));
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
                    let mut obs = if others.is_empty() {
                        "no response".to_owned()
                    } else {
                        format!("only responses to other ids: {}", others.join(", "))
                    };
                    let mut why = format!("no response with id {id} in time");
                    if self.skipped > 0 {
                        let noise = format!(
                            "meanwhile {} line(s) or message(s) that are not JSON-RPC arrived and were skipped",
                            self.skipped
                        );
                        why = format!("{why}; {noise}");
                        obs = format!("{obs}; {noise}");
                    }
                    let method = self.method_of(id).unwrap_or("the request").to_owned();
                    return Err(Stop::fail(why, format!("a response with id {id}"), obs)
                        .keyed(format!("{method} unanswered")));
                }
                Pumped::Closed(why) => {
                    let method = self.method_of(id).unwrap_or("the request").to_owned();
                    return Err(
                        Stop::fail(why.clone(), format!("a response with id {id}"), why)
                            .keyed(format!("{method} unanswered: the transport closed")),
                    );
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at(step: usize, watch_all: bool) -> Focus {
        Focus {
            step,
            watch_all,
            expects: Vec::new(),
        }
    }

    /// Steps of `mcpnative_0029`: a set-up `open`, then the vector's own requests.
    const SETUP: [bool; 5] = [true, false, false, false, false];

    #[test]
    fn an_answer_is_charged_to_the_step_that_sent_the_request() {
        // A second answer to step 2's request, arriving while step 4 runs.
        assert_eq!(charged_step(Some(1), &at(3, false), false, &SETUP), Some(1));
        assert_eq!(charged_step(Some(1), &at(3, true), false, &SETUP), Some(1));
    }

    #[test]
    fn the_answer_to_a_set_up_request_is_no_step_of_the_vector() {
        assert_eq!(charged_step(Some(0), &at(1, false), false, &SETUP), None);
        // Not even when it arrives in a quiet window: it answers initialize.
        assert_eq!(charged_step(Some(0), &at(4, true), false, &SETUP), None);
    }

    #[test]
    fn a_rule_the_vector_tests_is_the_vectors_wherever_it_is_seen() {
        assert_eq!(charged_step(Some(0), &at(1, false), true, &SETUP), Some(0));
        // A server request during a set-up `pick` in a vector about server requests.
        assert_eq!(charged_step(None, &at(0, false), true, &SETUP), Some(0));
    }

    #[test]
    fn what_answers_no_request_belongs_to_a_step_only_in_its_quiet_window() {
        assert_eq!(charged_step(None, &at(2, false), false, &SETUP), None);
        assert_eq!(charged_step(None, &at(2, true), false, &SETUP), Some(2));
    }
}
