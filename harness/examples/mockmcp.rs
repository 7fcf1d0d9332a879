//! A small plain MCP server (no SWP) for testing the harness's `mcp_native` engine without
//! network or third-party installs: `mockmcp MODE [--max-version V] [--port-file F | --port P]`.
//!
//! - `good`: conformant for every `mcpnative` vector on stdio, at every version up to
//!   `--max-version` (default 2026-07-28, where it is stateless: `server/discover`,
//!   per-request `_meta`, `resultType`). Before answering `tools/list` it pings the client
//!   and, when the client declared `roots`, asks for them, answering only once both answers
//!   are right, so the engine's routing is under test too. Tools list over two pages.
//! - `http`: the same server over MCP Streamable HTTP (session versions): sessions, 202 for
//!   notifications, SSE answers in chunked encoding for `tools/call` and `ping`, `GET`
//!   streams, `DELETE`, 404 for ended sessions, Origin/Host and `MCP-Protocol-Version`
//!   checks. Its SSE events carry ids unique in the session, a stream opens with a priming
//!   event (an id, `retry` and empty data) from 2025-11-25 on, and a `GET` with
//!   `Last-Event-ID` replays what followed that event on its stream from a small store per
//!   session. It listens on `--port`, or on a free loopback port it writes to `--port-file`.
//! - `broken-<defect>`: `good` at 2025-06-18 with one deliberate defect: `serverinfo`
//!   (`serverInfo: {}`), `toolname` (tools without `name`), `ping` (`{"pong": true}`),
//!   `mimetype` (a numeric `mimeType` in resource contents), `prompt` (prompt messages
//!   without `content`), `twice` (every response sent twice), `sampling` (a sampling request
//!   to a client that did not declare it), `methodcode` (an unknown method gets -32602
//!   "Invalid request parameters" instead of -32601, as servers on the Python SDK 1.x do:
//!   its request validation answers so), `content` (an image whose `data` is not base64),
//!   `loglevel` (log messages whatever level the client set), `roundtrip` (the sampling
//!   and elicitation tools answer with an error after the client's answer), `elicitschema`
//!   (a nested object in the elicitation form), `template` (a URI expanded from the
//!   template is not found), `repeat` (a tool call identical to the one before it is
//!   answered with that call's id, as a server caching answers by request body would),
//!   `toolschema` (a listed tool whose inputSchema is no valid JSON Schema; it keeps the
//!   `--max-version` it is given, since the rule starts at 2025-11-25), `replay` (over HTTP: a
//!   `GET` with `Last-Event-ID` replays from that event itself, an off-by-one that delivers
//!   it twice).
//! - `banner`: `good`, after one line that is not JSON on stdout at start-up (a banner, as
//!   servers that log to stdout print).
//! - `http-sessionless`: over Streamable HTTP without sessions, as MCP allows: no
//!   `Mcp-Session-Id`, no `GET` stream, and each POST served afresh, so a request before
//!   `initialize` is processed (nothing can tell).
//! - `lax`: like servers seen in the wild: no answer to malformed JSON or to a request
//!   without `jsonrpc`, and requests are processed before `initialize`.
//! - `nullid`: `good`, but an Invalid Request (no `jsonrpc`) is answered with `id: null`
//!   even when its id is readable, a reading JSON-RPC 2.0 §5 allows.
//! - `garbage`: writes a line that is not JSON instead of answering `initialize`.
//! - `crash`: exits with status 3 on `tools/list`.
//! - `slow`: `good`, after four seconds of start-up before it reads anything.

use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

const SESSION_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const STATELESS: &str = "2026-07-28";

/// The defects a `broken-*` mode injects.
#[derive(Default, Clone)]
struct Defects {
    serverinfo: bool,
    toolname: bool,
    ping: bool,
    mimetype: bool,
    prompt: bool,
    twice: bool,
    sampling: bool,
    methodcode: bool,
    content: bool,
    loglevel: bool,
    roundtrip: bool,
    elicitschema: bool,
    template: bool,
    repeat: bool,
    toolschema: bool,
    replay: bool,
}

#[derive(Clone)]
struct Config {
    lax: bool,
    /// Answer an Invalid Request with a null id even when its id is readable.
    null_invalid: bool,
    garbage: bool,
    crash: bool,
    http: bool,
    /// Over HTTP, no sessions at all: no `Mcp-Session-Id`, every POST served by a server
    /// state of its own.
    sessionless: bool,
    max_version: String,
    defects: Defects,
}

/// One session's state (one per stdio process, one per HTTP session).
struct Server {
    cfg: Config,
    initialized: bool,
    version: Option<String>,
    client_caps: Value,
    /// A tools/list waiting for the client's answers to our requests.
    pending_list: Option<(Value, Value)>,
    ping_ok: Option<bool>,
    roots_ok: Option<bool>,
    subscribed: BTreeSet<String>,
    /// The least severe level the client asked for (an index into `LEVELS`).
    log_floor: Option<usize>,
    /// A tool call waiting for the client's answer to our sampling or elicitation request.
    pending_call: Option<Value>,
    /// The params and id of the last tool call (for the `repeat` defect).
    last_call: Option<(Value, Value)>,
    /// The SSE events sent in the session, for replay (`Last-Event-ID`), and the counters
    /// their ids are made of.
    events: Vec<Stored>,
    streams: u64,
    event_no: u64,
}

/// One SSE event kept for replay: its stream, its id and its data.
struct Stored {
    stream: u64,
    id: String,
    data: String,
}

/// Events kept per session for replay; older ones cannot be resumed from.
const REPLAY_KEPT: usize = 256;

const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// A tool that returns one block of every content type the version has (valid base64, MIME
/// types), unless the `content` defect breaks the image.
fn picture(version: &str, broken: bool) -> Value {
    let data = if broken {
        "not base64!"
    } else {
        "iVBORw0KGgo="
    };
    let mut c = vec![
        json!({"type": "text", "text": "a picture"}),
        json!({"type": "image", "data": data, "mimeType": "image/png"}),
        json!({"type": "resource", "resource": {"uri": "mock://blob", "mimeType": "application/octet-stream", "blob": "AAEC"}}),
    ];
    if version >= "2025-03-26" {
        c.push(json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}));
    }
    if version >= "2025-06-18" {
        c.push(json!({"type": "resource_link", "uri": "mock://doc", "name": "doc", "mimeType": "text/plain"}));
    }
    json!({"content": c})
}

fn tools(d: &Defects) -> Vec<Value> {
    let mut ts = Vec::new();
    if d.toolschema {
        ts.push(
            json!({"name": "typo", "description": "Its inputSchema misspells a type.",
                       "inputSchema": {"type": "object", "properties": {"n": {"type": "strang"}}}}),
        );
    }
    ts.extend([
        json!({"name": "echo", "description": "Echoes its message.",
               "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
               "outputSchema": {"type": "object", "properties": {"echo": {"type": "string"}}, "required": ["echo"]},
               "annotations": {"readOnlyHint": true, "openWorldHint": false}}),
        json!({"name": "count", "description": "Counts to three, reporting progress.",
               "inputSchema": {"type": "object", "properties": {}},
               "annotations": {"readOnlyHint": true, "openWorldHint": false}}),
        json!({"name": "erase", "description": "Must never be called by a test harness.",
               "inputSchema": {"type": "object", "properties": {"what": {"type": "string"}}, "required": ["what"]},
               "annotations": {"readOnlyHint": false, "destructiveHint": true}}),
        json!({"name": "picture", "description": "Returns a block of every content type.",
               "inputSchema": {"type": "object", "properties": {}},
               "annotations": {"readOnlyHint": true, "openWorldHint": false}}),
        json!({"name": "ask-llm", "description": "Asks the client's model for a greeting.",
               "inputSchema": {"type": "object", "properties": {"topic": {"type": "string"}}}}),
        json!({"name": "ask-user", "description": "Asks the user who they are.",
               "inputSchema": {"type": "object", "properties": {}}}),
    ]);
    ts
}

impl Server {
    fn new(cfg: Config) -> Server {
        Server {
            cfg,
            initialized: false,
            version: None,
            client_caps: json!({}),
            pending_list: None,
            ping_ok: None,
            roots_ok: None,
            subscribed: BTreeSet::new(),
            log_floor: None,
            pending_call: None,
            last_call: None,
            events: Vec::new(),
            streams: 0,
            event_no: 0,
        }
    }

    /// `msgs` as the events of a new SSE stream, each with an id unique in the session
    /// that names its stream, after a priming event (an id, `retry` and empty data) from
    /// 2025-11-25 on; each is kept for replay.
    fn sse_events(&mut self, msgs: &[Value]) -> Vec<String> {
        self.streams += 1;
        let stream = self.streams;
        let mut out = Vec::new();
        if self.version.as_deref().is_some_and(|v| v >= "2025-11-25") {
            out.push(self.event(stream, String::new()));
        }
        for m in msgs {
            out.push(self.event(stream, m.to_string()));
        }
        out
    }

    fn event(&mut self, stream: u64, data: String) -> String {
        self.event_no += 1;
        let id = format!("s{stream}-e{}", self.event_no);
        let text = if data.is_empty() {
            format!("id: {id}\nretry: 50\ndata: \n\n")
        } else {
            format!("id: {id}\nevent: message\ndata: {data}\n\n")
        };
        self.events.push(Stored { stream, id, data });
        if self.events.len() > REPLAY_KEPT {
            self.events.remove(0);
        }
        text
    }

    /// The events to replay after the one with id `last`, on its stream only (`None`: an
    /// id the server does not know). `broken-replay` starts at `last` itself.
    fn replay_after(&self, last: &str) -> Option<Vec<String>> {
        let i = self.events.iter().position(|e| e.id == last)?;
        let stream = self.events[i].stream;
        let from = if self.cfg.defects.replay { i } else { i + 1 };
        Some(
            self.events[from..]
                .iter()
                .filter(|e| e.stream == stream && !e.data.is_empty())
                .map(|e| format!("id: {}\nevent: message\ndata: {}\n\n", e.id, e.data))
                .collect(),
        )
    }

    fn supported(&self) -> Vec<&'static str> {
        let mut v: Vec<&str> = SESSION_VERSIONS
            .iter()
            .copied()
            .filter(|v| *v <= self.cfg.max_version.as_str())
            .collect();
        if !self.cfg.http && STATELESS <= self.cfg.max_version.as_str() {
            v.push(STATELESS);
        }
        v
    }

    fn stateless(&self) -> bool {
        self.version.as_deref() == Some(STATELESS)
    }

    fn caps(&self) -> Value {
        let mut c = json!({"tools": {"listChanged": true}, "prompts": {"listChanged": true},
                           "resources": {"subscribe": true, "listChanged": true},
                           "logging": {}, "completions": {}});
        if self.stateless() {
            c["resources"] = json!({"listChanged": true});
        }
        c
    }

    /// A result, shaped for the session's version.
    fn ok(&self, id: &Value, mut result: Value, cacheable: bool) -> Value {
        if self.stateless() {
            result["resultType"] = json!("complete");
            if cacheable {
                result["ttlMs"] = json!(0);
                result["cacheScope"] = json!("private");
            }
        }
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    }

    fn err(id: &Value, code: i64, message: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
    }

    /// Handles one line; returns what to write back, in order.
    fn line(&mut self, line: &str) -> Vec<Value> {
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) => {
                if self.cfg.lax {
                    return vec![];
                }
                return vec![json!({"jsonrpc": "2.0", "id": null,
                                   "error": {"code": -32700, "message": "Parse error"}})];
            }
        };
        self.message(v)
    }

    fn message(&mut self, v: Value) -> Vec<Value> {
        let mut out = self.handle(v);
        if self.cfg.defects.twice {
            out = out
                .into_iter()
                .flat_map(|m| {
                    if m.get("method").is_none() {
                        vec![m.clone(), m]
                    } else {
                        vec![m]
                    }
                })
                .collect();
        }
        out
    }

    fn handle(&mut self, v: Value) -> Vec<Value> {
        let id = v.get("id").cloned();
        if v.get("jsonrpc") != Some(&json!("2.0")) {
            if self.cfg.lax {
                return vec![];
            }
            let id = match id {
                Some(id) if !self.cfg.null_invalid => id,
                _ => Value::Null,
            };
            return vec![Self::err(&id, -32600, "Invalid Request")];
        }
        let Some(method) = v.get("method").and_then(Value::as_str).map(str::to_owned) else {
            return self.client_answer(&v);
        };
        let params = v.get("params").cloned().unwrap_or(json!({}));
        let Some(id) = id else {
            if method == "notifications/initialized" {
                self.initialized = true;
            }
            return vec![];
        };
        // 2026-07-28: every request says its version.
        let meta_version = params
            .pointer("/_meta/io.modelcontextprotocol~1protocolVersion")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(mv) = &meta_version {
            if !self.supported().contains(&mv.as_str()) {
                if !self.supported().contains(&STATELESS) {
                    return vec![Self::err(&id, -32601, "Method not found")];
                }
                return vec![json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": -32022, "message": "Unsupported protocol version",
                    "data": {"supported": [STATELESS], "requested": mv}}})];
            }
            if mv == STATELESS {
                self.version = Some(STATELESS.into());
                self.initialized = true;
            }
        }
        if method == "server/discover" {
            if !self.supported().contains(&STATELESS) {
                return vec![Self::err(&id, -32601, "Method not found")];
            }
            self.version = Some(STATELESS.into());
            let r = json!({"supportedVersions": [STATELESS], "capabilities": self.caps(),
                           "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mockmcp", "version": "0"}}});
            return vec![self.ok(&id, r, true)];
        }
        if self.stateless() && meta_version.is_none() {
            return vec![Self::err(&id, -32602, "Missing _meta protocol version")];
        }
        if !self.cfg.lax
            && !self.stateless()
            && !self.initialized
            && !matches!(method.as_str(), "initialize" | "ping")
        {
            return vec![Self::err(&id, -32002, "Server not initialized")];
        }
        let p = |ptr: &str| params.pointer(ptr).cloned().unwrap_or(Value::Null);
        let stateless = self.stateless();
        match method.as_str() {
            "initialize" => {
                if self.cfg.garbage {
                    println!("starting up...");
                    return vec![];
                }
                let asked = p("/protocolVersion");
                let asked = asked.as_str().unwrap_or_default();
                let session: Vec<&str> = self
                    .supported()
                    .into_iter()
                    .filter(|v| *v != STATELESS)
                    .collect();
                let pv = if session.contains(&asked) {
                    asked.to_owned()
                } else {
                    session.last().copied().unwrap_or("2025-06-18").to_owned()
                };
                self.version = Some(pv.clone());
                self.client_caps = p("/capabilities");
                let info = if self.cfg.defects.serverinfo {
                    json!({})
                } else {
                    json!({"name": "mockmcp", "version": "0"})
                };
                let r =
                    json!({"protocolVersion": pv, "capabilities": self.caps(), "serverInfo": info});
                vec![self.ok(&id, r, false)]
            }
            "ping" if !stateless => {
                if self.cfg.defects.ping {
                    vec![self.ok(&id, json!({"pong": true}), false)]
                } else {
                    vec![self.ok(&id, json!({}), false)]
                }
            }
            "tools/list" => {
                if self.cfg.crash {
                    std::process::exit(3);
                }
                let mut ts = tools(&self.cfg.defects);
                if self.cfg.defects.toolname {
                    for t in &mut ts {
                        if let Some(o) = t.as_object_mut() {
                            o.remove("name");
                        }
                    }
                }
                let page = match p("/cursor") {
                    Value::Null => 1,
                    Value::String(c) if c == "page-2" => 2,
                    _ => return vec![Self::err(&id, -32602, "Invalid cursor")],
                };
                let first = if self.cfg.defects.toolschema { 3 } else { 2 };
                let r = if page == 1 {
                    json!({"tools": ts[..first], "nextCursor": "page-2"})
                } else {
                    json!({"tools": ts[first..]})
                };
                let answer = self.ok(&id, r, true);
                let mut out = Vec::new();
                if self.cfg.defects.sampling {
                    out.push(json!({"jsonrpc": "2.0", "id": "srv-sampling", "method": "sampling/createMessage",
                                    "params": {"messages": [], "maxTokens": 1}}));
                }
                if !stateless && !self.cfg.http && !self.cfg.lax && page == 1 {
                    // Ask the client first; answer once it answered right.
                    out.push(json!({"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"}));
                    self.ping_ok = None;
                    self.roots_ok = if self.client_caps.get("roots").is_some() {
                        out.push(
                            json!({"jsonrpc": "2.0", "id": "srv-roots", "method": "roots/list"}),
                        );
                        None
                    } else {
                        Some(true)
                    };
                    self.pending_list = Some((id, answer));
                    return out;
                }
                out.push(answer);
                out
            }
            "tools/call" => self.call_tool(&id, &params),
            "resources/list" => {
                let r = json!({"resources": [
                    {"uri": "mock://doc", "name": "doc", "mimeType": "text/plain"},
                    {"uri": "mock://blob", "name": "blob", "mimeType": "application/octet-stream"}]});
                vec![self.ok(&id, r, true)]
            }
            "resources/templates/list" => {
                let r = json!({"resourceTemplates": [{"uriTemplate": "mock://items/{id}", "name": "items"}]});
                vec![self.ok(&id, r, true)]
            }
            "resources/read" => {
                let uri = p("/uri");
                let uri = uri.as_str().unwrap_or_default();
                let mime = if self.cfg.defects.mimetype {
                    json!(42)
                } else {
                    json!("text/plain")
                };
                let contents = match uri {
                    "mock://doc" => json!([{"uri": uri, "mimeType": mime, "text": "mock"}]),
                    "mock://blob" => {
                        json!([{"uri": uri, "mimeType": "application/octet-stream", "blob": "AAEC"}])
                    }
                    u if u.starts_with("mock://items/") && !self.cfg.defects.template => {
                        json!([{"uri": uri, "mimeType": mime, "text": "item"}])
                    }
                    _ => {
                        let code = if stateless { -32602 } else { -32002 };
                        return vec![json!({"jsonrpc": "2.0", "id": id,
                            "error": {"code": code, "message": "Resource not found", "data": {"uri": uri}}})];
                    }
                };
                vec![self.ok(&id, json!({"contents": contents}), true)]
            }
            "resources/subscribe" if !stateless => {
                let uri = p("/uri").as_str().unwrap_or_default().to_owned();
                self.subscribed.insert(uri.clone());
                vec![
                    self.ok(&id, json!({}), false),
                    json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}),
                ]
            }
            "resources/unsubscribe" if !stateless => {
                let uri = p("/uri");
                self.subscribed.remove(uri.as_str().unwrap_or_default());
                vec![self.ok(&id, json!({}), false)]
            }
            "prompts/list" => {
                let r = json!({"prompts": [
                    {"name": "mock-prompt"},
                    {"name": "greet", "arguments": [{"name": "name", "required": true}]}]});
                vec![self.ok(&id, r, true)]
            }
            "prompts/get" => {
                let name = p("/name");
                let content = if self.cfg.defects.prompt {
                    None
                } else {
                    Some(json!({"type": "text", "text": "hi"}))
                };
                let mut msg = json!({"role": "user"});
                if let Some(c) = content {
                    msg["content"] = c;
                }
                match name.as_str() {
                    Some("mock-prompt") => vec![self.ok(&id, json!({"messages": [msg]}), false)],
                    Some("greet") if p("/arguments/name").is_string() => {
                        vec![self.ok(&id, json!({"messages": [msg]}), false)]
                    }
                    Some("greet") => {
                        vec![Self::err(&id, -32602, "Missing required argument: name")]
                    }
                    _ => vec![Self::err(&id, -32602, "Unknown prompt")],
                }
            }
            "logging/setLevel" if !stateless => {
                let level = p("/level");
                if let Some(n) = LEVELS.iter().position(|l| Some(*l) == level.as_str()) {
                    self.log_floor = Some(n);
                    vec![self.ok(&id, json!({}), false)]
                } else {
                    vec![Self::err(&id, -32602, "Invalid level")]
                }
            }
            "completion/complete" => {
                let r = json!({"completion": {"values": ["alpha", "beta"], "total": 2, "hasMore": false}});
                vec![self.ok(&id, r, false)]
            }
            _ if self.cfg.defects.methodcode => {
                vec![Self::err(&id, -32602, "Invalid request parameters")]
            }
            _ => vec![Self::err(&id, -32601, "Method not found")],
        }
    }

    fn call_tool(&mut self, id: &Value, params: &Value) -> Vec<Value> {
        let previous = self.last_call.replace((params.clone(), id.clone()));
        if self.cfg.defects.repeat {
            if let Some((p, old)) = previous.filter(|(p, _)| p == params) {
                self.last_call = Some((p, old.clone()));
                return self.call_tool_inner(&old, params);
            }
        }
        self.call_tool_inner(id, params)
    }

    fn call_tool_inner(&mut self, id: &Value, params: &Value) -> Vec<Value> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let args = params.get("arguments").cloned().unwrap_or(json!({}));
        match name {
            "echo" => match args.get("message").and_then(Value::as_str) {
                Some(m) => {
                    let text = format!("Echo: {m}");
                    let mut out = Vec::new();
                    if let Some(token) = params.pointer("/_meta/progressToken") {
                        for i in 1..=2 {
                            out.push(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                                            "params": {"progressToken": token, "progress": i, "total": 2}}));
                        }
                    }
                    // Logged at info, unless the client asked for less.
                    let info = 1;
                    let wanted = self.log_floor.is_none_or(|f| info >= f);
                    if !self.stateless() && (wanted || self.cfg.defects.loglevel) {
                        out.push(json!({"jsonrpc": "2.0", "method": "notifications/message",
                                        "params": {"level": LEVELS[info], "data": "echo called"}}));
                    }
                    out.push(self.ok(
                        id,
                        json!({"content": [{"type": "text", "text": text}], "structuredContent": {"echo": m}}),
                        false,
                    ));
                    out
                }
                None => vec![Self::err(id, -32602, "Invalid arguments: message must be a string")],
            },
            "count" => {
                let mut out = Vec::new();
                if let Some(token) = params.pointer("/_meta/progressToken") {
                    for i in 1..=3 {
                        out.push(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                                        "params": {"progressToken": token, "progress": i, "total": 3}}));
                    }
                }
                out.push(self.ok(id, json!({"content": [{"type": "text", "text": "3"}]}), false));
                out
            }
            "picture" => {
                let v = self.version.clone().unwrap_or_default();
                vec![self.ok(id, picture(&v, self.cfg.defects.content), false)]
            }
            "ask-llm" | "ask-user" => self.ask_client(id, name),
            "erase" => vec![self.ok(
                id,
                json!({"content": [{"type": "text", "text": "a harness called a destructive tool"}], "isError": true}),
                false,
            )],
            _ => vec![Self::err(id, -32602, &format!("Unknown tool: {name}"))],
        }
    }

    /// A tool that needs the client: a sampling or elicitation request now, the tool's
    /// answer when the client answered (`client_answer`).
    fn ask_client(&mut self, id: &Value, name: &str) -> Vec<Value> {
        let (cap, request) = if name == "ask-llm" {
            (
                "sampling",
                json!({"jsonrpc": "2.0", "id": "srv-sample", "method": "sampling/createMessage",
                       "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "Say hello"}}],
                                  "maxTokens": 16}}),
            )
        } else {
            let mut props = json!({
                "name": {"type": "string", "title": "Name", "default": "Ada"},
                "age": {"type": "integer", "minimum": 1},
                "colour": {"type": "string", "enum": ["red", "green"]}
            });
            if self.version.as_deref() == Some("2025-11-25") {
                props["size"] = json!({"type": "string", "oneOf": [
                    {"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]});
            }
            if self.cfg.defects.elicitschema {
                props["address"] =
                    json!({"type": "object", "properties": {"city": {"type": "string"}}});
            }
            (
                "elicitation",
                json!({"jsonrpc": "2.0", "id": "srv-elicit", "method": "elicitation/create",
                       "params": {"message": "Who are you?",
                                  "requestedSchema": {"type": "object", "properties": props, "required": ["name", "age"]}}}),
            )
        };
        if self.client_caps.get(cap).is_none() {
            return vec![self.ok(
                id,
                json!({"content": [{"type": "text", "text": format!("the client cannot do {cap}")}], "isError": true}),
                false,
            )];
        }
        self.pending_call = Some(id.clone());
        vec![request]
    }

    /// The client answered one of our requests.
    fn client_answer(&mut self, v: &Value) -> Vec<Value> {
        if let Some(which @ ("srv-sample" | "srv-elicit")) = v.get("id").and_then(Value::as_str) {
            let Some(call) = self.pending_call.take() else {
                return vec![];
            };
            if self.cfg.defects.roundtrip {
                return vec![Self::err(&call, -32603, "the client's answer was lost")];
            }
            let text = if which == "srv-sample" {
                v.pointer("/result/content/text")
                    .and_then(Value::as_str)
                    .unwrap_or("(no text)")
                    .to_owned()
            } else {
                let action = v.pointer("/result/action").and_then(Value::as_str);
                format!(
                    "{} {}",
                    action.unwrap_or("?"),
                    v.pointer("/result/content").cloned().unwrap_or_default()
                )
            };
            return vec![self.ok(
                &call,
                json!({"content": [{"type": "text", "text": text}]}),
                false,
            )];
        }
        match v.get("id").and_then(Value::as_str) {
            Some("srv-ping") => self.ping_ok = Some(v.get("result") == Some(&json!({}))),
            Some("srv-roots") => {
                self.roots_ok = Some(v.pointer("/result/roots").is_some_and(Value::is_array))
            }
            _ => {}
        }
        if let (Some(p), Some(r)) = (self.ping_ok, self.roots_ok) {
            if let Some((id, answer)) = self.pending_list.take() {
                return vec![if p && r {
                    answer
                } else {
                    Self::err(&id, -32603, "wrong answers to the server's requests")
                }];
            }
        }
        vec![]
    }
}

fn config(mode: &str, max_version: String) -> Config {
    let mut d = Defects::default();
    let broken = mode.strip_prefix("broken-");
    match broken {
        Some("serverinfo") => d.serverinfo = true,
        Some("toolname") => d.toolname = true,
        Some("ping") => d.ping = true,
        Some("mimetype") => d.mimetype = true,
        Some("prompt") => d.prompt = true,
        Some("twice") => d.twice = true,
        Some("sampling") => d.sampling = true,
        Some("methodcode") => d.methodcode = true,
        Some("content") => d.content = true,
        Some("loglevel") => d.loglevel = true,
        Some("roundtrip") => d.roundtrip = true,
        Some("elicitschema") => d.elicitschema = true,
        Some("template") => d.template = true,
        Some("repeat") => d.repeat = true,
        Some("toolschema") => d.toolschema = true,
        Some("replay") => d.replay = true,
        Some(other) => {
            eprintln!("mockmcp: unknown defect {other}");
            std::process::exit(2);
        }
        None => {}
    }
    Config {
        lax: mode == "lax" || mode == "http-sessionless",
        null_invalid: mode == "nullid",
        garbage: mode == "garbage",
        crash: mode == "crash",
        http: matches!(mode, "http" | "broken-replay" | "http-sessionless"),
        sessionless: mode == "http-sessionless",
        max_version: if broken.is_some() && broken != Some("toolschema") {
            "2025-06-18".into()
        } else {
            max_version
        },
        defects: d,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().cloned().unwrap_or_default();
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let max_version = opt("--max-version").unwrap_or_else(|| STATELESS.into());
    let cfg = config(&mode, max_version);
    if mode == "slow" {
        std::thread::sleep(std::time::Duration::from_secs(4));
    }
    if mode == "banner" {
        // Before the client's first line, as a server that logs its start to stdout does.
        println!("mockmcp 0 listening on stdio");
    }
    if cfg.http {
        let port_file = opt("--port-file");
        let port = opt("--port").and_then(|p| p.parse::<u16>().ok());
        if port_file.is_none() && port.is_none() {
            eprintln!("mockmcp http needs --port-file or --port");
            std::process::exit(2);
        }
        serve_http(cfg, port.unwrap_or(0), port_file.as_deref());
        return;
    }
    let mut server = Server::new(cfg);
    let stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    for line in stdin.lines() {
        let Ok(line) = line else { return };
        for m in server.line(&line) {
            let _ = writeln!(out, "{m}");
        }
        let _ = out.flush();
    }
}

// ---- Streamable HTTP ------------------------------------------------------------------

type Sessions = Arc<Mutex<HashMap<String, Server>>>;

struct Request {
    method: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn read_request(r: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let method = line.split(' ').next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len.min(1 << 20)];
    r.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        headers,
        body,
    })
}

fn respond(w: &mut TcpStream, status: &str, headers: &[(&str, String)], body: &[u8]) {
    let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = w.write_all(head.as_bytes());
    let _ = w.write_all(body);
    let _ = w.flush();
}

/// An SSE answer in chunked encoding, one chunk per event (framed, with its id).
fn respond_sse(w: &mut TcpStream, headers: &[(&str, String)], events: &[String]) {
    let mut head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
            .to_owned();
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = w.write_all(head.as_bytes());
    let mut chunks = vec![": open\r\n\r\n".to_owned()];
    chunks.extend(events.iter().cloned());
    for c in chunks {
        let _ = write!(w, "{:x}\r\n{c}\r\n", c.len());
        let _ = w.flush();
    }
    let _ = w.write_all(b"0\r\n\r\n");
    let _ = w.flush();
}

/// Serves on `port` (0: any free one), writing the port to `port_file` when given.
fn serve_http(cfg: Config, port: u16, port_file: Option<&str>) {
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    if let Some(f) = port_file {
        std::fs::write(f, port.to_string()).expect("port file");
    }
    let sessions: Sessions = Arc::new(Mutex::new(HashMap::new()));
    let next = Arc::new(Mutex::new(0u64));
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let (cfg, sessions, next) = (cfg.clone(), sessions.clone(), next.clone());
        std::thread::spawn(move || connection(conn, cfg, sessions, next, port));
    }
}

fn connection(conn: TcpStream, cfg: Config, sessions: Sessions, next: Arc<Mutex<u64>>, port: u16) {
    let Ok(mut w) = conn.try_clone() else { return };
    let mut r = BufReader::new(conn);
    while let Some(req) = read_request(&mut r) {
        // DNS-rebinding protection: only loopback origins and hosts.
        let loopback = |h: &str| {
            let host = h
                .trim_start_matches("http://")
                .trim_start_matches("https://");
            host == format!("127.0.0.1:{port}") || host == format!("localhost:{port}")
        };
        if req.header("origin").is_some_and(|o| !loopback(o))
            || req.header("host").is_some_and(|h| !loopback(h))
        {
            respond(&mut w, "403 Forbidden", &[], b"");
            continue;
        }
        let sid = req.header("mcp-session-id").map(str::to_owned);
        if let Some(pv) = req.header("mcp-protocol-version") {
            if !SESSION_VERSIONS.contains(&pv) {
                respond(
                    &mut w,
                    "400 Bad Request",
                    &[],
                    b"unsupported MCP-Protocol-Version",
                );
                continue;
            }
        }
        let known = |s: &Option<String>| {
            s.as_ref()
                .is_some_and(|s| sessions.lock().map(|m| m.contains_key(s)).unwrap_or(false))
        };
        match req.method.as_str() {
            "GET" | "DELETE" if cfg.sessionless => {
                respond(&mut w, "405 Method Not Allowed", &[], b"");
                continue;
            }
            "GET" => {
                if !known(&sid) {
                    respond(
                        &mut w,
                        if sid.is_some() {
                            "404 Not Found"
                        } else {
                            "400 Bad Request"
                        },
                        &[],
                        b"",
                    );
                    continue;
                }
                // A resumption replays what followed the event on its stream; an id the
                // session does not know cannot be resumed from.
                let replay = req.header("last-event-id").map(|last| {
                    let m = sessions.lock().unwrap_or_else(|e| e.into_inner());
                    sid.as_ref()
                        .and_then(|s| m.get(s))
                        .and_then(|s| s.replay_after(last))
                });
                if let Some(None) = replay {
                    respond(&mut w, "400 Bad Request", &[], b"unknown Last-Event-ID");
                    continue;
                }
                // The server's stream: open until the client goes away.
                let _ = w.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
                let mut chunks = vec![": open\n\n".to_owned()];
                chunks.extend(replay.flatten().unwrap_or_default());
                for c in chunks {
                    let _ = write!(w, "{:x}\r\n{c}\r\n", c.len());
                }
                let _ = w.flush();
                let mut sink = [0u8; 64];
                while matches!(r.get_mut().read(&mut sink), Ok(n) if n > 0) {}
                return;
            }
            "DELETE" => {
                let removed = sid
                    .as_ref()
                    .and_then(|s| sessions.lock().ok().and_then(|mut m| m.remove(s)))
                    .is_some();
                respond(
                    &mut w,
                    if removed { "200 OK" } else { "404 Not Found" },
                    &[],
                    b"",
                );
                continue;
            }
            "POST" => {}
            _ => {
                respond(&mut w, "405 Method Not Allowed", &[], b"");
                continue;
            }
        }
        let accept = req.header("accept").unwrap_or_default();
        if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
            respond(&mut w, "406 Not Acceptable", &[], b"");
            continue;
        }
        let msg: Value = match serde_json::from_slice(&req.body) {
            Ok(v) => v,
            Err(_) => {
                let e = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
                respond(
                    &mut w,
                    "400 Bad Request",
                    &[("Content-Type", "application/json".into())],
                    e.to_string().as_bytes(),
                );
                continue;
            }
        };
        let request = msg.get("id").is_some() && msg.get("method").is_some();
        if cfg.sessionless {
            // Nothing is kept between requests, so nothing can tell whether the client
            // initialised: every request is processed.
            let out = Server::new(cfg.clone()).message(msg);
            match out.first() {
                Some(m) if request => respond(
                    &mut w,
                    "200 OK",
                    &[("Content-Type", "application/json".into())],
                    m.to_string().as_bytes(),
                ),
                _ => respond(&mut w, "202 Accepted", &[], b""),
            }
            continue;
        }
        let is_init = msg.get("method") == Some(&json!("initialize"));
        let session = if is_init {
            let mut n = next.lock().unwrap_or_else(|e| e.into_inner());
            *n += 1;
            let s = format!("mock-session-{n}");
            if let Ok(mut m) = sessions.lock() {
                m.insert(s.clone(), Server::new(cfg.clone()));
            }
            s
        } else {
            match sid {
                None => {
                    respond(&mut w, "400 Bad Request", &[], b"Mcp-Session-Id required");
                    continue;
                }
                Some(s) if !known(&Some(s.clone())) => {
                    respond(&mut w, "404 Not Found", &[], b"");
                    continue;
                }
                Some(s) => s,
            }
        };
        let sse = matches!(
            msg.get("method").and_then(Value::as_str),
            Some("tools/call" | "ping")
        );
        let (out, events) = {
            let mut m = sessions.lock().unwrap_or_else(|e| e.into_inner());
            match m.get_mut(&session) {
                Some(server) => {
                    let out = server.message(msg.clone());
                    let events =
                        (request && (sse || out.len() != 1)).then(|| server.sse_events(&out));
                    (out, events)
                }
                None => (vec![], None),
            }
        };
        let headers = [("Mcp-Session-Id", session)];
        if !request {
            // A notification or a response: accepted, no body.
            respond(&mut w, "202 Accepted", &headers, b"");
        } else if let Some(events) = events {
            respond_sse(&mut w, &headers, &events);
        } else {
            let mut h = headers.to_vec();
            h.push(("Content-Type", "application/json".into()));
            respond(&mut w, "200 OK", &h, out[0].to_string().as_bytes());
        }
    }
}
