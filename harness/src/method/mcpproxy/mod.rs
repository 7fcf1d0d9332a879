//! The `mcp_proxy` method: an MCP version-translating stdio proxy in the intermediary
//! topology. Per vector the harness starts the proxy (the manifest's `start`, with
//! `${CLIENT_VERSION}`, `${BRIDGE}` and `${UPSTREAM_ADDR}`), is its client on its stdin and
//! stdout, and is its upstream MCP server behind a stdio-to-TCP bridge the proxy starts as
//! its server command. Steps send JSON-RPC lines from either side and expect exact
//! messages to arrive at either side, so what a translation forwards, drops, or answers on
//! a peer's behalf is all observable.

mod conv;
mod lines;
mod matching;

use super::contract::{Fatal, NotApplicable, Outcome, TestMethod};
use crate::catalog::vector::{Body, Method, ProxyStep, Vector};
use crate::connect::process::{self, Supervised};
use crate::method::conv::clock::SYSTEM;
use crate::method::conv::timeline::{Timeline, INTERRUPTED};
use crate::plan::materialize::MaterialiseError;
use crate::report::result::{Dir, Verdict};
use crate::support::cancel::Cancel;
use crate::sut::{Start, Sut};
use conv::{run_steps, Conv, Pipes, CLIP};
use lines::Lines;
use matching::Binds;
use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use lines::MAX_LINE_BYTES;

/// How long the proxy has to start its server (connect the bridge).
const START: Duration = Duration::from_secs(10);
/// The method bounds each wait (a step's [`conv::STEP`], a silence), not the vector: its
/// timeline's hard limit is a day, out of reach.
const NO_VECTOR_LIMIT_MS: u64 = 24 * 60 * 60 * 1000;

/// Runs `mcpxproxy` vectors against one MCP proxy.
pub struct McpProxyMethod<'a> {
    sut: &'a Sut,
    start: Start,
    base: PathBuf,
    work: PathBuf,
}

impl<'a> McpProxyMethod<'a> {
    /// The method for `sut`, started by `start`, writing the proxy's stderr under `work`.
    pub fn new(sut: &'a Sut, start: Start, work: &std::path::Path) -> Self {
        McpProxyMethod {
            sut,
            start,
            base: sut.base_dir(),
            work: work.to_owned(),
        }
    }
}

impl TestMethod for McpProxyMethod<'_> {
    type Concrete = String;

    fn describe(&self) -> String {
        format!(
            "{} {} (MCP proxy on stdio)",
            self.sut.manifest.name, self.sut.manifest.version
        )
    }

    fn admit(&self, v: &Vector) -> Result<Method, NotApplicable> {
        match &v.body {
            Body::McpProxy(_) => Ok(Method::McpProxy),
            _ => Err("not an mcp_proxy vector; this SUT is an MCP proxy".into()),
        }
    }

    /// The client version the proxy is started for.
    fn materialise(&mut self, v: &Vector, _m: Method) -> Result<String, MaterialiseError> {
        match &v.body {
            Body::McpProxy(b) => match &b.proxy {
                Some(p) => Ok(p.client_version.as_str().to_owned()),
                None => Err(MaterialiseError::Invalid("no `proxy` block".into())),
            },
            _ => Err(MaterialiseError::Invalid("not an mcp_proxy vector".into())),
        }
    }

    fn drive(
        &mut self,
        v: &Vector,
        client_version: String,
        cancel: &Cancel,
    ) -> Result<Outcome, Fatal> {
        let Body::McpProxy(b) = &v.body else {
            return Ok(early(
                Verdict::HarnessError,
                "admitted a vector that is not an mcp_proxy one".into(),
            ));
        };
        let o = self.conversation(&client_version, &b.steps, cancel);
        if cancel.is_cancelled() {
            // Waits cut short by the cancel prove nothing, not even a pass.
            return Ok(
                Outcome::stop(Verdict::HarnessError, INTERRUPTED).with_transcript(o.transcript)
            );
        }
        Ok(o)
    }
}

/// The outcome of a vector that stopped before its conversation began.
fn early(verdict: Verdict, why: String) -> Outcome {
    Outcome::stop(verdict, why)
}

impl McpProxyMethod<'_> {
    fn conversation(&self, client_version: &str, steps: &[ProxyStep], cancel: &Cancel) -> Outcome {
        let listener = match TcpListener::bind("127.0.0.1:0") {
            Ok(l) => l,
            Err(e) => return early(Verdict::HarnessError, format!("cannot listen: {e}")),
        };
        let addr = match listener.local_addr() {
            Ok(a) => a,
            Err(e) => return early(Verdict::HarnessError, e.to_string()),
        };
        let bridge = match crate::connect::testee::swp_ref_binary() {
            Ok(b) => b,
            Err(e) => return early(Verdict::HarnessError, e.to_string()),
        };
        let vars: BTreeMap<&str, String> = [
            ("CLIENT_VERSION", client_version.to_owned()),
            ("UPSTREAM_ADDR", addr.to_string()),
            ("BRIDGE", bridge.display().to_string()),
        ]
        .into_iter()
        .collect();
        let log = self.work.join("sut-stderr.log");
        let mut p: Supervised = match process::spawn(&self.start, &self.base, &vars, true, &log) {
            Ok(p) => p,
            Err(e @ process::ProcessError::Spawn { .. }) => {
                return Outcome::sut_not_started(e);
            }
            Err(e) => {
                return early(
                    Verdict::Crash,
                    format!("the proxy could not be started: {e}"),
                )
            }
        };
        let Some((stdin, stdout)) = p.take_pipes() else {
            return early(Verdict::HarnessError, "stdio pipes unavailable".into());
        };
        // The proxy starts its server (our bridge) at once; wait for it to connect.
        if let Err(e) = listener.set_nonblocking(true) {
            return early(Verdict::HarnessError, e.to_string());
        }
        let t0 = Instant::now();
        let upstream = loop {
            match listener.accept() {
                Ok((s, _)) => break s,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && t0.elapsed() < START => {
                    if let Some(x) = p.exited() {
                        return early(
                            Verdict::Crash,
                            format!("the proxy {x} before starting its server"),
                        );
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => {
                    return early(
                        Verdict::Fail,
                        format!(
                            "the proxy did not start its server within {} ms: {e}",
                            START.as_millis()
                        ),
                    )
                }
            }
        };
        let _ = upstream.set_nonblocking(false);
        let reader = match upstream.try_clone() {
            Ok(r) => r,
            Err(e) => return early(Verdict::HarnessError, e.to_string()),
        };
        let mut c = Conv {
            peers: Box::new(Pipes {
                to_proxy: stdin,
                from_proxy: Lines::spawn(stdout),
                upstream,
                from_upstream: Lines::spawn(reader),
            }),
            tl: Timeline::new(&SYSTEM, NO_VECTOR_LIMIT_MS, cancel.clone(), CLIP),
            binds: Binds::new(),
        };
        c.log(
            Dir::Note,
            format!("started {} for a {client_version} client", self.describe()),
        );
        let o = run_steps(&mut c, steps);
        drop(p);
        o
    }
}

#[cfg(test)]
mod tests;
