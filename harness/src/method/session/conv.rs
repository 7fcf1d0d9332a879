//! One vector's conversation with an endpoint: what the harness sends, and the stream of
//! observations (frames, error frames, the connection closing, output that is not framing)
//! it reads back, against a clock the tests can replace.

use super::obs::Obs;
use crate::connect::wire::{Recv, Wire};
use crate::frames::FrameDecoder;
use crate::frames::{e1, Envelope, Limits};
use crate::method::conv::clock::Clock;
use crate::method::conv::timeline::{Clip, Timeline};
use crate::report::result::Dir;
use crate::support::cancel::Cancel;
use crate::support::transcript::transcript_hex;
use crate::sut::SessionSpec;
use bytes::Bytes;
use std::time::Instant;

/// Characters of a transcript entry kept. A frame's hex is already abbreviated at 256
/// octets (about 530 characters, a decoded frame's note a little more); the bound is for
/// the entries that carry what the SUT chose whole (a msg_id, an error code, a reason), so
/// no single entry of a hostile SUT's transcript runs to megabytes.
const TRANSCRIPT_CHARS: usize = 2048;

/// How this method's transcripts keep entries: clipped at [`TRANSCRIPT_CHARS`], timed.
const CLIP: Clip = Clip {
    chars: Some(TRANSCRIPT_CHARS),
    stamped: true,
};

/// One vector's conversation.
pub struct Conv<'a> {
    /// The connection to the endpoint.
    pub wire: Box<dyn Wire>,
    /// The harness's upstream connection (intermediary topology).
    pub upstream: Option<Box<dyn Wire>>,
    /// How the endpoint is read and signals.
    pub spec: &'a SessionSpec,
    /// Time, the vector's deadlines, the cancel handle and the transcript.
    pub tl: Timeline<'a>,
    /// The vector tests the core layer: a profile-level reject of an accepted frame shows
    /// the core accepted and dispatched it.
    pub core_layer: bool,
    /// The last frame an intermediary forwarded upstream: the msg_id the client sent it
    /// with and the one it reached the upstream with (a relay may re-issue msg_ids), so an
    /// upstream answer can reuse the second and must reach the client with the first.
    pub forwarded: Option<(bytes::Bytes, bytes::Bytes)>,
    /// The error frame the last reject of this step arrived as, for `error_json`.
    pub last_error_frame: Option<Box<Envelope>>,
    /// The SUT's P1 payload form, for reading profile error messages.
    pub form: crate::p1::P1Form,
    /// The relay's acknowledgements of the harness's publishes, set aside from what the
    /// steps read (relay vectors only).
    pub publisher_acks: Option<super::relayack::PublisherAcks>,
    /// The connection not in use: the second connection while the first is in use, and
    /// the first while a `second_connection` step runs.
    pub other: Option<Peer>,
    /// Every frame sent, and which of them each refusal belongs to.
    pub ledger: super::ledger::Ledger,
    /// Whom the last refusal handed to a judge was credited to.
    pub last_credit: Option<super::ledger::Credit>,
    /// The last frame read since [`Conv::watch`] that was not taken as an error frame, and
    /// why: a step that waited for a reject in vain names it, so a wrong `code_pointer` or
    /// error frame type does not read as silence.
    unclaimed: Option<String>,
    frames: FrameDecoder,
    reply_limits: Limits,
    read_total: u64,
    closed: Option<String>,
}

/// One connection to the endpoint with its read state, parked while the other is in use.
pub struct Peer {
    wire: Box<dyn Wire>,
    frames: FrameDecoder,
    read_total: u64,
    closed: Option<String>,
}

impl Peer {
    /// A fresh connection to park beside a conversation with these reply limits.
    pub fn new(wire: Box<dyn Wire>, max_frame_bytes: u32) -> Self {
        Peer {
            wire,
            frames: FrameDecoder::new(reply_limits(max_frame_bytes)),
            read_total: 0,
            closed: None,
        }
    }
}

/// Limits for reading the endpoint's own frames: its frame bound, nothing else, so a reply
/// the harness cannot judge is never refused for a size the vector did not test.
pub fn reply_limits(max_frame_bytes: u32) -> Limits {
    Limits {
        max_frame_bytes,
        min_msg_id_bytes: 1,
        max_msg_id_bytes: usize::MAX,
        max_ext_bytes: usize::MAX,
        max_payload_bytes: usize::MAX,
    }
}

impl<'a> Conv<'a> {
    /// A conversation over `wire`, starting now.
    pub fn new(
        wire: Box<dyn Wire>,
        spec: &'a SessionSpec,
        clock: &'a dyn Clock,
        cancel: Cancel,
        max_frame_bytes: u32,
        core_layer: bool,
    ) -> Self {
        let reply_limits = reply_limits(max_frame_bytes);
        let ledger = super::ledger::Ledger::new(
            spec.reject_signal
                .error_frame
                .as_ref()
                .is_some_and(|e| e.correlation == crate::sut::file::Correlation::None),
        );
        Conv {
            wire,
            upstream: None,
            spec,
            tl: Timeline::new(clock, spec.timing.vector_ms, cancel, CLIP),
            core_layer,
            forwarded: None,
            last_error_frame: None,
            other: None,
            ledger,
            last_credit: None,
            unclaimed: None,
            publisher_acks: None,
            form: crate::p1::P1Form::Message,
            frames: FrameDecoder::new(reply_limits),
            reply_limits,
            read_total: 0,
            closed: None,
        }
    }

    /// Switches to the parked connection (and parks the one in use), noting it in the
    /// transcript; false when there is none.
    pub fn switch(&mut self, to: &str) -> bool {
        let Some(mut p) = self.other.take() else {
            return false;
        };
        std::mem::swap(&mut self.wire, &mut p.wire);
        std::mem::swap(&mut self.frames, &mut p.frames);
        std::mem::swap(&mut self.read_total, &mut p.read_total);
        std::mem::swap(&mut self.closed, &mut p.closed);
        self.other = Some(p);
        self.ledger.conn = u8::from(to == "second");
        self.note(format!("on the {to} connection"));
        true
    }

    /// Milliseconds since the vector started.
    pub fn t(&self) -> u64 {
        self.tl.t()
    }

    /// `ms` from now.
    pub fn after(&self, ms: u64) -> Instant {
        self.tl.after(ms)
    }

    /// The deadline for one expected observation.
    pub fn step_deadline(&self) -> Instant {
        self.after(self.spec.timing.step_ms)
    }

    /// Adds a transcript line.
    pub fn log(&mut self, dir: Dir, data: impl Into<String>) {
        self.tl.log(dir, data);
    }

    /// Adds a note to the transcript.
    pub fn note(&mut self, s: impl Into<String>) {
        self.tl.note(s);
    }

    /// Sends octets to the endpoint, logging them.
    pub fn send(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.log(Dir::Sent, transcript_hex(b));
        if let Some(l) = self.publisher_acks.as_mut() {
            l.sent(b, &self.reply_limits);
        }
        self.wire.send(b)
    }

    /// The msg_ids of the frames in `b`, as the endpoint will see them.
    pub fn ids_in(&self, b: &[u8]) -> Vec<Bytes> {
        let mut rest = Bytes::copy_from_slice(b);
        let mut out = Vec::new();
        while let Ok(Some((body, tail))) = crate::frames::take_frame(&rest, &self.reply_limits) {
            if let Ok(e) = e1::decode(&body, &self.reply_limits) {
                out.push(e.msg_id);
            }
            rest = tail;
        }
        out
    }

    fn classify(&mut self, env: Envelope) -> Obs {
        let why = match &self.spec.reject_signal.error_frame {
            Some(ef) if env.profile_id == ef.profile_id && env.msg_type == ef.msg_type => {
                let json = serde_json::from_slice::<serde_json::Value>(&env.payload).ok();
                let at = json.as_ref().and_then(|v| v.pointer(&ef.code_pointer));
                if let Some(code) = at.and_then(|c| c.as_str()) {
                    return Obs::Error {
                        code: code.to_owned(),
                        msg_id: env.msg_id.clone(),
                        frame: Box::new(env),
                    };
                }
                let p = &ef.code_pointer;
                match (&json, at) {
                    (None, _) => format!(
                        "its payload is not JSON, so the manifest's code_pointer {p} found nothing in it"
                    ),
                    (Some(_), Some(v)) => format!(
                        "the manifest's code_pointer {p} found {}, not a code string",
                        crate::support::transcript::clip_text(&v.to_string(), 80)
                    ),
                    // An error answer with nothing where the manifest says the code is: most
                    // likely the manifest's pointer, which the message then points at.
                    (Some(v), None) if v.get("error").is_some() => format!(
                        "the manifest's code_pointer {p} found nothing in it: check reject_signal.error_frame.code_pointer"
                    ),
                    (Some(_), None) => {
                        format!("the manifest's code_pointer {p} found nothing in it")
                    }
                }
            }
            Some(ef) => format!(
                "it is not the manifest's error frame (profile_id={} msg_type={})",
                ef.profile_id, ef.msg_type
            ),
            None => "the manifest declares no error frame".to_owned(),
        };
        self.unclaimed = Some(format!(
            "a frame arrived, profile_id={} msg_type={} msg_id {}, but {why}",
            env.profile_id,
            env.msg_type,
            super::obs::show_id(&env.msg_id)
        ));
        Obs::Reply(env)
    }

    /// Starts watching for frames no rule takes, forgetting those read before: a step that
    /// waits for a reject calls it first, so its failure names only its own frames.
    pub fn watch(&mut self) {
        self.unclaimed = None;
    }

    /// The last frame since [`Conv::watch`] that was not taken as an error frame, and why,
    /// for failure messages (empty when there was none).
    pub fn unclaimed_hint(&self) -> String {
        self.unclaimed
            .as_ref()
            .map(|m| format!(" ({m})"))
            .unwrap_or_default()
    }

    fn decoded(&mut self, body: Bytes) -> Obs {
        match e1::decode(&body, &self.reply_limits) {
            Ok(env) => {
                let o = self.classify(env);
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
                self.note(d);
                o
            }
            Err(e) => Obs::Garbage(format!("the SUT sent a frame that does not decode: {e}")),
        }
    }

    /// Credits a refusal to the frame it belongs to: `None` when it belongs to a frame whose
    /// step is not being judged (the ledger keeps it as a late observation), else the
    /// observation for the judge at hand.
    fn route(&mut self, o: Obs) -> Option<Obs> {
        use super::ledger::{Route, Signal};
        let (msg_id, signal) = match &o {
            Obs::Error { code, msg_id, .. } => (msg_id.clone(), Signal::Error(code.clone())),
            Obs::Reply(env) if self.spec.reject_signal.profile_errors => {
                match super::refusal::profile_error(env, self.form) {
                    Some(Obs::Error { code, .. }) => (
                        env.msg_id.clone(),
                        Signal::ProfileErr {
                            what: format!("{} {code:?}", super::refusal::profile_err_name(env)),
                            canonical: Some(code),
                        },
                    ),
                    Some(Obs::Refused(what)) => (
                        env.msg_id.clone(),
                        Signal::ProfileErr {
                            canonical: None,
                            what,
                        },
                    ),
                    _ => return Some(o),
                }
            }
            _ => return Some(o),
        };
        let t = self.t();
        match self.ledger.route(&msg_id, signal, t) {
            Route::Keep(credit) => {
                self.last_credit = Some(credit);
                Some(o)
            }
            Route::Taken(i) => {
                let step = self
                    .ledger
                    .frames
                    .get(i)
                    .and_then(|f| f.step)
                    .map_or("a probe".to_owned(), |s| format!("concrete step {}", s + 1));
                self.note(format!(
                    "credited to the frame of {step}, not the step being judged"
                ));
                None
            }
        }
    }

    /// Whether the connection in use has ended.
    pub fn is_closed(&self) -> bool {
        self.closed.is_some()
    }

    /// The next observation before `deadline` (bounded by the vector's hard deadline), or
    /// `None` on timeout. Once the connection has ended, every call observes that. A
    /// cancelled run stops waiting at once: every wait then times out.
    pub fn next(&mut self, deadline: Instant) -> Option<Obs> {
        let deadline = self.tl.within(deadline);
        loop {
            if let Some(c) = &self.closed {
                return Some(Obs::Closed(c.clone()));
            }
            match self.frames.next_body() {
                Ok(Some(body)) => {
                    let o = self.decoded(body);
                    if let (Obs::Reply(env), Some(l)) = (&o, self.publisher_acks.as_mut()) {
                        if l.observe(env) {
                            self.note("a publisher RELAY_ACK, set aside (SI-P19-2)");
                            continue;
                        }
                    }
                    match self.route(o) {
                        Some(o) => return Some(o),
                        None => continue,
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    self.closed = Some("stopped reading".into());
                    return Some(Obs::Garbage(format!(
                        "the SUT's output is not valid framing: {e}"
                    )));
                }
            }
            if self.tl.cancelled() {
                return None;
            }
            let slice = self.tl.slice(deadline);
            match self.wire.recv(slice) {
                Recv::Timeout if slice < deadline => {}
                Recv::Data(d) => {
                    self.log(Dir::Received, transcript_hex(&d));
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

    /// Reads `n` octets from the endpoint (`upstream == false`: from the harness's upstream
    /// side) within `deadline`: what arrived, and why it stopped short.
    pub fn read_exact_raw(
        &mut self,
        from_client_side: bool,
        n: usize,
        deadline: Instant,
    ) -> (Vec<u8>, Option<String>) {
        let w: &mut dyn Wire = if from_client_side {
            self.wire.as_mut()
        } else {
            match self.upstream.as_mut() {
                Some(u) => u.as_mut(),
                None => return (Vec::new(), Some("no upstream connection".into())),
            }
        };
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
}
