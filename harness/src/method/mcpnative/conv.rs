//! One vector's conversation with an MCP server: the client end of the transport (stdio
//! lines, Streamable HTTP exchanges, WebSocket messages), every message the server sends
//! read, judged by [`super::judge`] when the vector is an `mcp_native` one, server requests
//! answered, and what the steps wait for (responses, notifications, HTTP statuses) kept
//! until a step takes it. A rule a message breaks is charged to the step whose request it
//! answers (or that watches for it); one that belongs to no step of the vector, and noise
//! that is no JSON-RPC message at all, is an incidental observation, never a stop.

use super::attribution::{charged_step, Focus};
use super::chan::WsChan;
use super::http::HttpClient;
use super::judge::{self, Inbound, Peer, Violation};
use super::stop::Stop;
use super::transport::Raw;
use crate::connect::process::Supervised;
use crate::connect::wire::Wire;
use crate::method::conv::timeline::{Clip, Timeline};
use crate::report::result::{Dir, Incidental};
use crate::sut::Timing;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

/// Longest line or message the harness accepts from a server.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Characters of a message kept in transcripts.
const TRANSCRIPT_CHARS: usize = 600;

/// How this method's transcripts keep messages.
pub(super) const CLIP: Clip = Clip {
    chars: Some(TRANSCRIPT_CHARS),
    stamped: true,
};

/// The client end of the transport.
pub(super) enum Chan {
    /// Newline-delimited JSON-RPC on the server's stdin/stdout (a scripted peer in tests).
    Stdio(Box<dyn Wire>),
    /// MCP Streamable HTTP.
    Http(HttpClient),
    /// One message per WebSocket text frame (gateways).
    Ws(WsChan),
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

    /// A response as a reader of a failure needs it: its id, what it says (an error's code,
    /// or a result) and the HTTP status that carried it.
    pub fn summary(&self) -> String {
        let id = self
            .response_id()
            .map_or("(no id)".to_owned(), Value::to_string);
        let what = match self.msg.pointer("/error/code") {
            Some(c) => format!("error {c}"),
            None if self.msg.get("result").is_some() => "a result".to_owned(),
            None => "neither result nor error".to_owned(),
        };
        match self.status {
            Some(st) => format!("{id} ({what}, HTTP {st})"),
            None => format!("{id} ({what})"),
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
    /// The last `retry` (ms) the stream gave.
    pub retry: Option<u64>,
    /// The client cut the stream after the event with this id.
    pub cut: Option<String>,
    /// Each event id is noted in the transcript (the exchanges of a resumption).
    pub traced: bool,
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
    crate::support::transcript::clip_text(s, TRANSCRIPT_CHARS)
}

/// One vector's conversation.
pub(super) struct Conv<'a> {
    pub chan: Chan,
    /// The server process (`None`: a scripted peer in tests).
    pub proc: Option<&'a mut Supervised>,
    pub timing: Timing,
    pub buf: Vec<u8>,
    /// Time, the vector's deadlines, the cancel handle and the transcript.
    pub tl: Timeline<'a>,
    pub read_total: u64,
    pub closed: Option<String>,
    /// The judge of every server message (`mcp_native` vectors; `None` for gateways).
    pub peer: Option<Peer>,
    /// Responses no step has taken yet.
    pub inbox: VecDeque<Arrived>,
    /// Notifications, in arrival order, with the step they arrived in.
    pub notifications: Vec<(usize, String, Value)>,
    /// The methods of the server's requests, in arrival order (each answered).
    pub server_requests: Vec<String>,
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
    /// The next POST is cut after the first SSE event carrying an id (a resumption).
    pub cut_next: bool,
}

impl<'a> Conv<'a> {
    /// A conversation over `chan` with the started server `proc` on the timeline `tl`;
    /// `peer` judges every message (`mcp_native`), `grace` is a stdio server's start-up
    /// time.
    pub fn new(
        chan: Chan,
        proc: Option<&'a mut Supervised>,
        timing: Timing,
        tl: Timeline<'a>,
        peer: Option<Peer>,
        grace: Option<Duration>,
    ) -> Conv<'a> {
        Conv {
            chan,
            proc,
            timing,
            buf: Vec::new(),
            tl,
            read_total: 0,
            closed: None,
            peer,
            inbox: VecDeque::new(),
            notifications: Vec::new(),
            server_requests: Vec::new(),
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
            cut_next: false,
        }
    }
}

impl Conv<'_> {
    pub fn log(&mut self, dir: Dir, s: &str) {
        self.tl.log(dir, s);
    }

    /// Deadline `ms` from now, within the vector's hard limit.
    pub fn deadline(&self, ms: u64) -> Instant {
        self.tl.deadline(ms)
    }

    /// The deadline of a step's answer: `step_ms`, plus the start-up grace of a stdio
    /// server that has not answered anything yet.
    pub fn answer_deadline(&self) -> Instant {
        let grace = self.grace.unwrap_or_default();
        self.tl.within(self.tl.after(self.timing.step_ms) + grace)
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
    pub(super) fn charge(&mut self, inbound: &Inbound, v: Violation, msg: &Value) {
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
            Inbound::Notification { method, .. } | Inbound::Request { method, .. }
                if self.focus.expects.contains(method) =>
            {
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

    /// Takes in the next message before `deadline`: judged, a server request answered, a
    /// notification recorded, a response queued for the steps.
    /// A cancelled run stops waiting at once: every wait then times out.
    pub fn pump(&mut self, deadline: Instant) -> Result<Pumped, Stop> {
        let deadline = self.tl.within(deadline);
        let raw = loop {
            if self.tl.cancelled() {
                return Ok(Pumped::Timeout);
            }
            let slice = self.tl.slice(deadline);
            match self.raw(slice)? {
                Raw::Timeout if slice < deadline => {}
                raw => break raw,
            }
        };
        let (bytes, status) = match raw {
            Raw::Text(b, s) => (b, s),
            Raw::Event => return Ok(Pumped::Got),
            Raw::Timeout => {
                // A wait cut short by the vector's own limit: no later step can run.
                if deadline >= self.tl.hard_deadline {
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
                self.server_requests.push(method.clone());
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
            "elicitation/create" if !legacy => Some(super::client::elicitation_answer(params)),
            _ => None,
        };
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
        self.wait_answer(std::slice::from_ref(id), deadline)
    }

    /// The response whose id is any of `ids` (the first is the request's own id; the
    /// others are ids a server may also answer it with, such as `null`).
    pub fn wait_answer(&mut self, ids: &[Value], deadline: Instant) -> Result<Arrived, Stop> {
        let Some(id) = ids.first() else {
            return Err(Stop::fail(
                "no request id to wait for (a harness defect)",
                "",
                "",
            ));
        };
        loop {
            if let Some(i) = self
                .inbox
                .iter()
                .position(|a| a.response_id().is_some_and(|r| ids.contains(r)))
            {
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
                    // Each other response as a reader needs it: its id, and what it says
                    // (an error's code, or a result) and the HTTP status that carried it.
                    let others: Vec<String> = self
                        .inbox
                        .iter()
                        .filter(|a| a.response_id().is_some())
                        .map(Arrived::summary)
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
    /// judged too. It waits the whole time (a `retry` the client must honour).
    pub fn drain(&mut self, ms: u64) -> Result<(), Stop> {
        self.take_in(ms, false)
    }

    /// A quiet window of `ms`: as [`Conv::drain`], but over when nothing more can arrive.
    pub fn settle(&mut self, ms: u64) -> Result<(), Stop> {
        self.take_in(ms, true)
    }

    fn take_in(&mut self, ms: u64, early: bool) -> Result<(), Stop> {
        let deadline = self.deadline(ms);
        loop {
            if early && self.nothing_open() {
                return Ok(());
            }
            match self.pump(deadline)? {
                Pumped::Got => {}
                Pumped::Timeout | Pumped::Closed(_) => return Ok(()),
            }
        }
    }

    /// Over HTTP a server can speak only on a response still open: when every exchange
    /// of the conversation has ended (its JSON body read, its SSE stream closed, or cut
    /// by the client), nothing more can arrive, and a quiet window has nothing to wait
    /// for. An open `GET` stream, or a POST not yet answered, keeps it waiting. The events
    /// of one exchange arrive in order, so its end is taken in after all it carried.
    fn nothing_open(&self) -> bool {
        matches!(self.chan, Chan::Http(_))
            && self
                .exchanges
                .values()
                .all(|e| e.ended.is_some() || e.failed.is_some() || e.cut.is_some())
    }
}
