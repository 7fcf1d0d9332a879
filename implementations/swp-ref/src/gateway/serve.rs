//! The gateway's I/O edge: MCP clients on stdio (newline-delimited JSON-RPC), HTTP
//! (`POST /mcp`) or WebSocket (`GET /mcp` upgrade) on one listener, every message through
//! the one [`Pipeline`], forwarded upstream as profile-1 frames. HTTP and WebSocket
//! clients are held to the server limits (crate::limits) and the origin policy.

use super::canonical::{Canonical, GatewayError};
use super::http;
use super::log::{ErrorPayload, Event, Ids, Log};
use super::origin::OriginPolicy;
use super::pipeline::{Ingress, Pipeline, MAX_MESSAGE_BYTES};
use super::policy::EnvelopePolicy;
use super::route::{Owner, Sink};
use super::session::{SessionMode, Sessions};
use super::upstream::{Upstream, UpstreamAddr};
use crate::limits::accept::{self as accepting, Backoff};
use crate::limits::{Admit, Budget, Charge, OverBudget, ServerLimits, Slot, Slots};
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
    /// Serve HTTP on non-loopback addresses too (`--allow-remote`).
    pub allow_remote: bool,
    /// Browser origins allowed beside loopback ones (`--allow-origin`).
    pub origins: OriginPolicy,
    /// Connection cap, timeouts, memory budget, keepalive (docs/reference-limits.md).
    pub server: ServerLimits,
    /// Whether HTTP requests outside a Streamable HTTP session are served.
    pub sessions: SessionMode,
    /// The contract client messages are held to (`--envelope`).
    pub envelope: EnvelopePolicy,
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
    /// The listen address is not loopback and `--allow-remote` was not given.
    #[error(
        "refusing to serve MCP over plaintext HTTP on non-loopback address {addr} ({listen}): \
         listen on 127.0.0.1/::1/localhost, or pass --allow-remote to expose the gateway"
    )]
    NonLoopback {
        /// The listen argument.
        listen: String,
        /// The offending address.
        addr: std::net::IpAddr,
    },
    /// The listen address is malformed.
    #[error("{0}")]
    Usage(String),
}

impl ServeError {
    /// The process exit status: 2 for a command that can never work as given, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            ServeError::NonLoopback { .. } | ServeError::Usage(_) => 2,
            ServeError::Io { .. } | ServeError::Tools(_) => 1,
        }
    }
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServeError {
    let what = what.into();
    move |source| ServeError::Io { what, source }
}

pub(super) struct Shared {
    pipeline: Mutex<Pipeline>,
    policy: EnvelopePolicy,
    pub(super) upstream: Upstream,
    log: Log,
    pub(super) origins: OriginPolicy,
    limits: ServerLimits,
    /// The Streamable HTTP sessions.
    pub(super) sessions: Mutex<Sessions>,
    /// Whether requests outside a session are served.
    pub(super) session_mode: SessionMode,
}

/// What one client message produced: the HTTP status it maps to and the body to send
/// (`None` for a notification or an answer, which get no response).
pub(super) struct Outcome {
    pub(super) status: u16,
    pub(super) body: Option<Vec<u8>>,
}

impl Shared {
    /// The session table (its lock is never held across an await).
    pub(super) fn sessions(&self) -> std::sync::MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn pipeline(&self) -> std::sync::MutexGuard<'_, Pipeline> {
        // A panic while holding the lock cannot leave the pipeline half-updated in a way
        // that matters (it only caches schemas), so a poisoned lock is used as is.
        self.pipeline.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One client message through the pipeline and, when valid, upstream. Upstream
    /// messages that belong to the request (stream partials §7, logs, server-to-client
    /// requests) go to the client's sink while the request is in flight; they are all in it
    /// before this returns the response. A client's answer to a server-to-client request
    /// (the pipeline admits one under the mcp policy) goes upstream on that request's
    /// msg_id and gets no response.
    pub(super) async fn exchange(
        &self,
        transport: &'static str,
        route: &'static str,
        bytes: &[u8],
        client: &Client,
    ) -> Outcome {
        let (arrived, t0) = (SystemTime::now(), Instant::now());
        let ingress = match &client.version {
            Some(v) => self.pipeline().ingress_at(bytes, Some(v)),
            None => self.pipeline().ingress(bytes),
        };
        let (id, method, msg_id, result) = match ingress {
            Ingress::Reject { id, method, error } => (id, method, None, Err(error)),
            Ingress::Forward(f) => {
                let id = f.pending.id.clone().unwrap_or_else(|| "null".to_owned());
                let method = Some(f.pending.method.clone()).filter(|m| !m.is_empty());
                if f.msg_type == swp_profiles::mcp::MSG_TYPE_RESPONSE {
                    // The client answering a server-initiated request: accepted like a
                    // notification (HTTP 202, nothing back), forwarded upstream on the
                    // request's msg_id when it was this client's.
                    let r = self
                        .upstream
                        .respond(client.owner, f.pending.id.as_deref(), f.payload)
                        .await;
                    let r = r
                        .map(|_| None)
                        .map_err(|e| GatewayError::new(Canonical::InternalError, e.to_string()));
                    (id, method, None, r)
                } else if f.pending.id.is_none() {
                    let r = self.upstream.notify(f.msg_type, f.payload).await;
                    let r = r
                        .map(|()| None)
                        .map_err(|e| GatewayError::new(Canonical::InternalError, e.to_string()));
                    (id, method, None, r)
                } else {
                    let key = f.pending.id.clone().unwrap_or_default();
                    let token = super::route::progress_token(&f.payload);
                    let answer = self
                        .request_upstream(key, client, token, f.msg_type, f.payload)
                        .await;
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
            Err(e) => (
                self.policy.http_status(e.code),
                Some(e.response(self.policy, &id)),
                Some(e),
            ),
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
            error: error.as_ref().map(|e| ErrorPayload::new(e, self.policy)),
            metadata: self.log.metadata(),
        });
        Outcome { status, body }
    }
}

impl Shared {
    /// Forwards one request under its JSON-RPC id, which this request owns upstream until
    /// the upstream has answered it (so no other client's request with the same id can
    /// receive its partials, D3). `Err` when no answer came within [`UPSTREAM_TIMEOUT`].
    async fn request_upstream(
        &self,
        id: String,
        client: &Client,
        token: Option<String>,
        msg_type: u64,
        payload: Vec<u8>,
    ) -> Result<super::upstream::Answer, tokio::time::error::Elapsed> {
        let deadline = tokio::time::Instant::now() + UPSTREAM_TIMEOUT;
        let claim = self
            .upstream
            .claim(&id, client.owner, token, client.sink.clone());
        let claim = tokio::time::timeout_at(deadline, claim).await?;
        let up = self.upstream.clone();
        let mut request = Box::pin(async move { up.request(msg_type, payload).await });
        match tokio::time::timeout_at(deadline, &mut request).await {
            Ok(answer) => Ok(answer),
            Err(elapsed) => {
                // The upstream may still answer (and send partials) late: the id stays
                // owned, with its partials going nowhere, until it does or a second
                // timeout passes, so they cannot reach a later request with this id.
                tokio::spawn(async move {
                    let _claim = claim;
                    let _ = tokio::time::timeout(UPSTREAM_TIMEOUT, request).await;
                });
                Err(elapsed)
            }
        }
    }
}

/// A client as the router sees it: who it is, and where the upstream messages that belong
/// to its calls go.
pub(super) struct Client {
    pub(super) owner: Owner,
    pub(super) sink: Option<Sink>,
    /// The protocol version its session agreed to (`None`: the pipeline's own, the last
    /// one negotiated).
    pub(super) version: Option<String>,
}

/// A client of a stdio or WebSocket connection: one message at a time, so the messages of
/// its call arrive in `rx`, drained before each response (they always precede it), and it
/// cannot answer a server request while its own call is in flight.
pub(super) struct Serial {
    pub(super) client: Client,
    rx: tokio::sync::mpsc::Receiver<Vec<u8>>,
}

impl Serial {
    pub(super) fn new(owner: Owner) -> Self {
        let (sink, rx) = super::route::sink(false);
        Serial {
            client: Client {
                owner,
                sink: Some(sink),
                version: None,
            },
            rx,
        }
    }

    /// The messages received so far.
    pub(super) fn drain(&mut self) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| self.rx.try_recv().ok()).collect()
    }
}

/// A fresh owner number for a client.
pub(super) fn new_owner() -> Owner {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
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
    // Refused before anything starts: the address is wrong whatever the upstream does.
    let bind_addrs = match &opts.transport {
        ClientTransport::Http(addr) => Some(bind_addresses(addr, opts.allow_remote)?),
        ClientTransport::Stdio => None,
    };
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
    let mut pipeline = Pipeline::new(opts.envelope);
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
        policy: opts.envelope,
        upstream,
        log: Log::new(log_out, opts.deterministic),
        origins: opts.origins.clone(),
        limits: opts.server,
        sessions: Mutex::new(Sessions::default()),
        session_mode: opts.sessions,
    });
    match (&opts.transport, bind_addrs) {
        (ClientTransport::Http(addr), Some(addrs)) => {
            let listener = TcpListener::bind(&addrs[..])
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
            accept_loop(shared, listener).await;
            Ok(())
        }
        _ => serve_stdio(shared).await,
    }
}

/// Resolves `HOST:PORT`; unless `allow_remote`, every address must be loopback (issue 19,
/// D4: the gateway speaks plaintext HTTP, like `serve` over tcp:// and `relay`).
fn bind_addresses(addr: &str, allow_remote: bool) -> Result<Vec<std::net::SocketAddr>, ServeError> {
    use crate::serve::listen::{self, Listen};
    let hp = match format!("tcp://{addr}").parse::<Listen>() {
        Ok(Listen::Tcp(hp)) => hp,
        Ok(_) => return Err(ServeError::Usage(format!("bad listen address {addr:?}"))),
        Err(e) => return Err(ServeError::Usage(e.to_string())),
    };
    let addrs = listen::resolve(&hp).map_err(io(format!("resolve {}", hp.host)))?;
    if !allow_remote {
        if let Some(ip) = listen::first_non_loopback(&addrs) {
            return Err(ServeError::NonLoopback {
                listen: format!("http://{addr}"),
                addr: ip,
            });
        }
    }
    Ok(addrs)
}

/// Accepts forever, one task per connection held to the server limits. Accept errors
/// (running out of descriptors above all) never end the gateway: it frees an idle
/// connection when descriptors ran out, backs off and retries (issue 19, D2).
async fn accept_loop(shared: Arc<Shared>, listener: TcpListener) {
    let limits = shared.limits;
    let slots = Slots::new(limits.max_connections);
    let budget = Budget::new(limits.memory_budget, limits.conn_memory);
    let mut backoff = Backoff::default();
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                backoff.reset();
                // Over the cap with every connection busy: the newcomer is closed.
                let Admit::Admitted { slot, evicted } = slots.admit() else {
                    continue;
                };
                accepting::configure(&stream, limits.tcp_keepalive);
                let conn = Conn {
                    stream,
                    chunk: vec![0u8; READ_CHUNK],
                    slot,
                    charge: budget.charge(),
                    limits,
                };
                let shared = shared.clone();
                tokio::spawn(async move {
                    let _ = super::streamable::serve_http(shared, conn).await;
                });
                if evicted {
                    // Let the evicted connection close (and free its descriptor) before a
                    // burst of newcomers runs the process out.
                    tokio::task::yield_now().await;
                }
            }
            Err(e) => {
                let pause = backoff.failed(&e, &slots, "swp-ref mcp-gateway");
                tokio::time::sleep(pause).await;
            }
        }
    }
}

/// Octets read from a client socket at once.
const READ_CHUNK: usize = 16 * 1024;

/// One HTTP client connection and the limits it is held to.
pub(super) struct Conn {
    pub(super) stream: TcpStream,
    chunk: Vec<u8>,
    pub(super) slot: Slot,
    pub(super) charge: Charge,
    pub(super) limits: ServerLimits,
}

/// What one read brought.
pub(super) enum Got {
    /// Octets, appended to the buffer.
    Data,
    /// The peer ended its stream.
    Eof,
    /// The deadline passed first.
    Timeout,
    /// The connection table asked this idle connection to make room.
    Evicted,
    /// Buffering the octets would exceed the memory budget.
    OverBudget(OverBudget),
}

impl Conn {
    /// Reads more octets into `buf` unless `deadline` passes or the connection is evicted
    /// first; `extra` is what the connection holds beyond `buf` (charged together).
    pub(super) async fn fill(
        &mut self,
        buf: &mut Vec<u8>,
        deadline: Option<tokio::time::Instant>,
        extra: usize,
    ) -> std::io::Result<Got> {
        let timeout = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        let n = tokio::select! {
            biased;
            () = self.slot.evicted() => return Ok(Got::Evicted),
            () = timeout => return Ok(Got::Timeout),
            r = self.stream.read(&mut self.chunk) => r?,
        };
        if n == 0 {
            return Ok(Got::Eof);
        }
        buf.extend_from_slice(&self.chunk[..n]);
        if let Err(e) = self.charge.set(buf.len().saturating_add(extra)) {
            return Ok(Got::OverBudget(e));
        }
        Ok(Got::Data)
    }

    /// Writes `bytes`; a client that does not read them within the body timeout loses the
    /// connection rather than holding it (and the reply) forever.
    pub(super) async fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let t = self.limits.body_timeout;
        tokio::time::timeout(t, self.stream.write_all(bytes))
            .await
            .unwrap_or_else(|_| {
                Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the client did not read its response in time",
                ))
            })
    }

    /// The deadline for input: the idle timeout from `since` while nothing is buffered,
    /// else `limit` from when the current unit began.
    pub(super) fn deadline(
        &self,
        idle: bool,
        since: tokio::time::Instant,
        limit: Duration,
    ) -> Option<tokio::time::Instant> {
        if idle {
            self.limits.idle_timeout.map(|t| since + t)
        } else {
            Some(since + limit)
        }
    }
}

async fn serve_stdio(shared: Arc<Shared>) -> Result<(), ServeError> {
    let mut input = BufReader::new(tokio::io::stdin());
    let mut out = tokio::io::stdout();
    let mut serial = Serial::new(new_owner());
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
        let outcome = shared.exchange("stdio", "stdio", msg, &serial.client).await;
        for mut line in serial.drain().into_iter().chain(outcome.body) {
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

/// Answers `status` and closes: the connection's buffered input is released first, so a
/// connection that lingers to drain its client holds no share of the memory budget.
pub(super) async fn refuse(conn: &mut Conn, status: u16, text: &str) -> std::io::Result<()> {
    let _ = conn.charge.set(0);
    send_plain(&mut conn.stream, status, text, true).await
}

pub(super) async fn send_plain(
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
        linger(stream).await;
    }
    Ok(())
}

/// Longest a closing connection keeps draining what the client still sends.
const LINGER: std::time::Duration = std::time::Duration::from_secs(2);
/// Most octets drained while lingering.
const LINGER_BYTES: usize = 1024 * 1024;

/// Reads and discards what the client is still sending after the response, for a bounded
/// time and amount, before the socket closes: closing with unread input makes the kernel
/// reset the connection, and a reset can destroy the response the client has not read yet
/// (the reason nginx lingers on close).
async fn linger(stream: &mut TcpStream) {
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 4096];
    let mut drained = 0usize;
    let _ = tokio::time::timeout(LINGER, async {
        while drained < LINGER_BYTES {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => drained += n,
            }
        }
    })
    .await;
}
