//! The load mode's timing and judgement against a scripted endpoint on a virtual clock: a
//! connection keeps its requests in flight for the window and drains, and the counts it
//! leaves decide whether the run held, with the reasons the report gives, without sockets
//! and without waiting.

use super::book::tests::matcher;
use super::book::Book;
use super::conn::{self, Drive, Phases, Template};
use super::report::reasons;
use crate::connect::wire::Recv;
use crate::frames::{e1, Envelope, FrameDecoder, Limits};
use crate::method::conv::clock::{Clock, VirtualClock};
use crate::method::conv::script::{Script, ScriptedWire};
use crate::support::cancel::Cancel;
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;

fn limits() -> Limits {
    Limits {
        max_frame_bytes: 1 << 20,
        min_msg_id_bytes: 1,
        max_msg_id_bytes: usize::MAX,
        max_ext_bytes: usize::MAX,
        max_payload_bytes: usize::MAX,
    }
}

/// A frame from the endpoint answering `msg_id` with `payload`.
fn answer(msg_id: &Bytes, payload: &str) -> Recv {
    let env = Envelope {
        version: 1,
        profile_id: 1,
        msg_type: 2,
        msg_id: msg_id.clone(),
        payload: Bytes::from(payload.to_owned()),
        ..Envelope::default()
    };
    Recv::Data(
        e1::frame_bytes(&env)
            .map(|b| b.to_vec())
            .unwrap_or_default(),
    )
}

/// An endpoint answering every probe after `ms` with `payload` (`None`: never).
fn endpoint(ms: u64, payload: Option<&'static str>) -> Script {
    let mut frames = FrameDecoder::new(limits());
    Box::new(move |b: &[u8]| {
        frames.feed(b);
        let mut out = Vec::new();
        while let Ok(Some(body)) = frames.next_body() {
            if let (Ok(env), Some(p)) = (e1::decode(&body, &limits()), payload) {
                out.push((ms, answer(&env.msg_id, p)));
            }
        }
        out
    })
}

/// One connection with K = 2 for a 1 s window and a 500 ms drain; its book.
fn run(clock: &VirtualClock, script: Script, cancel: &Cancel) -> Book {
    let t0 = clock.now();
    let phases = Phases {
        window_end: t0 + Duration::from_millis(1_000),
        drain_end: t0 + Duration::from_millis(1_500),
    };
    let matcher = matcher();
    let d = Drive {
        matcher: &matcher,
        reply_limits: limits(),
        phases,
        cancel,
        clock,
        reconnect: None,
    };
    let mut book = Book::new(0, 2, phases.window_end, Duration::from_millis(300));
    book.opened();
    let build: conn::Build = Arc::new(|| {
        Ok(Envelope {
            version: 1,
            profile_id: 1,
            msg_type: 1,
            msg_id: Bytes::from_static(b"0123456789abcdef"),
            payload: Bytes::from_static(b"{}"),
            ..Envelope::default()
        })
    });
    let mut tmpl = Template::new(build, t0).expect("the probe builds");
    let wire = ScriptedWire::new(clock, script, Vec::new());
    conn::run(Some(Box::new(wire)), &mut book, &mut tmpl, &d);
    book
}

#[test]
fn an_endpoint_answering_everything_holds_and_fills_the_window() {
    let clock = VirtualClock::new();
    let t0 = clock.now();
    let book = run(&clock, endpoint(10, Some("{}")), &Cancel::new());
    // Two in flight, each answered 10 ms later, for a second.
    assert_eq!(book.counts.sent, 200);
    assert_eq!(book.counts.lost(), 0);
    assert!(reasons(&book.counts, false).is_empty());
    // Everything was answered when the window closed: no drain.
    assert_eq!(clock.now().duration_since(t0), Duration::from_millis(1_000));
}

#[test]
fn a_silent_endpoint_loses_its_requests_past_the_reply_timeout() {
    let clock = VirtualClock::new();
    let book = run(&clock, endpoint(0, None), &Cancel::new());
    assert!(book.counts.lost_timed_out > 0);
    let why = reasons(&book.counts, false);
    assert_eq!(why.len(), 1);
    assert!(why[0].contains("replies lost"), "{why:?}");
    assert!(why[0].contains("timed out"), "{why:?}");
}

#[test]
fn error_frames_fail_the_run_by_code() {
    let clock = VirtualClock::new();
    let book = run(
        &clock,
        endpoint(5, Some(r#"{"error":{"data":{"swp_error":"ERR_BUSY"}}}"#)),
        &Cancel::new(),
    );
    let why = reasons(&book.counts, false);
    assert_eq!(
        why,
        [format!(
            "{} error frames (ERR_BUSY ×{})",
            book.counts.sent, book.counts.sent
        )]
    );
}

#[test]
fn a_closed_connection_is_a_failure_and_loses_what_was_in_flight() {
    let clock = VirtualClock::new();
    let book = run(
        &clock,
        Box::new(|_: &[u8]| vec![(20, Recv::Eof)]),
        &Cancel::new(),
    );
    assert_eq!(book.counts.connection_failures, 1);
    assert_eq!(book.counts.lost_on_close, 2);
    let why = reasons(&book.counts, false);
    assert!(why.iter().any(|r| r == "1 connection failures"), "{why:?}");
}

#[test]
fn a_cancelled_run_stops_at_once_and_says_so() {
    let clock = VirtualClock::new();
    let t0 = clock.now();
    let cancel = Cancel::new();
    cancel.cancel();
    let book = run(&clock, endpoint(10, Some("{}")), &cancel);
    assert_eq!(clock.now(), t0);
    assert_eq!(
        reasons(&book.counts, true),
        ["the run was interrupted", "no request was sent"]
    );
}
