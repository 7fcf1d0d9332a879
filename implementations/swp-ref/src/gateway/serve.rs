//! The gateway's I/O edge: MCP clients on stdio (newline-delimited JSON-RPC), HTTP
//! (`POST /mcp`) or WebSocket (`GET /mcp` upgrade) on one listener, every message through
//! the one [`Pipeline`], forwarded upstream as profile-1 frames.

use super::canonical::{Canonical, GatewayError};
use super::log::{ErrorPayload, Event, Ids, Log};
use super::pipeline::{Ingress, Pipeline, MAX_MESSAGE_BYTES};
use super::upstream::{Upstream, UpstreamAddr};
use super::{http, ws};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use swp_core::Limits;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// How long a client waits for the upstream's answer before an internal error.
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(30);

/// Which client transport to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientTransport {
    /// Newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// HTTP `POST /mcp` and WebSocket `/mcp` on a loopback listener (`HOST:PORT`).
    Http(String),
}

/// Everything `swp-ref mcp-gateway` needs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Client side.
    pub transport: ClientTransport,
    /// Upstream side.
    pub upstream: UpstreamAddr,
    /// Write the bound port here (HTTP).
    pub port_file: Option<PathBuf>,
    /// Write JSON-line logs here (`-` for stderr).
    pub log: Option<PathBuf>,
    /// Redact times and durations in logs.
    pub deterministic: bool,
    /// Frame limits on the upstream link.
    pub limits: Limits,
}

/// Why the gateway stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// I/O on a listener, the log file or the upstream.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The first tools/list failed, so tool calls could not be checked.
    #[error("cannot learn the upstream's tools: {0}")]
    Tools(GatewayError),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServeError {
    let what = what.into();
    move |source| ServeError::Io { what, source }
}

struct Shared {
    pipeline: Mutex<Pipeline>,
    upstream: Upstream,
    log: Log,
}

/// What one client message produced: the HTTP status it maps to and the body to send
/// (`None` for a notification, which gets no response).
struct Outcome {
    status: u16,
    body: Option<Vec<u8>>,
}

impl Shared {
    fn pipeline(&self) -> std::sync::MutexGuard<'_, Pipeline> {
        // A panic while holding the lock cannot leave the pipeline half-updated in a way
        // that matters (it only caches schemas), so a poisoned lock is used as is.
        self.pipeline.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One client message through the pipeline and, when valid, upstream. With `partials`,
    /// upstream notifications naming the request (stream partials, §7) go to that sink while
    /// the request is in flight; they are all in it before this returns the response.
    async fn exchange(
        &self,
        transport: &'static str,
        route: &'static str,
        bytes: &[u8],
        partials: Option<&Partials>,
    ) -> Outcome {
        let (arrived, t0) = (SystemTime::now(), Instant::now());
        let ingress = self.pipeline().ingress(bytes);
        let (id, method, msg_id, result) = match ingress {
            Ingress::Reject { id, method, error } => (id, method, None, Err(error)),
            Ingress::Forward(f) => {
                let id = f.pending.id.as_ref().map_or_else(
                    || "null".to_owned(),
                    |i| serde_json::Value::String(i.clone()).to_string(),
                );
                let method = Some(f.pending.method.clone());
                if f.pending.id.is_none() {
                    let r = self.upstream.notify(f.msg_type, f.payload).await;
                    let r = r
                        .map(|()| None)
                        .map_err(|e| GatewayError::new(Canonical::InternalError, e.to_string()));
                    (id, method, None, r)
                } else {
                    let key = f.pending.id.clone().unwrap_or_default();
                    if let Some(p) = partials {
                        self.upstream.route(&key, p.0.clone());
                    }
                    let answer = tokio::time::timeout(
                        UPSTREAM_TIMEOUT,
                        self.upstream.request(f.msg_type, f.payload),
                    )
                    .await;
                    if partials.is_some() {
                        self.upstream.unroute(&key);
                    }
                    match answer {
                        Err(_) => (
                            id,
                            method,
                            None,
                            Err(GatewayError::new(
                                Canonical::InternalError,
                                "the upstream did not answer in time",
                            )),
                        ),
                        Ok(Err(e)) => (
                            id,
                            method,
                            None,
                            Err(GatewayError::new(Canonical::InternalError, e.to_string())),
                        ),
                        Ok(Ok((msg_id, payload))) => {
                            let r = self.pipeline().egress(&f.pending, &payload).map(Some);
                            (id, method, Some(hex(&msg_id)), r)
                        }
                    }
                }
            }
        };
        let (status, body, error) = match result {
            Ok(Some(body)) => (200, Some(body), None),
            Ok(None) => (202, None, None),
            Err(e) => (e.code.http_status(), Some(e.response(&id)), Some(e)),
        };
        self.log.write(&Event {
            timestamp: self.log.timestamp(arrived),
            ids: Ids {
                jsonrpc: id,
                msg_id,
            },
            transport,
            route,
            method,
            status: match (&error, status) {
                (Some(e), _) => e.code.name().to_owned(),
                (None, 202) => "accepted".to_owned(),
                _ => "ok".to_owned(),
            },
            http_status: status,
            duration_ms: self.log.duration(t0.elapsed()),
            error: error.as_ref().map(ErrorPayload::from),
            metadata: self.log.metadata(),
        });
        Outcome { status, body }
    }
}

/// A client's sink for stream partials, and the receiving end its transport drains before
/// writing each response (so partials always precede their terminal response).
struct Partials(
    tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
    tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>,
);

impl Partials {
    fn new() -> Self {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        Partials(tx, rx)
    }

    /// The partials received so far.
    fn drain(&mut self) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| self.1.try_recv().ok()).collect()
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Runs the gateway until stdin closes (stdio) or forever (HTTP).
pub fn run(opts: Options) -> Result<(), ServeError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io("start the runtime"))?;
    rt.block_on(serve(opts))
}

async fn serve(opts: Options) -> Result<(), ServeError> {
    let log_out: Option<Box<dyn std::io::Write + Send>> = match &opts.log {
        None => None,
        Some(p) if p.as_os_str() == "-" => Some(Box::new(std::io::stderr())),
        Some(p) => Some(Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(io(format!("open the log {}", p.display())))?,
        )),
    };
    let upstream = Upstream::connect(&opts.upstream, opts.limits)
        .await
        .map_err(io(format!("connect to the upstream {:?}", opts.upstream)))?;
    // Learn the tool set before serving, so the first tools/call is already checked.
    let list = br#"{"jsonrpc":"2.0","id":"swp-gateway-tools","method":"tools/list","params":{}}"#;
    let (_, payload) = upstream
        .request(swp_profiles::mcp::MSG_TYPE_REQUEST, list.to_vec())
        .await
        .map_err(|e| {
            ServeError::Tools(GatewayError::new(Canonical::InternalError, e.to_string()))
        })?;
    let mut pipeline = Pipeline::default();
    let result: serde_json::Value = serde_json::from_slice::<serde_json::Value>(&payload)
        .ok()
        .and_then(|v| v.get("result").cloned())
        .ok_or_else(|| {
            ServeError::Tools(GatewayError::new(
                Canonical::InternalError,
                "tools/list has no result",
            ))
        })?;
    pipeline.learn_tools(&result).map_err(ServeError::Tools)?;
    let shared = Arc::new(Shared {
        pipeline: Mutex::new(pipeline),
        upstream,
        log: Log::new(log_out, opts.deterministic),
    });
    match &opts.transport {
        ClientTransport::Stdio => serve_stdio(shared).await,
        ClientTransport::Http(addr) => {
            let listener = TcpListener::bind(addr)
                .await
                .map_err(io(format!("bind {addr}")))?;
            let local = listener
                .local_addr()
                .map_err(io("read the bound address"))?;
            if let Some(p) = &opts.port_file {
                crate::serve::write_port_file(p, local.port())
                    .map_err(io(format!("write {}", p.display())))?;
            }
            eprintln!("swp-ref mcp-gateway: listening on http://{local}/mcp");
            loop {
                let (stream, _) = listener.accept().await.map_err(io("accept"))?;
                let shared = shared.clone();
                tokio::spawn(async move {
                    let _ = stream.set_nodelay(true);
                    let _ = serve_http(shared, stream).await;
                });
            }
        }
    }
}

async fn serve_stdio(shared: Arc<Shared>) -> Result<(), ServeError> {
    let mut input = BufReader::new(tokio::io::stdin());
    let mut out = tokio::io::stdout();
    let mut partials = Partials::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        // Bounded: a line longer than the message limit is read no further.
        let n = (&mut input)
            .take(MAX_MESSAGE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .await
            .map_err(io("read stdin"))?;
        if n == 0 {
            return Ok(());
        }
        let overlong = line.last() != Some(&b'\n') && line.len() > MAX_MESSAGE_BYTES;
        let msg = trim(&line);
        if msg.is_empty() {
            continue;
        }
        let outcome = shared
            .exchange("stdio", "stdio", msg, Some(&partials))
            .await;
        for mut line in partials.drain().into_iter().chain(outcome.body) {
            line.push(b'\n');
            out.write_all(&line).await.map_err(io("write stdout"))?;
        }
        out.flush().await.map_err(io("write stdout"))?;
        if overlong {
            // The rest of that line cannot be framed again; stop reading.
            return Ok(());
        }
    }
}

fn trim(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end]
}

async fn serve_http(shared: Arc<Shared>, mut stream: TcpStream) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(8192);
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        let head = loop {
            match http::parse_head(&buf) {
                Ok(Some(h)) => break h,
                Ok(None) => {}
                Err(e) => return send_plain(&mut stream, e.status, &e.reason, true).await,
            }
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        if head.path != "/mcp" {
            // Seed 001 §5: the MCP route is separate; nothing else is served here.
            let close = head.header_has("connection", "close");
            send_plain(&mut stream, 404, "only /mcp is served", close).await?;
            if close {
                return Ok(());
            }
            buf.drain(..head.head_len.min(buf.len()));
            continue;
        }
        if head.method == "GET" && head.header_has("upgrade", "websocket") {
            buf.drain(..head.head_len.min(buf.len()));
            return serve_ws(shared, stream, head, buf).await;
        }
        if head.method != "POST" {
            return send_plain(
                &mut stream,
                405,
                "POST a JSON-RPC message, or upgrade to WebSocket",
                true,
            )
            .await;
        }
        let len = match head.content_length(MAX_MESSAGE_BYTES) {
            Ok(n) => n,
            Err(e) => return send_plain(&mut stream, e.status, &e.reason, true).await,
        };
        while buf.len() < head.head_len + len {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        let body: Vec<u8> = buf[head.head_len..head.head_len + len].to_vec();
        buf.drain(..head.head_len + len);
        // One HTTP response per request: stream partials have nowhere to go.
        let outcome = shared.exchange("http", "/mcp", &body, None).await;
        let close = head.header_has("connection", "close");
        let extra: &[(&str, &str)] = if close {
            &[("Connection", "close")]
        } else {
            &[]
        };
        let resp = http::response(
            outcome.status,
            "application/json",
            outcome.body.as_deref().unwrap_or_default(),
            extra,
        );
        stream.write_all(&resp).await?;
        if close {
            return stream.shutdown().await;
        }
    }
}

async fn send_plain(
    stream: &mut TcpStream,
    status: u16,
    text: &str,
    close: bool,
) -> std::io::Result<()> {
    let extra: &[(&str, &str)] = if close {
        &[("Connection", "close")]
    } else {
        &[]
    };
    stream
        .write_all(&http::response(
            status,
            "text/plain; charset=utf-8",
            text.as_bytes(),
            extra,
        ))
        .await?;
    if close {
        stream.shutdown().await?;
    }
    Ok(())
}

async fn serve_ws(
    shared: Arc<Shared>,
    mut stream: TcpStream,
    head: http::Head,
    mut buf: Vec<u8>,
) -> std::io::Result<()> {
    let Some(key) = head.header("sec-websocket-key") else {
        return send_plain(&mut stream, 400, "Sec-WebSocket-Key is missing", true).await;
    };
    if head.header("sec-websocket-version") != Some("13") {
        return send_plain(&mut stream, 426, "Sec-WebSocket-Version 13 only", true).await;
    }
    let accept = ws::accept_key(key);
    let resp = http::response(
        101,
        "",
        b"",
        &[
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Accept", &accept),
        ],
    );
    // A 101 carries no body, so no Content-Length either.
    let resp = String::from_utf8_lossy(&resp).replace("Content-Length: 0\r\n", "");
    stream.write_all(resp.as_bytes()).await?;
    let mut decoder = ws::Decoder::new(MAX_MESSAGE_BYTES);
    let mut partials = Partials::new();
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        match decoder.decode(&mut buf) {
            Ok(Some(ws::Message::Text(text))) => {
                let outcome = shared
                    .exchange("websocket", "/mcp", text.as_bytes(), Some(&partials))
                    .await;
                for msg in partials.drain().into_iter().chain(outcome.body) {
                    stream
                        .write_all(&ws::encode(ws::opcode::TEXT, &msg))
                        .await?;
                }
                continue;
            }
            Ok(Some(ws::Message::Ping(p))) => {
                stream.write_all(&ws::encode(ws::opcode::PONG, &p)).await?;
                continue;
            }
            Ok(Some(ws::Message::Pong)) => continue,
            Ok(Some(ws::Message::Close)) => {
                stream
                    .write_all(&ws::close_frame(ws::close::NORMAL, ""))
                    .await?;
                return stream.shutdown().await;
            }
            Ok(None) => {}
            Err(e) => {
                stream.write_all(&ws::close_frame(e.code, e.reason)).await?;
                return stream.shutdown().await;
            }
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}
