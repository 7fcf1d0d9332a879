//! The client side of MCP Streamable HTTP, on the `ureq` client: every message is POSTed to
//! the server's endpoint with `Accept: application/json, text/event-stream`; the answer is
//! read as one JSON body or as an SSE stream (chunked or not) on a thread of its own, so
//! requests the server sends mid-stream can be answered while the stream is open. The
//! session id the server assigns and the negotiated protocol version go on every later
//! request; `GET` opens the server's stream and `DELETE` ends the session. What arrives is
//! handed over as events tagged with the exchange that carried them, each SSE message with
//! the event id and `retry` it came with. A POST may be cut after the first event carrying
//! an id, as a client that lost its connection there, so the stream can be resumed with a
//! `GET` carrying `Last-Event-ID`.

use super::sse;
use std::io::Read;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What arrived on one exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpEvent {
    /// The response head.
    Head {
        /// Which exchange.
        exchange: u64,
        /// Its status.
        status: u16,
        /// Its `Content-Type` (empty when absent).
        content_type: String,
    },
    /// One message: a JSON body or the data of one SSE event. An SSE event that carries
    /// only an id or a `retry` (a priming event) comes with an empty body.
    Message {
        /// Which exchange.
        exchange: u64,
        /// The status it came with.
        status: u16,
        /// The octets.
        body: Vec<u8>,
        /// The SSE event's own `id`, if it had one.
        event_id: Option<String>,
        /// The SSE event's `retry` (ms), if it had one.
        retry: Option<u64>,
    },
    /// The client dropped the connection after the first SSE event carrying an id (an
    /// exchange started with [`HttpClient::start_cut`]); what followed it unread is lost.
    Cut {
        /// Which exchange.
        exchange: u64,
        /// The id of that event: where the stream resumes.
        last_event_id: String,
        /// Complete events after it that had arrived and were dropped unread.
        dropped: usize,
    },
    /// The body ended (`what` says how: "no body", "end of JSON body", "end of SSE stream").
    End {
        /// Which exchange.
        exchange: u64,
        /// How it ended.
        what: String,
    },
    /// The exchange failed.
    Failed {
        /// Which exchange.
        exchange: u64,
        /// Why.
        why: String,
    },
}

impl HttpEvent {
    /// The exchange it belongs to.
    pub fn exchange(&self) -> u64 {
        match self {
            HttpEvent::Head { exchange, .. }
            | HttpEvent::Message { exchange, .. }
            | HttpEvent::End { exchange, .. }
            | HttpEvent::Failed { exchange, .. }
            | HttpEvent::Cut { exchange, .. } => *exchange,
        }
    }
}

/// The HTTP method of an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// A message to the server.
    Post,
    /// The server's stream.
    Get,
    /// End the session.
    Delete,
}

impl Verb {
    /// As on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Post => "POST",
            Verb::Get => "GET",
            Verb::Delete => "DELETE",
        }
    }
}

/// One exchange to start.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The method.
    pub verb: Verb,
    /// The body (POST).
    pub body: Vec<u8>,
    /// The `Mcp-Session-Id` to send, if any.
    pub session: Option<String>,
    /// The `MCP-Protocol-Version` to send, if any.
    pub protocol_version: Option<String>,
    /// More headers.
    pub headers: Vec<(String, String)>,
}

/// The client of one server endpoint.
pub struct HttpClient {
    agent: ureq::Agent,
    url: String,
    tx: Sender<HttpEvent>,
    rx: Receiver<HttpEvent>,
    /// The session id the server assigned (set by the thread that read the header).
    session: Arc<Mutex<Option<String>>>,
    next: u64,
    max_body: usize,
}

impl HttpClient {
    /// The endpoint's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A client of `url` (`http://127.0.0.1:PORT/mcp`) reading at most `max_body` octets per
    /// exchange.
    pub fn new(url: String, max_body: usize) -> HttpClient {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(5)))
            .max_redirects(0)
            .build()
            .into();
        let (tx, rx) = channel();
        HttpClient {
            agent,
            url,
            tx,
            rx,
            session: Arc::new(Mutex::new(None)),
            next: 1,
            max_body,
        }
    }

    /// The session id the server assigned, if any.
    pub fn session(&self) -> Option<String> {
        self.session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Forgets the session id (after `DELETE`).
    pub fn forget_session(&self) {
        *self.session.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Starts an exchange; its events arrive through [`HttpClient::next`]. Returns its
    /// number.
    pub fn start(&mut self, ex: Exchange) -> u64 {
        self.spawn(ex, false)
    }

    /// Starts an exchange whose SSE stream the client drops after the first event that
    /// carries an id ([`HttpEvent::Cut`]), as a client that lost its connection there.
    pub fn start_cut(&mut self, ex: Exchange) -> u64 {
        self.spawn(ex, true)
    }

    fn spawn(&mut self, ex: Exchange, cut: bool) -> u64 {
        let n = self.next;
        self.next += 1;
        let agent = self.agent.clone();
        let url = self.url.clone();
        let tx = self.tx.clone();
        let session = self.session.clone();
        let max = self.max_body;
        // The thread ends when the body does; the server is killed at the end of every
        // vector, which ends any stream still open.
        std::thread::spawn(move || {
            if let Err(why) = exchange(&agent, &url, ex, n, &tx, &session, max, cut) {
                let _ = tx.send(HttpEvent::Failed { exchange: n, why });
            }
        });
        n
    }

    /// The next event before `deadline`.
    pub fn next(&self, deadline: Instant) -> Option<HttpEvent> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(wait) {
            Ok(e) => Some(e),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "one thread's whole context, passed once"
)]
fn exchange(
    agent: &ureq::Agent,
    url: &str,
    ex: Exchange,
    n: u64,
    tx: &Sender<HttpEvent>,
    session: &Mutex<Option<String>>,
    max: usize,
    cut: bool,
) -> Result<(), String> {
    let mut headers: Vec<(String, String)> = Vec::new();
    match ex.verb {
        Verb::Post => {
            headers.push((
                "Accept".into(),
                "application/json, text/event-stream".into(),
            ));
            headers.push(("Content-Type".into(), "application/json".into()));
        }
        Verb::Get => headers.push(("Accept".into(), "text/event-stream".into())),
        Verb::Delete => {}
    }
    if let Some(s) = &ex.session {
        headers.push(("Mcp-Session-Id".into(), s.clone()));
    }
    if let Some(v) = &ex.protocol_version {
        headers.push(("MCP-Protocol-Version".into(), v.clone()));
    }
    headers.extend(ex.headers);
    let sent = match ex.verb {
        Verb::Post => {
            let mut b = agent.post(url);
            for (k, v) in &headers {
                b = b.header(k, v);
            }
            b.send(&ex.body[..])
        }
        Verb::Get => {
            let mut b = agent.get(url);
            for (k, v) in &headers {
                b = b.header(k, v);
            }
            b.call()
        }
        Verb::Delete => {
            let mut b = agent.delete(url);
            for (k, v) in &headers {
                b = b.header(k, v);
            }
            b.call()
        }
    };
    let resp = sent.map_err(|e| format!("{} {url}: {e}", ex.verb.as_str()))?;
    let status = resp.status().as_u16();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let content_type = header("content-type").unwrap_or_default();
    if let Some(sid) = header("mcp-session-id") {
        let mut s = session.lock().unwrap_or_else(|e| e.into_inner());
        if s.is_none() && (200..300).contains(&status) {
            *s = Some(sid);
        }
    }
    let _ = tx.send(HttpEvent::Head {
        exchange: n,
        status,
        content_type: content_type.clone(),
    });
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let mut reader = resp
        .into_body()
        .into_with_config()
        .limit(max as u64)
        .reader();
    if mime == "text/event-stream" {
        let mut parser = sse::Parser::new(max);
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let got = reader
                .read(&mut buf)
                .map_err(|e| format!("reading the SSE stream failed: {e}"))?;
            if got == 0 {
                let _ = tx.send(HttpEvent::End {
                    exchange: n,
                    what: "end of SSE stream".into(),
                });
                return Ok(());
            }
            let events = parser.feed(&buf[..got]).map_err(|e| e.to_string())?;
            let total = events.len();
            for (i, e) in events.into_iter().enumerate() {
                // A priming event (an id and empty data) carries no message, but its id is
                // where the stream resumes.
                let message = e.has_data && !e.data.trim().is_empty();
                if !message && e.id.is_none() && e.retry.is_none() {
                    continue;
                }
                let id = e.id.clone();
                let _ = tx.send(HttpEvent::Message {
                    exchange: n,
                    status,
                    body: if message {
                        e.data.into_bytes()
                    } else {
                        Vec::new()
                    },
                    event_id: e.id,
                    retry: e.retry,
                });
                if let (true, Some(id)) = (cut, id) {
                    // Returning drops the reader unfinished: ureq closes the connection
                    // rather than pool it, which the server sees as a lost client.
                    let _ = tx.send(HttpEvent::Cut {
                        exchange: n,
                        last_event_id: id,
                        dropped: total - i - 1,
                    });
                    return Ok(());
                }
            }
        }
    }
    let mut body = Vec::new();
    reader
        .read_to_end(&mut body)
        .map_err(|e| format!("reading the HTTP body failed: {e}"))?;
    // An error status with a body that is not JSON (a plain-text or HTML page) answers the
    // exchange, not a JSON-RPC message.
    let what = if status >= 400 && mime != "application/json" && !body.is_empty() {
        format!(
            "a {} body of {} octets",
            if mime.is_empty() { "untyped" } else { &mime },
            body.len()
        )
    } else if body.iter().all(u8::is_ascii_whitespace) {
        "no body".to_owned()
    } else {
        let _ = tx.send(HttpEvent::Message {
            exchange: n,
            status,
            body,
            event_id: None,
            retry: None,
        });
        format!(
            "end of {} body",
            if mime.is_empty() { "untyped" } else { &mime }
        )
    };
    let _ = tx.send(HttpEvent::End { exchange: n, what });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    /// A server that answers one request with `body` as an SSE stream, in one write, and
    /// keeps the connection open a while.
    fn one_stream(body: String) -> (String, std::thread::JoinHandle<()>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", l.local_addr().unwrap());
        let h = std::thread::spawn(move || {
            let (c, _) = l.accept().unwrap();
            let mut r = BufReader::new(c.try_clone().unwrap());
            let mut line = String::new();
            while r.read_line(&mut line).unwrap_or(0) > 2 {
                line.clear();
            }
            let mut w = c;
            let _ = write!(
                w,
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n{body}"
            );
            let _ = w.flush();
            // Keeps the stream open: only the client's cut ends the exchange.
            std::thread::sleep(Duration::from_millis(300));
        });
        (url, h)
    }

    fn events(c: &HttpClient) -> Vec<HttpEvent> {
        let mut out = Vec::new();
        while let Some(e) = c.next(Instant::now() + Duration::from_millis(200)) {
            out.push(e);
        }
        out
    }

    fn get(url: String) -> (HttpClient, u64) {
        let mut c = HttpClient::new(url, 1 << 16);
        let n = c.start_cut(Exchange {
            verb: Verb::Get,
            body: Vec::new(),
            session: None,
            protocol_version: None,
            headers: Vec::new(),
        });
        (c, n)
    }

    #[test]
    fn a_cut_stream_ends_after_the_first_event_with_an_id_and_drops_the_rest() {
        let (url, h) = one_stream(
            ": hi\n\nretry: 5\n\ndata: {\"a\":1}\n\nid: p\ndata: \n\ndata: {\"id\":2}\n\n".into(),
        );
        let (c, n) = get(url);
        let got = events(&c);
        h.join().unwrap();
        let bodies: Vec<(Vec<u8>, Option<String>, Option<u64>)> = got
            .iter()
            .filter_map(|e| match e {
                HttpEvent::Message {
                    body,
                    event_id,
                    retry,
                    ..
                } => Some((body.clone(), event_id.clone(), *retry)),
                _ => None,
            })
            .collect();
        // A bare retry, a message without an id, the priming event; the response after it
        // is dropped unread.
        assert_eq!(
            bodies,
            vec![
                (Vec::new(), None, Some(5)),
                (b"{\"a\":1}".to_vec(), None, None),
                (Vec::new(), Some("p".into()), None),
            ]
        );
        assert!(got.contains(&HttpEvent::Cut {
            exchange: n,
            last_event_id: "p".into(),
            dropped: 1
        }));
        assert!(!got.iter().any(|e| matches!(e, HttpEvent::End { .. })));
    }

    #[test]
    fn a_hostile_stream_fails_the_exchange_without_a_panic() {
        // An event larger than the bound, then nothing the client reads.
        let (url, h) = one_stream(format!("id: {}\n\n", "x".repeat(1 << 17)));
        let (c, n) = get(url);
        let got = events(&c);
        h.join().unwrap();
        assert!(
            got.iter()
                .any(|e| matches!(e, HttpEvent::Failed { exchange, .. } if *exchange == n)),
            "{got:?}"
        );
        assert!(!got.iter().any(|e| matches!(e, HttpEvent::Cut { .. })));
    }
}
