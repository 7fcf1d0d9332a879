//! Connections to a running SUT, behind one interface: a spawned process's stdin/stdout, a
//! TCP socket, or TLS over TCP (rustls, ring provider). Blocking I/O with deadlines: the
//! session engine is sequential, one connection at a time, so threads and timeouts are
//! simpler and more predictable here than an async runtime.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::{ChildStdin, ChildStdout};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one read produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recv {
    /// Octets arrived.
    Data(Vec<u8>),
    /// The SUT closed its side cleanly.
    Eof,
    /// The connection broke (reset, TLS alert, integrity failure); the reason.
    Broken(String),
    /// Nothing before the deadline.
    Timeout,
}

/// A connection the engine can use without knowing what carries it.
pub trait Wire: Send {
    /// Sends octets (through TLS when the wire is TLS).
    fn send(&mut self, b: &[u8]) -> io::Result<()>;
    /// Closes the write side; the SUT sees end of stream.
    fn half_close(&mut self) -> io::Result<()>;
    /// Waits for octets until `deadline`.
    fn recv(&mut self, deadline: Instant) -> Recv;
    /// Writes octets under the security layer, bypassing it (a forged TLS record).
    fn send_raw(&mut self, b: &[u8]) -> io::Result<()> {
        self.send(b)
    }
    /// Sends again, under the security layer, the last protected record written after the
    /// handshake (a replay); returns it. Only TLS wires have records.
    fn replay_last_record(&mut self) -> io::Result<Vec<u8>> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no security layer to replay records of",
        ))
    }
    /// What carries it, for transcripts.
    fn describe(&self) -> String;
}

/// Largest single read.
const READ_CHUNK: usize = 64 * 1024;

/// Reads of a stdio endpoint's output waiting for the harness: at most 4 MiB. A SUT that
/// writes faster than the harness judges then waits on its pipe, instead of the harness
/// holding everything it wrote.
const STDIO_QUEUED_READS: usize = 64;

/// How long a write to a stdio endpoint may block (it stopped reading its input).
const STDIO_WRITE_TIMEOUT: Duration = Duration::from_secs(5);

type WriteJob = (Vec<u8>, mpsc::Sender<io::Result<()>>);

/// The stdio of a spawned SUT. A reader thread turns the blocking pipe into a channel so
/// reads have deadlines; a writer thread does the same for writes, so an endpoint that stops
/// reading cannot block the harness.
pub struct StdioWire {
    stdin: Option<mpsc::Sender<WriteJob>>,
    rx: Receiver<Recv>,
}

impl StdioWire {
    /// Wraps the pipes of a spawned process.
    pub fn new(stdin: ChildStdin, mut stdout: ChildStdout) -> Self {
        let (tx, rx) = mpsc::sync_channel(STDIO_QUEUED_READS);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; READ_CHUNK];
            loop {
                let msg = match stdout.read(&mut buf) {
                    Ok(0) => Recv::Eof,
                    Ok(n) => Recv::Data(buf[..n].to_vec()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => Recv::Broken(e.to_string()),
                };
                let last = !matches!(msg, Recv::Data(_));
                if tx.send(msg).is_err() || last {
                    return;
                }
            }
        });
        let (wtx, wrx) = mpsc::channel::<WriteJob>();
        std::thread::spawn(move || {
            let mut stdin = stdin;
            for (buf, ack) in wrx {
                let r = stdin.write_all(&buf).and_then(|()| stdin.flush());
                let failed = r.is_err();
                let _ = ack.send(r);
                if failed {
                    return;
                }
            }
            // The sender was dropped: closing stdin here is the half-close.
        });
        StdioWire {
            stdin: Some(wtx),
            rx,
        }
    }
}

impl Wire for StdioWire {
    fn send(&mut self, b: &[u8]) -> io::Result<()> {
        let Some(s) = &self.stdin else {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "stdin already closed",
            ));
        };
        let (ack_tx, ack_rx) = mpsc::channel();
        s.send((b.to_vec(), ack_tx)).map_err(|_| {
            io::Error::new(io::ErrorKind::BrokenPipe, "the endpoint's stdin is closed")
        })?;
        match ack_rx.recv_timeout(STDIO_WRITE_TIMEOUT) {
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the endpoint stopped reading its input",
            )),
            Err(RecvTimeoutError::Disconnected) => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the endpoint's stdin is closed",
            )),
        }
    }

    fn half_close(&mut self) -> io::Result<()> {
        self.stdin = None;
        Ok(())
    }

    fn recv(&mut self, deadline: Instant) -> Recv {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(wait) {
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) => Recv::Timeout,
            Err(RecvTimeoutError::Disconnected) => Recv::Eof,
        }
    }

    fn describe(&self) -> String {
        "stdio".into()
    }
}

/// Bounds the next socket read by `deadline`; a deadline already past is a timeout.
fn read_until(sock: &TcpStream, deadline: Instant) -> Result<(), Recv> {
    let wait = deadline.saturating_duration_since(Instant::now());
    if wait.is_zero() {
        return Err(Recv::Timeout);
    }
    sock.set_read_timeout(Some(wait))
        .map_err(|e| Recv::Broken(e.to_string()))
}

/// What a failed socket read means: the read timeout expiring is a timeout (reported as
/// `WouldBlock` or `TimedOut` depending on the platform), anything else a broken connection.
fn read_failure(e: &io::Error) -> Recv {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Recv::Timeout,
        _ => Recv::Broken(e.to_string()),
    }
}

fn timed_read(sock: &mut TcpStream, deadline: Instant, buf: &mut [u8]) -> Result<usize, Recv> {
    read_until(sock, deadline)?;
    match sock.read(buf) {
        Ok(n) => Ok(n),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(usize::MAX),
        Err(e) => Err(read_failure(&e)),
    }
}

/// Connects a TCP socket with a deadline.
pub(crate) fn tcp_connect(addr: &str, timeout: Duration) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{addr}: no address"));
    for a in addr.to_socket_addrs()? {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => {
                s.set_nodelay(true)?;
                // A SUT that stops reading must not block the harness forever.
                s.set_write_timeout(Some(timeout))?;
                return Ok(s);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Plain TCP.
pub struct TcpWire {
    sock: TcpStream,
    addr: String,
    /// The read buffer, kept between reads: a fresh zeroed 64 KiB per read showed up in
    /// the per-vector cost of the session method.
    buf: Vec<u8>,
}

impl TcpWire {
    /// Wraps an accepted connection.
    pub fn from_stream(sock: TcpStream, label: &str) -> Self {
        TcpWire {
            sock,
            addr: label.to_owned(),
            buf: Vec::new(),
        }
    }

    /// Connects.
    pub fn connect(addr: &str, timeout: Duration) -> io::Result<Self> {
        Ok(TcpWire {
            sock: tcp_connect(addr, timeout)?,
            addr: addr.to_owned(),
            buf: Vec::new(),
        })
    }
}

impl Wire for TcpWire {
    fn send(&mut self, b: &[u8]) -> io::Result<()> {
        self.sock.write_all(b)
    }

    fn half_close(&mut self) -> io::Result<()> {
        self.sock.shutdown(Shutdown::Write)
    }

    fn recv(&mut self, deadline: Instant) -> Recv {
        self.buf.resize(READ_CHUNK, 0);
        loop {
            return match timed_read(&mut self.sock, deadline, &mut self.buf) {
                Ok(usize::MAX) => continue,
                Ok(0) => Recv::Eof,
                Ok(n) => Recv::Data(self.buf[..n].to_vec()),
                Err(r) => r,
            };
        }
    }

    fn describe(&self) -> String {
        format!("tcp {}", self.addr)
    }
}

/// Which certificate the harness presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientIdentity {
    /// The valid client certificate.
    Valid,
    /// No certificate.
    None,
    /// The expired one.
    Expired,
    /// The one from an untrusted CA.
    Untrusted,
}

/// TLS client settings for one connection.
#[derive(Debug, Clone)]
pub struct TlsOptions {
    /// Name to verify the server certificate against.
    pub server_name: String,
    /// Trust anchor for the server certificate (PEM).
    pub ca: std::path::PathBuf,
    /// Client certificate and key (PEM), when presenting one.
    pub client: Option<(std::path::PathBuf, std::path::PathBuf)>,
    /// Offer only TLS 1.2.
    pub tls12_only: bool,
}

/// Setting up TLS failed before any octet was exchanged.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// A PEM file could not be read.
    #[error("{0}: {1}")]
    Pem(String, String),
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
    /// Bad server name.
    #[error("server name {0:?} is not valid")]
    Name(String),
    /// The TCP connection failed.
    #[error("connect {0}: {1}")]
    Connect(String, io::Error),
}

fn certs(p: &Path) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    CertificateDer::pem_file_iter(p)
        .and_then(|i| i.collect::<Result<Vec<_>, _>>())
        .map_err(|e| TlsSetupError::Pem(p.display().to_string(), e.to_string()))
}

/// Builds the rustls client configuration.
pub(crate) fn client_config(o: &TlsOptions) -> Result<rustls::ClientConfig, TlsSetupError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions: &[&rustls::SupportedProtocolVersion] = if o.tls12_only {
        &[&rustls::version::TLS12]
    } else {
        &[&rustls::version::TLS13, &rustls::version::TLS12]
    };
    let mut roots = rustls::RootCertStore::empty();
    for c in certs(&o.ca)? {
        roots.add(c)?;
    }
    let b = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)?
        .with_root_certificates(roots);
    Ok(match &o.client {
        Some((cert, key)) => {
            let k = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| TlsSetupError::Pem(key.display().to_string(), e.to_string()))?;
            b.with_client_auth_cert(certs(cert)?, k)?
        }
        None => b.with_no_client_auth(),
    })
    .map(|mut cfg| {
        // Every connection does a full handshake, as a fresh peer would: a resumed session
        // would skip the certificate checks the S1 vectors are about.
        cfg.resumption = rustls::client::Resumption::disabled();
        cfg
    })
}

/// TLS over TCP, driven by hand so reads keep their deadlines and the raw socket stays
/// reachable for forged records.
pub struct TlsWire {
    conn: rustls::ClientConnection,
    sock: TcpStream,
    addr: String,
    /// The last octets written to the socket after the handshake, for replay vectors.
    last_written: Vec<u8>,
    /// The plaintext read buffer, kept between reads (as [`TcpWire`]'s).
    buf: Vec<u8>,
}

impl TlsWire {
    /// Connects and starts the handshake (it completes on the first exchange).
    /// `cfg` is [`client_config`] of `o`, which a caller opening many connections builds once.
    pub fn connect(
        addr: &str,
        o: &TlsOptions,
        cfg: Arc<rustls::ClientConfig>,
        timeout: Duration,
    ) -> Result<Self, TlsSetupError> {
        let name = ServerName::try_from(o.server_name.clone())
            .map_err(|_| TlsSetupError::Name(o.server_name.clone()))?;
        let conn = rustls::ClientConnection::new(cfg, name)?;
        let sock =
            tcp_connect(addr, timeout).map_err(|e| TlsSetupError::Connect(addr.to_owned(), e))?;
        Ok(TlsWire {
            conn,
            sock,
            addr: addr.to_owned(),
            last_written: Vec::new(),
            buf: Vec::new(),
        })
    }

    fn flush_tls(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            let mut out = Vec::new();
            self.conn.write_tls(&mut out)?;
            if !self.conn.is_handshaking() && !out.is_empty() {
                self.last_written.clone_from(&out);
            }
            self.sock.write_all(&out)?;
        }
        Ok(())
    }

    /// Drives the handshake to completion (or failure) within `deadline`.
    pub fn handshake(&mut self, deadline: Instant) -> Result<(), Recv> {
        while self.conn.is_handshaking() {
            self.flush_tls()
                .map_err(|e| Recv::Broken(format!("TLS handshake: {e}")))?;
            if !self.conn.is_handshaking() {
                break;
            }
            if self.conn.wants_read() {
                self.read_records(deadline)?;
            }
        }
        self.flush_tls()
            .map_err(|e| Recv::Broken(format!("TLS handshake: {e}")))
    }

    fn read_records(&mut self, deadline: Instant) -> Result<(), Recv> {
        read_until(&self.sock, deadline)?;
        match self.conn.read_tls(&mut self.sock) {
            Ok(0) => Err(Recv::Eof),
            Ok(_) => {
                self.conn
                    .process_new_packets()
                    .map_err(|e| Recv::Broken(format!("TLS: {e}")))?;
                Ok(())
            }
            Err(e) => Err(read_failure(&e)),
        }
    }
}

impl Wire for TlsWire {
    fn send(&mut self, b: &[u8]) -> io::Result<()> {
        // rustls buffers a bounded amount of plaintext: feed it in pieces and push the
        // records out as the buffer fills.
        let mut off = 0;
        while off < b.len() {
            let n = self.conn.writer().write(&b[off..])?;
            off += n;
            self.flush_tls()?;
            if n == 0 && !self.conn.wants_write() {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "TLS connection accepts no more data",
                ));
            }
        }
        self.flush_tls()
    }

    fn half_close(&mut self) -> io::Result<()> {
        self.conn.send_close_notify();
        self.flush_tls()?;
        self.sock.shutdown(Shutdown::Write)
    }

    fn recv(&mut self, deadline: Instant) -> Recv {
        self.buf.resize(READ_CHUNK, 0);
        loop {
            match self.conn.reader().read(&mut self.buf) {
                Ok(0) => return Recv::Eof,
                Ok(n) => return Recv::Data(self.buf[..n].to_vec()),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Recv::Eof,
                Err(e) => return Recv::Broken(e.to_string()),
            }
            if let Err(e) = self.flush_tls() {
                return Recv::Broken(e.to_string());
            }
            if let Err(r) = self.read_records(deadline) {
                return r;
            }
        }
    }

    fn send_raw(&mut self, b: &[u8]) -> io::Result<()> {
        self.sock.write_all(b)
    }

    fn replay_last_record(&mut self) -> io::Result<Vec<u8>> {
        if self.last_written.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no record has been sent yet",
            ));
        }
        self.sock.write_all(&self.last_written)?;
        Ok(self.last_written.clone())
    }

    fn describe(&self) -> String {
        format!("tls {}", self.addr)
    }
}
