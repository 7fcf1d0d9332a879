//! The gateway's upstream link: one SWP connection (loopback TCP, or the stdio of a spawned
//! endpoint) carrying profile-1 frames. Requests get fresh msg_ids from the profile's
//! correlator; one task writes frames and matches responses back to their waiters. Requests
//! the upstream sends (server-initiated) are remembered by JSON-RPC id, so a client's
//! response to one goes back under that request's msg_id (mcp-mapping §5).

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
    /// The msg_id to send under (a response reuses its request's); `None`: a fresh one.
    msg_id: Option<Vec<u8>>,
}

/// The server-initiated requests awaiting a client's response: JSON-RPC id (raw JSON text)
/// to the msg_id the request came under. Bounded by [`MAX_IN_FLIGHT`].
pub type Inbound = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<u8>>>>;

/// The JSON-RPC ids in flight upstream, each owned by one client request, with the sink its
/// stream partials go to. All clients share one upstream link, and the upstream correlates
/// partials by the request id alone (`progressToken`), so two clients' requests with the
/// same id must never be in flight at once: a second one waits for the first to finish
/// (issue 19, D3). Ids are kept unchanged on the way through (mcp-mapping §5).
pub type Routes = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Route>>>;

/// One id in flight.
#[derive(Debug)]
pub struct Route {
    /// Where its partials go (`None`: the client has no way to receive them, e.g. HTTP).
    sink: Option<mpsc::UnboundedSender<Vec<u8>>>,
    /// Woken when the id is free again.
    freed: std::sync::Arc<tokio::sync::Notify>,
}

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
        if r.get(&self.id)
            .is_some_and(|e| std::sync::Arc::ptr_eq(&e.freed, &self.freed))
        {
            r.remove(&self.id);
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
    inbound: Inbound,
}

impl Upstream {
    /// Connects (or spawns) and starts the link task.
    pub async fn connect(addr: &UpstreamAddr, limits: Limits) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel(256);
        let routes = Routes::default();
        let link_routes = routes.clone();
        let inbound = Inbound::default();
        let link_inbound = inbound.clone();
        match addr {
            UpstreamAddr::Tcp(a) => {
                let s = tokio::net::TcpStream::connect(a).await?;
                s.set_nodelay(true)?;
                let (r, w) = s.into_split();
                tokio::spawn(link(r, w, rx, limits, link_routes, link_inbound));
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
                    link(r, w, rx, limits, link_routes, link_inbound).await;
                    let _ = child.kill().await;
                });
            }
        }
        Ok(Upstream {
            jobs: tx,
            routes,
            inbound,
        })
    }

    /// Takes ownership of the JSON-RPC id `id` (raw JSON text) upstream, waiting while another request with
    /// that id is in flight; until the claim is dropped, upstream notifications whose
    /// progressToken is `id` go to `sink` (and nowhere when `sink` is `None`).
    pub async fn claim(&self, id: &str, sink: Option<mpsc::UnboundedSender<Vec<u8>>>) -> IdClaim {
        use std::collections::hash_map::Entry;
        loop {
            let busy = {
                let mut r = self.routes.lock().unwrap_or_else(|p| p.into_inner());
                match r.entry(id.to_owned()) {
                    Entry::Vacant(v) => {
                        let freed = std::sync::Arc::new(tokio::sync::Notify::new());
                        v.insert(Route {
                            sink,
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
                msg_id: None,
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
                msg_id: None,
            })
            .await
            .map_err(|_| UpstreamError::Closed)
    }

    /// Sends a client's response to a server-initiated request: under that request's
    /// msg_id when the upstream sent one with JSON-RPC id `id` (raw JSON text), else under
    /// a fresh msg_id, leaving an unsolicited response for the upstream to judge (it owns its
    /// request ids; ignoring and refusing are both conformant, SI-039). Returns whether a
    /// request was waiting for it.
    pub async fn respond(&self, id: Option<&str>, payload: Vec<u8>) -> Result<bool, UpstreamError> {
        let msg_id = id.and_then(|id| {
            self.inbound
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(id)
        });
        let solicited = msg_id.is_some();
        self.jobs
            .send(Job {
                msg_type: MSG_TYPE_RESPONSE,
                payload,
                reply: None,
                msg_id,
            })
            .await
            .map_err(|_| UpstreamError::Closed)?;
        Ok(solicited)
    }

    /// The server-initiated requests awaiting a client's response.
    pub fn inbound(&self) -> &Inbound {
        &self.inbound
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Hands an upstream notification to the client request that owns the id its
/// progressToken names.
/// Called in frame order, before any later response is handed over, so a client sink sees
/// partials before the terminal response.
fn route_notification(routes: &Routes, payload: &[u8]) {
    // Ids are owned as raw JSON text, so the token `7` names request 7 and `"7"` request "7".
    let token = serde_json::from_slice::<serde_json::Value>(payload)
        .ok()
        .and_then(|v| {
            v.pointer("/params/progressToken")
                .filter(|t| t.is_string() || t.is_number())
                .map(ToString::to_string)
        });
    let Some(token) = token else { return };
    let r = routes.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(sink) = r.get(&token).and_then(|route| route.sink.as_ref()) {
        let _ = sink.send(payload.to_vec());
    }
}

/// Remembers a request the upstream sent, by its JSON-RPC id, so the client's response can
/// reuse its msg_id; a request without a readable id, or beyond the bound, is not
/// remembered (its response then travels under a fresh msg_id).
fn remember_inbound(inbound: &Inbound, msg_id: &[u8], payload: &[u8]) {
    let Some(id) = serde_json::from_slice::<serde_json::Value>(payload)
        .ok()
        .and_then(|v| {
            v.get("id")
                .filter(|i| i.is_string() || i.is_i64() || i.is_u64())
                .map(ToString::to_string)
        })
    else {
        return;
    };
    let mut table = inbound.lock().unwrap_or_else(|p| p.into_inner());
    if table.len() < MAX_IN_FLIGHT || table.contains_key(&id) {
        table.insert(id, msg_id.to_vec());
    }
}

async fn link<R, W>(
    mut r: R,
    mut w: W,
    mut jobs: mpsc::Receiver<Job>,
    limits: Limits,
    routes: Routes,
    inbound: Inbound,
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
                let msg_id = if let Some(reused) = job.msg_id {
                    reused
                } else {
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
                msg_id.to_vec()
                };
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
                                    if env.profile_id == PROFILE_ID && env.msg_type == MSG_TYPE_NOTIFICATION {
                                        route_notification(&routes, &env.payload);
                                        continue;
                                    }
                                    if env.profile_id == PROFILE_ID && env.msg_type == MSG_TYPE_REQUEST {
                                        remember_inbound(&inbound, &env.msg_id, &env.payload);
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
