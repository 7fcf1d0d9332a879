//! The MCP-proxy judges against a scripted proxy on a virtual clock: a message forwarded
//! as expected, a wrong one, nothing in time, a line where silence belongs, and a
//! cancelled run, each with its verdict and reason, without processes and without waiting.

use super::conv::{run_steps, Conv, Peers, CLIP};
use super::lines::LineResult;
use super::matching::Binds;
use crate::catalog::vector::{Family, ProxyStep, Side, StepFile};
use crate::method::conv::clock::{Clock, VirtualClock};
use crate::method::conv::timeline::{Timeline, INTERRUPTED};
use crate::report::result::Verdict;
use crate::support::cancel::Cancel;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// What the scripted proxy does with a line the harness sends at a side: lines arriving at
/// sides after delays in ms.
type Script = Box<dyn FnMut(Side, &str) -> Vec<(u64, Side, String)>>;

/// A proxy in memory whose output arrives on the virtual clock.
struct ScriptedPeers {
    clock: VirtualClock,
    script: Script,
    queue: Vec<(Instant, Side, String)>,
}

impl ScriptedPeers {
    fn take(&mut self, side: Side, by: Instant) -> Option<(Instant, String)> {
        self.queue.sort_by_key(|(t, _, _)| *t);
        let i = self
            .queue
            .iter()
            .position(|(t, s, _)| *s == side && *t <= by)?;
        let (t, _, l) = self.queue.remove(i);
        Some((t, l))
    }
}

impl Peers for ScriptedPeers {
    fn send(&mut self, side: Side, line: &str) -> std::io::Result<()> {
        let now = self.clock.now();
        for (ms, to, l) in (self.script)(side, line) {
            self.queue.push((now + Duration::from_millis(ms), to, l));
        }
        Ok(())
    }

    fn next(&mut self, side: Side, deadline: Instant) -> Option<LineResult> {
        match self.take(side, deadline) {
            Some((t, l)) => {
                self.clock.advance_to(t);
                Some(Ok(l.into_bytes()))
            }
            None => {
                self.clock.advance_to(deadline);
                None
            }
        }
    }

    fn unexpected(&mut self, side: Side) -> Option<LineResult> {
        let now = self.clock.now();
        self.take(side, now).map(|(_, l)| Ok(l.into_bytes()))
    }
}

/// A proxy that forwards what the client sends upstream after 10 ms, unchanged, and
/// `extra` lines to the client 50 ms later.
fn forwarder(extra: &'static [&'static str]) -> Script {
    Box::new(move |side, line| {
        let mut out = Vec::new();
        if side == Side::Client {
            out.push((10, Side::Upstream, line.to_owned()));
            out.extend(extra.iter().map(|l| (60, Side::Client, (*l).to_owned())));
        }
        out
    })
}

fn conv<'a>(clock: &'a VirtualClock, script: Script, cancel: Cancel) -> Conv<'a> {
    Conv {
        peers: Box::new(ScriptedPeers {
            clock: clock.clone(),
            script,
            queue: Vec::new(),
        }),
        tl: Timeline::new(clock, 60_000, cancel, CLIP),
        binds: Binds::new(),
    }
}

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

/// One step sending `PING` at the client side, expecting `expect`.
fn step(expect: Value) -> ProxyStep {
    serde_json::from_value::<StepFile>(json!({"send": {"jsonrpc_line": PING}, "expect": expect}))
        .expect("a valid step")
        .typed(Family::McpProxy, 1)
        .expect("an mcp_proxy step")
}

fn arrives_upstream(j: Value) -> Value {
    json!({"arrives": {"side": "upstream", "json": j}})
}

#[test]
fn a_message_forwarded_as_expected_passes() {
    let clock = VirtualClock::new();
    let mut c = conv(&clock, forwarder(&[]), Cancel::new());
    let o = run_steps(
        &mut c,
        &[step(arrives_upstream(
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        ))],
    );
    assert_eq!(o.verdict, Verdict::Pass, "{:?}", o.detail);
    assert_eq!(o.observed, format!("step 1: {PING}"));
    assert!(o.transcript.iter().all(|e| e.t_ms == 0));
}

#[test]
fn another_message_fails_showing_both() {
    let clock = VirtualClock::new();
    let mut c = conv(&clock, forwarder(&[]), Cancel::new());
    let o = run_steps(
        &mut c,
        &[step(arrives_upstream(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ))],
    );
    assert_eq!(o.verdict, Verdict::Fail);
    let why = o.detail.unwrap_or_default();
    assert!(why.starts_with("step 1: at the upstream side: "), "{why}");
    assert!(why.contains("expected"), "{why}");
}

#[test]
fn nothing_in_time_fails_after_the_step_wait() {
    let clock = VirtualClock::new();
    let t0 = clock.now();
    let mut c = conv(&clock, Box::new(|_, _| Vec::new()), Cancel::new());
    let o = run_steps(&mut c, &[step(arrives_upstream(json!({})))]);
    assert_eq!(o.verdict, Verdict::Fail);
    assert_eq!(
        o.detail.as_deref(),
        Some("step 1: nothing arrived at the upstream side within 5000 ms")
    );
    assert_eq!(clock.now().duration_since(t0), Duration::from_secs(5));
}

#[test]
fn a_line_where_silence_belongs_fails() {
    let clock = VirtualClock::new();
    let mut c = conv(&clock, forwarder(&[]), Cancel::new());
    let o = run_steps(&mut c, &[step(json!({"silence": {"ms": 200}}))]);
    assert_eq!(o.verdict, Verdict::Fail);
    assert_eq!(
        o.detail.as_deref(),
        Some(format!("step 1: expected silence; the upstream side got {PING}").as_str())
    );
}

#[test]
fn silence_held_passes_and_an_unexpected_line_after_the_step_fails() {
    let clock = VirtualClock::new();
    let mut c = conv(&clock, Box::new(|_, _| Vec::new()), Cancel::new());
    let o = run_steps(&mut c, &[step(json!({"silence": {"ms": 200}}))]);
    assert_eq!(o.verdict, Verdict::Pass, "{:?}", o.detail);
    assert_eq!(o.expected, "step 1: nothing arrives for 200 ms");

    // The forwarded message is expected; a stray line to the client 50 ms later is not,
    // and the step's 100 ms of silence sees it.
    let mut c = conv(&clock, forwarder(&[r#"{"stray":true}"#]), Cancel::new());
    let o = run_steps(
        &mut c,
        &[serde_json::from_value::<StepFile>(json!({"send": {"jsonrpc_line": PING}, "expect": [
            {"arrives": {"side": "upstream", "json": {"jsonrpc": "2.0", "id": 1, "method": "ping"}}},
            {"silence": {"ms": 100}}
        ]}))
        .expect("a valid step")
        .typed(Family::McpProxy, 1)
        .expect("an mcp_proxy step")],
    );
    assert_eq!(o.verdict, Verdict::Fail);
    assert_eq!(
        o.detail.as_deref(),
        Some(r#"step 1: expected silence; the client side got {"stray":true}"#)
    );
}

#[test]
fn a_cancelled_run_stops_waiting_at_once() {
    let clock = VirtualClock::new();
    let t0 = clock.now();
    let cancel = Cancel::new();
    let mut c = conv(&clock, Box::new(|_, _| Vec::new()), cancel.clone());
    cancel.cancel();
    let o = run_steps(&mut c, &[step(arrives_upstream(json!({})))]);
    assert_eq!(o.verdict, Verdict::HarnessError);
    assert_eq!(o.detail, Some(format!("step 1: {INTERRUPTED}")));
    assert_eq!(clock.now(), t0);
}
