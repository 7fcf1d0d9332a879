//! The `mcp_native` method: drives a plain MCP server (or, as `mcp_gateway`, a gateway
//! holding the seed-003 contract) over stdio, MCP Streamable HTTP or WebSocket, one server
//! process per vector. For `mcp_native` vectors every message the server sends is judged
//! against the official schema of the negotiated version and the session's rules
//! (`judge`), and what a vector exercises is taken from the server's own answers: its
//! declared capabilities, its tools, resources and prompts (`docs/mcp-native.md`). A
//! defect is charged to the step whose request it answers; one that belongs to no step of
//! the vector is an incidental observation, counted once per run.

pub mod args;
mod attribution;
pub mod chan;
mod client;
mod conv;
pub mod eventids;
pub mod http;
pub mod judge;
pub mod pins;
mod record;
pub mod schema;
mod share;
mod spare;
pub mod sse;
mod steps;
mod stop;
mod transport;
mod uritemplate;

use super::contract::{Fatal, NotApplicable, Outcome, TestMethod};
use crate::catalog::mcpnative::McpWire;
use crate::catalog::vector::{Body, JsonRpcBody, JsonRpcExpect, JsonRpcStep, Method, Vector};
use crate::connect::process::{self, Supervised};
use crate::connect::wire::StdioWire;
use crate::method::conv::clock::SYSTEM;
use crate::method::conv::timeline::{Timeline, INTERRUPTED};
use crate::plan::materialize::MaterialiseError;
use crate::report::result::{Dir, NaCause, Verdict};
use crate::support::cancel::Cancel;
use crate::sut::{McpNativeSpec, McpTransport, Start, Sut};
use chan::WsChan;
use conv::{Chan, Conv};
use http::HttpClient;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use conv::MAX_LINE_BYTES;
pub use steps::json_matches;

/// Runs `mcpnative` and `gateway` vectors against one plain MCP server or gateway.
pub struct McpNativeMethod<'a> {
    sut: &'a Sut,
    spec: McpNativeSpec,
    start: Start,
    base: PathBuf,
    work: PathBuf,
    /// The session the last vector left for the next (`share`).
    shared: Option<share::Shared>,
    /// A Streamable HTTP server left running with no session for the next vector: on HTTP
    /// a session is the server's to open, not a process's, so a vector that needs a session
    /// of its own opens one on the running server.
    idle: Option<share::Idle>,
    /// A server started ahead of need, listening on a port of its own, for the next vector
    /// that needs a new process.
    spares: spare::Spares,
}

/// The `${NAME}`s a text uses that `vars` does not define.
fn undefined(s: &str, vars: &BTreeMap<String, String>, out: &mut BTreeSet<String>) {
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        let tail = &rest[i + 2..];
        let Some(j) = tail.find('}') else { break };
        if !vars.contains_key(&tail[..j]) {
            out.insert(tail[..j].to_owned());
        }
        rest = &tail[j..];
    }
}

/// The manifest variables the plain `jsonrpc_line` steps of a vector need and the manifest
/// does not give (`mcp` steps bind theirs while running).
/// What a vector's `pick` needs the manifest to declare and it does not (a tool with an
/// effect, values for a template), decided before any server starts.
fn undeclared(steps: &[JsonRpcStep], spec: &McpNativeSpec) -> Option<String> {
    use crate::catalog::mcpnative::{McpStep, Pick};
    use crate::sut::ToolEffect;
    steps.iter().find_map(|s| {
        let effect = match s.mcp {
            Some(McpStep::Pick(Pick::SamplingTool)) => ToolEffect::Sampling,
            Some(McpStep::Pick(Pick::ElicitationTool)) => ToolEffect::Elicitation,
            Some(McpStep::Pick(Pick::LoggingTool)) => ToolEffect::Logging,
            Some(McpStep::Pick(Pick::Template)) if spec.templates.is_empty() => {
                return Some(steps::NO_TEMPLATE_VALUES.into())
            }
            _ => return None,
        };
        (!spec.tools.iter().any(|t| t.does.contains(&effect))).then(|| steps::no_tool_with(effect))
    })
}

fn missing_vars(steps: &[JsonRpcStep], spec: &McpNativeSpec) -> BTreeSet<String> {
    let mut vars = spec.params.clone();
    vars.insert("PROTOCOL_VERSION".into(), spec.protocol_version.clone());
    let mut out = BTreeSet::new();
    for s in steps.iter().filter(|s| s.mcp.is_none()) {
        if let Some(l) = s.send.as_ref().and_then(|x| x.jsonrpc_line.as_ref()) {
            undefined(l, &vars, &mut out);
        }
        for e in s.expect.as_slice() {
            if let JsonRpcExpect::Response(r) = e {
                for v in [&r.result, &Some(r.id.clone())].into_iter().flatten() {
                    undefined(&v.to_string(), &vars, &mut out);
                }
            }
        }
    }
    out
}

impl<'a> McpNativeMethod<'a> {
    /// Prepares the method for a plain MCP server; `work` holds the server's stderr logs
    /// (one per vector) and port file.
    pub fn new(sut: &'a Sut, spec: McpNativeSpec, start: Start, work: &Path) -> Self {
        McpNativeMethod {
            sut,
            spec,
            start,
            base: sut.base_dir(),
            // The server runs in the manifest's directory: a relative `--out` would name
            // another port file there than the one the harness waits for.
            work: std::path::absolute(work).unwrap_or_else(|_| work.to_owned()),
            shared: None,
            idle: None,
            spares: spare::Spares::default(),
        }
    }

    fn wire(&self) -> Option<McpWire> {
        match self.spec.transport {
            McpTransport::Stdio => Some(McpWire::Stdio),
            McpTransport::Http => Some(McpWire::Http),
            McpTransport::Websocket => None,
        }
    }
}

impl TestMethod for McpNativeMethod<'_> {
    type Concrete = Method;

    fn describe(&self) -> String {
        format!(
            "mcp-native {}: {} {} (protocol {})",
            self.spec.transport.as_str(),
            self.start.command,
            self.start.args.join(" "),
            self.spec.protocol_version
        )
    }

    fn admit(&self, v: &Vector) -> Result<Method, NotApplicable> {
        let not_ours = "not an mcp_native or mcp_gateway vector; this SUT is a plain MCP server";
        let Body::JsonRpc(b) = &v.body else {
            return Err(not_ours.into());
        };
        let Some(method) = v
            .header
            .methods
            .iter()
            .find(|m| self.sut.manifest.methods.contains(m))
        else {
            return Err(not_ours.into());
        };
        if let Some(want) = b.mcp.as_ref().and_then(|m| m.transport) {
            if self.wire() != Some(want) {
                return Err(NotApplicable::choice(format!(
                    "the vector is about the {} transport; this server is driven over {}",
                    want.as_str(),
                    self.spec.transport.as_str()
                )));
            }
        }
        // A vector that never opens a session runs at the manifest's version.
        if let Some(m) = &b.mcp {
            let opens = b
                .steps
                .iter()
                .any(|s| matches!(s.mcp, Some(crate::catalog::mcpnative::McpStep::Open(_))));
            let asked = &self.spec.protocol_version;
            if !opens && !m.versions.is_empty() && !m.versions.iter().any(|x| x.as_str() == asked) {
                let list: Vec<&str> = m.versions.iter().map(|x| x.as_str()).collect();
                return Err(NotApplicable::choice(format!(
                    "the vector opens no session and applies to {}; the manifest asks for {asked}",
                    list.join(", ")
                )));
            }
        }
        let missing = missing_vars(&b.steps, &self.spec);
        if !missing.is_empty() {
            let names: Vec<String> = missing.into_iter().collect();
            return Err(NotApplicable::untested(format!(
                "the manifest gives no mcp_native.params {} (what this server names them)",
                names.join(", ")
            )));
        }
        if let Some(why) = undeclared(&b.steps, &self.spec) {
            return Err(NotApplicable::untested(why));
        }
        Ok(*method)
    }

    fn materialise(&mut self, _v: &Vector, m: Method) -> Result<Method, MaterialiseError> {
        Ok(m)
    }

    fn drive(&mut self, v: &Vector, method: Method, cancel: &Cancel) -> Result<Outcome, Fatal> {
        let Body::JsonRpc(body) = &v.body else {
            return Ok(Outcome::stop(
                Verdict::HarnessError,
                "admitted a vector that is not an mcp_native or mcp_gateway one",
            ));
        };
        let share = share::shares(body, &self.spec, method);
        let reuse_proc = share::reuses_process(body, &self.spec, method);
        // A server that exited since is dropped here, and the vector starts its own.
        let alive = self
            .shared
            .as_mut()
            .is_some_and(|s| s.proc.exited().is_none());
        let kept = match self.shared.take() {
            Some(s) if share && alive => Some(s),
            // A vector of its own leaves a stdio session for the next.
            Some(s) if !share && self.spec.transport == McpTransport::Stdio => {
                self.shared = Some(s);
                None
            }
            // On HTTP it opens a session of its own on the running server; a vector that
            // needs a server of its own leaves it running for the vectors after it, when
            // the harness chose its port (no other process can want that port).
            Some(s) if alive && (reuse_proc || self.uses_port()) => {
                if let Chan::Http(c) = &s.chan {
                    self.idle = Some(share::Idle {
                        url: c.url().to_owned(),
                        proc: s.proc,
                        log: s.log,
                    });
                }
                None
            }
            // Otherwise a server on a port is stopped first, in case its port is fixed.
            _ => None,
        };
        let idle = match self.idle.take() {
            Some(i) if kept.is_none() && reuse_proc => Some(i),
            // A vector that needs a server of its own leaves the running one for the
            // vectors after it when the harness chose its port, which no other process can
            // want; otherwise that server is stopped first, in case its port is fixed.
            Some(i) if self.uses_port() => {
                self.idle = Some(i);
                None
            }
            _ => None,
        }
        .and_then(|mut i| i.proc.exited().is_none().then_some(i));
        let running = idle.is_some();
        let (parts, reuse) = match (kept, idle) {
            (None, Some(i)) => (
                Parts {
                    proc: i.proc,
                    chan: Chan::Http(HttpClient::new(i.url, MAX_LINE_BYTES)),
                    buf: Vec::new(),
                    peer: Some(self.peer_for(body)),
                    start_t: Instant::now(),
                    grace: None,
                    log: i.log,
                    ahead: false,
                },
                None,
            ),
            (kept, _) => match kept {
                Some(s) => (
                    Parts {
                        proc: s.proc,
                        chan: s.chan,
                        buf: s.buf,
                        peer: Some(s.peer),
                        start_t: Instant::now(),
                        grace: None,
                        log: s.log,
                        ahead: false,
                    },
                    Some((s.opened, s.next_id)),
                ),
                None => match self.start(v, body, method) {
                    Ok(p) => (p, None),
                    Err(o) => return Ok(*o),
                },
            },
        };
        let Parts {
            mut proc,
            chan,
            buf,
            peer,
            start_t,
            grace,
            log,
            ahead,
        } = parts;
        // The next vector that needs a new process finds one started while this one runs.
        self.warm_spare();
        let tl = Timeline::starting(
            &SYSTEM,
            start_t,
            self.spec.timing.vector_ms,
            cancel.clone(),
            conv::CLIP,
        );
        let mut conv = Conv::new(chan, Some(&mut proc), self.spec.timing, tl, peer, grace);
        conv.buf = buf;
        let mut runner = steps::Runner::new(v, body, &self.spec);
        let carried = reuse.as_ref().map(|(o, _)| o.clone());
        match reuse {
            Some((opened, next_id)) => {
                conv.log(
                    Dir::Note,
                    &format!(
                        "{}, already running (its stderr: {})",
                        self.describe(),
                        log.display()
                    ),
                );
                runner.reuse = Some(opened);
                runner.next_id = next_id;
            }
            None if running => conv.log(
                Dir::Note,
                &format!(
                    "{}, already running; a session of the vector's own (its stderr: {})",
                    self.describe(),
                    log.display()
                ),
            ),
            None if ahead => conv.log(
                Dir::Note,
                &format!(
                    "started {} ahead of the vector, and listening (its stderr: {})",
                    self.describe(),
                    log.display()
                ),
            ),
            None => conv.log(Dir::Note, &format!("started {}", self.describe())),
        }
        let ran = runner.run(&mut conv);
        let incidental = std::mem::take(&mut conv.incidental);
        let transcript = conv.tl.take_transcript();
        let exited = conv.proc.as_mut().and_then(|p| p.exited());
        // The session goes to the next vector only as a client would find it: open, no
        // request waiting for its answer, nothing half read, the server alive.
        let clean = conv.gone.is_none()
            && conv.closed.is_none()
            && !conv.out_of_time
            && conv.buf.is_empty()
            && conv.peer.as_ref().is_some_and(judge::Peer::idle)
            && !runner.closed_input
            && exited.is_none()
            && !cancel.is_cancelled();
        let gone = conv.gone.is_some() || conv.closed.is_some() || conv.out_of_time;
        let conv::Conv {
            chan, buf, peer, ..
        } = conv;
        let mut o = record::outcome(ran, incidental).with_transcript(transcript);
        // The harness has not closed stdin (unless a step did): an exit with a failure
        // status is a crash.
        if let Some(st) = exited
            .as_ref()
            .filter(|s| !s.success && !runner.closed_input)
        {
            if o.verdict != Verdict::NotApplicable {
                o.verdict = Verdict::Crash;
                o.detail = Some(format!(
                    "the server {st} during the vector; {}",
                    o.detail.take().unwrap_or_default()
                ));
            }
        }
        if o.verdict == Verdict::NotApplicable && o.na_cause.is_none() {
            o.na_cause = Some(NaCause::Untested);
        }
        if cancel.is_cancelled() {
            // Waits cut short by the cancel prove nothing, not even a pass.
            o = Outcome::stop(Verdict::HarnessError, INTERRUPTED).with_transcript(o.transcript);
        }
        let passed_on =
            share && clean && matches!(o.verdict, Verdict::Pass | Verdict::NotApplicable);
        if let (true, Some(opened), Some(peer)) =
            (passed_on, runner.opened_with.take().or(carried), peer)
        {
            self.shared = Some(share::Shared {
                proc,
                chan,
                buf,
                peer,
                opened,
                next_id: runner.next_id,
                log,
            });
        } else if let Chan::Http(c) = &chan {
            // The session is done with, and the server may serve the next vector's own
            // unless it crashed, hung or the run was cut.
            let sound = !gone
                && exited.is_none()
                && !cancel.is_cancelled()
                && !matches!(
                    o.verdict,
                    Verdict::Crash | Verdict::Timeout | Verdict::HarnessError
                );
            if reuse_proc && sound {
                self.idle = Some(share::Idle {
                    url: c.url().to_owned(),
                    proc,
                    log,
                });
            }
        }
        Ok(o)
    }
}

/// A started server and the client end of its transport, before a vector runs on them.
struct Parts {
    proc: Supervised,
    chan: Chan,
    buf: Vec<u8>,
    peer: Option<judge::Peer>,
    /// When the server was started (its start-up counts toward the vector).
    start_t: Instant,
    /// Start-up time a stdio server may still use before its first answer.
    grace: Option<Duration>,
    /// Where the server writes its stderr.
    log: PathBuf,
    /// A spare started before the vector.
    ahead: bool,
}

impl McpNativeMethod<'_> {
    /// Starts the server for `v` and connects to it; the outcome of a vector that cannot
    /// start.
    fn start(
        &mut self,
        v: &Vector,
        body: &JsonRpcBody,
        method: Method,
    ) -> Result<Parts, Box<Outcome>> {
        let port_file = self.work.join("port");
        let (mut p, chosen_port, log, ahead) = match self.spares.take() {
            Some(s) => (s.proc, Some(s.port), s.log, true),
            None => {
                let (p, port, log) = self.spawn(&v.header.id)?;
                (p, port, log, false)
            }
        };
        let start_t = Instant::now();
        let stdio = self.spec.transport == McpTransport::Stdio;
        let chan = match self.connect(&mut p, &port_file, chosen_port) {
            Ok(c) => c,
            Err((verdict, why)) => return Err(Box::new(Outcome::stop(verdict, why))),
        };
        let peer = (method == Method::McpNative).then(|| self.peer_for(body));
        Ok(Parts {
            proc: p,
            chan,
            buf: Vec::new(),
            peer,
            start_t,
            // A stdio server is started by the first line it reads; on the other
            // transports the harness waited for it to listen.
            grace: stdio.then(|| Duration::from_millis(self.spec.timing.start_ms)),
            log,
            ahead,
        })
    }

    /// Starts a spare server, unless one is waiting or the server is not on a port the
    /// harness chooses over a network transport (see `spare`).
    fn warm_spare(&mut self) {
        if self.spec.transport == McpTransport::Stdio || !self.uses_port() {
            return;
        }
        let mut spares = std::mem::take(&mut self.spares);
        spares.warm(|name| match self.spawn(name) {
            Ok((proc, Some(port), log)) => Some(spare::Spare { proc, port, log }),
            _ => None,
        });
        self.spares = spares;
    }

    /// Whether the start command takes the port from the harness (`${PORT}`).
    fn uses_port(&self) -> bool {
        std::iter::once(&self.start.command)
            .chain(&self.start.args)
            .chain(self.start.env.values())
            .any(|a| a.contains("${PORT}"))
    }

    /// Starts a server process, its stderr in `sut-stderr/<log_name>.log`: the process, the
    /// port chosen for it (`${PORT}`) and the log.
    fn spawn(&self, log_name: &str) -> Result<(Supervised, Option<u16>, PathBuf), Box<Outcome>> {
        // One log per started server, so a server's complaint sits beside the vector that
        // started it.
        let logs = self.work.join("sut-stderr");
        let _ = std::fs::create_dir_all(&logs);
        let log = logs.join(format!("{log_name}.log"));
        let _ = std::fs::remove_file(&log);
        let port_file = self.work.join("port");
        let _ = std::fs::remove_file(&port_file);
        let mut vars = BTreeMap::new();
        vars.insert("PORT_FILE", port_file.display().to_string());
        vars.insert("WORK", self.work.display().to_string());
        let mut chosen_port = None;
        if self.uses_port() {
            match free_port() {
                Ok(p) => {
                    vars.insert("PORT", p.to_string());
                    chosen_port = Some(p);
                }
                Err(e) => {
                    return Err(Box::new(Outcome::stop(
                        Verdict::HarnessError,
                        format!("no free loopback port for the server: {e}"),
                    )))
                }
            }
        }
        let stdio = self.spec.transport == McpTransport::Stdio;
        match process::spawn(&self.start, &self.base, &vars, stdio, &log) {
            Ok(p) => Ok((p, chosen_port, log)),
            Err(e @ process::ProcessError::Spawn { .. }) => {
                Err(Box::new(Outcome::sut_not_started(e)))
            }
            Err(e) => Err(Box::new(Outcome::stop(
                Verdict::Crash,
                format!("the server could not be started: {e}"),
            ))),
        }
    }
}

impl McpNativeMethod<'_> {
    /// The judge of a new session of `body`'s, with the client capabilities it declares.
    fn peer_for(&self, body: &JsonRpcBody) -> judge::Peer {
        let caps = body
            .mcp
            .as_ref()
            .and_then(|m| m.client_capabilities.clone())
            .unwrap_or_else(|| json!({}));
        judge::Peer::new(&self.spec.protocol_version, caps, schema::schema_dir())
    }
}

/// A loopback port nobody listens on now (the server binds it next).
fn free_port() -> std::io::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

impl McpNativeMethod<'_> {
    /// Opens the client end of the transport to a started server.
    fn connect(
        &self,
        p: &mut Supervised,
        port_file: &Path,
        chosen: Option<u16>,
    ) -> Result<Chan, (Verdict, String)> {
        let timing = &self.spec.timing;
        if self.spec.transport == McpTransport::Stdio {
            let (i, o) = p
                .take_pipes()
                .ok_or((Verdict::HarnessError, "stdio pipes unavailable".to_owned()))?;
            return Ok(Chan::Stdio(Box::new(StdioWire::new(i, o))));
        }
        let within = Duration::from_millis(timing.start_ms);
        let port = match chosen {
            Some(port) => {
                wait_listening(port, p, within).map_err(|e| (Verdict::Crash, e))?;
                port
            }
            None => process::wait_port_file(port_file, p, within)
                .map_err(|e| (Verdict::Crash, e.to_string()))?,
        };
        let addr = format!("127.0.0.1:{port}");
        Ok(match self.spec.transport {
            McpTransport::Http => {
                let path = self.spec.path.as_deref().unwrap_or("/mcp");
                Chan::Http(HttpClient::new(
                    format!("http://{addr}{path}"),
                    MAX_LINE_BYTES,
                ))
            }
            _ => {
                let deadline = Instant::now() + Duration::from_millis(timing.step_ms);
                Chan::Ws(
                    WsChan::connect(&addr, MAX_LINE_BYTES, deadline)
                        .map_err(|e| (Verdict::Fail, format!("WebSocket /mcp: {e}")))?,
                )
            }
        })
    }
}

/// Waits until something accepts connections on the loopback `port`, or the server exits,
/// or `within` passes.
fn wait_listening(port: u16, p: &mut Supervised, within: Duration) -> Result<(), String> {
    let until = Instant::now() + within;
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    loop {
        if std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if let Some(exit) = p.exited() {
            return Err(format!("the server {exit} before listening on port {port}"));
        }
        if Instant::now() >= until {
            return Err(format!(
                "the server did not listen on 127.0.0.1:{port} within {} ms",
                within.as_millis()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests;
