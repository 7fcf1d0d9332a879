//! The gateway's upstream link: one SWP connection (loopback TCP, or the stdio of a spawned
//! endpoint) carrying profile-1 frames. Requests get fresh msg_ids from the profile's
//! correlator; one task writes frames and matches responses back to their waiters. Requests
//! the upstream sends (server-initiated) are routed to their client ([`super::route`]), so
//! the client's response goes back under that request's msg_id (mcp-mapping §5).

use super::route::{Delivery, Owner, Route, Sink, Table};
use bytes::BytesMut;
use std::process::Stdio;
use swp_core::frame::FrameDecoder;
use swp_core::{e1, Envelope, Limits};
use swp_profiles::mcp::{
    Correlator, MSG_TYPE_NOTIFICATION, MSG_TYPE_REQUEST, MSG_TYPE_RESPONSE, PROFILE_ID,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// Where the upstream endpoint is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamAddr {
    /// `HOST:PORT` of an endpoint serving SWP over TCP.
    Tcp(String),
    /// A command whose stdin/stdout speak SWP frames (e.g. `swp-ref serve --stdio`).
    Command(Vec<String>),
}

/// The fixed 8-octet prefix of the gateway's msg_ids (a counter follows), so deterministic
/// logs show the same ids on every run.
pub const MSG_ID_PREFIX: [u8; 8] = *b"swp-gw01";

/// Most requests in flight upstream at once.
pub const MAX_IN_FLIGHT: usize = 4096;

/// An upstream failure, surfaced to clients as `INTERNAL_ERROR`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamError {
    /// The link is gone.
    #[error("the upstream SWP endpoint closed the connection")]
    Closed,
    /// The correlator refused the request.
    #[error("{0}")]
    Correlation(#[from] swp_profiles::mcp::CorrelationError),
    /// An outbound frame could not be encoded.
    #[error("cannot encode the frame: {0}")]
    Encode(String),
}

/// The upstream's answer to one request: the msg_id it travelled under, and the payload.
pub type Answer = Result<(Vec<u8>, Vec<u8>), UpstreamError>;

struct Job {
    msg_type: u64,
    payload: Vec<u8>,
    reply: Option<oneshot::Sender<Answer>>,
    /// A response to an upstream request goes on that request's msg_id.
    on: Option<Vec<u8>>,
}

/// The JSON-RPC ids in flight upstream, each owned by one client request, with the sink its
/// server messages go to (stream partials, logs, server-to-client requests), and the
/// server-to-client requests waiting for their answers ([`super::route`]). All clients
/// share one upstream link, and the upstream correlates partials by the request id alone
/// (`progressToken`, the related-request `_meta`), so two clients' requests with the same
/// id must never be in flight at once: a second one waits for the first to finish (issue
/// 19, D3). Ids are kept unchanged on the way through (mcp-mapping §5).
pub type Routes = std::sync::Arc<std::sync::Mutex<Table>>;

/// Ownership of one JSON-RPC id upstream; the id is free again when this is dropped.
#[derive(Debug)]
pub struct IdClaim {
    routes: Routes,
    id: String,
    freed: std::sync::Arc<tokio::sync::Notify>,
}

impl Drop for IdClaim {
    fn drop(&mut self) {
        let mut r = self.routes.lock().unwrap_or_else(|p| p.into_inner());
        if r.ids
            .get(&self.id)
            .is_some_and(|e| std::sync::Arc::ptr_eq(&e.freed, &self.freed))
        {
            r.ids.remove(&self.id);
        }
        drop(r);
        self.freed.notify_waiters();
    }
}

/// A handle on the upstream link; cheap to clone.
#[derive(Clone, Debug)]
pub struct Upstream {
    jobs: mpsc::Sender<Job>,
    routes: Routes,
}

impl Upstream {
    /// Connects (or spawns) and starts the link task.
    pub async fn connect(addr: &UpstreamAddr, limits: Limits) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel(256);
        let routes = Routes::default();
        let link_routes = routes.clone();
        match addr {
            UpstreamAddr::Tcp(a) => {
                let s = tokio::net::TcpStream::connect(a).await?;
                s.set_nodelay(true)?;
                let (r, w) = s.into_split();
                tokio::spawn(link(r, w, rx, limits, link_routes));
            }
            UpstreamAddr::Command(argv) => {
                let (prog, args) = argv.split_first().ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty upstream command")
                })?;
                let mut child = tokio::process::Command::new(prog)
                    .args(args)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::inherit())
                    .kill_on_drop(true)
                    .spawn()?;
                let (Some(w), Some(r)) = (child.stdin.take(), child.stdout.take()) else {
                    return Err(std::io::Error::other("the upstream command has no stdio"));
                };
                tokio::spawn(async move {
                    link(r, w, rx, limits, link_routes).await;
                    let _ = child.kill().await;
                });
            }
        }
        Ok(Upstream { jobs: tx, routes })
    }

    /// Takes ownership of the JSON-RPC id `id` (raw JSON text) upstream, waiting while another
    /// request with that id is in flight; until the claim is dropped, upstream messages
    /// that belong to the request go to `sink` (and nowhere when `sink` is `None`).
    pub async fn claim(
        &self,
        id: &str,
        owner: Owner,
        token: Option<String>,
        sink: Option<Sink>,
    ) -> IdClaim {
        use std::collections::hash_map::Entry;
        loop {
            let busy = {
                let mut r = self.routes.lock().unwrap_or_else(|p| p.into_inner());
                match r.ids.entry(id.to_owned()) {
                    Entry::Vacant(v) => {
                        let freed = std::sync::Arc::new(tokio::sync::Notify::new());
                        v.insert(Route {
                            sink,
                            owner,
                            token,
                            freed: freed.clone(),
                        });
                        return IdClaim {
                            routes: self.routes.clone(),
                            id: id.to_owned(),
                            freed,
                        };
                    }
                    Entry::Occupied(o) => o.get().freed.clone(),
                }
            };
            let notified = busy.notified();
            tokio::pin!(notified);
            // Registered before the second look, so a release in between is not missed.
            notified.as_mut().enable();
            let still = self
                .routes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .ids
                .get(id)
                .is_some_and(|e| std::sync::Arc::ptr_eq(&e.freed, &busy));
            if still {
                notified.await;
            }
        }
    }

    /// Sends a request and waits for its terminal response.
    pub async fn request(&self, msg_type: u64, payload: Vec<u8>) -> Answer {
        let (tx, rx) = oneshot::channel();
        self.jobs
            .send(Job {
                msg_type,
                payload,
                reply: Some(tx),
                on: None,
            })
            .await
            .map_err(|_| UpstreamError::Closed)?;
        rx.await.map_err(|_| UpstreamError::Closed)?
    }

    /// Sends a notification (nothing comes back).
    pub async fn notify(&self, msg_type: u64, payload: Vec<u8>) -> Result<(), UpstreamError> {
        self.jobs
            .send(Job {
                msg_type,
                payload,
                reply: None,
                on: None,
            })
            .await
            .map_err(|_| UpstreamError::Closed)
    }

    /// Sends a client's response to a server-initiated request (JSON-RPC `id`, raw JSON
    /// text): under that request's msg_id when the upstream sent one to this client, else
    /// under a fresh msg_id, leaving an unsolicited response for the upstream to judge (it
    /// owns its request ids; ignoring and refusing are both conformant, SI-039). Returns
    /// whether a request was waiting for it.
    pub async fn respond(
        &self,
        owner: Owner,
        id: Option<&str>,
        payload: Vec<u8>,
    ) -> Result<bool, UpstreamError> {
        let msg_id = id.and_then(|id| {
            self.routes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .answer(owner, id)
                .ok()
        });
        let solicited = msg_id.is_some();
        self.jobs
            .send(Job {
                msg_type: MSG_TYPE_RESPONSE,
                payload,
                reply: None,
                on: msg_id,
            })
            .await
            .map_err(|_| UpstreamError::Closed)?;
        Ok(solicited)
    }

    async fn respond_on(&self, msg_id: Vec<u8>, payload: Vec<u8>) -> Result<(), UpstreamError> {
        self.jobs
            .send(Job {
                msg_type: MSG_TYPE_RESPONSE,
                payload,
                reply: None,
                on: Some(msg_id),
            })
            .await
            .map_err(|_| UpstreamError::Closed)
    }

    /// Opens a client's own stream for server messages unrelated to its calls.
    pub fn open_stream(&self, owner: Owner, sink: Sink) {
        self.routes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .open_stream(owner, sink);
    }

    /// Closes a client's own stream.
    pub fn close_stream(&self, owner: Owner) {
        self.routes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .close_stream(owner);
    }

    /// A client is gone (its session ended): the server requests still waiting on it are
    /// answered upstream with an error at once, rather than left to time out.
    pub async fn forget(&self, owner: Owner) {
        let waiting = self
            .routes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .forget(owner);
        for msg_id in waiting {
            let gone = swp_profiles::mcp::jsonrpc::error(
                "null",
                swp_profiles::mcp::jsonrpc::INTERNAL_ERROR,
                "Internal error: the client's session ended",
                None,
            );
            let _ = self.respond_on(msg_id, gone).await;
        }
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

async fn link<R, W>(
    mut r: R,
    mut w: W,
    mut jobs: mpsc::Receiver<Job>,
    limits: Limits,
    routes: Routes,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    // Notifications take a msg_id from the same counter (a `None` waiter, finished at once).
    let mut corr: Correlator<Option<oneshot::Sender<Answer>>> =
        Correlator::new(MSG_ID_PREFIX, MAX_IN_FLIGHT);
    let mut decoder = FrameDecoder::new(limits);
    let mut buf = BytesMut::with_capacity(64 * 1024);
    loop {
        tokio::select! {
            job = jobs.recv() => {
                let Some(job) = job else { break };
                let notification = job.reply.is_none();
                if let Some(on) = job.on {
                    // A response to the upstream's own request: its msg_id, not ours.
                    if write_frame(&mut w, job.msg_type, on, job.payload).await.is_err() {
                        break;
                    }
                    continue;
                }
                if corr.len() >= MAX_IN_FLIGHT {
                    if let Some(reply) = job.reply {
                        let e = swp_profiles::mcp::CorrelationError::TooMany(MAX_IN_FLIGHT);
                        let _ = reply.send(Err(e.into()));
                    }
                    continue;
                }
                let Ok(msg_id) = corr.begin(job.reply) else { continue };
                if notification {
                    let _ = corr.finish(&msg_id);
                }
                let env = Envelope {
                    version: 1,
                    profile_id: PROFILE_ID,
                    msg_type: job.msg_type,
                    ts_unix_ms: now_ms(),
                    msg_id: bytes::Bytes::copy_from_slice(&msg_id),
                    payload: job.payload.into(),
                    ..Default::default()
                };
                let mut out = BytesMut::new();
                if let Err(e) = e1::encode_frame(&env, &mut out) {
                    if let Ok(Some(tx)) = corr.finish(&msg_id) {
                        let _ = tx.send(Err(UpstreamError::Encode(e.to_string())));
                    }
                    continue;
                }
                if w.write_all(&out).await.is_err() || w.flush().await.is_err() {
                    break;
                }
            }
            n = r.read_buf(&mut buf) => {
                match n {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        decoder.feed(&buf);
                        buf.clear();
                        loop {
                            match decoder.next_body() {
                                Ok(Some(body)) => {
                                    let Ok(env) = e1::decode(&body, &limits) else { continue };
                                    if env.profile_id == PROFILE_ID
                                        && (env.msg_type == MSG_TYPE_NOTIFICATION
                                            || env.msg_type == MSG_TYPE_REQUEST)
                                    {
                                        // Routed in frame order, before any later response is
                                        // handed over, so a client sees them before its call's
                                        // terminal response.
                                        let request = (env.msg_type == MSG_TYPE_REQUEST)
                                            .then_some(&env.msg_id[..]);
                                        let delivery = routes
                                            .lock()
                                            .unwrap_or_else(|p| p.into_inner())
                                            .deliver(&env.payload, request);
                                        if let Delivery::Refuse(answer) = delivery {
                                            let on = env.msg_id.to_vec();
                                            if write_frame(&mut w, MSG_TYPE_RESPONSE, on, answer).await.is_err() {
                                                return;
                                            }
                                        }
                                        continue;
                                    }
                                    if env.profile_id != PROFILE_ID || env.msg_type != MSG_TYPE_RESPONSE {
                                        continue;
                                    }
                                    if let Ok(Some(tx)) = corr.finish(&env.msg_id) {
                                        let _ = tx.send(Ok((env.msg_id.to_vec(), env.payload.to_vec())));
                                    }
                                }
                                Ok(None) => break,
                                Err(_) => {
                                    // A broken frame stream cannot be resynchronised.
                                    for tx in corr.drain().into_iter().flatten() {
                                        let _ = tx.send(Err(UpstreamError::Closed));
                                    }
                                    return;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    for tx in corr.drain().into_iter().flatten() {
        let _ = tx.send(Err(UpstreamError::Closed));
    }
}

/// Writes one profile-1 frame under `msg_id` (a response to an upstream request).
async fn write_frame<W: AsyncWrite + Unpin>(
    w: &mut W,
    msg_type: u64,
    msg_id: Vec<u8>,
    payload: Vec<u8>,
) -> std::io::Result<()> {
    let env = Envelope {
        version: 1,
        profile_id: PROFILE_ID,
        msg_type,
        ts_unix_ms: now_ms(),
        msg_id: msg_id.into(),
        payload: payload.into(),
        ..Default::default()
    };
    let mut out = BytesMut::new();
    // A frame that cannot be encoded is dropped: the upstream times its request out.
    if e1::encode_frame(&env, &mut out).is_err() {
        return Ok(());
    }
    w.write_all(&out).await?;
    w.flush().await
}
