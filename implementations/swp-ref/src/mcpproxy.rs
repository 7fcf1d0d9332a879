//! `swp-ref mcp-proxy`: an MCP version-translating proxy on stdio. The client talks to the
//! proxy's stdin/stdout at the configured version; the server is a child process spoken to
//! at whatever version it agrees to. Every line in either direction goes through
//! mcp-translate (`docs/mcp-translation.md`); same-version lines pass untouched without
//! being parsed. Between a session version and the stateless 2026-07-28 the proxy also
//! holds the session (`correlate::Session`) and bridges multi-round-trip requests
//! (`correlate::rounds`). Two threads, one per direction, share the state.

use mcp_translate::correlate::rounds::{
    Answered, Asked, ForSessionClient, ForStatelessClient, Opened,
};
use mcp_translate::correlate::{Batches, IdKey, Offer, Pending, Session};
use mcp_translate::{translate_with, Answering, Direction, Hop, NoRequests, Translation, Version};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};

/// Longest line accepted from either side; a longer one is discarded (never buffered whole).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Client lines held at most while a stateless client's session is being opened.
const MAX_QUEUED: usize = 4096;

const STATELESS: Version = Version::V2026_07_28;
const LOG_LEVEL: &str = "/params/_meta/io.modelcontextprotocol~1logLevel";

/// Proxy failures that end it.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The server command could not be started.
    #[error("cannot start the MCP server {cmd:?}: {source}")]
    Spawn {
        /// The command.
        cmd: String,
        /// Why.
        source: io::Error,
    },
    /// I/O on the client or server pipes.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// A stateless client's first request, while the proxy finds out what the server speaks.
#[derive(Debug)]
struct Opening {
    /// Its id: the probe and the `initialize` reuse it (the request itself waits, so the
    /// id is free upstream).
    id: Value,
    /// The `server/discover` sent: the client's own, or one made of its request's `_meta`.
    probe: Value,
    /// The probe is the proxy's (the client's request waits at the head of the queue).
    own: bool,
    /// The probe was refused and `initialize` went out.
    initializing: bool,
}

/// What both directions share.
#[derive(Debug, Default)]
struct State {
    /// The version the server speaks, once known.
    server: Option<Version>,
    /// A session client: the id of its initialize request.
    init: Option<IdKey>,
    /// A session client: its initialize, kept in case the server turns out stateless.
    init_msg: Option<Value>,
    /// A session client: the server refused initialize (relayed if it refuses
    /// `server/discover` too).
    init_refusal: Option<Vec<u8>>,
    /// A stateless client: its first request while the server is probed or initialized.
    opening: Option<Opening>,
    /// A stateless client: the id of a `logging/setLevel` sent ahead of its request, and
    /// the level.
    pre: Option<(IdKey, String)>,
    /// The last level sent as `logging/setLevel` (not sent twice, even when refused).
    level_tried: Option<String>,
    /// A stateless client's lines held during `opening` or `pre`.
    queue: VecDeque<Vec<u8>>,
    /// A stateless client: the `server/discover` result of its session server.
    discovered: Option<Value>,
    /// What the session established.
    session: Session,
    /// Multi-round-trip bridges.
    for_session_client: ForSessionClient,
    for_stateless_client: ForStatelessClient,
    /// Client requests awaiting the server's results.
    from_client: Pending,
    /// Server requests awaiting the client's results.
    from_server: Pending,
    /// Client batches split for the server, awaiting their responses.
    client_batches: Batches,
    /// Server batches split for the client, awaiting the client's responses.
    server_batches: Batches,
}

type Shared<T> = Arc<Mutex<T>>;
/// A pipe end; `None` once closed.
type Sink = Mutex<Option<Box<dyn Write + Send>>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking writer thread poisons the lock; the state is still consistent enough
    // to keep relaying, so take it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn write_line(w: &Sink, bytes: &[u8]) -> io::Result<()> {
    let mut g = lock(w);
    let Some(w) = g.as_mut() else {
        return Ok(()); // that side is gone; nothing to deliver to
    };
    w.write_all(bytes)?;
    w.write_all(b"\n")?;
    w.flush()
}

fn write_value(w: &Sink, v: &Value) -> io::Result<()> {
    write_line(w, &serde_json::to_vec(v).unwrap_or_default())
}

/// Reads one line of at most [`MAX_LINE_BYTES`] into `buf` (without the newline).
/// `Ok(None)` at end of input; `Ok(Some(false))` for a line that was too long (discarded).
fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<Option<bool>> {
    buf.clear();
    let n = r
        .by_ref()
        .take(MAX_LINE_BYTES as u64 + 1)
        .read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        return Ok(Some(true));
    }
    if buf.len() <= MAX_LINE_BYTES {
        return Ok(Some(true)); // the last line, without a newline
    }
    // Too long: discard up to the next newline, in bounded pieces.
    loop {
        buf.clear();
        let n = r.by_ref().take(64 * 1024).read_until(b'\n', buf)?;
        if n == 0 || buf.last() == Some(&b'\n') {
            buf.clear();
            return Ok(Some(false));
        }
    }
}

fn is_request(v: &Value) -> bool {
    v.get("method").is_some() && v.get("id").is_some()
}

fn is_response(v: &Value) -> bool {
    v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
}

fn method(v: &Value) -> Option<&str> {
    v.get("method").and_then(Value::as_str)
}

fn same_id(a: Option<&Value>, b: &Value) -> bool {
    a.and_then(IdKey::of)
        .is_some_and(|k| Some(k) == IdKey::of(b))
}

/// The error the proxy answers a request with when it cannot forward it.
fn proxy_error(id: &Value, why: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": format!("mcp-proxy: {why}")}})
}

/// Whether a `server/discover` result says the server speaks 2026-07-28.
fn speaks_stateless(v: &Value) -> bool {
    v.pointer("/result/supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|vs| vs.iter().any(|x| x.as_str() == Some(STATELESS.as_str())))
}

struct Ends {
    to_client: Sink,
    to_server: Sink,
    state: Shared<State>,
    client: Version,
}

impl Ends {
    /// Delivers translated responses toward the client, reassembling split batches.
    fn deliver_to_client(&self, st: &mut State, v: Value) -> io::Result<()> {
        if is_response(&v) {
            st.from_client.complete(&v);
            match st.client_batches.offer(v) {
                Offer::Single(v) | Offer::Complete(v) => write_value(&self.to_client, &v)?,
                Offer::Held => {}
            }
            return Ok(());
        }
        st.from_server.record(&v);
        write_value(&self.to_client, &v)
    }

    fn deliver_to_server(&self, st: &mut State, v: Value) -> io::Result<()> {
        if is_response(&v) {
            st.from_server.complete(&v);
            match st.server_batches.offer(v) {
                Offer::Single(v) | Offer::Complete(v) => write_value(&self.to_server, &v)?,
                Offer::Held => {}
            }
            return Ok(());
        }
        st.from_client.record(&v);
        write_value(&self.to_server, &v)
    }

    /// One line from the client.
    fn client_line(&self, line: &[u8]) -> io::Result<()> {
        let mut st = lock(&self.state);
        if self.client.is_stateless() {
            if st.queue.len() >= MAX_QUEUED {
                eprintln!("mcp-proxy: too many client lines waiting for the server; discarded");
                return Ok(());
            }
            st.queue.push_back(line.to_vec());
            return self.drain(&mut st);
        }
        let server = st.server;
        if server.is_none() || server == Some(self.client) {
            // Before the server's version is known, and when both sides agree, the line
            // passes untouched. Unless the client is at the newest session version, the
            // server's lines are still translated (see `server_hop`), so the requests are
            // noted to type their results.
            if server.is_none() || self.client != Version::LATEST_SESSION {
                if let Ok(v) = serde_json::from_slice::<Value>(line) {
                    if server.is_none() && method(&v) == Some("initialize") {
                        st.init = v.get("id").and_then(IdKey::of);
                        st.init_msg = Some(v.clone());
                    }
                    st.from_client.record(&v);
                    st.from_server.complete(&v);
                }
            }
            return write_line(&self.to_server, line);
        }
        let hop = Hop {
            from: self.client,
            to: server.unwrap_or(self.client),
            direction: Direction::ClientToServer,
        };
        self.translate_line(&mut st, line, hop)
    }

    /// Handles a stateless client's queued lines until one has to wait for the server.
    fn drain(&self, st: &mut State) -> io::Result<()> {
        while st.opening.is_none() && st.pre.is_none() {
            let Some(line) = st.queue.pop_front() else {
                break;
            };
            self.stateless_client_line(st, &line)?;
        }
        Ok(())
    }

    /// One line from a stateless (2026-07-28) client.
    fn stateless_client_line(&self, st: &mut State, line: &[u8]) -> io::Result<()> {
        let server = match st.server {
            Some(s) if s.is_stateless() => return write_line(&self.to_server, line),
            Some(s) => s,
            None => return self.open(st, line),
        };
        if let Ok(v) = serde_json::from_slice::<Value>(line) {
            if let (Some("server/discover"), Some(id), Some(d)) =
                (method(&v), v.get("id"), st.discovered.as_ref())
            {
                // The session is open: its discovery result answers again.
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": d});
                return write_value(&self.to_client, &answer);
            }
            match st.for_stateless_client.on_client_request(&v, server) {
                Ok(Some(retry)) => {
                    for m in retry.to_server {
                        st.from_server.complete(&m);
                        write_value(&self.to_server, &m)?;
                    }
                    for m in retry.to_client {
                        write_value(&self.to_client, &m)?;
                    }
                    return Ok(());
                }
                Ok(None) => {}
                Err(e) => {
                    eprintln!("mcp-proxy: {e}");
                    let id = v.get("id").cloned().unwrap_or_default();
                    return write_value(&self.to_client, &proxy_error(&id, &e.to_string()));
                }
            }
            let level = v.pointer(LOG_LEVEL).and_then(Value::as_str);
            let logging = st
                .session
                .server_capabilities
                .as_ref()
                .is_some_and(|c| c.get("logging").is_some());
            if let (Some(level), Some(id), true) = (level, v.get("id"), logging) {
                let tried = st.level_tried.as_deref() == Some(level);
                if st.session.log_level.as_deref() != Some(level) && !tried {
                    // The session server keeps one level: set it before the request goes.
                    let set = json!({"jsonrpc": "2.0", "id": id, "method": "logging/setLevel",
                        "params": {"level": level}});
                    st.pre = IdKey::of(id).map(|k| (k, level.to_owned()));
                    st.level_tried = Some(level.to_owned());
                    st.queue.push_front(line.to_vec());
                    return write_value(&self.to_server, &set);
                }
            }
        }
        let hop = Hop {
            from: self.client,
            to: server,
            direction: Direction::ClientToServer,
        };
        self.translate_line(st, line, hop)
    }

    /// A stateless client's first request: probe the server with `server/discover` (its
    /// own, or one made of the request's `_meta`, with its id). A 2026-07-28 server
    /// answers it; a session server refuses it and is then initialized for the client.
    fn open(&self, st: &mut State, line: &[u8]) -> io::Result<()> {
        let v = match serde_json::from_slice::<Value>(line) {
            Ok(v) if is_request(&v) => v,
            // Nothing to open a session with (a notification, or not JSON): as it is.
            _ => return write_line(&self.to_server, line),
        };
        let id = v.get("id").cloned().unwrap_or_default();
        let own = method(&v) != Some("server/discover");
        let probe = if own {
            let meta = v.pointer("/params/_meta").cloned().unwrap_or(json!({}));
            json!({"jsonrpc": "2.0", "id": id, "method": "server/discover", "params": {"_meta": meta}})
        } else {
            v.clone()
        };
        write_value(&self.to_server, &probe)?;
        if own {
            st.queue.push_front(line.to_vec());
        }
        st.opening = Some(Opening {
            id,
            probe,
            own,
            initializing: false,
        });
        Ok(())
    }

    /// The server's answer while a stateless client's session is being opened.
    fn opening_answer(&self, st: &mut State, line: &[u8]) -> io::Result<()> {
        let v: Option<Value> = serde_json::from_slice(line).ok();
        let Some(op) = st.opening.as_ref() else {
            return Ok(());
        };
        let Some(v) = v.filter(|v| is_response(v) && same_id(v.get("id"), &op.id)) else {
            eprintln!("mcp-proxy: the server spoke before the session was open; not forwarded");
            return Ok(());
        };
        if !op.initializing {
            if v.get("result").is_some() && speaks_stateless(&v) {
                st.server = Some(STATELESS);
                let own = op.own;
                st.opening = None;
                eprintln!("mcp-proxy: client {}, server {STATELESS}", self.client);
                if !own {
                    write_line(&self.to_client, line)?;
                }
                return self.drain(st);
            }
            // A session server: initialize it for the client, at the newest session version.
            let hop = Hop {
                from: STATELESS,
                to: Version::LATEST_SESSION,
                direction: Direction::ClientToServer,
            };
            return match translate_with(op.probe.clone(), &hop, &NoRequests, &st.session) {
                Ok(t) if t.messages.len() == 1 => {
                    if let Some(op) = st.opening.as_mut() {
                        op.initializing = true;
                    }
                    write_value(&self.to_server, &t.messages[0])
                }
                Ok(_) => self.fail_opening(st, "cannot initialize the server"),
                Err(e) => self.fail_opening(st, &e.to_string()),
            };
        }
        let Some(op) = st.opening.take() else {
            return Ok(());
        };
        let agreed = v.pointer("/result/protocolVersion").and_then(Value::as_str);
        let server = match agreed.map(str::parse::<Version>) {
            Some(Ok(s)) if !s.is_stateless() => s,
            Some(Ok(s)) => {
                st.opening = Some(op);
                return self.fail_opening(st, &format!("the server initialized at {s}"));
            }
            Some(Err(e)) => {
                st.opening = Some(op);
                return self.fail_opening(st, &format!("the server speaks {e}"));
            }
            None => {
                // Refused: the client's request gets the refusal (it carries its id).
                if op.own {
                    st.queue.pop_front();
                }
                write_line(&self.to_client, line)?;
                return self.drain(st);
            }
        };
        let hop = Hop {
            from: Version::LATEST_SESSION,
            to: STATELESS,
            direction: Direction::ServerToClient,
        };
        let t = match translate_with(v, &hop, &Answering("initialize"), &st.session) {
            Ok(t) => t,
            Err(e) => {
                st.opening = Some(op);
                return self.fail_opening(st, &e.to_string());
            }
        };
        st.server = Some(server);
        eprintln!("mcp-proxy: client {}, server {server}", self.client);
        for r in &t.replies {
            write_value(&self.to_server, r)?; // notifications/initialized
        }
        if let Some(d) = t.messages.into_iter().next() {
            st.session.note_client(&op.probe);
            st.session.note_server(&d);
            st.discovered = d.get("result").cloned();
            if !op.own {
                write_value(&self.to_client, &d)?;
            }
        }
        self.drain(st)
    }

    /// The session could not be opened: the client's first request gets an error.
    fn fail_opening(&self, st: &mut State, why: &str) -> io::Result<()> {
        eprintln!("mcp-proxy: {why}");
        if let Some(op) = st.opening.take() {
            if op.own {
                st.queue.pop_front();
            }
            write_value(&self.to_client, &proxy_error(&op.id, why))?;
        }
        self.drain(st)
    }

    /// One line from the server.
    fn server_line(&self, line: &[u8]) -> io::Result<()> {
        let mut st = lock(&self.state);
        if self.client.is_stateless() {
            if st.opening.is_some() {
                return self.opening_answer(&mut st, line);
            }
            if let Some((pre, level)) = st.pre.clone() {
                let v: Option<Value> = serde_json::from_slice(line).ok();
                if let Some(v) = v.filter(|v| {
                    is_response(v) && v.get("id").and_then(IdKey::of) == Some(pre.clone())
                }) {
                    if v.get("result").is_some() {
                        st.session.log_level = Some(level);
                    }
                    st.pre = None;
                    return self.drain(&mut st);
                }
            }
        }
        if st.server.is_none() {
            return self.session_opening(&mut st, line);
        }
        let server = st.server.unwrap_or(self.client);
        match self.server_hop(server, line) {
            Some(hop) => self.translate_line(&mut st, line, hop),
            None => write_line(&self.to_client, line),
        }
    }

    /// A session client's server before its version is known: the answer to initialize
    /// decides it. A server that refuses initialize is asked `server/discover`; if it
    /// speaks 2026-07-28, its answer becomes the initialize result.
    fn session_opening(&self, st: &mut State, line: &[u8]) -> io::Result<()> {
        let v: Option<Value> = serde_json::from_slice(line).ok();
        let init = st.init.clone();
        let Some(v) = v.filter(|v| init.is_some() && v.get("id").and_then(IdKey::of) == init)
        else {
            return write_line(&self.to_client, line);
        };
        if let Some(refusal) = st.init_refusal.take() {
            // The answer to server/discover.
            if v.get("result").is_some() && speaks_stateless(&v) {
                st.server = Some(STATELESS);
                st.session.note_server(&v);
                eprintln!("mcp-proxy: client {}, server {STATELESS}", self.client);
                st.from_client
                    .record(&json!({"id": v["id"], "method": "server/discover"}));
                let hop = Hop {
                    from: STATELESS,
                    to: self.client,
                    direction: Direction::ServerToClient,
                };
                return self.translate_line(st, line, hop);
            }
            eprintln!("mcp-proxy: the server refused initialize and server/discover");
            return write_line(&self.to_client, &refusal);
        }
        let agreed = v.pointer("/result/protocolVersion").and_then(Value::as_str);
        match agreed.map(str::parse::<Version>) {
            Some(Ok(s)) if !s.is_stateless() => {
                st.server = Some(s);
                eprintln!("mcp-proxy: client {}, server {s}", self.client);
                if let Some(hop) = self.server_hop(s, line) {
                    st.from_client
                        .record(&json!({"id": v["id"], "method": "initialize"}));
                    return self.translate_line(st, line, hop);
                }
            }
            Some(Ok(s)) => {
                return write_value(
                    &self.to_client,
                    &proxy_error(&v["id"], &format!("the server initialized at {s}")),
                );
            }
            Some(Err(e)) => {
                eprintln!(
                    "mcp-proxy: the server agreed to a version the proxy cannot translate: {e}"
                );
                return write_value(
                    &self.to_client,
                    &proxy_error(&v["id"], &format!("the server speaks {e}")),
                );
            }
            None => {
                // Refused. It may be a 2026-07-28 server, which has no initialize: ask it
                // server/discover instead, under the same id.
                if let Some(init) = st.init_msg.take() {
                    let hop = Hop {
                        from: self.client,
                        to: STATELESS,
                        direction: Direction::ClientToServer,
                    };
                    if let Ok(t) = translate_with(init, &hop, &NoRequests, &st.session) {
                        if let Some(d) = t.messages.first() {
                            st.session.note_client(d);
                            st.init_refusal = Some(line.to_vec());
                            return write_value(&self.to_server, d);
                        }
                    }
                }
            }
        }
        write_line(&self.to_client, line)
    }

    /// The hop for a line from a server that speaks `server`. Real session servers
    /// answering an older version still send the newest fields (seeds-errata.md, observed
    /// on server-everything and the SDKs), so their single messages are read as the newest
    /// session version: the rules key on the client's version and strip whatever it lacks.
    /// A batch can only come from a 2025-03-26 server and is read as such; a 2026-07-28
    /// server's lines as what they are. `None`: the line passes untouched, unparsed.
    fn server_hop(&self, server: Version, line: &[u8]) -> Option<Hop> {
        let batch = line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
        // A client at the newest session version lacks nothing a session server sends: its
        // server's lines are read at the server's own version (only protocolVersion changes).
        let from = if server.is_stateless() || batch || self.client == Version::LATEST_SESSION {
            server
        } else {
            Version::LATEST_SESSION
        };
        (from != self.client).then_some(Hop {
            from,
            to: self.client,
            direction: Direction::ServerToClient,
        })
    }

    /// Bridges that take a line before it is translated. `Ok(true)`: handled.
    fn bridged(&self, st: &mut State, v: &Value, hop: &Hop) -> io::Result<bool> {
        let to_server = hop.direction == Direction::ClientToServer;
        if to_server && hop.to.is_stateless() && is_response(v) {
            // A session client answering a server request that came from input_required.
            match st.for_session_client.on_client_response(v, hop.from) {
                // A 2026-07-28 server makes no requests, so no response is owed to it: this
                // one answers an input request of a round that failed or ended, or nothing.
                // Forwarded (or answered with an error), it would reach a server that never
                // asked.
                Answered::NotOurs => {
                    eprintln!(
                        "mcp-proxy: a client response ({}) answers no open input request; not forwarded",
                        v.get("id").unwrap_or(&Value::Null)
                    );
                }
                Answered::Held => {}
                Answered::Retry(r) => write_value(&self.to_server, &r)?,
                Answered::Failed(e) => self.deliver_to_client(st, e)?,
            }
            st.from_server.complete(v);
            return Ok(true);
        }
        if !to_server && hop.from.is_stateless() && is_response(v) {
            match st.for_session_client.on_server_response(v, hop.to) {
                Opened::No => return Ok(false),
                Opened::Round {
                    to_client,
                    retry,
                    warnings,
                } => {
                    for w in &warnings {
                        eprintln!("mcp-proxy: {hop:?} {:?} {} {}", w.kind, w.path, w.detail);
                    }
                    for m in to_client {
                        self.deliver_to_client(st, m)?;
                    }
                    if let Some(r) = retry {
                        write_value(&self.to_server, &r)?;
                    }
                }
                Opened::Failed(e) => self.deliver_to_client(st, e)?,
            }
            return Ok(true);
        }
        if !to_server && hop.to.is_stateless() && is_request(v) {
            // A session server's request during a stateless client's request.
            match st.for_stateless_client.on_server_request(v, hop.from) {
                Ok(Asked::NoCall) => return Ok(false),
                Ok(Asked::ToClient(ms, warnings)) => {
                    for w in &warnings {
                        eprintln!("mcp-proxy: {hop:?} {:?} {} {}", w.kind, w.path, w.detail);
                    }
                    for m in ms {
                        write_value(&self.to_client, &m)?;
                    }
                }
                Ok(Asked::Queued(warnings)) => {
                    for w in &warnings {
                        eprintln!("mcp-proxy: {hop:?} {:?} {} {}", w.kind, w.path, w.detail);
                    }
                }
                Err(e) => {
                    eprintln!("mcp-proxy: {e}; answered for the client");
                    let id = v.get("id").cloned().unwrap_or_default();
                    write_value(&self.to_server, &proxy_error(&id, &e.to_string()))?;
                }
            }
            return Ok(true);
        }
        Ok(false)
    }

    fn translate_line(&self, st: &mut State, line: &[u8], hop: Hop) -> io::Result<()> {
        let to_server = hop.direction == Direction::ClientToServer;
        let mut v: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                eprintln!(
                    "mcp-proxy: a line from the {} is not JSON ({e}); not forwarded",
                    if to_server { "client" } else { "server" }
                );
                if to_server {
                    let err = if self.client >= Version::V2025_11_25 {
                        json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}})
                    } else {
                        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}})
                    };
                    return write_value(&self.to_client, &err);
                }
                return Ok(());
            }
        };
        if self.bridged(st, &v, &hop)? {
            return Ok(());
        }
        if to_server && hop.from.is_stateless() && method(&v) == Some("notifications/cancelled") {
            // A retried request is cancelled under the id the server knows.
            st.for_stateless_client.on_client_cancel(&mut v);
        }
        let split_batch = v.is_array() && !hop.to.has_batches();
        let original = if split_batch { Some(v.clone()) } else { None };
        // What the line asks of the session once it is translated: kept before it moves.
        let asked = (method(&v).map(str::to_owned), v.get("id").cloned());
        let level = (method(&v) == Some("logging/setLevel"))
            .then(|| {
                v.pointer("/params/level")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .flatten();
        let cancelled = v.pointer("/params/requestId").cloned();
        // Who waits for an answer if this line cannot be translated: the senders of its
        // requests, and the receivers of its responses. Noted before the message moves.
        let (requests, responses): (Vec<Value>, Vec<Value>) = {
            let items: Vec<&Value> = match &v {
                Value::Array(a) => a.iter().collect(),
                m => vec![m],
            };
            (
                items
                    .iter()
                    .filter(|m| is_request(m))
                    .map(|m| m["id"].clone())
                    .collect(),
                items
                    .iter()
                    .filter(|m| is_response(m))
                    .filter_map(|m| m.get("id").cloned())
                    .collect(),
            )
        };
        let lookup: &Pending = if to_server {
            &st.from_server
        } else {
            &st.from_client
        };
        let Translation {
            messages,
            replies,
            warnings,
        } = match translate_with(v, &hop, lookup, &st.session) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("mcp-proxy: {e}; not forwarded");
                let (back, ahead) = if to_server {
                    (&self.to_client, &self.to_server)
                } else {
                    (&self.to_server, &self.to_client)
                };
                let why = e.to_string();
                for id in requests {
                    write_value(back, &proxy_error(&id, &why))?;
                }
                // The request a dropped response answers still gets an answer: an error.
                for id in responses.into_iter().filter(|id| !id.is_null()) {
                    if to_server {
                        st.from_server.complete(&json!({"id": id}));
                    } else {
                        st.from_client.complete(&json!({"id": id}));
                    }
                    write_value(ahead, &proxy_error(&id, &why))?;
                }
                return Ok(());
            }
        };
        for w in &warnings {
            eprintln!("mcp-proxy: {hop:?} {:?} {} {}", w.kind, w.path, w.detail);
        }
        if let Some(b) = original {
            if to_server {
                st.client_batches.open(&b);
            } else {
                st.server_batches.open(&b);
            }
        }
        self.note_session(st, &hop, &asked, level, cancelled, &messages, &replies);
        for m in messages {
            if to_server {
                if hop.to.is_stateless() {
                    st.for_session_client.note_request(&m);
                }
                if hop.from.is_stateless() && is_request(&m) {
                    if let (Some(mth), Some(id)) = (&asked.0, &asked.1) {
                        st.for_stateless_client
                            .note_call(&json!({"id": id, "method": mth}));
                    }
                }
                self.deliver_to_server(st, m)?;
            } else if hop.to.is_stateless() && is_response(&m) {
                // A stateless client's request may wait on its retry: the answer goes to
                // the latest retry, or waits for it.
                st.from_client.complete(&m);
                if let Some(m) = st.for_stateless_client.on_server_response(m) {
                    write_value(&self.to_client, &m)?;
                }
            } else {
                self.deliver_to_client(st, m)?;
            }
        }
        for r in replies {
            // Answers on the receiver's behalf go back to the sender, through the same
            // batch reassembly as the receiver's own answers would.
            if to_server {
                self.deliver_to_client(st, r)?;
            } else {
                self.deliver_to_server(st, r)?;
            }
        }
        Ok(())
    }

    /// What a translated line changes in the session.
    #[expect(
        clippy::too_many_arguments,
        reason = "the pieces of one line, noted before it moved"
    )]
    fn note_session(
        &self,
        st: &mut State,
        hop: &Hop,
        asked: &(Option<String>, Option<Value>),
        level: Option<String>,
        cancelled: Option<Value>,
        messages: &[Value],
        replies: &[Value],
    ) {
        if hop.direction != Direction::ClientToServer {
            return;
        }
        match asked.0.as_deref() {
            // A session client's level, now carried in each 2026-07-28 request.
            Some("logging/setLevel") if hop.to.is_stateless() => st.session.log_level = level,
            // A listen stream the proxy acknowledged for a session server.
            Some("subscriptions/listen") if messages.is_empty() => {
                if let (Some(id), Some(ack)) = (&asked.1, replies.first()) {
                    let honoured = ack
                        .pointer("/params/notifications")
                        .cloned()
                        .unwrap_or_default();
                    st.session.open_listen(id, honoured);
                }
            }
            Some("notifications/cancelled") if hop.from.is_stateless() => {
                if let Some(id) = cancelled {
                    st.session.close_listen(&id);
                }
            }
            _ => {}
        }
    }
}

fn pump(mut input: impl BufRead, mut each: impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
    let mut buf = Vec::new();
    loop {
        match read_line(&mut input, &mut buf)? {
            None => return Ok(()),
            Some(false) => {
                eprintln!("mcp-proxy: a line longer than {MAX_LINE_BYTES} octets was discarded")
            }
            Some(true) if buf.iter().all(u8::is_ascii_whitespace) => {}
            Some(true) => each(&buf)?,
        }
    }
}

/// Runs the proxy: `client` on `input`/`output`, the server started from `cmd args`.
/// Returns when either side ends.
pub fn run(
    client: Version,
    cmd: &str,
    args: &[String],
    input: impl Read + Send + 'static,
    output: impl Write + Send + 'static,
) -> Result<(), ProxyError> {
    let mut child: Child = Command::new(cmd)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|source| ProxyError::Spawn {
            cmd: cmd.to_owned(),
            source,
        })?;
    let (Some(sin), Some(sout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(ProxyError::Io(io::Error::other("no pipes to the server")));
    };
    let ends = Arc::new(Ends {
        to_client: Mutex::new(Some(Box::new(io::BufWriter::new(output)))),
        to_server: Mutex::new(Some(Box::new(io::BufWriter::new(sin)))),
        state: Arc::new(Mutex::new(State::default())),
        client,
    });
    let e2 = ends.clone();
    let upstream = std::thread::spawn(move || {
        let r = pump(BufReader::new(input), |l| e2.client_line(l));
        // The client is gone: close the server's stdin so it can exit.
        if let Some(mut w) = lock(&e2.to_server).take() {
            let _ = w.flush();
        }
        r
    });
    let r = pump(BufReader::new(sout), |l| ends.server_line(l));
    if let Some(w) = lock(&ends.to_client).as_mut() {
        let _ = w.flush();
    }
    if upstream.is_finished() {
        let _ = upstream.join();
    }
    let _ = child.kill();
    let _ = child.wait();
    r.map_err(ProxyError::Io)
}

/// `swp-ref stdio-bridge`: joins this process's stdin/stdout to a TCP connection, so a
/// harness listening on `addr` can play the MCP server behind a stdio proxy (the proxy
/// starts the bridge as its server command). Returns when either side ends.
pub fn bridge(addr: &str) -> io::Result<()> {
    let sock = std::net::TcpStream::connect(addr)?;
    let mut up = sock.try_clone()?;
    let copier = std::thread::spawn(move || {
        let r = io::copy(&mut io::stdin().lock(), &mut up);
        let _ = up.shutdown(std::net::Shutdown::Write);
        r
    });
    let mut down = sock;
    let mut out = io::stdout().lock();
    // Copy by chunks, flushing each, so lines are not held back in a buffer.
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = down.read(&mut buf)?;
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n])?;
        out.flush()?;
    }
    drop(copier);
    Ok(())
}
