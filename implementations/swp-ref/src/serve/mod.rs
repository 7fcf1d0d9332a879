//! The tokio I/O edge of `swp-ref serve`: the listeners (stdio, loopback TCP, TLS), one task
//! per connection driving an [`crate::endpoint::Connection`], signals and clean shutdown.
//!
//! Every protocol decision lives in [`crate::endpoint`]; this module only moves octets,
//! reads the clock, and enforces the channel rules of S1 (no plaintext off loopback, no
//! frame processed before the TLS handshake and client authentication succeed).

pub mod args;
pub mod driver;
pub mod listen;
pub mod tls;

use crate::endpoint::{Config, Connection};
use crate::limits::accept::{self as accepting, Backoff};
use crate::limits::{Admit, Budget, ServerLimits, Slots};
use driver::{Edge, Ended};
use listen::{HostPort, Listen};
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;
use swp_core::ErrorCode;
use tls::{TlsOptions, TlsSetupError};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// How long open connections get to finish after a stop signal before they are aborted.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Everything `serve` needs, validated.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to listen.
    pub listen: Listen,
    /// TLS settings; present exactly when `listen` is `tls://`.
    pub tls: Option<TlsOptions>,
    /// Write the bound port here once listening.
    pub port_file: Option<PathBuf>,
    /// What each connection enforces.
    pub config: Config,
    /// Who may not ask for what (`--authz-deny`).
    pub authz: std::sync::Arc<crate::endpoint::authz::Authz>,
    /// How long a connection keeps polling for input after each read before it sleeps
    /// (see [`driver::drive`]); zero disables polling.
    pub busy_poll: Duration,
    /// Connection cap, timeouts, memory budget, keepalive (docs/reference-limits.md).
    pub limits: ServerLimits,
}

/// `serve` could not start or keep running.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// S1 (security-bindings §2.1): no plaintext SWP on non-loopback interfaces.
    #[error(
        "refusing to serve plaintext SWP on non-loopback address {addr} ({listen}): S1 \
         (security-bindings §2.1) forbids plaintext on non-loopback interfaces; \
         listen on 127.0.0.1/::1/localhost or use tls:// with --cert and --key"
    )]
    PlaintextNonLoopback {
        /// The listen argument.
        listen: String,
        /// The offending address.
        addr: IpAddr,
    },
    /// A command-line combination that cannot be served.
    #[error("{0}")]
    Usage(String),
    /// Incoherent limits.
    #[error("invalid limits: {0}")]
    Limits(#[from] swp_core::limits::LimitsError),
    /// The TLS configuration could not be built.
    #[error(transparent)]
    Tls(#[from] TlsSetupError),
    /// The host did not resolve.
    #[error("cannot resolve {host}: {source}")]
    Resolve {
        /// The host.
        host: String,
        /// Why.
        source: io::Error,
    },
    /// No address could be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: io::Error,
    },
    /// The port file could not be written.
    #[error("cannot write port file {path}: {source}")]
    PortFile {
        /// Its path.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The runtime, a signal handler or the stdio connection failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl ServeError {
    /// The process exit status: 2 for configuration refusals (the command can never work
    /// as given), 1 for failures at run time.
    pub fn exit_code(&self) -> u8 {
        match self {
            ServeError::PlaintextNonLoopback { .. }
            | ServeError::Usage(_)
            | ServeError::Limits(_)
            | ServeError::Tls(_)
            | ServeError::Resolve { .. } => 2,
            ServeError::Bind { .. } | ServeError::PortFile { .. } | ServeError::Io(_) => 1,
        }
    }
}

/// Runs `serve` on its own runtime until SIGTERM/SIGINT (or end of input for stdio).
pub fn run(opts: Options) -> Result<(), ServeError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = rt.block_on(async {
        let (stop_tx, stop_rx) = watch::channel(false);
        // Installed before anything listens, so a signal right after the port file
        // appears is already handled.
        let signals = stop_on_signals(stop_tx)?;
        let r = serve(opts, stop_rx).await;
        signals.abort();
        r
    });
    // A stdin read may still sit in a blocking thread; it must not hold the exit.
    rt.shutdown_background();
    result
}

/// Installs SIGTERM and SIGINT handlers that set `stop`.
fn stop_on_signals(stop: watch::Sender<bool>) -> io::Result<tokio::task::JoinHandle<()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        let _ = stop.send(true);
    }))
}

/// Serves until `stop` turns true (or, for stdio, until the one connection ends).
pub async fn serve(opts: Options, stop: watch::Receiver<bool>) -> Result<(), ServeError> {
    let config = opts.config;
    let poll = opts.busy_poll;
    let limits = opts.limits;
    match &opts.listen {
        Listen::Stdio => {
            let stream = tokio::io::join(tokio::io::stdin(), tokio::io::stdout());
            let conn = Connection::new(config, None);
            match driver::drive(stream, conn, "stdio", stop, poll, Edge::default()).await {
                Ended::Io(e) => Err(ServeError::Io(e)),
                Ended::Closed | Ended::Shutdown => Ok(()),
            }
        }
        Listen::Tcp(hp) => {
            let (listener, local) = bind(hp, false).await?;
            announce("tcp", local, opts.port_file.as_deref())?;
            accept_loop(listener, stop, limits, move |sock, peer, stop, edge| {
                let config = config.clone();
                async move {
                    let name = peer.to_string();
                    let conn = Connection::new(config, None);
                    if let Ended::Io(e) = driver::drive(sock, conn, &name, stop, poll, edge).await {
                        if !is_disconnect(&e) {
                            eprintln!("swp-ref: connection {name}: {e}");
                        }
                    }
                }
            })
            .await;
            Ok(())
        }
        Listen::Tls(hp) => {
            let tls_opts = opts
                .tls
                .as_ref()
                .ok_or_else(|| ServeError::Usage("tls:// needs --cert and --key".into()))?;
            let handshake = Handshake {
                acceptor: tokio_rustls::TlsAcceptor::from(tls::server_config(tls_opts)?),
                timeout: limits.header_timeout,
                // Client certificates are verified only with a client CA; then every peer
                // must have an identity, read from the declared field.
                identity: tls_opts.client_ca.as_ref().map(|_| tls_opts.identity_field),
            };
            let (listener, local) = bind(hp, true).await?;
            announce("tls", local, opts.port_file.as_deref())?;
            let authz = opts.authz.clone();
            accept_loop(listener, stop, limits, move |sock, peer, stop, edge| {
                let handshake = handshake.clone();
                let authz = authz.clone();
                let config = config.clone();
                async move {
                    let config = (config, authz);
                    serve_tls(handshake, sock, peer, config, stop, poll, edge).await
                }
            })
            .await;
            Ok(())
        }
    }
}

/// What a TLS connection goes through before its first frame.
#[derive(Clone)]
struct Handshake {
    acceptor: tokio_rustls::TlsAcceptor,
    /// The handshake must finish within this (`--header-timeout`).
    timeout: Duration,
    /// Under mTLS, the field every verified client's identity is read from; `None` without
    /// a client CA, where no peer has an identity.
    identity: Option<tls::IdentityField>,
}

/// One TLS connection: no frame is read before the handshake (and client authentication,
/// under `--client-ca`) succeeds; any TLS failure ends the connection with a security event.
/// Under mTLS a verified certificate that yields no identity (the declared field absent,
/// empty or repeated) is refused too: an authenticated peer with no name would be treated
/// as nobody in particular by every policy downstream (issue 30, defect 4).
async fn serve_tls(
    handshake: Handshake,
    sock: TcpStream,
    peer: SocketAddr,
    (config, authz): (Config, std::sync::Arc<crate::endpoint::authz::Authz>),
    stop: watch::Receiver<bool>,
    poll: Duration,
    edge: Edge,
) {
    let accepted = tokio::time::timeout(handshake.timeout, handshake.acceptor.accept(sock)).await;
    let stream = match accepted {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            eprintln!("swp-ref: security event: TLS handshake with {peer} failed: {e}");
            return;
        }
        Err(_) => {
            eprintln!("swp-ref: security event: TLS handshake with {peer} timed out");
            return;
        }
    };
    let identity = match handshake.identity {
        None => None,
        Some(field) => match tls::peer_identity(stream.get_ref().1, field) {
            Ok(id) => Some(id),
            Err(e) => {
                eprintln!("swp-ref: security event: client certificate of {peer} refused: {e}");
                // The peer learns why (S1: an authentication failure is reported, then the
                // channel ends) before any frame of its own is read.
                let mut conn = Connection::new(config, None);
                conn.abort(
                    ErrorCode::SecurityPolicy,
                    format!("client certificate refused: {e}"),
                    driver::now_ms(),
                );
                let name = peer.to_string();
                if let Ended::Io(e) = driver::refuse(stream, conn, &name, edge).await {
                    if !is_disconnect(&e) {
                        eprintln!("swp-ref: security event: TLS session with {name} failed: {e}");
                    }
                }
                return;
            }
        },
    };
    let name = match &identity {
        Some(id) => format!("{peer} {id}"),
        None => peer.to_string(),
    };
    let conn = Connection::new(config, identity).with_authz(authz);
    if let Ended::Io(e) = driver::drive(stream, conn, &name, stop, poll, edge).await {
        if !is_disconnect(&e) {
            eprintln!("swp-ref: security event: TLS session with {name} failed: {e}");
        }
    }
}

/// Errors that only mean the peer went away.
fn is_disconnect(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted
    )
}

/// Resolves and binds; for plaintext, refuses unless every resolved address is loopback.
async fn bind(hp: &HostPort, tls: bool) -> Result<(TcpListener, SocketAddr), ServeError> {
    let addrs = listen::resolve(hp).map_err(|source| ServeError::Resolve {
        host: hp.host.clone(),
        source,
    })?;
    if !tls {
        if let Some(addr) = listen::first_non_loopback(&addrs) {
            return Err(ServeError::PlaintextNonLoopback {
                listen: format!("tcp://{hp}"),
                addr,
            });
        }
    }
    let listener = TcpListener::bind(&addrs[..])
        .await
        .map_err(|source| ServeError::Bind {
            addr: hp.to_string(),
            source,
        })?;
    let local = listener.local_addr()?;
    Ok((listener, local))
}

/// Says where the endpoint listens: the port file (atomically: a temporary file renamed
/// into place, so a reader never sees a partial number) and a line on stderr.
fn announce(scheme: &str, local: SocketAddr, port_file: Option<&Path>) -> Result<(), ServeError> {
    if let Some(path) = port_file {
        write_port_file(path, local.port()).map_err(|source| ServeError::PortFile {
            path: path.to_owned(),
            source,
        })?;
    }
    eprintln!("swp-ref: listening on {scheme}://{local}");
    Ok(())
}

pub(crate) fn write_port_file(path: &Path, port: u16) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp.{}", std::process::id()));
    std::fs::write(&tmp, format!("{port}\n"))?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Accepts until `stop`, one task per connection held to `limits`; then tells the
/// connections to close and gives them [`SHUTDOWN_GRACE`] before aborting them. Accept
/// errors (running out of descriptors above all) never end the loop: it backs off and
/// retries (issue 19, D2).
async fn accept_loop<F, Fut>(
    listener: TcpListener,
    mut stop: watch::Receiver<bool>,
    limits: ServerLimits,
    handle: F,
) where
    F: Fn(TcpStream, SocketAddr, watch::Receiver<bool>, Edge) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let slots = Slots::new(limits.max_connections);
    let budget = Budget::new(limits.memory_budget, limits.conn_memory);
    let mut backoff = Backoff::default();
    let mut tasks = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            _ = stop.changed() => break,
            r = listener.accept() => match r {
                Ok((sock, peer)) => {
                    backoff.reset();
                    // Over the cap with every connection busy: the newcomer is closed, and
                    // the connections at work are not disturbed.
                    let Admit::Admitted { slot, evicted } = slots.admit() else {
                        continue;
                    };
                    accepting::configure(&sock, limits.tcp_keepalive);
                    let edge = Edge {
                        slot: Some(slot),
                        charge: Some(budget.charge()),
                        idle_timeout: limits.idle_timeout,
                        body_timeout: Some(limits.body_timeout),
                    };
                    tasks.spawn(handle(sock, peer, stop.clone(), edge));
                    if evicted {
                        // Let the evicted connection close (and free its descriptor)
                        // before a burst of newcomers runs the process out.
                        tokio::task::yield_now().await;
                    }
                }
                Err(e) => {
                    let pause = backoff.failed(&e, &slots, "swp-ref");
                    tokio::time::sleep(pause).await;
                }
            },
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    drop(listener);
    let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tasks.shutdown().await;
    }
}
