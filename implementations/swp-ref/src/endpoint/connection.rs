//! One connection's sans-IO state machine: octets and time in, octets to write, notices and
//! the instruction to close out. It owns the `swp_core::Receiver`, the in-flight `msg_id`
//! set and the responses waiting for their deadline.

use super::a2a::{self, Agent};
use super::agent;
pub use super::conformance::Fixtures;
use super::mcp::{self, Action, MSG_TYPE_NOTIFICATION, MSG_TYPE_REQUEST, MSG_TYPE_RESPONSE};
use super::progress::FrameProgress;
use super::reply::{self, Oversize, Reject};
use super::script::Scripts;

#[path = "connection_scripts.rs"]
mod scripts;
use super::{knows_profile, PROFILE_A2A, PROFILE_MCP};
use bytes::{Bytes, BytesMut};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use swp_core::{
    CoreError, Envelope, ErrorCode, Event, Limits, Policy, Receiver, UnknownProfilePolicy,
};
use swp_profiles::mcp::InFlight;

/// Default cap on responses waiting for their deadline on one connection: `swp/delay` would
/// otherwise let a peer make the endpoint hold an unbounded number of replies.
pub const DEFAULT_MAX_PENDING: usize = 1024;

/// Default cap on the octets of responses waiting for their deadline on one connection: a
/// count alone would let a peer park 1024 replies echoing megabyte-sized ids.
pub const DEFAULT_MAX_PENDING_BYTES: usize = 16 * 1024 * 1024;

/// Notices a connection reports before it stops reporting (a flood of stale frames must not
/// become a flood of log lines).
const MAX_NOTICES: usize = 32;

/// What a connection enforces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Size bounds, for inbound and outbound frames alike.
    pub limits: Limits,
    /// Receiver policy (freshness, rate limit, unknown-profile handling).
    pub policy: Policy,
    /// Cap on delayed responses pending at once; more are refused with
    /// `ERR_RATE_LIMIT_EXCEEDED`.
    pub max_pending: usize,
    /// Cap on the octets (msg_ids and payloads) of those delayed responses; a delay that
    /// would go over it is refused the same way.
    pub max_pending_bytes: usize,
    /// The shape of P1 payloads (A2A) read and written: the bare message or the annex's
    /// `Payload` wrapper. The spec allows both; the endpoint speaks the one it is given.
    pub p1_form: swp_profiles::p1::P1Form,
    /// The SWP-* test agent's implementation-defined parameters (the RPC replay window).
    pub agent: agent::Config,
    /// The MCP fixture set served on profile 1.
    pub fixtures: Fixtures,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            limits: Limits::default(),
            policy: Policy::default(),
            max_pending: DEFAULT_MAX_PENDING,
            max_pending_bytes: DEFAULT_MAX_PENDING_BYTES,
            p1_form: swp_profiles::p1::P1Form::Message,
            agent: agent::Config::default(),
            fixtures: Fixtures::default(),
        }
    }
}

/// What the I/O edge must do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Write these octets: one or more whole frames, batched so the edge can write
    /// everything one input produced with a single call.
    Send(Bytes),
    /// Report this to the operator (stderr); nothing goes on the wire.
    Notice(Notice),
    /// Close the connection, after writing every `Send` returned before it. Always last.
    Close,
}

/// Something the operator should know about a connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Notice {
    /// A frame failed the timestamp freshness policy: S1 §2.4 asks receivers to log
    /// replay-window failures as security events.
    #[error("security event: {0} ({code})", code = .0.code())]
    Security(CoreError),
    /// A reply (or the error frame standing in for it) did not fit the configured limits.
    #[error("reply dropped: {0}")]
    ReplyDropped(Oversize),
    /// The connection reached its notice budget; later notices are not reported.
    #[error("further notices on this connection are suppressed")]
    Suppressed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading frames.
    Open,
    /// The peer ended its stream cleanly; waiting for delayed responses before closing.
    Draining,
    /// `Close` is due once the pending output is taken.
    Closing,
    /// `Close` was returned; nothing more happens.
    Closed,
}

/// A response waiting for its deadline. Ordered by deadline, then arrival, so equal
/// deadlines are answered in request order.
#[derive(Debug)]
struct Pending {
    deadline_ms: u64,
    seq: u64,
    msg_id: Bytes,
    payload: Vec<u8>,
}

impl Pending {
    fn key(&self) -> (u64, u64) {
        (self.deadline_ms, self.seq)
    }

    /// The octets it holds.
    fn size(&self) -> usize {
        self.msg_id.len() + self.payload.len()
    }
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    /// Reversed, so the `BinaryHeap` (a max-heap) yields the earliest deadline first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// One SWP connection, sans-IO.
///
/// Drive it with [`Connection::on_bytes`], [`Connection::on_eof`] and
/// [`Connection::on_timer`] (at [`Connection::next_deadline`]), and after each call take
/// every [`Output`] with [`Connection::poll_output`]. Times are milliseconds since the Unix
/// epoch: the same clock stamps outbound frames and judges inbound freshness.
#[derive(Debug)]
pub struct Connection {
    config: Config,
    identity: Option<String>,
    receiver: Receiver,
    state: State,
    tx: BytesMut,
    notices: VecDeque<Notice>,
    notices_reported: usize,
    pending: BinaryHeap<Pending>,
    /// Octets held by `pending`.
    pending_bytes: usize,
    /// Where the input stands against frame boundaries (for the edge's limits).
    progress: FrameProgress,
    in_flight: InFlight,
    /// The A2A agent and the lifecycles of this channel.
    agent: Agent,
    /// The SWP-* test agent (profiles 12, 13, 14, 17, 18) and its machines.
    swp: agent::Agent,
    /// Who may not ask for what (shared by every connection of a server).
    authz: std::sync::Arc<crate::endpoint::authz::Authz>,
    seq: u64,
    /// Counter of the msg_ids the endpoint generates (error frames without a msg_id to
    /// echo, notifications it originates).
    generated_ids: u64,
    /// Frames that arrived wait until the replies before them are written
    /// ([`OUTPUT_ALLOWANCE`]).
    paused: bool,
    /// The conformance fixtures' per-connection state (log level, subscriptions).
    fixture_state: super::conformance::State,
    /// Requests answered in several steps (conformance fixtures).
    scripts: Scripts,
}

/// Octets of replies one round of input may produce before the connection stops taking
/// frames from its input until the edge has written them (issue 30, defect 3): a request
/// may be answered with far more than its own size (an `ART_GET` of the 100,000-octet test
/// blob is 2,000 times its request), and a peer that sends many such requests and never
/// reads would otherwise make the connection hold every reply at once. With the pause, what
/// it can make the connection hold is this allowance plus one reply, until the body timeout
/// drops it.
pub const OUTPUT_ALLOWANCE: usize = 256 << 10;

impl Connection {
    /// A connection enforcing `config`; `identity` is the authenticated peer identity (S1
    /// identity surface), when the channel established one.
    pub fn new(config: Config, identity: Option<String>) -> Self {
        let limits = config.limits;
        Connection {
            identity,
            receiver: Receiver::new(config.limits, config.policy),
            state: State::Open,
            tx: BytesMut::new(),
            notices: VecDeque::new(),
            notices_reported: 0,
            pending: BinaryHeap::new(),
            pending_bytes: 0,
            progress: FrameProgress::default(),
            in_flight: InFlight::default(),
            agent: Agent::new(config.p1_form),
            swp: agent::Agent::new(config.agent.clone(), config.p1_form),
            config,
            authz: std::sync::Arc::default(),
            seq: 0,
            generated_ids: 0,
            paused: false,
            fixture_state: Default::default(),
            scripts: Scripts::new(limits),
        }
    }

    /// This connection under the server's authorization rules.
    pub fn with_authz(mut self, authz: std::sync::Arc<crate::endpoint::authz::Authz>) -> Self {
        self.authz = authz;
        self
    }

    /// The peer identity profiles see.
    pub fn identity(&self) -> Option<&str> {
        self.identity.as_deref()
    }

    /// Whether the connection stopped reading input (closing or closed).
    pub fn is_closing(&self) -> bool {
        matches!(self.state, State::Closing | State::Closed)
    }

    /// Whether `Close` has been returned.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// Octets arrived. Every complete frame among them is judged and answered now.
    pub fn on_bytes(&mut self, data: &[u8], now_ms: u64) {
        if self.state != State::Open {
            return;
        }
        self.progress.feed(data);
        self.receiver.feed(data);
        self.pump(now_ms);
    }

    /// Takes frames from the input until it is empty or the replies to write reach
    /// [`OUTPUT_ALLOWANCE`].
    fn pump(&mut self, now_ms: u64) {
        self.paused = false;
        while self.state == State::Open {
            if self.tx.len() >= OUTPUT_ALLOWANCE {
                self.paused = true;
                break;
            }
            match self.receiver.poll(now_ms, knows_profile) {
                Some(event) => self.on_event(event, now_ms),
                None => break,
            }
        }
    }

    /// Whether frames that arrived wait for the replies before them to be written: the
    /// edge writes what [`Connection::poll_output`] gives, then calls
    /// [`Connection::resume`], and reads no more input meanwhile.
    pub fn input_waiting(&self) -> bool {
        self.paused && self.state == State::Open
    }

    /// Goes on taking the frames that waited.
    pub fn resume(&mut self, now_ms: u64) {
        if self.state == State::Open {
            self.pump(now_ms);
        }
    }

    /// The peer ended its stream. Inside a frame, that is a framing error (error frame, then
    /// close); otherwise the connection closes once its delayed responses are sent, since a
    /// half-close means "no more requests", not "drop the answers".
    pub fn on_eof(&mut self, now_ms: u64) {
        if self.state != State::Open {
            return;
        }
        match self.receiver.finish() {
            Some(Event::Rejected { error, msg_id, .. }) => {
                self.error_frame(Reject::Core(error), msg_id, now_ms);
                self.close();
            }
            _ if !self.has_pending() => self.state = State::Closing,
            _ => self.state = State::Draining,
        }
    }

    /// Octets of an unfinished inbound frame that are buffered (0 between frames).
    pub fn partial_input(&self) -> usize {
        if self.state == State::Open {
            self.progress.partial()
        } else {
            0
        }
    }

    /// A number that changes whenever a new inbound frame begins.
    pub fn frames_started(&self) -> u64 {
        self.progress.started()
    }

    /// Whether delayed responses are waiting for their deadline.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty() || self.swp.has_timers() || !self.scripts.is_empty()
    }

    /// Octets this connection holds on the peer's behalf: the input not yet taken (an
    /// unfinished frame, frames waiting behind the output allowance), the delayed
    /// responses, and what the SWP-* agents keep (stored states, outcomes kept for replay).
    /// The edge charges them to `--conn-memory` and `--memory-budget`.
    pub fn held_bytes(&self) -> usize {
        let input = if self.state == State::Open {
            self.partial_input().max(self.receiver.buffered())
        } else {
            0
        };
        input
            .saturating_add(self.pending_bytes)
            .saturating_add(self.swp.held_bytes())
            .saturating_add(self.scripts.held_bytes())
    }

    /// The edge ends the connection for a resource limit (a frame that stalled, the memory
    /// budget): an error frame with `code` and `detail` under a generated msg_id (the frame
    /// that broke the limit never completed, so it has none to echo), then `Close`.
    pub fn abort(&mut self, code: ErrorCode, detail: impl Into<String>, now_ms: u64) {
        if self.is_closing() {
            return;
        }
        self.error_frame(Reject::profile(code, detail), None, now_ms);
        self.close();
    }

    /// When [`Connection::on_timer`] should next be called, if at all.
    pub fn next_deadline(&self) -> Option<u64> {
        match self.state {
            State::Open | State::Draining => {
                let mcp = self.pending.peek().map(|p| p.deadline_ms);
                [mcp, self.swp.next_deadline(), self.scripts.next_deadline()]
                    .into_iter()
                    .flatten()
                    .min()
            }
            State::Closing | State::Closed => None,
        }
    }

    /// Time passed: sends every delayed response that is due.
    pub fn on_timer(&mut self, now_ms: u64) {
        if !matches!(self.state, State::Open | State::Draining) {
            return;
        }
        while self.pending.peek().is_some_and(|p| p.deadline_ms <= now_ms) {
            let Some(p) = self.pending.pop() else { break };
            self.pending_bytes = self.pending_bytes.saturating_sub(p.size());
            // The msg_id leaves the in-flight set when its response is sent.
            self.in_flight.end(&p.msg_id);
            self.respond(p.msg_id, Bytes::from(p.payload), now_ms);
        }
        for out in self.swp.on_timer(now_ms) {
            self.agent_out(out, now_ms);
        }
        let mut outs = Vec::new();
        self.scripts.on_timer(now_ms, &mut outs);
        self.script_out(outs, now_ms);
        if self.state == State::Draining && !self.has_pending() {
            self.state = State::Closing;
        }
    }

    /// The next thing for the edge to do: all pending octets as one `Send`, then notices,
    /// then `Close` when the connection is done.
    pub fn poll_output(&mut self) -> Option<Output> {
        if !self.tx.is_empty() {
            return Some(Output::Send(self.tx.split().freeze()));
        }
        if let Some(n) = self.notices.pop_front() {
            return Some(Output::Notice(n));
        }
        if self.state == State::Closing {
            self.state = State::Closed;
            return Some(Output::Close);
        }
        None
    }

    fn on_event(&mut self, event: Event, now_ms: u64) {
        match event {
            Event::Accepted { envelope, .. } => {
                if envelope.profile_id == PROFILE_MCP {
                    self.mcp(envelope, now_ms);
                } else if envelope.profile_id == PROFILE_A2A {
                    self.a2a(envelope, now_ms);
                } else if agent::serves(envelope.profile_id) {
                    self.swp_profile(envelope, now_ms);
                }
            }
            Event::Rejected {
                error,
                msg_id,
                terminated,
            } => {
                if matches!(error, CoreError::UnknownProfile { .. })
                    && self.config.policy.unknown_profile == UnknownProfilePolicy::Close
                {
                    self.close();
                    return;
                }
                if matches!(
                    error,
                    CoreError::StaleTimestamp { .. }
                        | CoreError::FutureTimestamp { .. }
                        | CoreError::MissingTimestamp
                ) {
                    self.notice(Notice::Security(error.clone()));
                }
                self.error_frame(Reject::Core(error), msg_id, now_ms);
                if terminated {
                    self.close();
                }
            }
        }
    }

    fn mcp(&mut self, env: Envelope, now_ms: u64) {
        if env.msg_type == MSG_TYPE_REQUEST && self.in_flight.contains(&env.msg_id[..]) {
            self.error_frame(
                Reject::Core(CoreError::DuplicateMsgId),
                Some(env.msg_id),
                now_ms,
            );
            return;
        }
        if env.msg_type == MSG_TYPE_RESPONSE && self.scripts.awaits(&env.msg_id) {
            self.script_answer(env, now_ms);
            return;
        }
        let action = match self.fixture_action(&env) {
            Some(a) => a,
            None => mcp::handle(
                env.msg_type,
                &env.payload,
                self.identity.as_deref(),
                &self.authz,
            ),
        };
        match action {
            Action::Reply(payload) => self.respond(env.msg_id, Bytes::from(payload), now_ms),
            Action::Delayed { ms, payload } => {
                let size = env.msg_id.len() + payload.len();
                let refusal = if self.pending.len() >= self.config.max_pending {
                    Some(format!(
                        "{} delayed responses are already pending on this connection",
                        self.pending.len()
                    ))
                } else if self.pending_bytes.saturating_add(size) > self.config.max_pending_bytes {
                    Some(format!(
                        "delayed responses on this connection would hold over {} octets",
                        self.config.max_pending_bytes
                    ))
                } else {
                    None
                };
                if let Some(why) = refusal {
                    let r = Reject::profile(ErrorCode::RateLimitExceeded, why);
                    self.error_frame(r, Some(env.msg_id), now_ms);
                    return;
                }
                self.pending_bytes += size;
                // A copy, not a slice: a slice would keep the whole received frame alive
                // until the deadline.
                let msg_id = Bytes::copy_from_slice(&env.msg_id);
                // Not yet in flight: the check above just said so.
                let _ = self.in_flight.begin(&msg_id);
                self.seq += 1;
                self.pending.push(Pending {
                    deadline_ms: now_ms.saturating_add(ms),
                    seq: self.seq,
                    msg_id,
                    payload,
                });
            }
            Action::Stream { partials, terminal } => {
                self.stream(env.msg_id, partials, terminal, now_ms)
            }
            Action::Script(steps) => self.start_script(env, steps, now_ms),
            Action::Nothing => {}
            Action::Reject(r) => self.error_frame(r, Some(env.msg_id), now_ms),
        }
    }

    fn a2a(&mut self, env: Envelope, now_ms: u64) {
        match self.agent.handle(
            env.msg_type,
            &env.payload,
            self.identity.as_deref(),
            &self.authz,
        ) {
            a2a::Action::Nothing => {}
            a2a::Action::Reject(r) => self.error_frame(r, Some(env.msg_id), now_ms),
            a2a::Action::Send(msgs) => {
                for (msg_type, payload) in msgs {
                    if let Err(e) = self.originate(PROFILE_A2A, msg_type, payload, now_ms) {
                        let r = Reject::profile(
                            ErrorCode::PayloadTooLarge,
                            format!("A2A message not sent: {e}"),
                        );
                        self.error_frame(r, Some(env.msg_id), now_ms);
                        return;
                    }
                }
            }
        }
    }

    /// An envelope of the SWP-* test agent's profiles.
    fn swp_profile(&mut self, env: Envelope, now_ms: u64) {
        let scope = self.identity.clone().unwrap_or_default();
        match self.swp.handle(
            env.profile_id,
            env.msg_type,
            &env.msg_id,
            &env.payload,
            &scope,
            now_ms,
        ) {
            agent::Action::Nothing => {}
            agent::Action::Reject(r) => self.error_frame(r, Some(env.msg_id), now_ms),
            agent::Action::Send(outs) => {
                for out in outs {
                    if !self.agent_out(out, now_ms) {
                        return;
                    }
                }
            }
        }
    }

    /// Writes one message of the SWP-* agent: on the request's msg_id when it answers one,
    /// under a fresh msg_id otherwise. A message that does not fit the limits becomes an
    /// error frame on the request's msg_id (or a generated one) and stops the rest.
    fn agent_out(&mut self, out: agent::Out, now_ms: u64) -> bool {
        let limits = self.config.limits;
        let id = match &out.reply_to {
            Some(id) => id.clone(),
            None => {
                self.generated_ids += 1;
                reply::agent_msg_id(self.generated_ids, &limits)
            }
        };
        match reply::put_profile_frame(
            &mut self.tx,
            &limits,
            out.profile_id,
            out.msg_type,
            now_ms,
            id,
            Bytes::from(out.payload),
        ) {
            Ok(()) => true,
            Err(e) => {
                let r = Reject::profile(
                    ErrorCode::PayloadTooLarge,
                    format!("profile {} message not sent: {e}", out.profile_id),
                );
                self.error_frame(r, out.reply_to, now_ms);
                false
            }
        }
    }

    /// Sends partial outputs as notifications, each with a fresh msg_id, then the terminal
    /// response on the request's msg_id, all in this order. A partial that does not fit the
    /// limits ends the stream with an error frame on the request's msg_id in place of the
    /// terminal response, so the flow is still completed exactly once.
    fn stream(&mut self, msg_id: Bytes, partials: Vec<Vec<u8>>, terminal: Vec<u8>, now_ms: u64) {
        for (k, partial) in partials.into_iter().enumerate() {
            if let Err(e) = self.originate(PROFILE_MCP, MSG_TYPE_NOTIFICATION, partial, now_ms) {
                let r = Reject::profile(
                    ErrorCode::PayloadTooLarge,
                    format!("stream stopped at partial output {}: {e}", k + 1),
                );
                self.error_frame(r, Some(msg_id), now_ms);
                return;
            }
        }
        self.respond(msg_id, Bytes::from(terminal), now_ms);
    }

    /// Writes a message the endpoint originates (an MCP stream partial, an A2A message) under
    /// a fresh msg_id of its own.
    fn originate(
        &mut self,
        profile_id: u64,
        msg_type: u64,
        payload: Vec<u8>,
        now_ms: u64,
    ) -> Result<(), Oversize> {
        let limits = self.config.limits;
        self.generated_ids += 1;
        let id = if profile_id == PROFILE_A2A {
            reply::a2a_msg_id(self.generated_ids, &limits)
        } else {
            reply::notification_msg_id(self.generated_ids, &limits)
        };
        reply::put_profile_frame(
            &mut self.tx,
            &limits,
            profile_id,
            msg_type,
            now_ms,
            id,
            Bytes::from(payload),
        )
    }

    /// Sends a response, or an error frame in its place when it does not fit the limits.
    fn respond(&mut self, msg_id: Bytes, payload: Bytes, now_ms: u64) {
        let limits = self.config.limits;
        match reply::put_frame(
            &mut self.tx,
            &limits,
            MSG_TYPE_RESPONSE,
            now_ms,
            msg_id.clone(),
            payload,
        ) {
            Ok(()) => {}
            Err(e) => {
                let r = Reject::profile(ErrorCode::PayloadTooLarge, format!("no response: {e}"));
                self.error_frame(r, Some(msg_id), now_ms);
            }
        }
    }

    /// Sends an error frame for `reject`, shortening its message if the full one does not
    /// fit the limits, and reporting it when even the short one does not.
    fn error_frame(&mut self, reject: Reject, msg_id: Option<Bytes>, now_ms: u64) {
        let limits = self.config.limits;
        let msg_id = msg_id.unwrap_or_else(|| {
            self.generated_ids += 1;
            reply::error_msg_id(self.generated_ids, &limits)
        });
        let mut last = None;
        for brief in [false, true] {
            let payload = Bytes::from(reply::error_payload(&reject, brief));
            match reply::put_frame(
                &mut self.tx,
                &limits,
                MSG_TYPE_RESPONSE,
                now_ms,
                msg_id.clone(),
                payload,
            ) {
                Ok(()) => return,
                Err(e) => last = Some(e),
            }
        }
        if let Some(e) = last {
            self.notice(Notice::ReplyDropped(e));
        }
    }

    fn notice(&mut self, n: Notice) {
        if self.notices_reported < MAX_NOTICES {
            self.notices.push_back(n);
        } else if self.notices_reported == MAX_NOTICES {
            self.notices.push_back(Notice::Suppressed);
        }
        self.notices_reported = self.notices_reported.saturating_add(1);
    }

    /// Stops reading and drops delayed responses; `Close` follows the pending output.
    fn close(&mut self) {
        self.state = State::Closing;
        self.pending.clear();
        self.pending_bytes = 0;
        self.in_flight.clear();
        self.scripts = Scripts::new(self.config.limits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swp_core::{e1, frame, RateLimit};

    const ID: &[u8] = b"req-000000000001";

    fn frame_of(profile_id: u64, msg_type: u64, ts: u64, msg_id: &[u8], payload: &str) -> Vec<u8> {
        let env = Envelope {
            version: 1,
            profile_id,
            msg_type,
            ts_unix_ms: ts,
            msg_id: Bytes::copy_from_slice(msg_id),
            payload: Bytes::copy_from_slice(payload.as_bytes()),
            ..Envelope::default()
        };
        e1::frame_bytes(&env).unwrap().to_vec()
    }

    fn request(msg_id: &[u8], method: &str, params: &str) -> Vec<u8> {
        let payload =
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#);
        frame_of(1, 1, 0, msg_id, &payload)
    }

    fn ping(msg_id: &[u8]) -> Vec<u8> {
        request(msg_id, "ping", "{}")
    }

    /// Everything the connection wants to do now, with sends decoded (and so checked to be
    /// valid frames under the connection's own limits).
    #[derive(Debug, Default)]
    struct Drained {
        frames: Vec<Envelope>,
        sends: usize,
        notices: Vec<Notice>,
        closed: bool,
    }

    fn drain(c: &mut Connection) -> Drained {
        let limits = c.config.limits;
        let mut d = Drained::default();
        while let Some(o) = c.poll_output() {
            assert!(!d.closed, "output after Close");
            match o {
                Output::Send(b) => {
                    d.sends += 1;
                    let mut rest = b;
                    while !rest.is_empty() {
                        let (body, tail) = frame::take_frame(&rest, &limits).unwrap().unwrap();
                        d.frames.push(e1::decode(&body, &limits).unwrap());
                        rest = tail;
                    }
                }
                Output::Notice(n) => d.notices.push(n),
                Output::Close => d.closed = true,
            }
        }
        d
    }

    fn error_of(env: &Envelope) -> (String, i64) {
        assert_eq!((env.profile_id, env.msg_type), (1, 2));
        let v: serde_json::Value = serde_json::from_slice(&env.payload).unwrap();
        assert_eq!(v["id"], serde_json::Value::Null);
        (
            v["error"]["data"]["swp_error"].as_str().unwrap().to_owned(),
            v["error"]["code"].as_i64().unwrap(),
        )
    }

    #[test]
    fn a_fixture_asks_the_client_under_its_own_msg_id_and_answers_on_the_callers() {
        let config = Config {
            fixtures: Fixtures::Conformance,
            ..Config::default()
        };
        let mut c = Connection::new(config, None);
        let call = r#"{"name":"test_sampling","arguments":{"prompt":"Hi"}}"#;
        c.on_bytes(&request(ID, "tools/call", call), 1_000);
        let d = drain(&mut c);
        assert_eq!(d.frames.len(), 1, "the ask, and no answer yet");
        let ask = &d.frames[0];
        assert_eq!((ask.profile_id, ask.msg_type), (1, 1));
        assert_ne!(&ask.msg_id[..], ID, "a fresh msg_id of the endpoint's own");
        let v: serde_json::Value = serde_json::from_slice(&ask.payload).unwrap();
        assert_eq!(v["method"], "sampling/createMessage");
        assert!(c.has_pending(), "the call waits for its answer");
        // The same request msg_id again while the call waits is a duplicate in flight.
        c.on_bytes(&request(ID, "ping", "{}"), 1_001);
        assert_eq!(error_of(&drain(&mut c).frames[0]).0, "ERR_DUPLICATE_MSG_ID");
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"role":"assistant","content":{{"type":"text","text":"Yo"}},"model":"m"}}}}"#,
            v["id"]
        );
        // An answer on another msg_id is not this ask's.
        c.on_bytes(&frame_of(1, 2, 0, b"swp-ask-99999999", &answer), 1_002);
        assert!(drain(&mut c).frames.is_empty());
        c.on_bytes(&frame_of(1, 2, 0, &ask.msg_id, &answer), 1_003);
        let d = drain(&mut c);
        assert_eq!(d.frames.len(), 1);
        let r = &d.frames[0];
        assert_eq!((r.msg_type, &r.msg_id[..]), (2, ID));
        let v: serde_json::Value = serde_json::from_slice(&r.payload).unwrap();
        assert_eq!(v["result"]["content"][0]["text"], "LLM response: Yo");
        assert!(!c.has_pending());
    }

    #[test]
    fn ping_is_answered_with_the_same_msg_id() {
        let mut c = Connection::new(Config::default(), None);
        c.on_bytes(&ping(ID), 1_000);
        let d = drain(&mut c);
        assert_eq!(d.frames.len(), 1);
        let r = &d.frames[0];
        assert_eq!(
            (r.version, r.profile_id, r.msg_type, r.ts_unix_ms),
            (1, 1, 2, 1_000)
        );
        assert_eq!(&r.msg_id[..], ID);
        assert_eq!(&r.payload[..], br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert!(!d.closed);
    }

    #[test]
    fn replies_to_one_read_are_batched_into_one_send() {
        let mut c = Connection::new(Config::default(), None);
        let mut input = ping(b"req-000000000001");
        input.extend(ping(b"req-000000000002"));
        input.extend(ping(b"req-000000000003"));
        c.on_bytes(&input, 5);
        let d = drain(&mut c);
        assert_eq!((d.sends, d.frames.len()), (1, 3));
        assert_eq!(&d.frames[2].msg_id[..], b"req-000000000003");
    }

    #[test]
    fn frames_split_across_reads_are_answered_when_complete() {
        let mut c = Connection::new(Config::default(), None);
        let input = ping(ID);
        for b in &input[..input.len() - 1] {
            c.on_bytes(std::slice::from_ref(b), 5);
            assert!(c.poll_output().is_none());
        }
        c.on_bytes(&input[input.len() - 1..], 5);
        assert_eq!(drain(&mut c).frames.len(), 1);
    }

    #[test]
    fn whoami_sees_the_channel_identity() {
        let mut c = Connection::new(Config::default(), Some("spiffe://example.test/a".into()));
        c.on_bytes(&request(ID, "swp/whoami", "{}"), 5);
        let d = drain(&mut c);
        assert_eq!(
            &d.frames[0].payload[..],
            br#"{"jsonrpc":"2.0","id":1,"result":{"identity":"spiffe://example.test/a"}}"#
        );
    }

    #[test]
    fn delayed_response_keeps_its_msg_id_in_flight() {
        let mut c = Connection::new(Config::default(), None);
        c.on_bytes(&request(ID, "swp/delay", r#"{"ms":250}"#), 1_000);
        assert!(drain(&mut c).frames.is_empty());
        assert_eq!(c.next_deadline(), Some(1_250));

        // Same msg_id while pending: a duplicate, answered at once with the same msg_id.
        c.on_bytes(&ping(ID), 1_100);
        let d = drain(&mut c);
        assert_eq!(d.frames.len(), 1);
        assert_eq!(&d.frames[0].msg_id[..], ID);
        assert_eq!(
            error_of(&d.frames[0]),
            ("ERR_DUPLICATE_MSG_ID".into(), -32600)
        );
        // Another msg_id is unaffected.
        c.on_bytes(&ping(b"req-000000000002"), 1_100);
        assert_eq!(drain(&mut c).frames.len(), 1);

        c.on_timer(1_249);
        assert!(drain(&mut c).frames.is_empty());
        c.on_timer(1_250);
        let d = drain(&mut c);
        assert_eq!(d.frames.len(), 1);
        assert_eq!(&d.frames[0].msg_id[..], ID);
        assert_eq!(
            &d.frames[0].payload[..],
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#
        );
        assert_eq!(d.frames[0].ts_unix_ms, 1_250);
        assert_eq!(c.next_deadline(), None);

        // Answered, so the msg_id is free again.
        c.on_bytes(&ping(ID), 1_300);
        let d = drain(&mut c);
        assert_eq!(d.frames[0].msg_type, 2);
        assert!(!d.frames[0]
            .payload
            .starts_with(b"{\"jsonrpc\":\"2.0\",\"id\":null"));
    }

    #[test]
    fn delays_are_answered_in_deadline_order() {
        let mut c = Connection::new(Config::default(), None);
        c.on_bytes(
            &request(b"slow-00000000001", "swp/delay", r#"{"ms":300}"#),
            0,
        );
        c.on_bytes(
            &request(b"fast-00000000001", "swp/delay", r#"{"ms":100}"#),
            0,
        );
        c.on_bytes(
            &request(b"fast-00000000002", "swp/delay", r#"{"ms":100}"#),
            0,
        );
        assert_eq!(c.next_deadline(), Some(100));
        c.on_timer(1_000);
        let ids: Vec<_> = drain(&mut c)
            .frames
            .iter()
            .map(|f| f.msg_id.clone())
            .collect();
        assert_eq!(
            ids,
            [
                &b"fast-00000000001"[..],
                b"fast-00000000002",
                b"slow-00000000001"
            ]
        );
    }

    #[test]
    fn pending_responses_are_capped() {
        let config = Config {
            max_pending: 2,
            ..Config::default()
        };
        let mut c = Connection::new(config, None);
        for id in [
            b"id-0000000000001",
            b"id-0000000000002",
            b"id-0000000000003",
        ] {
            c.on_bytes(&request(id, "swp/delay", r#"{"ms":10}"#), 0);
        }
        let d = drain(&mut c);
        assert_eq!(d.frames.len(), 1);
        assert_eq!(&d.frames[0].msg_id[..], b"id-0000000000003");
        assert_eq!(error_of(&d.frames[0]).0, "ERR_RATE_LIMIT_EXCEEDED");
    }

    #[test]
    fn held_bytes_count_the_partial_frame_and_the_delayed_replies() {
        let config = Config {
            max_pending_bytes: 100,
            ..Config::default()
        };
        let mut c = Connection::new(config, None);
        let p = ping(ID);
        c.on_bytes(&p[..10], 0);
        assert_eq!(
            (c.partial_input(), c.held_bytes(), c.frames_started()),
            (10, 10, 1)
        );
        c.on_bytes(&p[10..], 0);
        assert_eq!(c.held_bytes(), 0);
        drain(&mut c);
        // A delayed reply holds its msg_id and payload until it is sent...
        c.on_bytes(&request(ID, "swp/delay", r#"{"ms":10}"#), 0);
        assert!(c.has_pending());
        let held = c.held_bytes();
        assert!(held > ID.len(), "{held}");
        // ...and a second one, passing the 100-octet cap, is refused like the count cap.
        c.on_bytes(
            &request(b"req-000000000009", "swp/delay", r#"{"ms":10}"#),
            0,
        );
        let d = drain(&mut c);
        assert_eq!(error_of(&d.frames[0]).0, "ERR_RATE_LIMIT_EXCEEDED");
        c.on_timer(10);
        assert_eq!(&drain(&mut c).frames[0].msg_id[..], ID);
        assert_eq!(c.held_bytes(), 0);
        // The edge can end the connection for a limit: an error frame, then Close.
        c.on_bytes(&p[..3], 20);
        c.abort(ErrorCode::InvalidFrame, "too slow", 21);
        let d = drain(&mut c);
        assert_eq!(error_of(&d.frames[0]).0, "ERR_INVALID_FRAME");
        assert_eq!(&d.frames[0].msg_id[..], b"swp-err-00000001");
        assert!(d.closed);
        assert_eq!(c.held_bytes(), 0);
    }

    #[test]
    fn oversized_prefix_gets_an_error_frame_then_close() {
        let mut c = Connection::new(Config::default(), None);
        c.on_bytes(&[0xff, 0xff, 0xff, 0xff, 1, 2, 3], 42);
        let d = drain(&mut c);
        assert_eq!(d.frames.len(), 1);
        assert_eq!(&d.frames[0].msg_id[..], b"swp-err-00000001");
        assert_eq!(d.frames[0].ts_unix_ms, 42);
        assert_eq!(
            error_of(&d.frames[0]),
            ("ERR_FRAME_TOO_LARGE".into(), -32700)
        );
        let v: serde_json::Value = serde_json::from_slice(&d.frames[0].payload).unwrap();
        assert_eq!(
            v["error"]["message"],
            "length prefix 4294967295 exceeds MAX_FRAME_BYTES 8388608"
        );
        assert!(d.closed);
        c.on_bytes(&ping(ID), 43);
        assert!(c.poll_output().is_none());
    }

    #[test]
    fn envelope_rejects_keep_the_stream_and_echo_the_msg_id() {
        let mut c = Connection::new(Config::default(), None);
        // Unknown profile under error-reply.
        c.on_bytes(&frame_of(77, 1, 0, ID, "{}"), 5);
        // Unsupported msg_type, invalid payload.
        c.on_bytes(&frame_of(1, 9, 0, b"req-000000000002", "{}"), 5);
        c.on_bytes(&frame_of(1, 1, 0, b"req-000000000003", "not json"), 5);
        // A msg_id too short: decoding fails before the msg_id is known.
        c.on_bytes(&frame_of(1, 1, 0, b"short", "{}"), 5);
        c.on_bytes(&ping(b"req-000000000004"), 5);
        let d = drain(&mut c);
        let got: Vec<_> = d
            .frames
            .iter()
            .take(4)
            .map(|f| (String::from_utf8(f.msg_id.to_vec()).unwrap(), error_of(f)))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "req-000000000001".into(),
                    ("ERR_UNKNOWN_PROFILE".into(), -32601)
                ),
                (
                    "req-000000000002".into(),
                    ("ERR_UNSUPPORTED_MSG_TYPE".into(), -32600)
                ),
                (
                    "req-000000000003".into(),
                    ("ERR_INVALID_MCP_PAYLOAD".into(), -32600)
                ),
                (
                    "swp-err-00000001".into(),
                    ("ERR_MSG_ID_INVALID".into(), -32600)
                ),
            ]
        );
        assert_eq!(&d.frames[4].msg_id[..], b"req-000000000004");
        assert!(!d.closed);
    }

    #[test]
    fn unknown_profile_under_close_policy_closes_without_a_reply() {
        let config = Config {
            policy: Policy {
                unknown_profile: UnknownProfilePolicy::Close,
                ..Policy::default()
            },
            ..Config::default()
        };
        let mut c = Connection::new(config, None);
        c.on_bytes(&frame_of(77, 1, 0, ID, "{}"), 5);
        let d = drain(&mut c);
        assert!(d.frames.is_empty());
        assert!(d.closed);
    }

    #[test]
    fn non_requests_get_no_reply() {
        let mut c = Connection::new(Config::default(), None);
        c.on_bytes(
            &frame_of(
                1,
                3,
                0,
                ID,
                r#"{"jsonrpc":"2.0","method":"notifications/x"}"#,
            ),
            5,
        );
        c.on_bytes(
            &frame_of(1, 2, 0, ID, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            5,
        );
        let d = drain(&mut c);
        assert!(d.frames.is_empty() && !d.closed);
    }

    #[test]
    fn stream_sends_partials_in_order_then_the_terminal_response() {
        let mut c = Connection::new(Config::default(), None);
        c.on_bytes(&request(ID, "swp/stream", r#"{"count":3}"#), 1_000);
        let d = drain(&mut c);
        // Everything one input produced goes out in one write, in order.
        assert_eq!((d.sends, d.frames.len()), (1, 4));
        let (partials, terminal) = d.frames.split_at(3);
        let mut ids = std::collections::HashSet::new();
        for (k, f) in partials.iter().enumerate() {
            assert_eq!((f.profile_id, f.msg_type, f.ts_unix_ms), (1, 3, 1_000));
            assert_ne!(&f.msg_id[..], ID);
            assert!(ids.insert(f.msg_id.clone()), "msg_ids are fresh");
            let v: serde_json::Value = serde_json::from_slice(&f.payload).unwrap();
            assert_eq!(v["method"], "notifications/progress");
            assert_eq!(v["params"]["progressToken"], 1);
            assert_eq!(v["params"]["progress"], k + 1);
            assert_eq!(v["params"]["total"], 3);
            assert!(v.get("id").is_none());
        }
        assert_eq!(&partials[0].msg_id[..], b"swp-ntf-00000001");
        let t = &terminal[0];
        assert_eq!((t.msg_type, &t.msg_id[..]), (2, ID));
        assert_eq!(
            &t.payload[..],
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}"#
        );
        // The request is complete: its msg_id is free at once.
        assert!(c.in_flight.is_empty() && c.next_deadline().is_none());

        // A failing stream ends with a JSON-RPC error, still on the request's msg_id; the
        // generated msg_ids keep counting across streams and error frames.
        c.on_bytes(
            &request(
                b"req-000000000002",
                "swp/stream",
                r#"{"count":2,"fail":true}"#,
            ),
            1_001,
        );
        c.on_bytes(&frame_of(1, 1, 0, b"tiny", "{}"), 1_001);
        let d = drain(&mut c);
        let got: Vec<_> = d
            .frames
            .iter()
            .map(|f| (f.msg_type, String::from_utf8(f.msg_id.to_vec()).unwrap()))
            .collect();
        assert_eq!(
            got,
            [
                (3, "swp-ntf-00000004".to_owned()),
                (3, "swp-ntf-00000005".to_owned()),
                (2, "req-000000000002".to_owned()),
                (2, "swp-err-00000006".to_owned()),
            ]
        );
        let v: serde_json::Value = serde_json::from_slice(&d.frames[2].payload).unwrap();
        assert_eq!(
            (v["id"].as_i64(), v["error"]["code"].as_i64()),
            (Some(1), Some(-32603))
        );
        // A tool failure is a JSON-RPC error, not an SWP reject: no swp_error code.
        assert!(v["error"].get("data").is_none());
    }

    #[test]
    fn a_partial_that_does_not_fit_ends_the_stream_with_an_error_frame() {
        let config = Config {
            limits: Limits {
                max_payload_bytes: 160,
                ..Limits::default()
            },
            ..Config::default()
        };
        let mut c = Connection::new(config, None);
        // The request fits; the notification echoing its long id as progressToken does not.
        let id = "x".repeat(70);
        let p = format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"swp/stream","params":{{"count":2}}}}"#
        );
        assert!(p.len() <= 160);
        c.on_bytes(&frame_of(1, 1, 0, ID, &p), 5);
        let d = drain(&mut c);
        assert_eq!(d.frames.len(), 1);
        assert_eq!(&d.frames[0].msg_id[..], ID);
        assert_eq!(error_of(&d.frames[0]).0, "ERR_PAYLOAD_TOO_LARGE");
        assert!(!d.closed);
    }

    #[test]
    fn swp_profiles_answer_on_the_request_msg_id_and_time_out_on_the_connection_clock() {
        use swp_profiles::p1::pb::rpc::{RpcCancel, RpcReq};
        use swp_profiles::rpc::{self, RpcMessage};
        let form = swp_profiles::p1::P1Form::Message;
        let req = |id: &'static [u8], method: &str, params: &'static [u8]| {
            rpc::encode(
                form,
                &RpcMessage::Req(RpcReq {
                    rpc_id: Bytes::from_static(id),
                    method: method.into(),
                    params: Bytes::from_static(params),
                    idempotency_key: String::new(),
                }),
            )
        };
        let frame = |msg_type: u64, id: &[u8], p: Vec<u8>| {
            let env = Envelope {
                version: 1,
                profile_id: 12,
                msg_type,
                ts_unix_ms: 0,
                msg_id: Bytes::copy_from_slice(id),
                payload: Bytes::from(p),
                ..Envelope::default()
            };
            e1::frame_bytes(&env).unwrap().to_vec()
        };
        let mut c = Connection::new(Config::default(), None);
        // Two stream items under fresh msg_ids, then the response on the request's.
        c.on_bytes(&frame(1, ID, req(b"r1", "swp.test.stream", b"2")), 5);
        let d = drain(&mut c);
        let got: Vec<_> = d
            .frames
            .iter()
            .map(|f| (f.profile_id, f.msg_type, f.msg_id.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (12, 4, Bytes::from_static(b"swp-out-00000001")),
                (12, 4, Bytes::from_static(b"swp-out-00000002")),
                (12, 2, Bytes::from_static(ID)),
            ]
        );
        // A slow call runs on the connection's timer; a second is cancelled.
        c.on_bytes(
            &frame(1, b"req-000000000002", req(b"s1", "swp.test.slow", b"50")),
            10,
        );
        c.on_bytes(
            &frame(1, b"req-000000000003", req(b"s2", "swp.test.slow", b"50")),
            10,
        );
        assert!(drain(&mut c).frames.is_empty());
        assert_eq!(c.next_deadline(), Some(60));
        let cancel = rpc::encode(
            form,
            &RpcMessage::Cancel(RpcCancel {
                rpc_id: Bytes::from_static(b"s2"),
                reason: String::new(),
            }),
        );
        c.on_bytes(&frame(5, b"req-000000000004", cancel), 20);
        let d = drain(&mut c);
        assert_eq!(
            (d.frames[0].msg_type, &d.frames[0].msg_id[..]),
            (3, &b"req-000000000003"[..])
        );
        c.on_timer(60);
        let d = drain(&mut c);
        assert_eq!(
            (d.frames[0].msg_type, &d.frames[0].msg_id[..]),
            (2, &b"req-000000000002"[..])
        );
        assert_eq!(c.next_deadline(), None);
        // A payload that is not P1 is rejected with an error frame.
        c.on_bytes(&frame(1, b"req-000000000005", vec![0xff]), 70);
        let d = drain(&mut c);
        assert_eq!(error_of(&d.frames[0]).0, "ERR_INVALID_PROFILE_PAYLOAD");
    }

    #[test]
    fn fail_is_answered_with_an_internal_error_response() {
        let mut c = Connection::new(Config::default(), None);
        c.on_bytes(&request(ID, "swp/fail", "{}"), 5);
        let d = drain(&mut c);
        assert_eq!(d.frames.len(), 1);
        assert_eq!((d.frames[0].msg_type, &d.frames[0].msg_id[..]), (2, ID));
        assert_eq!(
            &d.frames[0].payload[..],
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}"#
        );
    }

    #[test]
    fn a_notification_with_an_id_is_rejected_and_never_answered() {
        let mut c = Connection::new(Config::default(), None);
        c.on_bytes(
            &frame_of(
                1,
                3,
                0,
                ID,
                r#"{"jsonrpc":"2.0","id":5,"method":"notifications/progress"}"#,
            ),
            5,
        );
        let d = drain(&mut c);
        assert_eq!(d.frames.len(), 1);
        assert_eq!(&d.frames[0].msg_id[..], ID);
        assert_eq!(
            error_of(&d.frames[0]),
            ("ERR_INVALID_MCP_PAYLOAD".into(), -32600)
        );
    }

    #[test]
    fn end_of_stream() {
        // Clean.
        let mut c = Connection::new(Config::default(), None);
        c.on_bytes(&ping(ID), 5);
        c.on_eof(6);
        let d = drain(&mut c);
        assert_eq!(d.frames.len(), 1);
        assert!(d.closed);
        // Inside a frame.
        let mut c = Connection::new(Config::default(), None);
        c.on_bytes(&ping(ID)[..10], 5);
        c.on_eof(6);
        let d = drain(&mut c);
        assert_eq!(error_of(&d.frames[0]).0, "ERR_INVALID_FRAME");
        assert!(d.closed);
        // With a delayed response pending: it is still sent, then the connection closes.
        let mut c = Connection::new(Config::default(), None);
        c.on_bytes(&request(ID, "swp/delay", r#"{"ms":100}"#), 0);
        c.on_eof(1);
        assert!(!drain(&mut c).closed);
        assert_eq!(c.next_deadline(), Some(100));
        c.on_timer(100);
        let d = drain(&mut c);
        assert_eq!(d.frames.len(), 1);
        assert!(d.closed && c.is_closed());
    }

    #[test]
    fn freshness_failures_are_security_notices() {
        let config = Config {
            policy: Policy {
                timestamp_freshness: true,
                max_clock_skew_ms: 1_000,
                ..Policy::default()
            },
            ..Config::default()
        };
        let mut c = Connection::new(config, None);
        c.on_bytes(&frame_of(1, 1, 100_000, ID, "{}"), 200_000);
        let d = drain(&mut c);
        assert_eq!(error_of(&d.frames[0]).0, "ERR_INVALID_ENVELOPE");
        assert_eq!(&d.frames[0].msg_id[..], ID);
        assert!(matches!(
            d.notices[..],
            [Notice::Security(CoreError::StaleTimestamp { .. })]
        ));
        assert!(d.notices[0].to_string().starts_with("security event: "));
        // Notices are capped.
        for _ in 0..100 {
            c.on_bytes(&frame_of(1, 1, 1, ID, "{}"), 200_000);
        }
        let d = drain(&mut c);
        assert_eq!(d.notices.len(), MAX_NOTICES);
        assert_eq!(d.notices.last(), Some(&Notice::Suppressed));
    }

    #[test]
    fn rate_limit_rejects_frames_over_the_window() {
        let config = Config {
            policy: Policy {
                rate_limit: Some(RateLimit {
                    frames: 2,
                    window_ms: 1_000,
                }),
                ..Policy::default()
            },
            ..Config::default()
        };
        let mut c = Connection::new(config, None);
        for i in 0..3u8 {
            c.on_bytes(&ping(&[b'a' + i; 16]), 10);
        }
        let d = drain(&mut c);
        assert_eq!(d.frames.len(), 3);
        assert_eq!(error_of(&d.frames[2]).0, "ERR_RATE_LIMIT_EXCEEDED");
        c.on_bytes(&ping(ID), 1_010);
        assert_eq!(drain(&mut c).frames[0].msg_type, 2);
    }

    #[test]
    fn replies_that_do_not_fit_the_limits_become_error_frames_or_notices() {
        let config = Config {
            limits: Limits::with_max_frame(200),
            ..Config::default()
        };
        // A small request whose response (carrying a long identity) exceeds the bounds.
        let mut c = Connection::new(config, Some("x".repeat(300)));
        c.on_bytes(&request(ID, "swp/whoami", "{}"), 5);
        let d = drain(&mut c);
        assert_eq!(&d.frames[0].msg_id[..], ID);
        assert_eq!(error_of(&d.frames[0]).0, "ERR_PAYLOAD_TOO_LARGE");

        // Limits too small for any error frame: the reply is dropped and reported.
        let config = Config {
            limits: Limits::with_max_frame(40),
            ..Config::default()
        };
        let mut c = Connection::new(config, None);
        c.on_bytes(&frame_of(1, 9, 0, ID, "{}"), 5);
        let d = drain(&mut c);
        assert!(d.frames.is_empty());
        assert!(matches!(d.notices[..], [Notice::ReplyDropped(_)]));
    }
}
