//! The reference as an SWP-RPC callee (profile 12). Its methods (params and results are
//! UTF-8 text):
//!
//! | method | params | outcome |
//! |---|---|---|
//! | `swp.test.echo` | any octets | `RPC_RESP`, result = params |
//! | `swp.test.fail` | ignored | `RPC_ERR` `internal`, retryable false |
//! | `swp.test.retry` | ignored | `RPC_ERR` `unavailable`, retryable true |
//! | `swp.test.stream` | decimal N, 1..=16 | N `RPC_STREAM_ITEM`s, seq_no 1..=N, item = decimal k, the last `is_terminal`; then `RPC_RESP`, result = params |
//! | `swp.test.slow` | decimal ms, 0..=10,000 | `RPC_RESP`, result = params, after that delay; an `RPC_CANCEL` first ends it with `RPC_ERR` `cancelled`, retryable false |
//! | `swp.test.counter` | ignored | `RPC_RESP`, result = decimal count of counter calls run on this connection (not idempotent, so replays show) |
//! | `swp.test.admin` | ignored | policy-gated for every peer: rejected `ERR_SECURITY_POLICY`, no call opens |
//! | other | | `RPC_ERR` `unknown_method`, retryable false |
//!
//! Malformed params for `stream` or `slow` give `RPC_ERR` `invalid_request`, retryable
//! false. A replay of an idempotency key with the same method and params within the window
//! gets the original outcome (a replay of a running slow call waits for it); one with other
//! inputs gets `RPC_ERR` `idempotency_conflict`, retryable false. The terminal answer reuses
//! the request's msg_id; stream items get fresh ones. The reference calls nothing itself,
//! so a peer's response, error or stream item names a call it cannot make: it is rejected
//! unless it repeats the terminal outcome already sent.

use super::{refusal, step, Action, Config, Incoming, Out, ProfileAgent, Reject};
use bytes::Bytes;
use swp_profiles::p1::pb::rpc::{RpcErr, RpcResp, RpcStreamItem};
use swp_profiles::p1::P1Form;
use swp_profiles::rpc::{self, codes, Lifecycle, Outcome, RpcMessage, Seen};
use swp_profiles::{Ctx, Profile};

/// Method: the result is the params.
pub const ECHO: &str = "swp.test.echo";
/// Method: a non-retryable failure.
pub const FAIL: &str = "swp.test.fail";
/// Method: a retryable failure.
pub const RETRY: &str = "swp.test.retry";
/// Method: N stream items, then the result.
pub const STREAM: &str = "swp.test.stream";
/// Method: the result after a delay, cancellable.
pub const SLOW: &str = "swp.test.slow";
/// Method: a per-connection call count.
pub const COUNTER: &str = "swp.test.counter";
/// Method: refused by policy.
pub const ADMIN: &str = "swp.test.admin";
/// Method: the params back, to the identities `--rpc-owner` names only (a policy gate with
/// allowed scopes, where `swp.test.admin`'s has none).
pub const OWNER: &str = "swp.test.owner";
/// Most stream items one call sends.
pub const MAX_ITEMS: u64 = 16;
/// Longest delay of a slow call.
pub const MAX_SLOW_MS: u64 = 10_000;
/// Most slow calls running at once per connection; more are answered `unavailable`.
pub const MAX_SLOW: usize = 64;

/// A slow call waiting for its deadline.
#[derive(Debug, Clone)]
struct Slow {
    due_ms: u64,
    scope: String,
    rpc_id: Bytes,
    msg_id: Bytes,
    result: Bytes,
}

/// The RPC state of one connection.
#[derive(Debug)]
pub struct Agent {
    lifecycle: Lifecycle,
    form: P1Form,
    counter: u64,
    slow: Vec<Slow>,
    /// The msg_id each waiting replay came with, by (scope, rpc_id).
    replay_ids: Vec<((String, Bytes), Bytes)>,
}

fn err(code: &str, retryable: bool, message: impl Into<String>) -> Outcome {
    Outcome::Err {
        error_code: code.to_owned(),
        retryable,
        error_message: message.into(),
    }
}

fn resp(result: Bytes) -> Outcome {
    Outcome::Resp { result }
}

/// The longest params a count or a delay may come in: a decimal up to 10,000 with room
/// for surrounding spaces. Longer params are malformed, so a slow call never keeps a
/// padded copy of a frame (64 of them held 446 MiB, issue 30 defect 2).
const MAX_NUMBER_PARAMS: usize = 32;

/// A decimal count in `0..=max` from UTF-8 params.
fn number(params: &[u8], max: u64) -> Option<u64> {
    if params.len() > MAX_NUMBER_PARAMS {
        return None;
    }
    std::str::from_utf8(params)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|n| *n <= max)
}

impl Agent {
    /// The agent with the configured replay window; `swp.test.admin` is gated for all,
    /// `swp.test.owner` for all but the configured owners.
    pub fn new(config: Config, form: P1Form) -> Self {
        let lc = rpc::Config {
            replay_window_ms: config.rpc_replay_window_ms,
            gated: vec![
                rpc::lifecycle::Gate {
                    method: ADMIN.into(),
                    allowed_scopes: Vec::new(),
                },
                rpc::lifecycle::Gate {
                    method: OWNER.into(),
                    allowed_scopes: config.rpc_owners.clone(),
                },
            ],
            ..rpc::Config::default()
        };
        Agent {
            lifecycle: Lifecycle::new(lc),
            form,
            counter: 0,
            slow: Vec::new(),
            replay_ids: Vec::new(),
        }
    }

    /// Runs a newly opened call.
    fn run(
        &mut self,
        r: &swp_profiles::p1::pb::rpc::RpcReq,
        msg_id: &Bytes,
        scope: &str,
        now_ms: u64,
        outs: &mut Vec<Out>,
    ) {
        let id = &r.rpc_id;
        let outcome = match r.method.as_str() {
            ECHO | OWNER => resp(r.params.clone()),
            FAIL => err(codes::INTERNAL, false, "execution failed"),
            RETRY => err(codes::UNAVAILABLE, true, "temporarily unavailable"),
            COUNTER => {
                self.counter += 1;
                resp(Bytes::from(self.counter.to_string()))
            }
            STREAM => match number(&r.params, MAX_ITEMS).filter(|n| *n > 0) {
                Some(n) => {
                    for k in 1..=n {
                        let item = RpcStreamItem {
                            rpc_id: id.clone(),
                            seq_no: k,
                            item: Bytes::from(k.to_string()),
                            is_terminal: k == n,
                        };
                        self.emit(scope, RpcMessage::StreamItem(item), None, outs);
                    }
                    resp(r.params.clone())
                }
                None => err(
                    codes::INVALID_REQUEST,
                    false,
                    format!("{STREAM} takes a count 1..={MAX_ITEMS}"),
                ),
            },
            SLOW => match number(&r.params, MAX_SLOW_MS) {
                Some(0) => resp(r.params.clone()),
                Some(ms) if self.slow.len() < MAX_SLOW => {
                    self.slow.push(Slow {
                        due_ms: now_ms.saturating_add(ms),
                        scope: scope.to_owned(),
                        rpc_id: Bytes::copy_from_slice(id),
                        msg_id: msg_id.clone(),
                        // Its own copy: a slice of the decoded payload would keep the
                        // frame's buffer for the call's whole delay.
                        result: Bytes::copy_from_slice(&r.params),
                    });
                    return;
                }
                Some(_) => err(
                    codes::UNAVAILABLE,
                    true,
                    format!("more than {MAX_SLOW} slow calls on this connection"),
                ),
                None => err(
                    codes::INVALID_REQUEST,
                    false,
                    format!("{SLOW} takes milliseconds 0..={MAX_SLOW_MS}"),
                ),
            },
            other => err(
                codes::UNKNOWN_METHOD,
                false,
                format!("unknown method {other}"),
            ),
        };
        self.terminal(scope, id, msg_id, &outcome, outs);
    }

    /// Sends a call's terminal outcome, and the same outcome to the replays waiting for it.
    fn terminal(
        &mut self,
        scope: &str,
        rpc_id: &Bytes,
        msg_id: &Bytes,
        o: &Outcome,
        outs: &mut Vec<Out>,
    ) {
        let waiting = self.emit(scope, o.to_message(rpc_id.clone()), Some(msg_id), outs);
        for w in waiting {
            let key = (scope.to_owned(), w.clone());
            let Some(i) = self.replay_ids.iter().position(|(k, _)| *k == key) else {
                continue;
            };
            let (_, id) = self.replay_ids.swap_remove(i);
            self.emit(scope, o.to_message(w), Some(&id), outs);
        }
    }

    /// Sends one message the agent produces, after its own lifecycle accepted it (a bug
    /// that would emit a breach is caught here, not on the wire); returns the replays its
    /// terminal releases.
    fn emit(
        &mut self,
        scope: &str,
        m: RpcMessage,
        reply_to: Option<&Bytes>,
        outs: &mut Vec<Out>,
    ) -> Vec<Bytes> {
        // Our own messages are stepped at no particular time: only requests use the clock.
        match self.lifecycle.step(Ctx::scoped(scope), &m) {
            Ok(seen) => {
                outs.push(Out::of::<Lifecycle>(self.form, &m, reply_to.cloned()));
                match seen {
                    Seen::Closed { waiting, .. } => waiting,
                    _ => Vec::new(),
                }
            }
            Err(_) => Vec::new(),
        }
    }
}

impl ProfileAgent for Agent {
    type Profile = Lifecycle;

    /// Outcomes kept for replay (echo results are params, up to a frame each).
    fn held_bytes(&self) -> usize {
        self.lifecycle.stored_bytes()
    }

    fn for_connection(config: &Config, form: P1Form) -> Self {
        Agent::new(config.clone(), form)
    }

    fn form(&self) -> P1Form {
        self.form
    }

    fn on_message(&mut self, m: RpcMessage, at: Incoming<'_>) -> Result<Action, Reject> {
        let Incoming {
            msg_id,
            scope,
            now_ms,
        } = at;
        // Every open call is the peer's: the reference calls nothing, so an outcome or a
        // stream item from the peer for an open call would end the peer's own call in the
        // lifecycle, and the answer the reference owes it would then be refused and never
        // sent. Only a repeat of a terminal already sent (a closed call) goes on to the
        // lifecycle, which reads it as a duplicate.
        let answered = match &m {
            RpcMessage::Resp(r) => Some(&r.rpc_id),
            RpcMessage::Err(e) => Some(&e.rpc_id),
            RpcMessage::StreamItem(i) => Some(&i.rpc_id),
            _ => None,
        };
        if let Some(id) = answered.filter(|id| self.lifecycle.is_open(scope, id)) {
            return Err(refusal(
                swp_core::ErrorCode::InvalidProfilePayload,
                format!(
                    "rpc_id {} is a call the peer made: the peer cannot answer its own call (swp-rpc §5)",
                    hex_id(id)
                ),
            ));
        }
        let seen = step::<Self>(&mut self.lifecycle, at.ctx(), &m)?;
        let mut outs = Vec::new();
        match (&m, seen) {
            (RpcMessage::Req(r), Seen::Opened) => self.run(r, msg_id, scope, now_ms, &mut outs),
            (RpcMessage::Req(r), Seen::Replay { outcome, .. }) => match outcome {
                Some(o) => self.terminal(scope, &r.rpc_id, msg_id, &o, &mut outs),
                // The original is still running: answered when it ends.
                None => self
                    .replay_ids
                    .push(((scope.to_owned(), r.rpc_id.clone()), msg_id.clone())),
            },
            (RpcMessage::Req(r), Seen::Conflict { .. }) => {
                let o = err(
                    codes::IDEMPOTENCY_CONFLICT,
                    false,
                    "idempotency_key replayed with other method or params",
                );
                self.terminal(scope, &r.rpc_id, msg_id, &o, &mut outs);
            }
            (RpcMessage::Cancel(c), Seen::CancelRequested) => {
                if let Some(i) = self
                    .slow
                    .iter()
                    .position(|s| s.scope == scope && s.rpc_id == c.rpc_id)
                {
                    let s = self.slow.swap_remove(i);
                    let why = if c.reason.is_empty() {
                        "cancelled by the caller".to_owned()
                    } else {
                        format!("cancelled by the caller: {}", c.reason)
                    };
                    let o = err(codes::CANCELLED, false, why);
                    self.terminal(scope, &s.rpc_id, &s.msg_id, &o, &mut outs);
                }
            }
            // Duplicates, ignored cancels and a repeat of our own terminal change nothing.
            _ => {}
        }
        Ok(Action::from_outs(outs))
    }

    /// The earliest slow call's deadline.
    fn next_deadline(&self) -> Option<u64> {
        self.slow.iter().map(|s| s.due_ms).min()
    }

    /// Ends every slow call that is due, earliest first.
    fn on_timer(&mut self, now_ms: u64) -> Vec<Out> {
        let mut outs = Vec::new();
        while let Some(i) = self
            .slow
            .iter()
            .enumerate()
            .filter(|(_, s)| s.due_ms <= now_ms)
            .min_by_key(|(_, s)| s.due_ms)
            .map(|(i, _)| i)
        {
            let s = self.slow.swap_remove(i);
            let o = resp(s.result.clone());
            self.terminal(&s.scope, &s.rpc_id, &s.msg_id, &o, &mut outs);
        }
        outs
    }
}

/// An rpc_id for messages: text when it is printable, else hex.
fn hex_id(id: &[u8]) -> String {
    match std::str::from_utf8(id) {
        Ok(t) if t.chars().all(|c| !c.is_control()) => format!("{t:?}"),
        _ => format!(
            "hex:{}",
            id.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ),
    }
}

/// An `RPC_RESP` (used by tests and the examples).
pub fn response(rpc_id: &[u8], result: &[u8]) -> RpcMessage {
    RpcMessage::Resp(RpcResp {
        rpc_id: Bytes::copy_from_slice(rpc_id),
        result: Bytes::copy_from_slice(result),
    })
}

/// An `RPC_ERR` (used by tests).
pub fn error(rpc_id: &[u8], code: &str, retryable: bool) -> RpcMessage {
    RpcMessage::Err(RpcErr {
        rpc_id: Bytes::copy_from_slice(rpc_id),
        error_code: code.into(),
        retryable,
        error_message: "x".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{code, outs};
    use super::*;
    use swp_core::ErrorCode;
    use swp_profiles::p1::pb::rpc::{RpcCancel, RpcReq};

    const ID: Bytes = Bytes::from_static(b"msg-000000000001");

    fn req(id: &str, method: &str, params: &str, key: &str) -> Vec<u8> {
        rpc::encode(
            P1Form::Message,
            &RpcMessage::Req(RpcReq {
                rpc_id: Bytes::copy_from_slice(id.as_bytes()),
                method: method.into(),
                params: Bytes::copy_from_slice(params.as_bytes()),
                idempotency_key: key.into(),
            }),
        )
    }

    fn decoded(o: &[Out]) -> Vec<RpcMessage> {
        o.iter()
            .map(|x| rpc::decode(P1Form::Message, x.msg_type, &x.payload).unwrap())
            .collect()
    }

    fn agent() -> Agent {
        Agent::new(
            Config {
                rpc_replay_window_ms: 1_000,
                ..Config::default()
            },
            P1Form::Message,
        )
    }

    #[test]
    fn the_owner_method_is_served_to_its_owners_only() {
        let mut a = Agent::new(
            Config {
                rpc_owners: vec!["spiffe://t/a".into()],
                ..Config::default()
            },
            P1Form::Message,
        );
        let o = outs(a.handle(1, &ID, &req("o1", OWNER, "mine", ""), "spiffe://t/a", 0));
        assert_eq!(decoded(&o), [response(b"o1", b"mine")]);
        assert_eq!(
            code(a.handle(1, &ID, &req("o2", OWNER, "x", ""), "spiffe://t/b", 0)),
            ErrorCode::SecurityPolicy
        );
        // With no owner configured, nobody is served it.
        assert_eq!(
            code(agent().handle(1, &ID, &req("o3", OWNER, "x", ""), "spiffe://t/a", 0)),
            ErrorCode::SecurityPolicy
        );
    }

    #[test]
    fn methods_answer_deterministically() {
        let mut a = agent();
        let o = outs(a.handle(1, &ID, &req("r1", ECHO, "hi", ""), "", 0));
        assert_eq!(decoded(&o), [response(b"r1", b"hi")]);
        assert_eq!(o[0].reply_to.as_ref(), Some(&ID));
        let o = decoded(&outs(a.handle(1, &ID, &req("r2", FAIL, "", ""), "", 0)));
        assert!(
            matches!(&o[..], [RpcMessage::Err(e)] if e.error_code == "internal" && !e.retryable)
        );
        let o = decoded(&outs(a.handle(1, &ID, &req("r3", RETRY, "", ""), "", 0)));
        assert!(matches!(&o[..], [RpcMessage::Err(e)] if e.retryable));
        let o = outs(a.handle(1, &ID, &req("r4", STREAM, "3", ""), "", 0));
        let m = decoded(&o);
        assert_eq!(m.len(), 4);
        for (k, x) in m[..3].iter().enumerate() {
            let RpcMessage::StreamItem(s) = x else {
                panic!("{x:?}")
            };
            assert_eq!((s.seq_no, s.is_terminal), (k as u64 + 1, k == 2));
        }
        assert_eq!(o[0].reply_to, None);
        assert_eq!(m[3], response(b"r4", b"3"));
        let o = decoded(&outs(a.handle(1, &ID, &req("r5", STREAM, "x", ""), "", 0)));
        assert!(matches!(&o[..], [RpcMessage::Err(e)] if e.error_code == "invalid_request"));
        let o = decoded(&outs(a.handle(1, &ID, &req("r6", "x.y", "", ""), "", 0)));
        assert!(matches!(&o[..], [RpcMessage::Err(e)] if e.error_code == "unknown_method"));
        assert_eq!(
            code(a.handle(1, &ID, &req("r7", ADMIN, "", ""), "", 0)),
            ErrorCode::SecurityPolicy
        );
        assert_eq!(
            code(a.handle(9, &ID, b"", "", 0)),
            ErrorCode::UnsupportedMsgType
        );
    }

    #[test]
    fn idempotency_replays_and_conflicts() {
        let mut a = agent();
        let first = decoded(&outs(a.handle(1, &ID, &req("c1", COUNTER, "", "k"), "", 0)));
        assert_eq!(first, [response(b"c1", b"1")]);
        // Same inputs: the original outcome, not a second count.
        let again = decoded(&outs(a.handle(
            1,
            &ID,
            &req("c2", COUNTER, "", "k"),
            "",
            10,
        )));
        assert_eq!(again, [response(b"c2", b"1")]);
        // Other inputs: a deterministic conflict, the same each time.
        for id in ["c3", "c4"] {
            let o = decoded(&outs(a.handle(1, &ID, &req(id, ECHO, "z", "k"), "", 20)));
            assert!(
                matches!(&o[..], [RpcMessage::Err(e)] if e.error_code == "idempotency_conflict" && !e.retryable)
            );
        }
        // Past the window the key starts afresh.
        let late = decoded(&outs(a.handle(
            1,
            &ID,
            &req("c5", COUNTER, "", "k"),
            "",
            1_000,
        )));
        assert_eq!(late, [response(b"c5", b"2")]);
        // The same request again on its rpc_id is a duplicate: nothing.
        assert_eq!(
            a.handle(1, &ID, &req("c5", COUNTER, "", "k"), "", 1_001),
            Action::Nothing
        );
    }

    #[test]
    fn the_peer_cannot_answer_its_own_open_call() {
        let mut a = agent();
        assert_eq!(
            a.handle(1, &ID, &req("s9", SLOW, "100", ""), "", 0),
            Action::Nothing
        );
        // The peer sends an outcome for the call it made: refused, and the call stays
        // open for the reference's own answer.
        for m in [response(b"s9", b"x"), error(b"s9", "internal", false)] {
            let t = m.msg_type();
            let r = a.handle(t, &ID, &rpc::encode(P1Form::Message, &m), "", 10);
            assert!(matches!(r, Action::Reject(_)), "{r:?}");
        }
        assert_eq!(decoded(&a.on_timer(100)), [response(b"s9", b"100")]);
        // After the outcome, the same terminal repeated is a duplicate, not a refusal.
        let again = rpc::encode(P1Form::Message, &response(b"s9", b"100"));
        assert_eq!(a.handle(2, &ID, &again, "", 120), Action::Nothing);
    }

    #[test]
    fn slow_calls_end_on_time_or_on_cancel_and_replays_wait() {
        let mut a = agent();
        assert_eq!(
            a.handle(1, &ID, &req("s1", SLOW, "100", "k"), "", 0),
            Action::Nothing
        );
        // A replay while it runs waits for it.
        let id2 = Bytes::from_static(b"msg-000000000002");
        assert_eq!(
            a.handle(1, &id2, &req("s2", SLOW, "100", "k"), "", 5),
            Action::Nothing
        );
        assert_eq!(a.next_deadline(), Some(100));
        assert!(a.on_timer(99).is_empty());
        let o = a.on_timer(100);
        assert_eq!(
            decoded(&o),
            [response(b"s1", b"100"), response(b"s2", b"100")]
        );
        assert_eq!(
            o.iter().map(|x| x.reply_to.clone()).collect::<Vec<_>>(),
            [Some(ID), Some(id2)]
        );
        // Cancelled before its deadline: a cancelled error, and nothing later.
        a.handle(1, &ID, &req("s3", SLOW, "100", ""), "", 200);
        let cancel = rpc::encode(
            P1Form::Message,
            &RpcMessage::Cancel(RpcCancel {
                rpc_id: Bytes::from_static(b"s3"),
                reason: String::new(),
            }),
        );
        let o = decoded(&outs(a.handle(5, &ID, &cancel, "", 210)));
        assert!(
            matches!(&o[..], [RpcMessage::Err(e)] if e.error_code == "cancelled" && !e.retryable)
        );
        assert!(a.on_timer(1_000).is_empty());
        // A cancel after the terminal is ignored.
        assert_eq!(a.handle(5, &ID, &cancel, "", 220), Action::Nothing);
    }

    #[test]
    fn a_peer_cannot_extend_a_closed_call() {
        let mut a = agent();
        outs(a.handle(1, &ID, &req("t1", ECHO, "x", ""), "", 0));
        let item = rpc::encode(
            P1Form::Message,
            &RpcMessage::StreamItem(RpcStreamItem {
                rpc_id: Bytes::from_static(b"t1"),
                seq_no: 1,
                item: Bytes::from_static(b"late"),
                is_terminal: false,
            }),
        );
        assert_eq!(
            code(a.handle(4, &ID, &item, "", 1)),
            ErrorCode::InvalidProfilePayload
        );
        // A response for a call nobody opened.
        let r = rpc::encode(P1Form::Message, &response(b"zz", b""));
        assert_eq!(
            code(a.handle(2, &ID, &r, "", 1)),
            ErrorCode::InvalidProfilePayload
        );
        // The terminal already sent, repeated: the same outcome, not a second one.
        let r = rpc::encode(P1Form::Message, &response(b"t1", b"x"));
        assert_eq!(a.handle(2, &ID, &r, "", 1), Action::Nothing);
        let r = rpc::encode(P1Form::Message, &error(b"t1", "internal", false));
        assert_eq!(
            code(a.handle(3, &ID, &r, "", 1)),
            ErrorCode::InvalidProfilePayload
        );
    }
}
