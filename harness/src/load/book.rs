//! The bookkeeping of one load connection, without I/O: which requests are in flight (at
//! most K, each under a fresh msg_id), what the frames that come back mean for them, their
//! latencies in an HDR histogram and every count the load report carries. The caller passes
//! the time in, so every rule is tested here without a socket or a clock.

use super::codes::Tally;
use crate::frames::Envelope;
use crate::sut::{ErrorFrameSpec, ProbeSpec};
use bytes::Bytes;
use hdrhistogram::Histogram;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The largest latency the histograms tell apart, in µs (100 s); a longer one is recorded
/// as this. Replies later than the reply timeout are not latencies anyway.
pub const MAX_LATENCY_US: u64 = 100_000_000;

/// Significant figures the histograms keep: 0.1 % resolution at any latency.
const SIGNIFICANT_FIGURES: u8 = 3;

/// Distinct connection-failure reasons a report keeps (the count is exact; the texts are
/// examples, so a flapping SUT cannot grow the report).
pub const MAX_FAILURE_REASONS: usize = 8;

/// A latency histogram in µs. Counts are `u32`: one per connection, so a few hundred of
/// them stay within tens of MiB.
pub type Latencies = Histogram<u32>;

/// An empty latency histogram.
pub fn latencies() -> Latencies {
    // Constant bounds within what hdrhistogram accepts (low >= 1, high >= 2 × low, at
    // most 5 figures): this cannot fail.
    Histogram::new_with_bounds(1, MAX_LATENCY_US, SIGNIFICANT_FIGURES)
        .expect("valid constant histogram bounds")
}

/// What a frame from the endpoint is, as far as the load goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// The answer shape of the probe (`reply_profile_id`, `reply_msg_type`).
    Reply,
    /// An error frame (the manifest's `reject_signal.error_frame`) carrying this code.
    Error(String),
    /// Anything else (a notification, a frame of another profile).
    Other,
}

/// Tells replies from error frames by the manifest's declarations: the probe's answer shape
/// and the error frame with its code pointer. Where both share a shape (a JSON-RPC response
/// carries results and errors alike), a frame with a code at the pointer is an error.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// `profile_id` and `msg_type` of the probe's answer.
    pub reply: (u64, u64),
    /// The error frame, when the endpoint signals rejects with one.
    pub error: Option<ErrorFrameSpec>,
}

impl Matcher {
    /// The matcher a probe and the manifest's error frame declare.
    pub fn new(probe: &ProbeSpec, error: Option<ErrorFrameSpec>) -> Self {
        Matcher {
            reply: (probe.reply_profile_id, probe.reply_msg_type),
            error,
        }
    }

    /// What `e` is.
    pub fn classify(&self, e: &Envelope) -> Seen {
        if let Some(ef) = &self.error {
            if (e.profile_id, e.msg_type) == (ef.profile_id, ef.msg_type) {
                let code = serde_json::from_slice::<serde_json::Value>(&e.payload)
                    .ok()
                    .and_then(|v| {
                        v.pointer(&ef.code_pointer)
                            .and_then(|c| c.as_str())
                            .map(str::to_owned)
                    });
                if let Some(code) = code {
                    return Seen::Error(code);
                }
            }
        }
        if (e.profile_id, e.msg_type) == self.reply {
            Seen::Reply
        } else {
            Seen::Other
        }
    }
}

/// Every count of a load run (one connection's, or the sum of all).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Counts {
    /// Requests sent.
    pub sent: u64,
    /// Requests answered with the probe's reply.
    pub replies: u64,
    /// Of those, answered before the measuring window closed (the throughput's numerator).
    pub replies_in_window: u64,
    /// Requests answered with an error frame, by code (bounded: `load::codes`).
    pub error_codes: Tally,
    /// Error frames that answer no request in flight (e.g. a connection-level reject), by
    /// code (bounded the same way).
    pub unmatched_error_codes: Tally,
    /// Requests not answered within the reply timeout.
    pub lost_timed_out: u64,
    /// Requests in flight on a connection that closed or broke.
    pub lost_on_close: u64,
    /// Requests still unanswered when the drain period ended.
    pub lost_at_end: u64,
    /// Answer-shaped frames whose msg_id is not in flight (late, duplicated or made up);
    /// counted, never stored.
    pub unknown_replies: u64,
    /// Frames that are neither answers nor error frames.
    pub other_frames: u64,
    /// Output that is not valid framing or does not decode (the connection is dropped).
    pub undecodable: u64,
    /// Connections opened, including reconnections.
    pub connections_opened: u64,
    /// Connections that could not be opened, closed or broke before the run ended.
    pub connection_failures: u64,
}

impl Counts {
    /// Requests answered with an error frame.
    pub fn errors(&self) -> u64 {
        self.error_codes.total()
    }

    /// Error frames that answered nothing.
    pub fn unmatched_errors(&self) -> u64 {
        self.unmatched_error_codes.total()
    }

    /// Requests never answered.
    pub fn lost(&self) -> u64 {
        self.lost_timed_out + self.lost_on_close + self.lost_at_end
    }

    /// Adds `o` to these counts.
    pub fn add(&mut self, o: &Counts) {
        self.sent += o.sent;
        self.replies += o.replies;
        self.replies_in_window += o.replies_in_window;
        self.error_codes.add(&o.error_codes);
        self.unmatched_error_codes.add(&o.unmatched_error_codes);
        self.lost_timed_out += o.lost_timed_out;
        self.lost_on_close += o.lost_on_close;
        self.lost_at_end += o.lost_at_end;
        self.unknown_replies += o.unknown_replies;
        self.other_frames += o.other_frames;
        self.undecodable += o.undecodable;
        self.connections_opened += o.connections_opened;
        self.connection_failures += o.connection_failures;
    }
}

/// One connection's book: its in-flight table (bounded by K), its latencies and counts.
pub struct Book {
    conn: u32,
    seq: u64,
    cap: usize,
    in_flight: HashMap<Bytes, Instant>,
    window_end: Instant,
    reply_timeout: Duration,
    /// Latencies of the requests answered with the probe's reply, in µs.
    pub latencies: Latencies,
    /// The counts.
    pub counts: Counts,
    /// Why connections failed: the first [`MAX_FAILURE_REASONS`] distinct reasons.
    pub failure_reasons: Vec<String>,
}

impl Book {
    /// The book of connection number `conn`, with at most `cap` (K) requests in flight; a
    /// reply counts towards throughput before `window_end`; a request unanswered after
    /// `reply_timeout` is lost.
    pub fn new(conn: u32, cap: usize, window_end: Instant, reply_timeout: Duration) -> Self {
        Book {
            conn,
            seq: 0,
            cap: cap.max(1),
            in_flight: HashMap::with_capacity(cap.max(1)),
            window_end,
            reply_timeout,
            latencies: latencies(),
            counts: Counts::default(),
            failure_reasons: Vec::new(),
        }
    }

    /// Requests in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Whether another request may be sent.
    pub fn has_room(&self) -> bool {
        self.in_flight.len() < self.cap
    }

    /// The msg_id of connection `conn`'s request number `seq`: 16 printable octets,
    /// `ld` + 4 hex digits of the connection + 10 of the sequence, so ids are unique across
    /// the run's connections and fit any endpoint's 8..64-octet bounds.
    pub fn msg_id(conn: u32, seq: u64) -> Bytes {
        Bytes::from(format!("ld{:04x}{:010x}", conn & 0xffff, seq & 0xff_ffff_ffff).into_bytes())
    }

    /// Takes a slot for a new request sent at `now`: its fresh msg_id, or `None` when K
    /// requests are already in flight.
    pub fn issue(&mut self, now: Instant) -> Option<Bytes> {
        if !self.has_room() {
            return None;
        }
        self.seq += 1;
        let id = Self::msg_id(self.conn, self.seq);
        self.in_flight.insert(id.clone(), now);
        self.counts.sent += 1;
        Some(id)
    }

    /// Records a frame that arrived at `now`.
    pub fn on_frame(&mut self, msg_id: &Bytes, seen: Seen, now: Instant) {
        match seen {
            Seen::Reply => match self.in_flight.remove(msg_id) {
                Some(sent) => {
                    let us = u64::try_from(now.saturating_duration_since(sent).as_micros())
                        .unwrap_or(u64::MAX)
                        .clamp(1, MAX_LATENCY_US);
                    // Within the histogram's bounds by the clamp above.
                    let _ = self.latencies.record(us);
                    self.counts.replies += 1;
                    if now < self.window_end {
                        self.counts.replies_in_window += 1;
                    }
                }
                None => self.counts.unknown_replies += 1,
            },
            Seen::Error(code) => {
                let by = if self.in_flight.remove(msg_id).is_some() {
                    &mut self.counts.error_codes
                } else {
                    &mut self.counts.unmatched_error_codes
                };
                by.count(&code);
            }
            Seen::Other => self.counts.other_frames += 1,
        }
    }

    /// Output that does not decode; the caller drops the connection ([`Book::closed`]).
    pub fn undecodable(&mut self) {
        self.counts.undecodable += 1;
    }

    /// Declares lost the requests in flight for longer than the reply timeout at `now`,
    /// freeing their slots; how many.
    pub fn expire(&mut self, now: Instant) -> u64 {
        let before = self.in_flight.len();
        let limit = self.reply_timeout;
        self.in_flight
            .retain(|_, sent| now.saturating_duration_since(*sent) < limit);
        let n = (before - self.in_flight.len()) as u64;
        self.counts.lost_timed_out += n;
        n
    }

    /// A connection was opened.
    pub fn opened(&mut self) {
        self.counts.connections_opened += 1;
    }

    /// The connection could not be opened, or it closed or broke while the run needed it:
    /// its requests in flight are lost (nothing can answer them now).
    pub fn closed(&mut self, why: &str) {
        self.counts.connection_failures += 1;
        self.counts.lost_on_close += self.in_flight.len() as u64;
        self.in_flight.clear();
        if self.failure_reasons.len() < MAX_FAILURE_REASONS
            && !self.failure_reasons.iter().any(|r| r == why)
        {
            self.failure_reasons.push(why.to_owned());
        }
    }

    /// The run is over: whatever is still in flight was never answered.
    pub fn finish(&mut self) {
        self.counts.lost_at_end += self.in_flight.len() as u64;
        self.in_flight.clear();
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::sut::ErrorFrameSpec;

    const MS: Duration = Duration::from_millis(1);

    fn book(cap: usize) -> (Book, Instant) {
        let t0 = Instant::now();
        (Book::new(3, cap, t0 + 1000 * MS, 500 * MS), t0)
    }

    /// Replies (1, 2) with the error frame of the reference manifests; `load::tests` uses it too.
    pub(in crate::load) fn matcher() -> Matcher {
        Matcher {
            reply: (1, 2),
            error: Some(ErrorFrameSpec {
                profile_id: 1,
                msg_type: 2,
                code_pointer: "/error/data/swp_error".into(),
                example: None,
                correlation: Default::default(),
            }),
        }
    }

    fn env(p: u64, t: u64, payload: &str) -> Envelope {
        Envelope {
            profile_id: p,
            msg_type: t,
            payload: Bytes::from(payload.to_owned()),
            ..Envelope::default()
        }
    }

    #[test]
    fn msg_ids_are_sixteen_printable_octets_unique_per_connection_and_sequence() {
        let a = Book::msg_id(3, 1);
        assert_eq!(&a[..], b"ld00030000000001");
        assert_ne!(Book::msg_id(3, 2), a);
        assert_ne!(Book::msg_id(4, 1), a);
    }

    #[test]
    fn no_more_than_k_requests_are_in_flight() {
        let (mut b, t0) = book(2);
        assert!(b.issue(t0).is_some());
        assert!(b.issue(t0).is_some());
        assert_eq!(b.issue(t0), None);
        assert_eq!((b.in_flight(), b.counts.sent), (2, 2));
    }

    #[test]
    fn a_reply_frees_its_slot_and_records_its_latency() {
        let (mut b, t0) = book(1);
        let id = b.issue(t0).unwrap();
        b.on_frame(&id, Seen::Reply, t0 + 7 * MS);
        assert!(b.has_room());
        assert_eq!((b.counts.replies, b.counts.replies_in_window), (1, 1));
        assert_eq!(b.latencies.len(), 1);
        // 3 significant figures: 7000 µs comes back as 7000 give or take 0.1 %.
        assert!(b.latencies.equivalent(b.latencies.max(), 7000));
    }

    #[test]
    fn a_reply_after_the_window_counts_but_not_towards_throughput() {
        let (mut b, t0) = book(1);
        let id = b.issue(t0 + 999 * MS).unwrap();
        b.on_frame(&id, Seen::Reply, t0 + 1001 * MS);
        assert_eq!((b.counts.replies, b.counts.replies_in_window), (1, 0));
    }

    #[test]
    fn a_reply_with_an_unknown_msg_id_is_counted_and_not_stored() {
        let (mut b, t0) = book(1);
        let id = b.issue(t0).unwrap();
        b.on_frame(&Bytes::from_static(b"not-ours"), Seen::Reply, t0);
        assert_eq!((b.counts.unknown_replies, b.in_flight()), (1, 1));
        // A second answer to the same request is unknown too: its slot is gone.
        b.on_frame(&id, Seen::Reply, t0);
        b.on_frame(&id, Seen::Reply, t0);
        assert_eq!((b.counts.replies, b.counts.unknown_replies), (1, 2));
        assert_eq!(b.in_flight(), 0);
    }

    #[test]
    fn an_error_frame_answers_its_request_and_is_counted_by_code() {
        let (mut b, t0) = book(2);
        let id = b.issue(t0).unwrap();
        b.on_frame(&id, Seen::Error("ERR_RATE_LIMIT_EXCEEDED".into()), t0);
        b.on_frame(
            &Bytes::from_static(b"generated"),
            Seen::Error("ERR_MALFORMED_FRAME".into()),
            t0,
        );
        assert_eq!(b.counts.error_codes.by_code["ERR_RATE_LIMIT_EXCEEDED"], 1);
        assert_eq!(
            b.counts.unmatched_error_codes.by_code["ERR_MALFORMED_FRAME"],
            1
        );
        assert_eq!(
            (b.in_flight(), b.counts.replies, b.latencies.len()),
            (0, 0, 0)
        );
    }

    #[test]
    fn other_frames_are_counted_and_answer_nothing() {
        let (mut b, t0) = book(1);
        let id = b.issue(t0).unwrap();
        b.on_frame(&id, Seen::Other, t0);
        assert_eq!((b.counts.other_frames, b.in_flight()), (1, 1));
    }

    #[test]
    fn requests_past_the_reply_timeout_are_lost_and_free_their_slots() {
        let (mut b, t0) = book(2);
        b.issue(t0).unwrap();
        b.issue(t0 + 300 * MS).unwrap();
        assert_eq!(b.expire(t0 + 499 * MS), 0);
        assert_eq!(b.expire(t0 + 500 * MS), 1);
        assert_eq!((b.counts.lost_timed_out, b.in_flight()), (1, 1));
    }

    #[test]
    fn a_closed_connection_loses_what_it_had_in_flight_and_keeps_few_reasons() {
        let (mut b, t0) = book(4);
        b.issue(t0).unwrap();
        b.issue(t0).unwrap();
        b.closed("connection reset");
        assert_eq!(
            (b.counts.lost_on_close, b.counts.connection_failures),
            (2, 1)
        );
        assert_eq!(b.in_flight(), 0);
        for i in 0..(MAX_FAILURE_REASONS * 2) {
            b.closed(&format!("reason {i}"));
            b.closed("connection reset");
        }
        assert_eq!(b.failure_reasons.len(), MAX_FAILURE_REASONS);
        assert_eq!(
            b.counts.connection_failures,
            1 + 4 * MAX_FAILURE_REASONS as u64
        );
    }

    #[test]
    fn what_is_in_flight_at_the_end_is_lost() {
        let (mut b, t0) = book(3);
        b.issue(t0).unwrap();
        b.finish();
        assert_eq!(
            (b.counts.lost_at_end, b.counts.lost(), b.in_flight()),
            (1, 1, 0)
        );
    }

    #[test]
    fn counts_add_up_across_connections() {
        let (mut a, t0) = book(1);
        let id = a.issue(t0).unwrap();
        a.on_frame(&id, Seen::Error("E".into()), t0);
        let (mut b, _) = book(1);
        b.issue(t0).unwrap();
        b.finish();
        let mut total = Counts::default();
        total.add(&a.counts);
        total.add(&b.counts);
        assert_eq!((total.sent, total.errors(), total.lost()), (2, 1, 1));
    }

    #[test]
    fn a_response_with_a_code_at_the_pointer_is_an_error_else_a_reply() {
        let m = matcher();
        let err = r#"{"jsonrpc":"2.0","id":"probe","error":{"code":-32000,"message":"x","data":{"swp_error":"ERR_RATE_LIMIT_EXCEEDED"}}}"#;
        assert_eq!(
            m.classify(&env(1, 2, err)),
            Seen::Error("ERR_RATE_LIMIT_EXCEEDED".into())
        );
        let ok = r#"{"jsonrpc":"2.0","id":"probe","result":{}}"#;
        assert_eq!(m.classify(&env(1, 2, ok)), Seen::Reply);
        // Not JSON at all: the reply shape decides.
        assert_eq!(m.classify(&env(1, 2, "\u{1}")), Seen::Reply);
        assert_eq!(m.classify(&env(1, 3, ok)), Seen::Other);
        let close_only = Matcher {
            reply: (1, 2),
            error: None,
        };
        assert_eq!(close_only.classify(&env(1, 2, err)), Seen::Reply);
    }

    #[test]
    fn histograms_merge() {
        let (mut a, t0) = book(1);
        let id = a.issue(t0).unwrap();
        a.on_frame(&id, Seen::Reply, t0 + MS);
        let (mut b, _) = book(1);
        let id = b.issue(t0).unwrap();
        b.on_frame(&id, Seen::Reply, t0 + 200 * MS);
        let mut all = latencies();
        all.add(&a.latencies).unwrap();
        all.add(&b.latencies).unwrap();
        assert_eq!(all.len(), 2);
        assert!(all.equivalent(all.max(), 200_000));
    }
}
