//! The harness on both sides of the proxy for one vector: what it sends at either side,
//! the judges of its expectations (a message arrives at a side; silence at both), and the
//! step loop that turns them into the vector's outcome. The sides are a [`Peers`], the
//! proxy's pipes and upstream socket on a real run and a scripted pair in unit tests; the
//! time is the conversation core's [`Timeline`].

use super::lines::{LineResult, Lines};
use super::matching::{same_message, substitute, Binds};
use crate::catalog::mcpx::ArrivesSpec;
use crate::catalog::vector::{Num, ProxyExpect, ProxyStep, Side};
use crate::method::contract::Outcome;
use crate::method::conv::timeline::{Clip, Timeline, INTERRUPTED};
use crate::report::result::{Dir, Verdict};
use serde_json::Value;
use std::io::Write;
use std::net::TcpStream;
use std::process::ChildStdin;
use std::time::{Duration, Instant};

/// How long a step waits for a message to arrive.
pub const STEP: Duration = Duration::from_secs(5);
/// Characters of a line kept in transcripts.
const TRANSCRIPT_CHARS: usize = 600;
/// How often a silence looks at both sides.
const SILENCE_POLL: Duration = Duration::from_millis(10);

/// This method's transcripts: lines clipped, and no clock, since reports must not differ
/// between runs outside their `run` block and the order of entries already tells the story.
pub const CLIP: Clip = Clip {
    chars: Some(TRANSCRIPT_CHARS),
    stamped: false,
};

/// A verdict and its reason: how a judge stops the vector.
pub type Stopped = (Verdict, String);

/// The two sides around the proxy as the harness sees them.
pub trait Peers {
    /// Writes one line at `side`.
    fn send(&mut self, side: Side, line: &str) -> std::io::Result<()>;
    /// The next line arriving at `side` before `deadline` (`None`: none in time).
    fn next(&mut self, side: Side, deadline: Instant) -> Option<LineResult>;
    /// A line that already arrived at `side`, if any.
    fn unexpected(&mut self, side: Side) -> Option<LineResult>;
}

/// The real sides: the proxy's stdin and stdout, and the upstream connection its server
/// (the harness's bridge) made.
pub struct Pipes {
    /// The proxy's stdin.
    pub to_proxy: ChildStdin,
    /// The proxy's stdout.
    pub from_proxy: Lines,
    /// The upstream connection.
    pub upstream: TcpStream,
    /// What the proxy sends upstream.
    pub from_upstream: Lines,
}

impl Peers for Pipes {
    fn send(&mut self, side: Side, line: &str) -> std::io::Result<()> {
        let w: &mut dyn Write = match side {
            Side::Client => &mut self.to_proxy,
            Side::Upstream => &mut self.upstream,
        };
        w.write_all(line.as_bytes())
            .and_then(|()| w.write_all(b"\n"))
            .and_then(|()| w.flush())
    }

    fn next(&mut self, side: Side, deadline: Instant) -> Option<LineResult> {
        match side {
            Side::Client => self.from_proxy.next(deadline),
            Side::Upstream => self.from_upstream.next(deadline),
        }
    }

    fn unexpected(&mut self, side: Side) -> Option<LineResult> {
        match side {
            Side::Client => self.from_proxy.unexpected(),
            Side::Upstream => self.from_upstream.unexpected(),
        }
    }
}

/// Both ends of the harness around the proxy.
pub struct Conv<'a> {
    /// The two sides.
    pub peers: Box<dyn Peers + 'a>,
    /// Time, cancel and the transcript.
    pub tl: Timeline<'a>,
    /// The captures bound so far (`?{name}` in the vector).
    pub binds: Binds,
}

fn clip(s: &str) -> String {
    crate::support::transcript::clip_text(s, TRANSCRIPT_CHARS)
}

/// The side's name in messages.
pub fn side_name(s: Side) -> &'static str {
    match s {
        Side::Client => "client",
        Side::Upstream => "upstream",
    }
}

impl Conv<'_> {
    /// Adds a transcript entry.
    pub fn log(&mut self, dir: Dir, text: String) {
        self.tl.log(dir, text);
    }

    fn send(&mut self, side: Side, line: &str) -> Result<(), String> {
        self.log(Dir::Sent, format!("{}: {line}", side_name(side)));
        self.peers
            .send(side, line)
            .map_err(|e| format!("cannot write to the proxy's {} side: {e}", side_name(side)))
    }

    /// The next line arriving at `side` within [`STEP`] (the harness's client side reads the
    /// proxy's stdout; its upstream side reads what the proxy sends its server), as text
    /// and JSON.
    fn read(&mut self, side: Side) -> Result<(String, Value), Stopped> {
        let deadline = self.tl.now() + STEP;
        let got = loop {
            if self.tl.cancelled() {
                return Err((Verdict::HarnessError, INTERRUPTED.to_owned()));
            }
            let slice = self.tl.slice(deadline);
            match self.peers.next(side, slice) {
                None if slice < deadline => {}
                got => break got,
            }
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

    /// The `arrives` expectation: the next message arriving at `a.side` is `a.json`.
    pub fn arrives(&mut self, a: &ArrivesSpec) -> Result<String, Stopped> {
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

    /// The `silence` expectation: nothing arrives at either side for `ms`.
    pub fn silence(&mut self, ms: u64) -> Result<(), Stopped> {
        let deadline = self.tl.after(ms);
        loop {
            for side in [Side::Client, Side::Upstream] {
                if let Some(Ok(l)) = self.peers.unexpected(side) {
                    let text = String::from_utf8_lossy(&l).into_owned();
                    self.log(Dir::Received, format!("{}: {text}", side_name(side)));
                    return Err((
                        Verdict::Fail,
                        clip(&format!(
                            "expected silence; the {} side got {text}",
                            side_name(side)
                        )),
                    ));
                }
            }
            if self.tl.now() >= deadline || self.tl.cancelled() {
                return Ok(());
            }
            self.tl
                .clock
                .sleep_until((self.tl.now() + SILENCE_POLL).min(deadline));
        }
    }

    /// Fails on a message that arrived at either side without being expected.
    pub fn nothing_unexpected(&mut self) -> Result<(), Stopped> {
        self.silence(0)
    }
}

/// Runs the steps on the conversation: each sends its line at its side, then its
/// expectations are judged in order; the first that fails ends the vector.
pub fn run_steps(c: &mut Conv<'_>, steps: &[ProxyStep]) -> Outcome {
    let (mut exp, mut obs) = (String::new(), String::new());
    for (i, s) in steps.iter().enumerate() {
        let n = i + 1;
        let side = s.side.unwrap_or(Side::Client);
        let line = s
            .send
            .as_ref()
            .and_then(|x| x.jsonrpc_line.as_deref())
            .unwrap_or_default();
        let fail = |c: &mut Conv<'_>, v: Verdict, why: String, e: String, o: String| Outcome {
            expected: e,
            observed: o,
            ..Outcome::stop(v, format!("step {n}: {why}")).with_transcript(c.tl.take_transcript())
        };
        let line = match substitute(line, &c.binds) {
            Ok(l) => l,
            Err(why) => return fail(c, Verdict::HarnessError, why, String::new(), String::new()),
        };
        if let Err(why) = c.send(side, &line) {
            return fail(c, Verdict::Fail, why, String::new(), String::new());
        }
        for e in s.expect.as_slice() {
            match e {
                ProxyExpect::Arrives(a) => {
                    exp = format!("step {n}: at the {} side {}", side_name(a.side), a.json);
                    match c.arrives(a) {
                        Ok(o) => obs = format!("step {n}: {o}"),
                        Err((v, why)) => {
                            let e2 = exp.clone();
                            return fail(c, v, why.clone(), e2, why);
                        }
                    }
                }
                ProxyExpect::Silence(sp) => {
                    let ms = match &sp.ms {
                        Num::Lit(m) => *m,
                        Num::Expr(_) => 300,
                    };
                    exp = format!("step {n}: nothing arrives for {ms} ms");
                    if let Err((v, why)) = c.silence(ms) {
                        let e2 = exp.clone();
                        return fail(c, v, why.clone(), e2, why);
                    }
                    obs = exp.clone();
                }
            }
        }
        if let Err((v, why)) = c.nothing_unexpected() {
            let e2 = exp.clone();
            return fail(c, v, why.clone(), e2, why);
        }
    }
    Outcome::pass(exp, obs).with_transcript(c.tl.take_transcript())
}
