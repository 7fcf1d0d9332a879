//! `swp-ref mcp-proxy`: an MCP version-translating proxy on stdio. The client talks to the
//! proxy's stdin/stdout at the configured version; the server is a child process spoken to
//! at whatever version it agrees to in `initialize`. Every line in either direction goes
//! through mcp-translate (`docs/mcp-translation.md`); same-version lines pass untouched
//! without being parsed. Two threads, one per direction, share the correlation state.

use mcp_translate::correlate::{Batches, IdKey, Offer, Pending};
use mcp_translate::{translate, Direction, Hop, Translation, Version};
use serde_json::{json, Value};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};

/// Longest line accepted from either side; a longer one is discarded (never buffered whole).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

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

/// What both directions share.
#[derive(Debug, Default)]
struct State {
    /// The version the server agreed to, once its initialize result is seen.
    server: Option<Version>,
    /// The id of the client's initialize request.
    init: Option<IdKey>,
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

/// The error the proxy answers a request with when it cannot forward it.
fn proxy_error(id: &Value, why: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": format!("mcp-proxy: {why}")}})
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
        let server = st.server;
        if server.is_none() || server == Some(self.client) {
            // Before the server's version is known, and when both sides agree, the line
            // passes untouched. Unless the client is at the newest version, the server's
            // lines are still translated (see `server_hop`), so the requests are noted to
            // type their results.
            if server.is_none() || self.client != Version::LATEST {
                if let Ok(v) = serde_json::from_slice::<Value>(line) {
                    if server.is_none()
                        && v.get("method").and_then(Value::as_str) == Some("initialize")
                    {
                        st.init = v.get("id").and_then(IdKey::of);
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

    /// One line from the server.
    fn server_line(&self, line: &[u8]) -> io::Result<()> {
        let mut st = lock(&self.state);
        if st.server.is_none() {
            let v: Option<Value> = serde_json::from_slice(line).ok();
            let init = st.init.clone();
            if let Some(v) = v.filter(|v| init.is_some() && v.get("id").and_then(IdKey::of) == init)
            {
                let agreed = v.pointer("/result/protocolVersion").and_then(Value::as_str);
                match agreed.map(str::parse::<Version>) {
                    Some(Ok(s)) => {
                        st.server = Some(s);
                        eprintln!("mcp-proxy: client {}, server {s}", self.client);
                        if let Some(hop) = self.server_hop(s, line) {
                            st.from_client
                                .record(&json!({"id": v["id"], "method": "initialize"}));
                            return self.translate_line(&mut st, line, hop);
                        }
                    }
                    Some(Err(e)) => {
                        eprintln!("mcp-proxy: the server agreed to a version the proxy cannot translate: {e}");
                        return write_value(
                            &self.to_client,
                            &proxy_error(&v["id"], &format!("the server speaks {e}")),
                        );
                    }
                    None => {} // an error answer to initialize: relayed as it is
                }
            }
            return write_line(&self.to_client, line);
        }
        let server = st.server.unwrap_or(self.client);
        match self.server_hop(server, line) {
            Some(hop) => self.translate_line(&mut st, line, hop),
            None => write_line(&self.to_client, line),
        }
    }

    /// The hop for a line from a server that agreed to `server`. Real servers answering an
    /// older version still send the newest fields (seeds-errata.md, observed on
    /// server-everything and the SDKs), so single messages are read as the newest version
    /// the proxy knows: the rules key on the client's version and strip whatever it lacks.
    /// A batch can only come from a 2025-03-26 server and is read as such. `None`: the
    /// line passes untouched, unparsed (client and server both at the newest version).
    fn server_hop(&self, server: Version, line: &[u8]) -> Option<Hop> {
        let batch = line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
        // A client at the newest version lacks nothing: its server's lines are read at the
        // server's own version, so only `protocolVersion` changes (an upgrade).
        let from = if batch || self.client == Version::LATEST {
            server
        } else {
            Version::LATEST
        };
        (from != self.client).then_some(Hop {
            from,
            to: self.client,
            direction: Direction::ServerToClient,
        })
    }

    fn translate_line(&self, st: &mut State, line: &[u8], hop: Hop) -> io::Result<()> {
        let to_server = hop.direction == Direction::ClientToServer;
        let v: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                eprintln!(
                    "mcp-proxy: a line from the {} is not JSON ({e}); not forwarded",
                    if to_server { "client" } else { "server" }
                );
                if to_server {
                    return write_value(
                        &self.to_client,
                        &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
                    );
                }
                return Ok(());
            }
        };
        let split_batch = v.is_array() && !hop.to.has_batches();
        let original = if split_batch { Some(v.clone()) } else { None };
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
        } = match translate(v, &hop, lookup) {
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
        for m in messages {
            if to_server {
                self.deliver_to_server(st, m)?;
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
