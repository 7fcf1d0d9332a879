//! Reaching the endpoint under test: starting and supervising it (TCP/TLS endpoints once
//! per run, stdio endpoints once per vector), the test PKI, the TLS options a vector asks
//! for, the connection itself and, in the intermediary topology, the harness's upstream
//! listener.

use crate::catalog::vector::{ClientCert, ConnectSpec, Topology};
use crate::connect::pki::{self, Pki, PkiError};
use crate::connect::process::{self, ProcessError, Supervised};
use crate::connect::wire::{StdioWire, TcpWire, TlsOptions, TlsWire, Wire};
use crate::sut::{PkiSource, Reach, SessionSpec, Transport};
use std::collections::BTreeMap;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Setting up the endpoint or a connection to it failed.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A file or socket operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The test PKI could not be generated.
    #[error(transparent)]
    Pki(#[from] PkiError),
    /// The endpoint process could not be started.
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// The TLS client could not be set up.
    #[error(transparent)]
    Tls(#[from] crate::connect::wire::TlsSetupError),
    /// Something the connection needs is not in the manifest or the PKI.
    #[error("{0}")]
    Missing(&'static str),
    /// The intermediary did not connect to the harness's upstream listener.
    #[error("no upstream connection within {0} ms")]
    NoUpstream(u128),
}

impl SetupError {
    /// Whether the endpoint's process could not be started at all: no protocol was tested.
    pub fn not_started(&self) -> bool {
        matches!(self, SetupError::Process(ProcessError::Spawn { .. }))
    }
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> SetupError {
    let what = what.into();
    move |source| SetupError::Io { what, source }
}

/// The endpoint under test, as the session method reaches it.
pub struct Endpoint {
    /// How it is reached and read.
    pub spec: SessionSpec,
    reach: Reach,
    base: PathBuf,
    work: PathBuf,
    pki: Option<Pki>,
    server: Option<Supervised>,
    addr: Option<String>,
    listener: Option<TcpListener>,
    /// TLS client configurations built so far, per certificate choice and TLS 1.2-only:
    /// each vector opens its own connection, and reading the PEM files and building the
    /// root store again for each was needless work.
    tls_configs: Vec<((ClientCert, bool), Arc<rustls::ClientConfig>)>,
}

impl Endpoint {
    /// Prepares to reach the endpoint: generates the PKI when the manifest asks for one and
    /// opens the upstream listener of the intermediary topology. `work` holds logs, port
    /// files and the PKI; `base` is the manifest's directory.
    pub fn new(
        spec: SessionSpec,
        reach: Reach,
        base: PathBuf,
        work: &Path,
    ) -> Result<Self, SetupError> {
        std::fs::create_dir_all(work).map_err(io(work.display().to_string()))?;
        let pki = match &spec.tls {
            Some(t) if t.pki == PkiSource::Generate => Some(pki::generate(&work.join("pki"))?),
            _ => None,
        };
        let listener = if spec.topology == Topology::Intermediary {
            let l = TcpListener::bind("127.0.0.1:0").map_err(io("upstream listener"))?;
            l.set_nonblocking(true).map_err(io("upstream listener"))?;
            Some(l)
        } else {
            None
        };
        Ok(Endpoint {
            addr: match &reach {
                Reach::Address(a) => Some(a.clone()),
                Reach::Start(_) => None,
            },
            spec,
            reach,
            base,
            work: work.to_owned(),
            pki,
            tls_configs: Vec::new(),
            server: None,
            listener,
        })
    }

    /// The transport, in words.
    pub fn transport(&self) -> &'static str {
        self.spec.transport.as_str()
    }

    fn vars(&self) -> BTreeMap<&'static str, String> {
        let mut v = BTreeMap::new();
        v.insert("PORT_FILE", self.work.join("port").display().to_string());
        if let Some(a) = self.listener.as_ref().and_then(|l| l.local_addr().ok()) {
            v.insert("UPSTREAM", a.to_string());
        }
        if let Some(p) = &self.pki {
            v.insert("TLS_CERT", p.server_cert.display().to_string());
            v.insert("TLS_KEY", p.server_key.display().to_string());
            v.insert("TLS_CLIENT_CA", p.ca.display().to_string());
            v.insert("TLS_CA", p.ca.display().to_string());
        }
        if let Some(id) = self.identity() {
            v.insert("TLS_CLIENT_IDENTITY", id);
        }
        if let Some(id) = self.second_identity() {
            v.insert("TLS_SECOND_IDENTITY", id);
        }
        v
    }

    fn log(&self) -> PathBuf {
        self.work.join("sut-stderr.log")
    }

    /// Starts the TCP/TLS endpoint if it is not running. Returns a note when it had died.
    pub fn ensure_server(&mut self) -> Result<Option<String>, SetupError> {
        let start = match (&self.reach, self.spec.transport) {
            (Reach::Start(s), Transport::Tcp | Transport::Tls) => s.clone(),
            _ => return Ok(None),
        };
        let mut note = None;
        if let Some(s) = &mut self.server {
            match s.exited() {
                None => return Ok(None),
                Some(status) => note = Some(format!("the endpoint had {status}; restarted")),
            }
        }
        self.server = None;
        let port_file = self.work.join("port");
        let _ = std::fs::remove_file(&port_file);
        let mut proc = process::spawn(&start, &self.base, &self.vars(), false, &self.log())?;
        let port = process::wait_port_file(
            &port_file,
            &mut proc,
            Duration::from_millis(self.spec.timing.start_ms),
        )?;
        self.addr = Some(format!("127.0.0.1:{port}"));
        self.server = Some(proc);
        Ok(note)
    }

    /// How the long-running endpoint ended, if it has (a crash during the vector).
    pub fn server_exited(&mut self) -> Option<process::Exit> {
        self.server.as_mut().and_then(|s| s.exited())
    }

    /// The process id of the long-running endpoint the harness started (TCP/TLS), if any:
    /// the load mode samples its memory and descriptors.
    pub fn server_pid(&self) -> Option<u32> {
        self.server.as_ref().map(|s| s.pid())
    }

    fn tls_options(&self, c: &ConnectSpec) -> Result<TlsOptions, SetupError> {
        let t = self
            .spec
            .tls
            .as_ref()
            .ok_or(SetupError::Missing("no tls settings"))?;
        let (ca, valid) = match &self.pki {
            Some(p) => (
                p.ca.clone(),
                Some((p.client_cert.clone(), p.client_key.clone())),
            ),
            None => (
                self.base.join(
                    t.ca.as_ref()
                        .ok_or(SetupError::Missing("tls.ca is needed with pki: files"))?,
                ),
                t.client_cert
                    .as_ref()
                    .zip(t.client_key.as_ref())
                    .map(|(c, k)| (self.base.join(c), self.base.join(k))),
            ),
        };
        let generated = |what| self.pki.as_ref().ok_or(SetupError::Missing(what));
        let client = match c.client_cert.unwrap_or(ClientCert::Valid) {
            ClientCert::Valid => valid,
            ClientCert::None => None,
            ClientCert::Expired => {
                let p = generated("an expired client certificate needs a generated PKI")?;
                Some((p.expired_cert.clone(), p.expired_key.clone()))
            }
            ClientCert::Untrusted => {
                let p = generated("an untrusted client certificate needs a generated PKI")?;
                Some((p.untrusted_cert.clone(), p.untrusted_key.clone()))
            }
            ClientCert::Second => {
                let declared = t
                    .second_identity
                    .as_ref()
                    .ok_or(SetupError::Missing("no tls.second_identity"))?;
                match &self.pki {
                    Some(p) => Some((p.second_cert.clone(), p.second_key.clone())),
                    None => Some((
                        self.base.join(declared.client_cert.as_ref().ok_or(
                            SetupError::Missing(
                                "tls.second_identity.client_cert is needed with pki: files",
                            ),
                        )?),
                        self.base
                            .join(declared.client_key.as_ref().ok_or(SetupError::Missing(
                                "tls.second_identity.client_key is needed with pki: files",
                            ))?),
                    )),
                }
            }
        };
        Ok(TlsOptions {
            server_name: t.server_name.clone(),
            ca,
            client,
            tls12_only: c.tls12_only,
        })
    }

    /// Opens this vector's connection (and, for stdio, its process).
    pub fn open(
        &mut self,
        c: &ConnectSpec,
    ) -> Result<(Box<dyn Wire>, Option<Supervised>), SetupError> {
        let timeout = Duration::from_millis(self.spec.timing.step_ms);
        let tcp = |addr: &str| -> Result<Box<dyn Wire>, SetupError> {
            Ok(Box::new(
                TcpWire::connect(addr, timeout).map_err(io(format!("connect {addr}")))?,
            ))
        };
        match self.spec.transport {
            Transport::Stdio => {
                let Reach::Start(start) = &self.reach else {
                    return Err(SetupError::Missing("a stdio endpoint needs `start`"));
                };
                let mut p = process::spawn(start, &self.base, &self.vars(), true, &self.log())?;
                let (i, o) = p
                    .take_pipes()
                    .ok_or(SetupError::Missing("stdio pipes unavailable"))?;
                Ok((Box::new(StdioWire::new(i, o)), Some(p)))
            }
            Transport::Tcp => {
                let addr = self.addr.clone().ok_or(SetupError::Missing("no address"))?;
                Ok((tcp(&addr)?, None))
            }
            Transport::Tls => {
                let addr = self.addr.clone().ok_or(SetupError::Missing("no address"))?;
                if c.plaintext {
                    return Ok((tcp(&addr)?, None));
                }
                let o = self.tls_options(c)?;
                let key = (c.client_cert.unwrap_or(ClientCert::Valid), c.tls12_only);
                let cfg = match self.tls_configs.iter().find(|(k, _)| *k == key) {
                    Some((_, cfg)) => cfg.clone(),
                    None => {
                        let cfg = Arc::new(crate::connect::wire::client_config(&o)?);
                        self.tls_configs.push((key, cfg.clone()));
                        cfg
                    }
                };
                let mut w = TlsWire::connect(&addr, &o, cfg, timeout)?;
                // A refused handshake is an observation (the channel closed), not a setup
                // error: let the steps see it as a closed connection.
                let _ = w.handshake(Instant::now() + timeout);
                Ok((Box::new(w), None))
            }
        }
    }

    /// In the intermediary topology, waits for the endpoint's upstream connection.
    pub fn accept_upstream(&self) -> Result<Option<Box<dyn Wire>>, SetupError> {
        let Some(l) = &self.listener else {
            return Ok(None);
        };
        let d = Duration::from_millis(self.spec.timing.step_ms);
        let s = accept_within(l, d)?;
        Ok(Some(Box::new(TcpWire::from_stream(s, "upstream"))))
    }

    /// How the endpoint names a certificate's holder (`tls.identity_form`).
    fn identity_form(&self) -> crate::sut::file::IdentityForm {
        self.spec
            .tls
            .as_ref()
            .map(|t| t.identity_form.clone())
            .unwrap_or_default()
    }

    /// The identity the endpoint should surface for the harness's second client certificate,
    /// when the manifest declares one.
    pub fn second_identity(&self) -> Option<String> {
        let declared = self.spec.tls.as_ref()?.second_identity.as_ref()?;
        match &self.pki {
            Some(_) => Some(
                self.identity_form()
                    .apply(pki::SECOND_CLIENT_IDENTITY, pki::SECOND_CLIENT_CN),
            ),
            None => declared.expected_identity.clone(),
        }
    }

    /// The identity the endpoint should surface for the harness's client certificate.
    pub fn identity(&self) -> Option<String> {
        match &self.pki {
            Some(_) => Some(
                self.identity_form()
                    .apply(pki::CLIENT_IDENTITY, pki::CLIENT_CN),
            ),
            None => self
                .spec
                .tls
                .as_ref()
                .and_then(|t| t.expected_identity.clone()),
        }
    }
}

fn accept_within(l: &TcpListener, d: Duration) -> Result<TcpStream, SetupError> {
    let until = Instant::now() + d;
    loop {
        match l.accept() {
            Ok((s, _)) => {
                let prep = || -> std::io::Result<TcpStream> {
                    s.set_nonblocking(false)?;
                    s.set_nodelay(true)?;
                    s.set_write_timeout(Some(d))?;
                    Ok(s)
                };
                return prep().map_err(io("upstream connection"));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= until {
                    return Err(SetupError::NoUpstream(d.as_millis()));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(io("upstream listener")(e)),
        }
    }
}
