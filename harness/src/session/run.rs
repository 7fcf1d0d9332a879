//! The session method: the harness is the SUT's peer on a real connection and judges only
//! what it observes (reply frames, error frames, the connection closing, silence within a
//! deadline). One fresh connection per vector; a stdio endpoint is one process per vector,
//! a TCP/TLS endpoint is started once and restarted after a crash.

use super::pki::{self, Pki};
use super::process::{self, Supervised};
use super::wire::{Recv, StdioWire, TcpWire, TlsOptions, TlsWire, Wire};
use crate::catalog::vector::{ClientCert, ConnectSpec, Method, Topology};
use crate::catalog::{Catalog, LoadedVector};
use crate::engine::{applicability, transcript_hex};
use crate::evaluate::{describe_expected, judge_codec_step};
use crate::materialize::{self, Action, ConcreteStep, Expectation, MaterialiseError};
use crate::model::{Dir, TranscriptEntry, VectorResult, Verdict};
use crate::sut::{RejectMode, SessionSpec, Sut, Transport};
use bytes::Bytes;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use swp_core::frame::FrameDecoder;
use swp_core::{e1, Envelope, Limits};
use swp_ref::testee::proto::Event;

/// What the harness saw on the connection.
#[derive(Debug, Clone)]
enum Obs {
    /// An error frame carrying a code; the frame itself, for reply expectations.
    Error {
        code: String,
        msg_id: Bytes,
        frame: Box<Envelope>,
    },
    /// Any other frame.
    Reply(Envelope),
    /// The connection ended (EOF, reset, TLS alert); the reason.
    Closed(String),
    /// The SUT sent octets that are not a valid frame.
    Garbage(String),
}

/// One vector's conversation.
struct Conv<'a> {
    wire: Box<dyn Wire>,
    spec: &'a SessionSpec,
    frames: FrameDecoder,
    reply_limits: Limits,
    start: Instant,
    hard_deadline: Instant,
    read_total: u64,
    transcript: Vec<TranscriptEntry>,
    closed: Option<String>,
    /// The vector tests the core layer: a profile-level reject of an accepted frame shows
    /// the core accepted and dispatched it.
    core_layer: bool,
    /// The harness's upstream connection (intermediary topology).
    upstream: Option<Box<dyn Wire>>,
}

fn accept_within(l: &std::net::TcpListener, d: Duration) -> Result<std::net::TcpStream, String> {
    let until = Instant::now() + d;
    loop {
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).map_err(|e| e.to_string())?;
                s.set_nodelay(true).map_err(|e| e.to_string())?;
                s.set_write_timeout(Some(d)).map_err(|e| e.to_string())?;
                return Ok(s);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= until {
                    return Err(format!(
                        "no upstream connection within {} ms",
                        d.as_millis()
                    ));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Reads `n` octets from one side within `deadline`: what arrived, and why it stopped short.
fn read_exact_raw(w: &mut dyn Wire, n: usize, deadline: Instant) -> (Vec<u8>, Option<String>) {
    let mut got = Vec::new();
    while got.len() < n {
        let why = match w.recv(deadline) {
            Recv::Data(d) => {
                got.extend_from_slice(&d);
                continue;
            }
            Recv::Eof => format!("the connection closed after {} of {n} octets", got.len()),
            Recv::Broken(e) => format!(
                "the connection broke after {} of {n} octets: {e}",
                got.len()
            ),
            Recv::Timeout => format!("{} of {n} octets arrived before the deadline", got.len()),
        };
        return (got, Some(why));
    }
    (got, None)
}

/// Whether a code is decided above the core (by the profile the frame was dispatched to).
fn profile_level(code: &str) -> bool {
    use swp_core::ErrorCode as C;
    matches!(
        code.parse::<C>(),
        Ok(C::UnsupportedMsgType | C::InvalidMcpPayload | C::InvalidProfilePayload | C::NotFound)
    )
}

/// A failed step: verdict and why.
struct Stop(Verdict, String);

impl Conv<'_> {
    fn t(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn note(&mut self, s: impl Into<String>) {
        let t = self.t();
        self.transcript.push(TranscriptEntry {
            t_ms: t,
            dir: Dir::Note,
            data: s.into(),
        });
    }

    fn send(&mut self, b: &[u8]) -> Result<(), String> {
        let t = self.t();
        self.transcript.push(TranscriptEntry {
            t_ms: t,
            dir: Dir::Sent,
            data: transcript_hex(b),
        });
        self.wire.send(b).map_err(|e| e.to_string())
    }

    fn classify(&self, env: Envelope) -> Obs {
        if let Some(ef) = &self.spec.reject_signal.error_frame {
            if env.profile_id == ef.profile_id && env.msg_type == ef.msg_type {
                let code = serde_json::from_slice::<serde_json::Value>(&env.payload)
                    .ok()
                    .and_then(|v| {
                        v.pointer(&ef.code_pointer)
                            .and_then(|c| c.as_str())
                            .map(str::to_owned)
                    });
                if let Some(code) = code {
                    return Obs::Error {
                        code,
                        msg_id: env.msg_id.clone(),
                        frame: Box::new(env),
                    };
                }
            }
        }
        Obs::Reply(env)
    }

    /// The next observation before `deadline` (bounded by the vector's hard deadline), or
    /// `None` on timeout.
    fn next(&mut self, deadline: Instant) -> Option<Obs> {
        let deadline = deadline.min(self.hard_deadline);
        loop {
            if let Some(c) = &self.closed {
                return Some(Obs::Closed(c.clone()));
            }
            match self.frames.next_body() {
                Ok(Some(body)) => {
                    return Some(match e1::decode(&body, &self.reply_limits) {
                        Ok(env) => {
                            let o = self.classify(env);
                            let t = self.t();
                            let d = match &o {
                                Obs::Error { code, msg_id, .. } => {
                                    format!("error frame {code} msg_id={}", hex::encode(msg_id))
                                }
                                Obs::Reply(e) => format!(
                                    "frame profile_id={} msg_type={} msg_id={} payload={}",
                                    e.profile_id,
                                    e.msg_type,
                                    hex::encode(&e.msg_id),
                                    transcript_hex(&e.payload)
                                ),
                                _ => String::new(),
                            };
                            self.transcript.push(TranscriptEntry {
                                t_ms: t,
                                dir: Dir::Note,
                                data: d,
                            });
                            o
                        }
                        Err(e) => {
                            Obs::Garbage(format!("the SUT sent a frame that does not decode: {e}"))
                        }
                    });
                }
                Ok(None) => {}
                Err(e) => {
                    self.closed = Some("stopped reading".into());
                    return Some(Obs::Garbage(format!(
                        "the SUT's output is not valid framing: {e}"
                    )));
                }
            }
            match self.wire.recv(deadline) {
                Recv::Data(d) => {
                    let t = self.t();
                    self.transcript.push(TranscriptEntry {
                        t_ms: t,
                        dir: Dir::Received,
                        data: transcript_hex(&d),
                    });
                    self.read_total += d.len() as u64;
                    if self.read_total > self.spec.timing.max_read_bytes {
                        self.closed = Some("cut off".into());
                        return Some(Obs::Garbage(format!(
                            "the SUT sent more than {} octets in one vector; cut off",
                            self.spec.timing.max_read_bytes
                        )));
                    }
                    self.frames.feed(&d);
                }
                Recv::Eof => {
                    self.note("connection closed by the SUT");
                    self.closed = Some("closed".into());
                }
                Recv::Broken(why) => {
                    self.note(format!("connection broken: {why}"));
                    self.closed = Some(format!("broken: {why}"));
                }
                Recv::Timeout => return None,
            }
        }
    }
}

fn ids_in(b: &[u8], limits: &Limits) -> Vec<Bytes> {
    let mut rest = Bytes::copy_from_slice(b);
    let mut out = Vec::new();
    while let Ok(Some((body, tail))) = swp_core::frame::take_frame(&rest, limits) {
        if let Ok(e) = e1::decode(&body, limits) {
            out.push(e.msg_id);
        }
        rest = tail;
    }
    out
}

/// Whether `actual` contains `expected`: objects by subset, everything else exactly.
pub fn json_contains(actual: &serde_json::Value, expected: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|x| json_contains(x, v))),
        _ => actual == expected,
    }
}

fn substitute(v: &serde_json::Value, identity: &str) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) if s == "${CLIENT_IDENTITY}" => Value::String(identity.to_owned()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), substitute(x, identity)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute(x, identity)).collect()),
        other => other.clone(),
    }
}

/// Runs vectors by the session method against one endpoint.
pub struct SessionEngine<'a> {
    catalog: &'a Catalog,
    sut: &'a Sut,
    spec: SessionSpec,
    base: PathBuf,
    work: PathBuf,
    pki: Option<Pki>,
    server: Option<Supervised>,
    addr: Option<String>,
    probes: u64,
    vector_start_wall: u64,
    listener: Option<std::net::TcpListener>,
}

impl<'a> SessionEngine<'a> {
    /// Prepares the engine: generates the PKI when the manifest asks for one. `work` holds
    /// logs, port files and the PKI.
    pub fn new(catalog: &'a Catalog, sut: &'a Sut, work: &Path) -> Result<Self, String> {
        let spec = sut
            .manifest
            .session
            .clone()
            .ok_or("the manifest has no `session` section")?;
        std::fs::create_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
        let pki = match &spec.tls {
            Some(t) if t.pki == crate::sut::PkiSource::Generate => {
                Some(pki::generate(&work.join("pki")).map_err(|e| e.to_string())?)
            }
            _ => None,
        };
        process::install_interrupt_handler();
        let listener = if spec.topology == Topology::Intermediary {
            let l = std::net::TcpListener::bind("127.0.0.1:0")
                .map_err(|e| format!("upstream listener: {e}"))?;
            l.set_nonblocking(true).map_err(|e| e.to_string())?;
            Some(l)
        } else {
            None
        };
        Ok(SessionEngine {
            listener,
            catalog,
            sut,
            addr: spec.address.clone(),
            spec,
            base: sut.base_dir(),
            work: work.to_owned(),
            pki,
            server: None,
            probes: 0,
            vector_start_wall: 0,
        })
    }

    /// What the connector reports, for the report header.
    pub fn describe(&self) -> String {
        format!(
            "{} {} ({:?} endpoint, session method)",
            self.sut.manifest.name, self.sut.manifest.version, self.spec.transport
        )
        .replace("Stdio", "stdio")
        .replace("Tcp", "tcp")
        .replace("Tls", "tls")
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
        v
    }

    fn log(&self) -> PathBuf {
        self.work.join("sut-stderr.log")
    }

    /// Starts the TCP/TLS endpoint if it is not running. Returns a note when it had died.
    fn ensure_server(&mut self) -> Result<Option<String>, String> {
        if self.spec.transport == Transport::Stdio || self.spec.address.is_some() {
            return Ok(None);
        }
        let mut note = None;
        if let Some(s) = &mut self.server {
            match s.exited() {
                None => return Ok(None),
                Some(status) => note = Some(format!("the endpoint had {status}; restarted")),
            }
        }
        self.server = None;
        let start = self
            .sut
            .manifest
            .start
            .clone()
            .ok_or("no `start` for the endpoint")?;
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

    fn tls_options(&self, c: &ConnectSpec) -> Result<TlsOptions, String> {
        let t = self.spec.tls.as_ref().ok_or("no tls settings")?;
        let (ca, valid) = match &self.pki {
            Some(p) => (
                p.ca.clone(),
                Some((p.client_cert.clone(), p.client_key.clone())),
            ),
            None => (
                self.base
                    .join(t.ca.as_ref().ok_or("tls.ca is needed with pki: files")?),
                t.client_cert
                    .as_ref()
                    .zip(t.client_key.as_ref())
                    .map(|(c, k)| (self.base.join(c), self.base.join(k))),
            ),
        };
        let client = match c.client_cert.unwrap_or(ClientCert::Valid) {
            ClientCert::Valid => valid,
            ClientCert::None => None,
            ClientCert::Expired => {
                let p = self
                    .pki
                    .as_ref()
                    .ok_or("an expired client certificate needs a generated PKI")?;
                Some((p.expired_cert.clone(), p.expired_key.clone()))
            }
            ClientCert::Untrusted => {
                let p = self
                    .pki
                    .as_ref()
                    .ok_or("an untrusted client certificate needs a generated PKI")?;
                Some((p.untrusted_cert.clone(), p.untrusted_key.clone()))
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
    fn open(&mut self, c: &ConnectSpec) -> Result<(Box<dyn Wire>, Option<Supervised>), String> {
        let timeout = Duration::from_millis(self.spec.timing.step_ms);
        match self.spec.transport {
            Transport::Stdio => {
                let start = self.sut.manifest.start.clone().ok_or("no `start`")?;
                let mut p = process::spawn(&start, &self.base, &self.vars(), true, &self.log())?;
                let (i, o) = p.take_pipes().ok_or("stdio pipes unavailable")?;
                Ok((Box::new(StdioWire::new(i, o)), Some(p)))
            }
            Transport::Tcp => {
                let addr = self.addr.clone().ok_or("no address")?;
                Ok((
                    Box::new(
                        TcpWire::connect(&addr, timeout)
                            .map_err(|e| format!("connect {addr}: {e}"))?,
                    ),
                    None,
                ))
            }
            Transport::Tls => {
                let addr = self.addr.clone().ok_or("no address")?;
                if c.plaintext {
                    return Ok((
                        Box::new(
                            TcpWire::connect(&addr, timeout)
                                .map_err(|e| format!("connect {addr}: {e}"))?,
                        ),
                        None,
                    ));
                }
                let o = self.tls_options(c)?;
                let mut w = TlsWire::connect(&addr, &o, timeout)?;
                // A refused handshake is an observation (the channel closed), not a setup
                // error: let the steps see it as a closed connection.
                let _ = w.handshake(Instant::now() + timeout);
                Ok((Box::new(w), None))
            }
        }
    }

    fn identity(&self) -> Option<String> {
        match &self.pki {
            Some(_) => Some(pki::CLIENT_IDENTITY.to_owned()),
            None => self
                .spec
                .tls
                .as_ref()
                .and_then(|t| t.expected_identity.clone()),
        }
    }

    fn base_result(&self, lv: &LoadedVector) -> VectorResult {
        crate::engine::result_base(self.catalog, lv)
    }

    /// Runs one vector.
    pub fn run_one(&mut self, lv: &LoadedVector) -> VectorResult {
        let mut r = self.base_result(lv);
        let v = &lv.vector;
        if let Some(why) = applicability(v, self.sut) {
            r.detail = Some(why);
            return r;
        }
        if !v.methods.contains(&Method::Session) {
            r.detail = Some("codec method only; this run uses the session method".into());
            return r;
        }
        let want = v.topology.unwrap_or_default();
        if want != self.spec.topology {
            r.detail = Some(
                format!(
                    "needs the {want:?} topology; the SUT is set up as {:?}",
                    self.spec.topology
                )
                .to_lowercase(),
            );
            return r;
        }
        let connect = v.connect.clone().unwrap_or_default();
        if v.connect.is_some() && self.spec.transport != Transport::Tls {
            r.detail = Some("needs a TLS endpoint (the vector sets connection options)".into());
            return r;
        }
        let tls = self.spec.tls.clone();
        if connect.tls12_only && !tls.as_ref().is_some_and(|t| t.tls13_only) {
            r.detail = Some("needs an endpoint that requires TLS 1.3 (tls.tls13_only)".into());
            return r;
        }
        if matches!(
            connect.client_cert,
            Some(ClientCert::None | ClientCert::Expired | ClientCert::Untrusted)
        ) && !tls.as_ref().is_some_and(|t| t.client_auth)
        {
            r.detail = Some(
                "needs an endpoint that requires client certificates (tls.client_auth)".into(),
            );
            return r;
        }
        let uses_slow = v
            .steps
            .iter()
            .any(|s| s.send.as_ref().is_some_and(|x| x.slow_request.is_some()));
        if uses_slow && self.spec.slow_request.is_none() {
            r.detail = Some("needs a slow request in the manifest (session.slow_request)".into());
            return r;
        }
        let uses_identity = v
            .steps
            .iter()
            .any(|s| s.send.as_ref().is_some_and(|x| x.identity_probe));
        if uses_identity && (self.spec.identity_probe.is_none() || self.identity().is_none()) {
            r.detail =
                Some("needs an identity probe and a known client identity in the manifest".into());
            return r;
        }
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        self.vector_start_wall = now_ms;
        let params = self.sut.params(now_ms);
        let steps = match materialize::materialise(v, &params) {
            Ok(s) => s,
            Err(MaterialiseError::NotApplicable(why)) => {
                r.detail = Some(why);
                return r;
            }
            Err(MaterialiseError::Invalid(why)) => {
                r.verdict = Verdict::HarnessError;
                r.detail = Some(format!("vector cannot be materialised: {why}"));
                return r;
            }
        };
        r.method = Some("session".into());
        r.expected_error_code = steps.iter().flat_map(|s| &s.expect).find_map(|e| match e {
            Expectation::Reject { allowed, .. } => Some(allowed[0].as_str().to_owned()),
            _ => None,
        });
        let restart_note = match self.ensure_server() {
            Ok(n) => n,
            Err(e) => {
                r.verdict = Verdict::Crash;
                r.detail = Some(format!("the endpoint could not be started: {e}"));
                return r;
            }
        };
        let (wire, stdio_proc) = match self.open(&connect) {
            Ok(w) => w,
            Err(e) => {
                r.verdict = Verdict::HarnessError;
                r.detail = Some(format!("cannot connect: {e}"));
                return r;
            }
        };
        let upstream: Option<Box<dyn Wire>> = match &self.listener {
            Some(l) => match accept_within(l, Duration::from_millis(self.spec.timing.step_ms)) {
                Ok(s) => Some(Box::new(TcpWire::from_stream(s, "upstream"))),
                Err(e) => {
                    r.verdict = Verdict::Fail;
                    r.detail = Some(format!("the intermediary did not connect upstream: {e}"));
                    return r;
                }
            },
            None => None,
        };
        let max = self.sut.manifest.limits.max_frame_bytes;
        let reply_limits = Limits {
            max_frame_bytes: max,
            min_msg_id_bytes: 1,
            max_msg_id_bytes: usize::MAX,
            max_ext_bytes: usize::MAX,
            max_payload_bytes: usize::MAX,
        };
        let start = Instant::now();
        let mut conv = Conv {
            wire,
            spec: &self.spec,
            frames: FrameDecoder::new(reply_limits),
            reply_limits,
            start,
            hard_deadline: start + Duration::from_millis(self.spec.timing.vector_ms),
            read_total: 0,
            transcript: Vec::new(),
            closed: None,
            core_layer: matches!(v.namespace.as_str(), "core" | "e1" | "s1"),
            upstream,
        };
        if let Some(n) = restart_note {
            conv.note(n);
        }
        conv.note(format!("connected over {}", conv.wire.describe()));
        let identity = self.identity();
        let outcome = run_steps(
            &mut conv,
            &steps,
            &params,
            &mut self.probes,
            now_ms,
            identity.as_deref(),
            self.spec.identity_probe.as_ref(),
        );
        let mut transcript = std::mem::take(&mut conv.transcript);
        drop(conv);
        // Crash detection: did the endpoint die during the vector?
        let crashed = match stdio_proc {
            Some(mut p) => {
                let st = p.wait_exit(Duration::from_millis(20));
                st.filter(|s| !s.success)
            }
            None => self.server.as_mut().and_then(|s| s.exited()),
        };
        r.transcript = std::mem::take(&mut transcript);
        match outcome {
            Ok(summary) => {
                r.verdict = Verdict::Pass;
                r.expected = summary.0;
                r.observed = summary.1;
                r.observed_error_code = summary.2;
            }
            Err((Stop(verdict, why), exp, obs, code)) => {
                r.verdict = verdict;
                r.detail = Some(why);
                r.expected = exp;
                r.observed = obs;
                r.observed_error_code = code;
            }
        }
        if let Some(status) = crashed {
            if r.verdict != Verdict::Pass || self.spec.transport != Transport::Stdio {
                r.verdict = Verdict::Crash;
                r.detail = Some(format!(
                    "the endpoint {status} during the vector; {}",
                    r.detail.take().unwrap_or_default()
                ));
            }
        }
        if r.verdict == Verdict::Fail
            && r.detail
                .as_deref()
                .is_some_and(|d| d.starts_with("deadline"))
        {
            r.verdict = Verdict::Timeout;
        }
        r.pass = r.verdict == Verdict::Pass;
        r
    }

    /// Runs every vector of `plan`; stops early (keeping the results so far) when the run
    /// is interrupted.
    pub fn run(
        &mut self,
        plan: &[&LoadedVector],
        mut progress: impl FnMut(&VectorResult),
    ) -> Vec<VectorResult> {
        crate::engine::run_plan(plan, &mut progress, |lv| self.run_one(lv))
    }
}

type StepOutcome = Result<(String, String, Option<String>), (Stop, String, String, Option<String>)>;

/// Frames this vector sent and expects to be accepted, not yet confirmed.
struct Pending {
    label: String,
    ids: Vec<Bytes>,
}

fn fail(
    v: Verdict,
    why: impl Into<String>,
    exp: &str,
    obs: impl Into<String>,
) -> (Stop, String, String, Option<String>) {
    (Stop(v, why.into()), exp.to_owned(), obs.into(), None)
}

/// Confirms pending accepts: a probe (or a quiet window) with no error frame and no close.
/// Intermediate confirmations watch a quiet window (a probe would count against the
/// endpoint's rate limit and change what the next step tests); the final one also sends the
/// probe, proving the connection is alive after everything the vector sent.
fn sync(
    conv: &mut Conv<'_>,
    pending: &mut Vec<Pending>,
    params: &crate::expr::Params,
    probes: &mut u64,
    final_check: bool,
) -> Result<(), (Stop, String, String, Option<String>)> {
    if pending.is_empty() {
        return Ok(());
    }
    let exp = "accept";
    let label = pending.last().map(|p| p.label.clone()).unwrap_or_default();
    let step_ms = conv.spec.timing.step_ms;
    let probe = if final_check || conv.spec.reject_signal.mode == RejectMode::Close {
        conv.spec.probe.as_ref()
    } else {
        None
    };
    match probe {
        Some(probe) => {
            let (id, frame) =
                manifest_request(&probe.frame, params, probes, "swp-probe").map_err(|e| {
                    fail(
                        Verdict::HarnessError,
                        format!("probe cannot be built: {e}"),
                        exp,
                        "",
                    )
                })?;
            conv.note("probe: is the connection alive and were the frames above accepted?");
            if let Err(e) = conv.send(&frame) {
                return Err(fail(Verdict::Fail, format!("{label}the connection is closed (sending the probe failed: {e}); expected the frames to be accepted"), exp, "close"));
            }
            let deadline = Instant::now() + Duration::from_millis(step_ms);
            loop {
                let o = conv.next(deadline);
                if let Some(Obs::Reply(e)) = &o {
                    if answers_probe(e, &id, probe) {
                        break;
                    }
                }
                if o.is_none() {
                    return Err(fail(
                        Verdict::Fail,
                        format!("deadline: {label}the probe was not answered within {step_ms} ms"),
                        exp,
                        "silence",
                    ));
                }
                against_accepts(conv, o, pending, &label)?;
            }
        }
        None => {
            let deadline = Instant::now() + Duration::from_millis(conv.spec.timing.silence_ms);
            loop {
                let o = conv.next(deadline);
                if o.is_none() {
                    break;
                }
                against_accepts(conv, o, pending, &label)?;
            }
        }
    }
    pending.clear();
    Ok(())
}

/// Builds one of the manifest's request frames (probe, identity probe) with a fresh msg_id
/// from the run's counter: `<prefix><7 digits>`, 16 octets.
fn manifest_request(
    f: &crate::catalog::vector::FrameSpec,
    params: &crate::expr::Params,
    counter: &mut u64,
    prefix: &str,
) -> Result<(Bytes, Bytes), MaterialiseError> {
    *counter += 1;
    let id = Bytes::from(format!("{prefix}{:07}", *counter % 10_000_000).into_bytes());
    let frame = materialize::build_frame(f, params, Some(id.clone()))?;
    Ok((id, frame))
}

/// Whether `e` answers the probe sent with msg_id `id`.
fn answers_probe(e: &Envelope, id: &Bytes, probe: &crate::sut::ProbeSpec) -> bool {
    e.msg_id == *id && e.profile_id == probe.reply_profile_id && e.msg_type == probe.reply_msg_type
}

/// Judges one observation made while frames await confirmation as accepted: replies are
/// fine, profile-level rejects are fine for core vectors, anything else fails the accept.
fn against_accepts(
    conv: &mut Conv<'_>,
    o: Option<Obs>,
    pending: &[Pending],
    label: &str,
) -> Result<(), (Stop, String, String, Option<String>)> {
    let exp = "accept";
    match o {
        None | Some(Obs::Reply(_)) => Ok(()),
        Some(Obs::Error { code, .. }) if conv.core_layer && profile_level(&code) => {
            conv.note(format!(
                "{code} is a profile-level reject: the core accepted and dispatched the frame"
            ));
            Ok(())
        }
        Some(Obs::Error { code, msg_id, .. }) => {
            let at = pending
                .iter()
                .find(|p| p.ids.contains(&msg_id))
                .map_or(label, |p| p.label.as_str());
            Err((
                Stop(
                    Verdict::Fail,
                    format!("{at}rejected with {code}, expected accept"),
                ),
                exp.into(),
                format!("reject {code}"),
                Some(code),
            ))
        }
        Some(Obs::Closed(why)) => Err(fail(
            Verdict::Fail,
            format!("{label}connection {why}, expected the frames to be accepted"),
            exp,
            "close",
        )),
        Some(Obs::Garbage(g)) => Err(fail(Verdict::Fail, g, exp, "invalid output")),
    }
}

fn run_steps(
    conv: &mut Conv<'_>,
    steps: &[ConcreteStep],
    params: &crate::expr::Params,
    probes: &mut u64,
    now_origin: u64,
    identity: Option<&str>,
    identity_probe: Option<&crate::sut::IdentityProbe>,
) -> StepOutcome {
    let mut pending: Vec<Pending> = Vec::new();
    let mut last_code = None;
    let mut summary_exp = Vec::new();
    let mut summary_obs = Vec::new();
    let step_ms = conv.spec.timing.step_ms;
    let mode = conv.spec.reject_signal.mode;
    for (i, s) in steps.iter().enumerate() {
        let label = if steps.len() == 1 {
            String::new()
        } else if s.rep == 0 {
            format!("step {}: ", s.step + 1)
        } else {
            format!("step {} (repeat {}): ", s.step + 1, s.rep + 1)
        };
        let exp_desc = describe_expected(&s.expect);
        // Wait for the step's clock.
        let due = conv.start + Duration::from_millis(s.now_ms.saturating_sub(now_origin));
        let now = Instant::now();
        if due > now {
            if due > conv.hard_deadline {
                return Err(fail(
                    Verdict::Timeout,
                    format!("deadline: {label}the step is due after the vector's hard limit"),
                    &exp_desc,
                    "",
                ));
            }
            // Confirm what is pending before the clock moves on.
            sync(conv, &mut pending, params, probes, false)?;
            std::thread::sleep(due - Instant::now().min(due));
        }
        let only_accepts = !s.expect.is_empty()
            && s.expect
                .iter()
                .all(|e| matches!(e, Expectation::Accept { .. }));
        if !only_accepts {
            sync(conv, &mut pending, params, probes, false)?;
        }
        let mut sent_id = None;
        let mut last_sent: Vec<u8> = Vec::new();
        match &s.action {
            Action::Send(b) if s.upstream => {
                let t = conv.t();
                conv.transcript.push(TranscriptEntry {
                    t_ms: t,
                    dir: Dir::Sent,
                    data: format!("upstream {}", transcript_hex(b)),
                });
                match conv.upstream.as_mut() {
                    Some(u) => {
                        if let Err(e) = u.send(b) {
                            conv.note(format!("upstream send failed: {e}"));
                        }
                    }
                    None => {
                        return Err(fail(
                            Verdict::HarnessError,
                            "an upstream step needs the intermediary topology",
                            &exp_desc,
                            "",
                        ))
                    }
                }
                last_sent = b.to_vec();
            }
            Action::Send(b) => {
                let ids = ids_in(b, &conv.reply_limits);
                sent_id = ids.first().cloned();
                if let Err(e) = conv.send(b) {
                    conv.note(format!("send failed: {e}"));
                }
                last_sent = b.to_vec();
                if only_accepts {
                    pending.push(Pending {
                        label: label.clone(),
                        ids,
                    });
                }
            }
            Action::End => {
                conv.note("half-close (end of stream)");
                if let Err(e) = conv.wire.half_close() {
                    conv.note(format!("half-close failed: {e}"));
                }
            }
            Action::CorruptRecord => {
                // A TLS 1.2/1.3 application-data record whose contents cannot authenticate.
                let mut rec = vec![0x17, 0x03, 0x03, 0x00, 0x30];
                rec.extend((0..48u8).map(|x| x.wrapping_mul(37).wrapping_add(11)));
                let t = conv.t();
                conv.transcript.push(TranscriptEntry {
                    t_ms: t,
                    dir: Dir::Sent,
                    data: format!("forged TLS record {}", hex::encode(&rec)),
                });
                if let Err(e) = conv.wire.send_raw(&rec) {
                    conv.note(format!("raw send failed: {e}"));
                }
            }
            Action::SlowRequest(id) => {
                let Some(f) = &conv.spec.slow_request else {
                    return Err(fail(
                        Verdict::HarnessError,
                        "no slow request",
                        &exp_desc,
                        "",
                    ));
                };
                match materialize::build_frame(f, params, Some(id.clone())) {
                    Ok(b) => {
                        sent_id = Some(id.clone());
                        if let Err(e) = conv.send(&b) {
                            conv.note(format!("send failed: {e}"));
                        }
                    }
                    Err(e) => {
                        return Err(fail(
                            Verdict::HarnessError,
                            format!("slow request cannot be built: {e}"),
                            &exp_desc,
                            "",
                        ))
                    }
                }
            }
            Action::ReplayRecord => match conv.wire.replay_last_record() {
                Ok(rec) => {
                    let t = conv.t();
                    conv.transcript.push(TranscriptEntry {
                        t_ms: t,
                        dir: Dir::Sent,
                        data: format!("replayed TLS record {}", transcript_hex(&rec)),
                    });
                }
                Err(e) => {
                    return Err(fail(
                        Verdict::HarnessError,
                        format!("{label}cannot replay a record: {e}"),
                        &exp_desc,
                        "",
                    ))
                }
            },
            Action::IdentityProbe => {
                let Some(ip) = identity_probe else {
                    return Err(fail(
                        Verdict::HarnessError,
                        "no identity probe",
                        &exp_desc,
                        "",
                    ));
                };
                match manifest_request(&ip.frame, params, probes, "swp-ident") {
                    Ok((id, f)) => {
                        sent_id = Some(id);
                        if let Err(e) = conv.send(&f) {
                            conv.note(format!("send failed: {e}"));
                        }
                    }
                    Err(e) => {
                        return Err(fail(
                            Verdict::HarnessError,
                            format!("identity probe cannot be built: {e}"),
                            &exp_desc,
                            "",
                        ))
                    }
                }
            }
        }
        if only_accepts {
            summary_exp.push(exp_desc);
            summary_obs.push("accepted".to_owned());
            if i + 1 == steps.len() {
                sync(conv, &mut pending, params, probes, true)?;
            }
            continue;
        }
        let mut obs_desc = Vec::new();
        if s.expect.is_empty() {
            // `nothing`: no frame and no close within the quiet window.
            let deadline = Instant::now() + Duration::from_millis(conv.spec.timing.silence_ms);
            if let Some(o) = conv.next(deadline) {
                return Err(fail(
                    Verdict::Fail,
                    format!("{label}expected nothing, observed {}", short(&o)),
                    "nothing",
                    short(&o),
                ));
            }
            obs_desc.push("nothing".to_owned());
        }
        for exp in &s.expect {
            let deadline = Instant::now() + Duration::from_millis(step_ms);
            match exp {
                Expectation::Accept { .. } => {
                    pending.push(Pending {
                        label: label.clone(),
                        ids: sent_id.iter().cloned().collect(),
                    });
                    obs_desc.push("accepted".into());
                }
                Expectation::Reject { terminates, .. } => {
                    let got = loop {
                        match conv.next(deadline) {
                            Some(Obs::Reply(_)) => continue,
                            other => break other,
                        }
                    };
                    let ev = match got {
                        Some(Obs::Error { code, .. }) => {
                            let terminated = match terminates {
                                Some(true) => {
                                    let d2 = Instant::now() + Duration::from_millis(step_ms);
                                    let closed = loop {
                                        match conv.next(d2) {
                                            Some(Obs::Closed(_)) => break true,
                                            Some(_) => continue,
                                            None => break false,
                                        }
                                    };
                                    Some(closed)
                                }
                                _ => None,
                            };
                            let canonical = code.parse::<swp_core::ErrorCode>().is_ok();
                            Event::Reject {
                                code: canonical.then(|| code.clone()),
                                alias: (!canonical).then(|| code.clone()),
                                detail: None,
                                terminated,
                            }
                        }
                        Some(Obs::Closed(why)) => {
                            if mode == RejectMode::ErrorFrame {
                                return Err(fail(Verdict::Fail, format!("{label}the connection {why} without the error frame the manifest promises"), &exp_desc, "close"));
                            }
                            Event::Reject {
                                code: None,
                                alias: None,
                                detail: Some(why),
                                terminated: Some(true),
                            }
                        }
                        Some(Obs::Garbage(g)) => {
                            return Err(fail(
                                Verdict::Fail,
                                format!("{label}{g}"),
                                &exp_desc,
                                "invalid output",
                            ))
                        }
                        // Replies were skipped above, so only a timeout reaches here.
                        Some(Obs::Reply(_)) | None => {
                            // Accepted, or hung? A probe tells.
                            let answered = match conv.spec.probe.clone() {
                                Some(probe) => match manifest_request(
                                    &probe.frame,
                                    params,
                                    probes,
                                    "swp-probe",
                                ) {
                                    Ok((id, f)) if conv.send(&f).is_ok() => {
                                        let d = Instant::now() + Duration::from_millis(step_ms);
                                        loop {
                                            match conv.next(d) {
                                                Some(Obs::Reply(e))
                                                    if answers_probe(&e, &id, &probe) =>
                                                {
                                                    break true
                                                }
                                                Some(Obs::Reply(_)) => continue,
                                                _ => break false,
                                            }
                                        }
                                    }
                                    _ => false,
                                },
                                None => false,
                            };
                            if answered {
                                return Err(fail(Verdict::Fail, format!("{label}accepted: no reject within {step_ms} ms and the probe was answered"), &exp_desc, "accepted"));
                            }
                            return Err(fail(Verdict::Timeout, format!("deadline: {label}no reject, no close and no answer within {step_ms} ms"), &exp_desc, "silence"));
                        }
                    };
                    let j = judge_codec_step(std::slice::from_ref(exp), std::slice::from_ref(&ev));
                    if let Some(c) = j.observed_code {
                        last_code = Some(c.as_str().to_owned());
                    }
                    if j.verdict != Verdict::Pass {
                        let why = j.detail.unwrap_or_default();
                        return Err((
                            Stop(j.verdict, format!("{label}{why}")),
                            exp_desc,
                            j.observed,
                            last_code,
                        ));
                    }
                    obs_desc.push(j.observed);
                }
                Expectation::Close => {
                    let mut frames = 0;
                    let got = loop {
                        match conv.next(deadline) {
                            Some(Obs::Closed(w)) => break Some(w),
                            // Octets that are not SWP framing (a TLS alert sent in the
                            // clear to a plaintext client) are not processed frames.
                            Some(Obs::Garbage(_)) => {}
                            Some(_) => frames += 1,
                            None => break None,
                        }
                    };
                    match got {
                        Some(_) if frames == 0 => obs_desc.push("close".into()),
                        Some(_) => return Err(fail(Verdict::Fail, format!("{label}the connection closed after {frames} frame(s); expected a close with zero bytes"), "close", "frames then close")),
                        None => return Err(fail(Verdict::Fail, format!("{label}the connection stayed open for {step_ms} ms; expected it to close"), "close", "open")),
                    }
                }
                Expectation::Silence { ms } => {
                    let d = Instant::now() + Duration::from_millis(*ms);
                    if let Some(o) = conv.next(d) {
                        return Err(fail(
                            Verdict::Fail,
                            format!(
                                "{label}expected silence for {ms} ms, observed {}",
                                short(&o)
                            ),
                            &exp_desc,
                            short(&o),
                        ));
                    }
                    obs_desc.push(format!("silence {ms} ms"));
                }
                Expectation::Reply {
                    profile_id,
                    msg_type,
                    same_msg_id,
                    payload,
                    payload_json,
                    payload_p1,
                    p1_canonical,
                } => {
                    let o = conv.next(deadline);
                    let env = match o {
                        Some(Obs::Reply(e)) => e,
                        // An error frame is a frame: the reply pattern sees all of it.
                        Some(Obs::Error { frame, .. }) => *frame,
                        Some(other) => {
                            return Err(fail(
                                Verdict::Fail,
                                format!("{label}expected a reply, observed {}", short(&other)),
                                &exp_desc,
                                short(&other),
                            ))
                        }
                        None => {
                            return Err(fail(
                                Verdict::Fail,
                                format!("deadline: {label}no reply within {step_ms} ms"),
                                &exp_desc,
                                "silence",
                            ))
                        }
                    };
                    let mut why = None;
                    if profile_id.is_some_and(|p| p != env.profile_id)
                        || msg_type.is_some_and(|m| m != env.msg_type)
                    {
                        why = Some(format!(
                            "reply is profile_id={} msg_type={}",
                            env.profile_id, env.msg_type
                        ));
                    } else if *same_msg_id && sent_id.as_ref() != Some(&env.msg_id) {
                        why = Some(format!(
                            "reply msg_id {} does not reuse the request's",
                            hex::encode(&env.msg_id)
                        ));
                    } else if payload.as_ref().is_some_and(|p| *p != env.payload) {
                        why = Some("reply payload differs".into());
                    } else if let Some(pj) = payload_json {
                        let want = substitute(pj, identity.unwrap_or(""));
                        match serde_json::from_slice::<serde_json::Value>(&env.payload) {
                            Ok(v) if json_contains(&v, &want) => {}
                            Ok(v) => {
                                why = Some(format!("reply payload {v} does not contain {want}"))
                            }
                            Err(e) => why = Some(format!("reply payload is not JSON: {e}")),
                        }
                    }
                    if why.is_none() {
                        if let Some(spec) = payload_p1 {
                            why = crate::p1::check(spec, &env.payload).err();
                            if why.is_none() && *p1_canonical {
                                why = crate::p1::check_canonical(spec, &env.payload).err();
                            }
                            // A2A replies also owe the required fields of their class (§4).
                            if why.is_none() && env.profile_id == swp_profiles::a2a::PROFILE_ID {
                                why = swp_profiles::a2a::decode(env.msg_type, &env.payload)
                                    .err()
                                    .map(|e| format!("the reply breaks a2a-profile: {e}"));
                            }
                        }
                    }
                    if let Some(w) = why {
                        return Err(fail(
                            Verdict::Fail,
                            format!("{label}{w}"),
                            &exp_desc,
                            "reply",
                        ));
                    }
                    obs_desc.push("reply".into());
                }
                Expectation::A2aTasks(tasks) => {
                    let silence = Duration::from_millis(conv.spec.timing.silence_ms);
                    match a2a_tasks(conv, tasks, deadline, silence) {
                        Ok(o) => obs_desc.push(o),
                        Err((why, o)) => {
                            return Err(fail(Verdict::Fail, format!("{label}{why}"), &exp_desc, o))
                        }
                    }
                }
                Expectation::Identity => {
                    let ptr = identity_probe
                        .map(|p| p.pointer.clone())
                        .unwrap_or_default();
                    let want = identity.unwrap_or("");
                    let got = loop {
                        match conv.next(deadline) {
                            Some(Obs::Reply(e)) if Some(&e.msg_id) == sent_id.as_ref() => {
                                break Ok(e)
                            }
                            Some(Obs::Reply(_)) => continue,
                            Some(o) => break Err(short(&o)),
                            None => break Err("silence".into()),
                        }
                    };
                    let env = got.map_err(|o| {
                        fail(
                            Verdict::Fail,
                            format!("{label}expected the identity probe's answer, observed {o}"),
                            &exp_desc,
                            o,
                        )
                    })?;
                    let seen = serde_json::from_slice::<serde_json::Value>(&env.payload)
                        .ok()
                        .and_then(|v| v.pointer(&ptr).cloned());
                    match seen {
                        Some(serde_json::Value::String(s)) if s == want => obs_desc.push(format!("identity {s}")),
                        other => return Err(fail(Verdict::Fail, format!("{label}the endpoint reports identity {other:?} at {ptr}; the harness presented {want}"), &exp_desc, format!("{other:?}"))),
                    }
                }
                Expectation::Forwarded => {
                    let n = last_sent.len();
                    let (got, short) = if s.upstream {
                        read_exact_raw(conv.wire.as_mut(), n, deadline)
                    } else {
                        match conv.upstream.as_mut() {
                            Some(u) => read_exact_raw(u.as_mut(), n, deadline),
                            None => (Vec::new(), Some("no upstream connection".into())),
                        }
                    };
                    let to = if s.upstream { "client" } else { "upstream" };
                    if !got.is_empty() {
                        let t = conv.t();
                        conv.transcript.push(TranscriptEntry {
                            t_ms: t,
                            dir: Dir::Received,
                            data: format!("{to} {}", transcript_hex(&got)),
                        });
                    }
                    // Report the first differing octet even when fewer octets arrived: an
                    // intermediary that rewrites a payload usually changes its length too.
                    if let Some(at) = got.iter().zip(&last_sent).position(|(a, b)| a != b) {
                        return Err(fail(Verdict::Fail, format!("{label}the octets reaching the {to} differ from those sent, first at offset {at} ({} octets arrived, {n} sent)", got.len()), &exp_desc, "altered"));
                    }
                    match short {
                        None => obs_desc.push(format!("forwarded to {to} unchanged ({n} octets)")),
                        Some(e) => {
                            return Err(fail(
                                Verdict::Fail,
                                format!("{label}forwarding to the {to}: {e}"),
                                &exp_desc,
                                "not forwarded",
                            ))
                        }
                    }
                }
                Expectation::Nothing => {}
            }
        }
        summary_exp.push(exp_desc);
        summary_obs.push(obs_desc.join("; "));
    }
    sync(conv, &mut pending, params, probes, true)?;
    Ok((
        crate::evaluate::fold_runs(summary_exp),
        crate::evaluate::fold_runs(summary_obs),
        last_code,
    ))
}

/// Collects A2A frames until every listed task has its Result (or `deadline`), then for a
/// quiet window, and judges each task: P1-valid messages, the listed number of Events
/// before exactly one Result with the listed outcome, nothing after it (a2a-profile §6).
/// Tasks may interleave; only per-task order is judged.
fn a2a_tasks(
    conv: &mut Conv,
    tasks: &[crate::catalog::vector::TaskOutcome],
    deadline: Instant,
    silence: Duration,
) -> Result<String, (String, String)> {
    use swp_profiles::p1::pb::a2a::{Event, Result as A2aResult};
    // The catalog loader refused malformed `hex:` values, so this cannot fail here.
    let bytes_of = |s: &str| crate::p1::bytes_value(s).unwrap_or_default();
    // Per listed task: events seen, the Result once seen.
    let mut state: Vec<(Vec<u8>, u64, Option<A2aResult>)> = tasks
        .iter()
        .map(|t| (bytes_of(&t.task_id), 0, None))
        .collect();
    let mut frames = 0usize;
    let mut quiet_until: Option<Instant> = None;
    loop {
        let until = quiet_until.unwrap_or(deadline);
        let o = match conv.next(until) {
            Some(o) => o,
            None if quiet_until.is_some() => break,
            None => {
                let open: Vec<String> = tasks
                    .iter()
                    .zip(&state)
                    .filter(|(_, s)| s.2.is_none())
                    .map(|(t, s)| format!("{} ({} event(s) so far)", t.task_id, s.1))
                    .collect();
                return Err((
                    format!("deadline: no Result for task(s) {}", open.join(", ")),
                    format!("{frames} A2A frame(s), then silence"),
                ));
            }
        };
        let env = match o {
            Obs::Reply(e) if e.profile_id == 2 => e,
            other => {
                return Err((
                    format!(
                        "expected A2A Events and Results, observed {}",
                        short(&other)
                    ),
                    short(&other),
                ))
            }
        };
        frames += 1;
        let (task_id, is_result) = match env.msg_type {
            3 => match <Event as prost::Message>::decode(&env.payload[..]) {
                Ok(e) => (e.task_id.to_vec(), None),
                Err(e) => {
                    return Err((
                        format!("an Event that is not valid P1: {e}"),
                        "malformed Event".into(),
                    ))
                }
            },
            4 => match <A2aResult as prost::Message>::decode(&env.payload[..]) {
                Ok(r) => (r.task_id.to_vec(), Some(r)),
                Err(e) => {
                    return Err((
                        format!("a Result that is not valid P1: {e}"),
                        "malformed Result".into(),
                    ))
                }
            },
            t => {
                return Err((
                    format!(
                        "an A2A msg_type {t} frame where only Events (3) and Results (4) belong"
                    ),
                    format!("msg_type {t}"),
                ))
            }
        };
        let Some(i) = state.iter().position(|s| s.0 == task_id) else {
            return Err((
                format!(
                    "an A2A message for task_id {}, which no Task of this step opened",
                    hex::encode(&task_id)
                ),
                "a message for an unknown task".into(),
            ));
        };
        let s = &mut state[i];
        if s.2.is_some() {
            return Err((
                format!(
                    "a {} for task {} after its terminal Result",
                    if is_result.is_some() {
                        "Result"
                    } else {
                        "Event"
                    },
                    tasks[i].task_id
                ),
                "a message after the terminal Result".into(),
            ));
        }
        match is_result {
            None => s.1 += 1,
            Some(r) => s.2 = Some(r),
        }
        if quiet_until.is_none() && state.iter().all(|s| s.2.is_some()) {
            quiet_until = Some(Instant::now() + silence);
        }
    }
    let mut seen = Vec::new();
    for (t, (_, events, result)) in tasks.iter().zip(&state) {
        let Some(r) = result else { continue };
        if *events != t.events {
            return Err((
                format!(
                    "task {}: {events} Event(s) before the Result, expected {}",
                    t.task_id, t.events
                ),
                format!("{events} event(s)"),
            ));
        }
        if r.ok != t.ok {
            return Err((
                format!(
                    "task {}: Result ok={} ({:?}), expected ok={}",
                    t.task_id, r.ok, r.error_message, t.ok
                ),
                format!("ok={}", r.ok),
            ));
        }
        if let Some(out) = &t.output {
            if r.output[..] != bytes_of(out)[..] {
                return Err((
                    format!(
                        "task {}: Result output {:?}, expected {out:?}",
                        t.task_id,
                        String::from_utf8_lossy(&r.output)
                    ),
                    "another output".into(),
                ));
            }
        }
        if let Some(sub) = &t.error_contains {
            if !r.error_message.contains(sub.as_str()) {
                return Err((
                    format!(
                        "task {}: error_message {:?} does not contain {sub:?}",
                        t.task_id, r.error_message
                    ),
                    "another error_message".into(),
                ));
            }
        }
        seen.push(format!("{}: {events} event(s), ok={}", t.task_id, r.ok));
    }
    Ok(seen.join("; "))
}

fn short(o: &Obs) -> String {
    match o {
        Obs::Error { code, .. } => format!("error frame {code}"),
        Obs::Reply(e) => format!("frame profile_id={} msg_type={}", e.profile_id, e.msg_type),
        Obs::Closed(w) => format!("connection {w}"),
        Obs::Garbage(g) => g.clone(),
    }
}
