//! The MCP-native judges against a scripted stdio server on a virtual clock: a response that
//! holds or breaks its expectation, silence until the step's deadline, a server that closes
//! its stdout, a response where none belongs, and a cancelled run, each with its verdict and
//! reason, without a process and without waiting.

use super::conv::{Chan, Conv, Pumped, CLIP};
use super::steps::{expect_no_response, expect_response};
use crate::catalog::vector::ResponseSpec;
use crate::connect::wire::Recv;
use crate::method::conv::clock::{Clock, VirtualClock};
use crate::method::conv::script::{line, Script, ScriptedWire};
use crate::method::conv::timeline::Timeline;
use crate::report::result::Verdict;
use crate::support::cancel::Cancel;
use crate::sut::Timing;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A server answering each request line with `answer(request)` after `ms`.
fn server(ms: u64, answer: fn(&Value) -> Option<String>) -> Script {
    Box::new(move |b: &[u8]| {
        let Ok(req) = serde_json::from_slice::<Value>(b) else {
            return Vec::new();
        };
        answer(&req)
            .map(|a| vec![(ms, line(&a))])
            .unwrap_or_default()
    })
}

/// A server that never answers.
fn silent() -> Script {
    Box::new(|_: &[u8]| Vec::new())
}

fn conv<'a>(clock: &'a VirtualClock, script: Script, cancel: Cancel) -> Conv<'a> {
    let timing = Timing::default();
    let wire = ScriptedWire::new(clock, script, Vec::new());
    let tl = Timeline::new(clock, timing.vector_ms, cancel, CLIP);
    Conv::new(Chan::Stdio(Box::new(wire)), None, timing, tl, None, None)
}

fn spec(v: Value) -> ResponseSpec {
    serde_json::from_value(v).expect("a valid response spec")
}

fn ping(c: &mut Conv<'_>) {
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    c.sent(&json!(1), "ping", None);
    assert!(c.send_text(&req.to_string()).is_ok());
}

#[test]
fn a_response_holding_the_expectation_passes() {
    let clock = VirtualClock::new();
    let mut c = conv(
        &clock,
        server(20, |r| {
            Some(json!({"jsonrpc": "2.0", "id": r["id"], "result": {"ok": true}}).to_string())
        }),
        Cancel::new(),
    );
    ping(&mut c);
    let got = expect_response(
        &mut c,
        &spec(json!({"id": 1, "result": {"ok": true}})),
        &BTreeMap::new(),
    );
    assert!(got.is_ok_and(|o| o.contains("\"ok\":true")));
    assert_eq!(c.tl.t(), 20);
}

#[test]
fn another_error_code_fails_naming_both() {
    let clock = VirtualClock::new();
    let mut c = conv(
        &clock,
        server(5, |r| {
            Some(
                json!({"jsonrpc": "2.0", "id": r["id"],
                        "error": {"code": -32600, "message": "no"}})
                .to_string(),
            )
        }),
        Cancel::new(),
    );
    ping(&mut c);
    let stop = expect_response(
        &mut c,
        &spec(json!({"id": 1, "error": {"code": -32601}})),
        &BTreeMap::new(),
    )
    .expect_err("the code differs");
    assert_eq!(stop.verdict, Verdict::Fail);
    assert_eq!(stop.why, "error code -32600 instead of -32601");
}

#[test]
fn silence_until_the_step_deadline_fails_as_no_response() {
    let clock = VirtualClock::new();
    let mut c = conv(&clock, silent(), Cancel::new());
    ping(&mut c);
    let stop = expect_response(&mut c, &spec(json!({"id": 1})), &BTreeMap::new())
        .expect_err("nothing arrives");
    assert_eq!(stop.verdict, Verdict::Fail);
    assert_eq!(stop.why, "no response with id 1 within 3000 ms");
    assert_eq!(stop.observed, "no response");
    assert_eq!(c.tl.t(), Timing::default().step_ms);
}

#[test]
fn an_unanswered_request_is_keyed_by_its_method() {
    let clock = VirtualClock::new();
    let mut c = conv(&clock, silent(), Cancel::new());
    ping(&mut c);
    let d = c.answer_deadline();
    let stop = c.wait_response(&json!(1), d).expect_err("nothing arrives");
    assert_eq!(stop.why, "no response with id 1 in time");
    assert_eq!(stop.key.as_deref(), Some("ping unanswered"));
}

#[test]
fn a_server_that_closes_its_stdout_fails_the_step_saying_so() {
    let clock = VirtualClock::new();
    let mut c = conv(
        &clock,
        Box::new(|_: &[u8]| vec![(10, Recv::Eof)]),
        Cancel::new(),
    );
    ping(&mut c);
    let stop = expect_response(&mut c, &spec(json!({"id": 1})), &BTreeMap::new())
        .expect_err("the server closed");
    assert_eq!(stop.verdict, Verdict::Fail);
    assert_eq!(stop.why, "the server closed its stdout");
}

#[test]
fn a_response_where_none_belongs_fails_and_silence_passes() {
    let clock = VirtualClock::new();
    let mut c = conv(
        &clock,
        server(50, |r| {
            Some(json!({"jsonrpc": "2.0", "id": r["id"], "result": {}}).to_string())
        }),
        Cancel::new(),
    );
    ping(&mut c);
    let stop = expect_no_response(&mut c, Some(&json!(1)), 300).expect_err("it answered");
    assert_eq!(stop.why, "a response arrived");
    assert_eq!(stop.expected, "no response with id 1 within 300 ms");

    let mut quiet = conv(&clock, silent(), Cancel::new());
    ping(&mut quiet);
    assert_eq!(
        expect_no_response(&mut quiet, Some(&json!(1)), 300).ok(),
        Some("none".to_owned())
    );
}

#[test]
fn a_line_that_is_not_json_fails_a_gateway_step() {
    let clock = VirtualClock::new();
    let mut c = conv(
        &clock,
        Box::new(|_: &[u8]| vec![(1, line("hello"))]),
        Cancel::new(),
    );
    ping(&mut c);
    let d = c.answer_deadline();
    let stop = c.pump(d).err().expect("not JSON");
    assert!(stop
        .why
        .starts_with("the server sent a line on stdout that is not JSON"));
    assert_eq!(stop.observed, "hello");
}

#[test]
fn a_cancelled_run_stops_waiting_at_once() {
    let clock = VirtualClock::new();
    let cancel = Cancel::new();
    let mut c = conv(&clock, silent(), cancel.clone());
    ping(&mut c);
    let t0 = clock.now();
    cancel.cancel();
    let d = c.tl.after(10_000);
    assert!(matches!(c.pump(d), Ok(Pumped::Timeout)));
    assert_eq!(clock.now(), t0);
    assert!(!c.out_of_time);
}

/// A response a step did not wait for is shown with its code and HTTP status, not only its
/// id: "only responses to other ids: null" told a reader nothing.
#[test]
fn another_response_is_summarised_with_its_code_and_status() {
    use super::conv::Arrived;
    use super::judge::Inbound;
    use serde_json::json;
    let msg =
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
    let a = Arrived {
        msg: msg.clone(),
        inbound: Inbound::Response {
            id: serde_json::Value::Null,
            method: None,
            msg,
        },
        status: Some(400),
    };
    assert_eq!(a.summary(), "null (error -32700, HTTP 400)");
    let ok = json!({"jsonrpc": "2.0", "id": 3, "result": {}});
    let b = Arrived {
        msg: ok.clone(),
        inbound: Inbound::Response {
            id: json!(3),
            method: None,
            msg: ok,
        },
        status: None,
    };
    assert_eq!(b.summary(), "3 (a result)");
}
