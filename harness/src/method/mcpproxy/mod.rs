//! The `mcp_proxy` method: an MCP version-translating stdio proxy in the intermediary
//! topology. Per vector the harness starts the proxy (the manifest's `start`, with
//! `${CLIENT_VERSION}`, `${BRIDGE}` and `${UPSTREAM_ADDR}`), is its client on its stdin and
//! stdout, and is its upstream MCP server behind a stdio-to-TCP bridge the proxy starts as
//! its server command. Steps send JSON-RPC lines from either side and expect exact
//! messages to arrive at either side, so what a translation forwards, drops, or answers on
//! a peer's behalf is all observable.

mod matching;

use super::contract::{Fatal, NotApplicable, Outcome, TestMethod};
use crate::catalog::mcpx::ArrivesSpec;
use crate::catalog::vector::{Expect, Method, Side, Step, Vector};
use crate::connect::process::{self, Supervised};
use crate::plan::materialize::MaterialiseError;
use crate::report::result::{Dir, TranscriptEntry, Verdict};
use crate::support::cancel::Cancel;
use crate::sut::{Start, Sut};
use matching::{same_message, substitute, Binds};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Longest line accepted from the proxy on either side.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
/// How long a step waits for a message to arrive.
const STEP: Duration = Duration::from_secs(5);
/// How long the proxy has to start its server (connect the bridge).
const START: Duration = Duration::from_secs(10);
/// Characters of a line kept in transcripts.
const TRANSCRIPT_CHARS: usize = 600;

/// Runs `mcpxproxy` vectors against one MCP proxy.
pub struct McpProxyMethod<'a> {
    sut: &'a Sut,
    start: Start,
    base: PathBuf,
    work: PathBuf,
}

/// One line read, or why reading ended.
type LineResult = Result<Vec<u8>, String>;

/// Lines from a reader, through a thread, so reads have deadlines.
struct Lines {
    rx: Receiver<LineResult>,
    queued: VecDeque<LineResult>,
}

impl Lines {
    fn spawn(r: impl Read + Send + 'static) -> Lines {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(r);
            loop {
                let mut buf = Vec::new();
                let got = r
                    .by_ref()
                    .take(MAX_LINE_BYTES as u64 + 1)
                    .read_until(b'\n', &mut buf);
                let item = match got {
                    Ok(0) => Err("closed".to_owned()),
                    Ok(_) if buf.len() > MAX_LINE_BYTES => {
                        Err(format!("a line longer than {MAX_LINE_BYTES} octets"))
                    }
                    Ok(_) => {
                        while matches!(buf.last(), Some(b'\n' | b'\r')) {
                            buf.pop();
                        }
                        Ok(buf)
                    }
                    Err(e) => Err(e.to_string()),
                };
                let end = item.is_err();
                if tx.send(item).is_err() || end {
                    return;
                }
            }
        });
        Lines {
            rx,
            queued: VecDeque::new(),
        }
    }

    fn next(&mut self, deadline: Instant) -> Option<LineResult> {
        if let Some(l) = self.queued.pop_front() {
            return Some(l);
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(wait) {
            Ok(l) => Some(l),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Err("closed".into())),
        }
    }

    /// A line that already arrived and was not expected, if any.
    fn unexpected(&mut self) -> Option<LineResult> {
        if let Some(l) = self.queued.pop_front() {
            return Some(l);
        }
        match self.rx.try_recv() {
            Ok(Ok(l)) => Some(Ok(l)),
            _ => None,
        }
    }
}

/// Both ends of the harness around the proxy.
struct Conv {
    to_proxy: std::process::ChildStdin,
    from_proxy: Lines,
    upstream: TcpStream,
    from_upstream: Lines,
    transcript: Vec<TranscriptEntry>,
    /// The captures bound so far (`?{name}` in the vector).
    binds: Binds,
}

fn clip(s: &str) -> String {
    crate::support::transcript::clip_text(s, TRANSCRIPT_CHARS)
}

fn side_name(s: Side) -> &'static str {
    match s {
        Side::Client => "client",
        Side::Upstream => "upstream",
    }
}

impl Conv {
    fn log(&mut self, dir: Dir, text: String) {
        self.transcript.push(TranscriptEntry {
            // Reports must not differ between runs outside their `run` block, and the
            // order of entries already tells the story: no clock in these transcripts.
            t_ms: 0,
            dir,
            data: clip(&text),
        });
    }

    fn send(&mut self, side: Side, line: &str) -> Result<(), String> {
        self.log(Dir::Sent, format!("{}: {line}", side_name(side)));
        let w: &mut dyn Write = match side {
            Side::Client => &mut self.to_proxy,
            Side::Upstream => &mut self.upstream,
        };
        w.write_all(line.as_bytes())
            .and_then(|()| w.write_all(b"\n"))
            .and_then(|()| w.flush())
            .map_err(|e| format!("cannot write to the proxy's {} side: {e}", side_name(side)))
    }

    /// The next line arriving at `side` (the harness's client side reads the proxy's
    /// stdout; its upstream side reads what the proxy sends its server), as text and JSON.
    fn read(&mut self, side: Side) -> Result<(String, Value), (Verdict, String)> {
        let deadline = Instant::now() + STEP;
        let got = match side {
            Side::Client => self.from_proxy.next(deadline),
            Side::Upstream => self.from_upstream.next(deadline),
        };
        let line = match got {
            None => {
                return Err((
                    Verdict::Fail,
                    format!(
                        "nothing arrived at the {} side within {} ms",
                        side_name(side),
                        STEP.as_millis()
                    ),
                ))
            }
            Some(Err(why)) => {
                return Err((
                    Verdict::Fail,
                    format!("the {} side ended: {why}", side_name(side)),
                ))
            }
            Some(Ok(l)) => l,
        };
        let text = String::from_utf8_lossy(&line).into_owned();
        self.log(Dir::Received, format!("{}: {text}", side_name(side)));
        let v: Value = serde_json::from_slice(&line).map_err(|e| {
            (
                Verdict::Fail,
                format!("a line at the {} side is not JSON ({e})", side_name(side)),
            )
        })?;
        Ok((text, v))
    }

    /// The next message arriving at `a.side` is `a.json`.
    fn arrives(&mut self, a: &ArrivesSpec) -> Result<String, (Verdict, String)> {
        let (text, v) = self.read(a.side)?;
        if !same_message(&v, &a.json, a.any_error_code, &mut self.binds) {
            return Err((
                Verdict::Fail,
                clip(&format!(
                    "at the {} side: {v}, expected {}",
                    side_name(a.side),
                    a.json
                )),
            ));
        }
        Ok(text)
    }

    /// Nothing arrives at either side for `ms`.
    fn silence(&mut self, ms: u64) -> Result<(), (Verdict, String)> {
        let deadline = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < deadline {
            for (side, lines) in [
                (Side::Client, &mut self.from_proxy),
                (Side::Upstream, &mut self.from_upstream),
            ] {
                if let Some(Ok(l)) = lines.unexpected() {
                    let text = String::from_utf8_lossy(&l).into_owned();
                    self.transcript.push(TranscriptEntry {
                        t_ms: 0,
                        dir: Dir::Received,
                        data: clip(&format!("{}: {text}", side_name(side))),
                    });
                    return Err((
                        Verdict::Fail,
                        clip(&format!(
                            "expected silence; the {} side got {text}",
                            side_name(side)
                        )),
                    ));
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    /// Fails on a message that arrived at either side without being expected.
    fn nothing_unexpected(&mut self) -> Result<(), (Verdict, String)> {
        self.silence(0)
    }
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
        if v.methods.contains(&Method::McpProxy) {
            Ok(Method::McpProxy)
        } else {
            Err("not an mcp_proxy vector; this SUT is an MCP proxy".into())
        }
    }

    /// The client version the proxy is started for.
    fn materialise(&mut self, v: &Vector, _m: Method) -> Result<String, MaterialiseError> {
        match &v.proxy {
            Some(p) => Ok(p.client_version.as_str().to_owned()),
            None => Err(MaterialiseError::Invalid("no `proxy` block".into())),
        }
    }

    fn drive(
        &mut self,
        v: &Vector,
        client_version: String,
        _cancel: &Cancel,
    ) -> Result<Outcome, Fatal> {
        Ok(self.conversation(&client_version, &v.steps))
    }
}

/// The outcome of a vector that stopped before its conversation began.
fn early(verdict: Verdict, why: String) -> Outcome {
    Outcome::stop(verdict, why)
}

impl McpProxyMethod<'_> {
    fn conversation(&self, client_version: &str, steps: &[Step]) -> Outcome {
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
                            format!("the proxy exited before starting its server: {x:?}"),
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
            to_proxy: stdin,
            from_proxy: Lines::spawn(stdout),
            upstream,
            from_upstream: Lines::spawn(reader),
            transcript: Vec::new(),
            binds: Binds::new(),
        };
        c.log(
            Dir::Note,
            format!("started {} for a {client_version} client", self.describe()),
        );
        let (mut exp, mut obs) = (String::new(), String::new());
        for (i, s) in steps.iter().enumerate() {
            let n = i + 1;
            let side = s.side.unwrap_or(Side::Client);
            let line = s
                .send
                .as_ref()
                .and_then(|x| x.jsonrpc_line.as_deref())
                .unwrap_or_default();
            let fail = |c: &mut Conv, v: Verdict, why: String, e: String, o: String| Outcome {
                expected: e,
                observed: o,
                ..Outcome::stop(v, format!("step {n}: {why}"))
                    .with_transcript(std::mem::take(&mut c.transcript))
            };
            let line = match substitute(line, &c.binds) {
                Ok(l) => l,
                Err(why) => {
                    return fail(
                        &mut c,
                        Verdict::HarnessError,
                        why,
                        String::new(),
                        String::new(),
                    )
                }
            };
            if let Err(why) = c.send(side, &line) {
                return fail(&mut c, Verdict::Fail, why, String::new(), String::new());
            }
            for e in s.expect.as_slice() {
                match e {
                    Expect::Arrives(a) => {
                        exp = format!("step {n}: at the {} side {}", side_name(a.side), a.json);
                        match c.arrives(a) {
                            Ok(o) => obs = format!("step {n}: {o}"),
                            Err((v, why)) => {
                                let e2 = exp.clone();
                                return fail(&mut c, v, why.clone(), e2, why);
                            }
                        }
                    }
                    Expect::Silence(sp) => {
                        let ms = match &sp.ms {
                            crate::catalog::vector::Num::Lit(m) => *m,
                            crate::catalog::vector::Num::Expr(_) => 300,
                        };
                        exp = format!("step {n}: nothing arrives for {ms} ms");
                        if let Err((v, why)) = c.silence(ms) {
                            let e2 = exp.clone();
                            return fail(&mut c, v, why.clone(), e2, why);
                        }
                        obs = exp.clone();
                    }
                    other => {
                        return fail(
                            &mut c,
                            Verdict::HarnessError,
                            format!("{other:?} is not an mcp_proxy expectation"),
                            String::new(),
                            String::new(),
                        )
                    }
                }
            }
            if let Err((v, why)) = c.nothing_unexpected() {
                let e2 = exp.clone();
                return fail(&mut c, v, why.clone(), e2, why);
            }
        }
        drop(p);
        Outcome::pass(exp, obs).with_transcript(std::mem::take(&mut c.transcript))
    }
}
