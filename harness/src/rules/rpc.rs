//! SWP-RPC (profile 12, swp-rpc.md): required fields (§4), the call lifecycle keyed by
//! rpc_id (§5: exactly one terminal outcome, no stream item after it, strictly increasing
//! seq_no), and idempotency-key replays (§6) within the SUT's declared replay window, as
//! docs/spec-issues-profiles.md reads them.
//!
//! The calls are one conversation of both peers: one table keyed by rpc_id, each call
//! remembering its caller, so that outcomes and stream items come from the other side.

use super::common::{digest, show, trackable, Digest, Table};
use super::config::{Ctx, EDGE_SLACK_MS};
use super::verdict::{decode, Level, Rule, Side, Violation};
use crate::p1::pb::types::rpc::{RpcCancel, RpcErr, RpcReq, RpcResp, RpcStreamItem};

/// The profile_id of SWP-RPC.
pub(super) const PROFILE_ID: u64 = 12;

const MSG_TYPE: Rule = Rule {
    name: "rpc.msg-type-assigned",
    profile: "RPC",
    requirement: "RPC-016",
    level: Level::Must,
    section: "§3, §8",
    checks: "msg_type is 1 REQ, 2 RESP, 3 ERR, 4 STREAM_ITEM or 5 CANCEL",
};
const REQ_FIELDS: Rule = Rule {
    name: "rpc.req-fields",
    profile: "RPC",
    requirement: "RPC-020",
    level: Level::Must,
    section: "§4",
    checks: "RPC_REQ carries a non-empty rpc_id and method",
};
const RESP_FIELDS: Rule = Rule {
    name: "rpc.resp-fields",
    profile: "RPC",
    requirement: "RPC-022",
    level: Level::Must,
    section: "§4",
    checks: "RPC_RESP carries a non-empty rpc_id (result may be empty)",
};
const ERR_FIELDS: Rule = Rule {
    name: "rpc.err-fields",
    profile: "RPC",
    requirement: "RPC-023",
    level: Level::Must,
    section: "§4",
    checks: "RPC_ERR carries a non-empty rpc_id, error_code and error_message",
};
const ITEM_FIELDS: Rule = Rule {
    name: "rpc.stream-item-fields",
    profile: "RPC",
    requirement: "RPC-024",
    level: Level::Must,
    section: "§4 (SI: item)",
    checks: "RPC_STREAM_ITEM carries a non-empty rpc_id and item",
};
const CANCEL_FIELDS: Rule = Rule {
    name: "rpc.cancel-fields",
    profile: "RPC",
    requirement: "RPC-025",
    level: Level::Must,
    section: "§4",
    checks: "RPC_CANCEL carries a non-empty rpc_id",
};
const RPC_ID_REUSE: Rule = Rule {
    name: "rpc.rpc-id-reuse",
    profile: "RPC",
    requirement: "RPC-005",
    level: Level::Must,
    section: "§5 (SI: same rpc_id)",
    checks: "an RPC_REQ repeating a known rpc_id repeats its method, params and idempotency_key",
};
const OUTCOME_NAMES_CALL: Rule = Rule {
    name: "rpc.outcome-names-call",
    profile: "RPC",
    requirement: "RPC-017",
    level: Level::Must,
    section: "§5, §8",
    checks: "RPC_RESP and RPC_STREAM_ITEM name an rpc_id some RPC_REQ opened",
};
const OUTCOME_FROM_CALLEE: Rule = Rule {
    name: "rpc.outcome-from-callee",
    profile: "RPC",
    requirement: "RPC-005",
    level: Level::Must,
    section: "§5",
    checks: "a call's outcome and stream items come from the side that did not send its RPC_REQ",
};
const ONE_TERMINAL: Rule = Rule {
    name: "rpc.one-terminal-outcome",
    profile: "RPC",
    requirement: "RPC-005",
    level: Level::Must,
    section: "§5 (SI-P-RPC-2)",
    checks:
        "a call gets exactly one RPC_RESP or RPC_ERR (the same message again is the same outcome)",
};
const NO_ITEM_AFTER_TERMINAL: Rule = Rule {
    name: "rpc.no-item-after-terminal",
    profile: "RPC",
    requirement: "RPC-002",
    level: Level::MustNot,
    section: "§5",
    checks: "no RPC_STREAM_ITEM follows a call's terminal outcome",
};
const NO_ITEM_AFTER_LAST_ITEM: Rule = Rule {
    name: "rpc.no-item-after-last-item",
    profile: "RPC",
    requirement: "RPC-018",
    level: Level::Must,
    section: "§4, §8 (SI: is_terminal)",
    checks: "no RPC_STREAM_ITEM follows the item marked is_terminal",
};
const SEQ_NO_INCREASING: Rule = Rule {
    name: "rpc.seq-no-increasing",
    profile: "RPC",
    requirement: "RPC-010",
    level: Level::Must,
    section: "§6",
    checks: "seq_no strictly increases across the stream items of one rpc_id",
};
const CANCEL_NAMES_CALL: Rule = Rule {
    name: "rpc.cancel-names-call",
    profile: "RPC",
    requirement: "RPC-025",
    level: Level::Must,
    section: "§5 (SI: cancel)",
    checks: "RPC_CANCEL names an rpc_id some RPC_REQ opened (after the outcome it is ignored)",
};
const REPLAY_SAME_OUTCOME: Rule = Rule {
    name: "rpc.replay-same-outcome",
    profile: "RPC",
    requirement: "RPC-008",
    level: Level::Must,
    section: "§6",
    checks:
        "within the replay window, a replay with the same method and params ends like the original",
};
const REPLAY_CONFLICT_REJECTED: Rule = Rule {
    name: "rpc.replay-conflict-rejected",
    profile: "RPC",
    requirement: "RPC-009",
    level: Level::Must,
    section: "§6 (SI: deterministic terminal error)",
    checks: "within the window, a replay with other inputs ends in RPC_ERR, the same error_code and retryable for every replay of the same conflicting inputs",
};

/// Every SWP-RPC rule.
pub(super) const RULES: &[&Rule] = &[
    &MSG_TYPE,
    &REQ_FIELDS,
    &RESP_FIELDS,
    &ERR_FIELDS,
    &ITEM_FIELDS,
    &CANCEL_FIELDS,
    &RPC_ID_REUSE,
    &OUTCOME_NAMES_CALL,
    &OUTCOME_FROM_CALLEE,
    &ONE_TERMINAL,
    &NO_ITEM_AFTER_TERMINAL,
    &NO_ITEM_AFTER_LAST_ITEM,
    &SEQ_NO_INCREASING,
    &CANCEL_NAMES_CALL,
    &REPLAY_SAME_OUTCOME,
    &REPLAY_CONFLICT_REJECTED,
];

/// A decoded SWP-RPC message whose own fields hold.
pub(super) enum Msg {
    Req(RpcReq),
    Resp(RpcResp),
    Err(RpcErr),
    Item(RpcStreamItem),
    Cancel(RpcCancel),
}

/// Decodes by msg_type and checks the class's required fields (§4). `retryable` needs no
/// check: a bool always has a value (RPC-012 holds by schema, docs/spec-issues-profiles.md).
pub(super) fn check(msg_type: u64, bare: &[u8]) -> Result<Msg, Violation> {
    match msg_type {
        1 => {
            let m: RpcReq = decode(bare, "rpc.RpcReq")?;
            if m.rpc_id.is_empty() {
                return Err(REQ_FIELDS.violation("RPC_REQ without rpc_id"));
            }
            if m.method.is_empty() {
                return Err(REQ_FIELDS.violation("RPC_REQ without method"));
            }
            Ok(Msg::Req(m))
        }
        2 => {
            let m: RpcResp = decode(bare, "rpc.RpcResp")?;
            if m.rpc_id.is_empty() {
                return Err(RESP_FIELDS.violation("RPC_RESP without rpc_id"));
            }
            Ok(Msg::Resp(m))
        }
        3 => {
            let m: RpcErr = decode(bare, "rpc.RpcErr")?;
            for (empty, what) in [
                (m.rpc_id.is_empty(), "rpc_id"),
                (m.error_code.is_empty(), "error_code"),
                (m.error_message.is_empty(), "error_message"),
            ] {
                if empty {
                    return Err(ERR_FIELDS.violation(format!("RPC_ERR without {what}")));
                }
            }
            Ok(Msg::Err(m))
        }
        4 => {
            let m: RpcStreamItem = decode(bare, "rpc.RpcStreamItem")?;
            if m.rpc_id.is_empty() {
                return Err(ITEM_FIELDS.violation("RPC_STREAM_ITEM without rpc_id"));
            }
            if m.item.is_empty() {
                return Err(ITEM_FIELDS.violation("RPC_STREAM_ITEM with an empty item"));
            }
            Ok(Msg::Item(m))
        }
        5 => {
            let m: RpcCancel = decode(bare, "rpc.RpcCancel")?;
            if m.rpc_id.is_empty() {
                return Err(CANCEL_FIELDS.violation("RPC_CANCEL without rpc_id"));
            }
            Ok(Msg::Cancel(m))
        }
        t => Err(MSG_TYPE.violation(format!("msg_type {t} is not assigned in SWP-RPC"))),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    Open {
        last_seq: Option<u64>,
        last_item: bool,
    },
    /// Ended, by the terminal message with this digest (all its fields).
    Closed(Digest),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The first request of the key in its window, or an identical replay.
    SameOutcome,
    /// A replay with other method or params.
    Conflict,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct IdemLink {
    key: (Side, String),
    generation: u64,
    role: Role,
    /// The call's inputs (method and params): conflicting replays are held to one error
    /// per distinct inputs, not per key.
    inputs: Digest,
    /// A later call of the key, not the one that opened its window.
    replay: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Call {
    caller: Side,
    request: Digest,
    phase: Phase,
    idem: Option<IdemLink>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct IdemEntry {
    started_ms: u64,
    inputs: Digest,
    generation: u64,
    /// The outcome every identical call of the key ends with, once one ended.
    outcome: Option<Digest>,
    /// Per distinct conflicting inputs, the error their replays end with, once one ended
    /// (at most [`MAX_CONFLICT_INPUTS`]; further inputs are not judged for it).
    conflict_outcomes: Vec<(Digest, Digest)>,
}

/// How many distinct conflicting inputs of one key are remembered.
const MAX_CONFLICT_INPUTS: usize = 16;

/// The calls and idempotency keys of one connection.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct State {
    calls: Table<Vec<u8>, Call>,
    idem: Table<(Side, String), IdemEntry>,
    generations: u64,
}

fn outcome_resp(r: &RpcResp) -> Digest {
    digest(&[b"resp", &r.result])
}

fn outcome_err(e: &RpcErr) -> Digest {
    // The error class and retryability are the outcome; the message is human-readable.
    digest(&[b"err", e.error_code.as_bytes(), &[u8::from(e.retryable)]])
}

impl State {
    /// Judges `msg` from `ctx.side`, then records it.
    pub(super) fn observe(&mut self, ctx: &Ctx, msg: Msg) -> Result<(), Violation> {
        match msg {
            Msg::Req(r) => self.request(ctx, r),
            Msg::Resp(r) => {
                let o = outcome_resp(&r);
                let whole = digest(&[b"resp", &r.rpc_id, &r.result]);
                self.terminal(ctx.side, &r.rpc_id, o, whole, None)
            }
            Msg::Err(e) => {
                let o = outcome_err(&e);
                let whole = digest(&[
                    b"err",
                    &e.rpc_id,
                    e.error_code.as_bytes(),
                    &[u8::from(e.retryable)],
                    e.error_message.as_bytes(),
                ]);
                self.terminal(ctx.side, &e.rpc_id, o, whole, Some(e.retryable))
            }
            Msg::Item(i) => self.item(ctx.side, i),
            Msg::Cancel(c) => {
                if !trackable(&c.rpc_id) || self.calls.contains(&c.rpc_id.to_vec()) {
                    // Before the outcome it asks to stop; after it, it is ignored (SI).
                    return Ok(());
                }
                if self.calls.overflowed() {
                    return Ok(());
                }
                Err(CANCEL_NAMES_CALL.violation(format!(
                    "RPC_CANCEL for {}, which no RPC_REQ opened",
                    show(&c.rpc_id)
                )))
            }
        }
    }

    fn request(&mut self, ctx: &Ctx, r: RpcReq) -> Result<(), Violation> {
        if !trackable(&r.rpc_id) {
            return Ok(());
        }
        let id = r.rpc_id.to_vec();
        let request = digest(&[r.method.as_bytes(), &r.params, r.idempotency_key.as_bytes()]);
        if let Some(call) = self.calls.get(&id) {
            // The same request again is a duplicate: nothing new (SI).
            if call.request == request {
                return Ok(());
            }
            return Err(RPC_ID_REUSE.violation(format!(
                "RPC_REQ reuses rpc_id {} for another request",
                show(&r.rpc_id)
            )));
        }
        let idem = self.idempotency(ctx, &r);
        self.calls.insert(
            id,
            Call {
                caller: ctx.side,
                request,
                phase: Phase::Open {
                    last_seq: None,
                    last_item: false,
                },
                idem,
            },
        );
        Ok(())
    }

    /// The idempotency role of a new call, recording a fresh window where one starts. Judged
    /// only where the SUT answers (the harness calls), with a declared window: the window is
    /// the responder's, and an undeclared one is never assumed.
    fn idempotency(&mut self, ctx: &Ctx, r: &RpcReq) -> Option<IdemLink> {
        let window = ctx.config.rpc_replay_window_ms?;
        if r.idempotency_key.is_empty()
            || ctx.side.other() != Side::Endpoint
            || !trackable(r.idempotency_key.as_bytes())
        {
            return None;
        }
        let key = (ctx.side, r.idempotency_key.clone());
        let inputs = digest(&[r.method.as_bytes(), &r.params]);
        let fresh = match self.idem.get(&key) {
            None => true,
            Some(e) => {
                let age = ctx.now_ms.saturating_sub(e.started_ms);
                if age.saturating_add(EDGE_SLACK_MS) < window {
                    let role = if e.inputs == inputs {
                        Role::SameOutcome
                    } else {
                        Role::Conflict
                    };
                    return Some(IdemLink {
                        key,
                        generation: e.generation,
                        role,
                        inputs,
                        replay: true,
                    });
                }
                if age < window.saturating_add(EDGE_SLACK_MS) {
                    // At the window's edge: whether the key starts afresh is not judged.
                    return None;
                }
                true
            }
        };
        if !fresh {
            return None;
        }
        self.generations = self.generations.wrapping_add(1);
        let generation = self.generations;
        self.idem.insert(
            key.clone(),
            IdemEntry {
                started_ms: ctx.now_ms,
                inputs,
                generation,
                outcome: None,
                conflict_outcomes: Vec::new(),
            },
        );
        // A full table did not take the entry: the call is not judged for replays.
        self.idem.get(&key)?;
        Some(IdemLink {
            key,
            generation,
            role: Role::SameOutcome,
            inputs,
            replay: false,
        })
    }

    /// A terminal outcome: `outcome` is what a replay must repeat, `whole` the digest of the
    /// whole message (an identical repeat of the terminal is the same outcome again), and
    /// `err` the retryable flag of an `RPC_ERR` (`None` for an `RPC_RESP`).
    fn terminal(
        &mut self,
        side: Side,
        rpc_id: &[u8],
        outcome: Digest,
        whole: Digest,
        err: Option<bool>,
    ) -> Result<(), Violation> {
        let is_err = err.is_some();
        if !trackable(rpc_id) {
            return Ok(());
        }
        let id = rpc_id.to_vec();
        let what = if is_err { "RPC_ERR" } else { "RPC_RESP" };
        let Some(call) = self.calls.get(&id) else {
            // An RPC_ERR may answer a request the peer refused before a call opened (an
            // invalid or policy-gated request, SI): only a success needs an open call.
            if is_err || self.calls.overflowed() {
                return Ok(());
            }
            return Err(OUTCOME_NAMES_CALL.violation(format!(
                "{what} for {}, which no RPC_REQ opened",
                show(rpc_id)
            )));
        };
        if call.caller == side {
            return Err(OUTCOME_FROM_CALLEE.violation(format!(
                "{what} for {} from the side that called it",
                show(rpc_id)
            )));
        }
        if let Phase::Closed(first) = call.phase {
            // The terminal message again, every field equal, is the one outcome repeated,
            // not a second one (docs/spec-issues-profiles.md SI-P-RPC-2): nothing new.
            if first == whole {
                return Ok(());
            }
            return Err(ONE_TERMINAL.violation(format!(
                "a second terminal outcome ({what}) for {}",
                show(rpc_id)
            )));
        }
        let mut link = call.idem.clone();
        if let Some(l) = &link {
            let key_open = self
                .idem
                .get(&l.key)
                .is_some_and(|e| e.generation == l.generation && e.outcome.is_none());
            if l.role == Role::SameOutcome && l.replay && err == Some(true) && key_open {
                // A replay answered "retry later" while no call of its key has ended is not
                // the key's outcome: §6 asks a replay to return the original outcome, and a
                // retryable error before there is one defers that (SI-P-RPC-V, the reading
                // `RPC_REPLAY_WHILE_RUNNING: 1` declares). The call ends; the key's outcome is
                // still the one its first ended call gives.
                link = None;
            }
        }
        if let Some(link) = &link {
            if let Some(e) = self
                .idem
                .get(&link.key)
                .filter(|e| e.generation == link.generation)
            {
                match link.role {
                    Role::SameOutcome => {
                        if e.outcome.is_some_and(|o| o != outcome) {
                            return Err(REPLAY_SAME_OUTCOME.violation(format!(
                                "{what} for {} differs from the outcome of idempotency_key {}",
                                show(rpc_id),
                                show(link.key.1.as_bytes())
                            )));
                        }
                    }
                    Role::Conflict => {
                        if !is_err {
                            return Err(REPLAY_CONFLICT_REJECTED.violation(format!(
                                "RPC_RESP for {}, a replay of idempotency_key {} with other inputs",
                                show(rpc_id),
                                show(link.key.1.as_bytes())
                            )));
                        }
                        let earlier = e
                            .conflict_outcomes
                            .iter()
                            .find(|(inputs, _)| *inputs == link.inputs);
                        if earlier.is_some_and(|(_, o)| *o != outcome) {
                            return Err(REPLAY_CONFLICT_REJECTED.violation(format!(
                                "RPC_ERR for {} differs from the error of an earlier replay of {} with the same conflicting inputs",
                                show(rpc_id),
                                show(link.key.1.as_bytes())
                            )));
                        }
                    }
                }
            }
        }
        if let Some(c) = self.calls.get_mut(&id) {
            c.phase = Phase::Closed(whole);
        }
        if let Some(link) = link {
            if let Some(e) = self
                .idem
                .get_mut(&link.key)
                .filter(|e| e.generation == link.generation)
            {
                match link.role {
                    Role::SameOutcome => {
                        e.outcome.get_or_insert(outcome);
                    }
                    Role::Conflict => {
                        let known = e.conflict_outcomes.iter().any(|(i, _)| *i == link.inputs);
                        if !known && e.conflict_outcomes.len() < MAX_CONFLICT_INPUTS {
                            e.conflict_outcomes.push((link.inputs, outcome));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn item(&mut self, side: Side, i: RpcStreamItem) -> Result<(), Violation> {
        if !trackable(&i.rpc_id) {
            return Ok(());
        }
        let id = i.rpc_id.to_vec();
        let Some(call) = self.calls.get_mut(&id) else {
            if self.calls.overflowed() {
                return Ok(());
            }
            return Err(OUTCOME_NAMES_CALL.violation(format!(
                "RPC_STREAM_ITEM for {}, which no RPC_REQ opened",
                show(&i.rpc_id)
            )));
        };
        if call.caller == side {
            return Err(OUTCOME_FROM_CALLEE.violation(format!(
                "RPC_STREAM_ITEM for {} from the side that called it",
                show(&i.rpc_id)
            )));
        }
        match &mut call.phase {
            Phase::Closed(_) => Err(NO_ITEM_AFTER_TERMINAL.violation(format!(
                "RPC_STREAM_ITEM seq_no {} for {} after its terminal outcome",
                i.seq_no,
                show(&i.rpc_id)
            ))),
            Phase::Open {
                last_item: true, ..
            } => Err(NO_ITEM_AFTER_LAST_ITEM.violation(format!(
                "RPC_STREAM_ITEM seq_no {} for {} after the item marked is_terminal",
                i.seq_no,
                show(&i.rpc_id)
            ))),
            Phase::Open {
                last_seq: Some(last),
                ..
            } if i.seq_no <= *last => Err(SEQ_NO_INCREASING.violation(format!(
                "seq_no {} for {} does not exceed {}",
                i.seq_no,
                show(&i.rpc_id),
                last
            ))),
            Phase::Open {
                last_seq,
                last_item,
            } => {
                *last_seq = Some(i.seq_no);
                *last_item = i.is_terminal;
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{enc, full_config, sequence_property, Run, Step};
    use super::super::{Config, Side::*};
    use super::*;
    use proptest::prelude::*;

    fn req(id: &str, method: &str, params: &str, key: &str) -> RpcReq {
        RpcReq {
            rpc_id: id.as_bytes().to_vec().into(),
            method: method.into(),
            params: params.as_bytes().to_vec().into(),
            idempotency_key: key.into(),
        }
    }
    fn resp(id: &str, result: &str) -> RpcResp {
        RpcResp {
            rpc_id: id.as_bytes().to_vec().into(),
            result: result.as_bytes().to_vec().into(),
        }
    }
    fn err(id: &str, code: &str, retryable: bool) -> RpcErr {
        RpcErr {
            rpc_id: id.as_bytes().to_vec().into(),
            error_code: code.into(),
            retryable,
            error_message: "m".into(),
        }
    }
    fn item(id: &str, seq: u64, last: bool) -> RpcStreamItem {
        RpcStreamItem {
            rpc_id: id.as_bytes().to_vec().into(),
            seq_no: seq,
            item: b"i".to_vec().into(),
            is_terminal: last,
        }
    }
    fn cancel(id: &str) -> RpcCancel {
        RpcCancel {
            rpc_id: id.as_bytes().to_vec().into(),
            reason: String::new(),
        }
    }
    fn windowed() -> Run {
        Run::with(
            PROFILE_ID,
            Config {
                rpc_replay_window_ms: Some(10_000),
                ..Config::default()
            },
        )
    }

    #[test]
    fn msg_type_must_be_assigned() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Harness, 6, &req("r", "m", "", ""), "rpc.msg-type-assigned");
        r.ok(Harness, 1, &req("r", "m", "", ""));
    }

    #[test]
    fn required_fields() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Harness, 1, &req("", "m", "", ""), "rpc.req-fields");
        r.err(Harness, 1, &req("r", "", "", ""), "rpc.req-fields");
        r.ok(Harness, 1, &req("r", "m", "", ""));
        r.err(Endpoint, 2, &resp("", "x"), "rpc.resp-fields");
        r.err(Endpoint, 3, &err("", "c", false), "rpc.err-fields");
        r.err(Endpoint, 3, &err("r", "", false), "rpc.err-fields");
        let mut e = err("r", "c", false);
        e.error_message.clear();
        r.err(Endpoint, 3, &e, "rpc.err-fields");
        r.err(Endpoint, 4, &item("", 0, false), "rpc.stream-item-fields");
        let mut i = item("r", 0, false);
        i.item = Default::default();
        r.err(Endpoint, 4, &i, "rpc.stream-item-fields");
        r.err(Harness, 5, &cancel(""), "rpc.cancel-fields");
        r.ok(Endpoint, 4, &item("r", 0, false));
        r.ok(Harness, 5, &cancel("r"));
        r.ok(Endpoint, 2, &resp("r", ""));
    }

    #[test]
    fn an_rpc_id_names_one_request() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &req("r", "m", "p", ""));
        r.ok(Harness, 1, &req("r", "m", "p", ""));
        r.err(Harness, 1, &req("r", "m", "q", ""), "rpc.rpc-id-reuse");
        r.err(Endpoint, 1, &req("r", "n", "p", ""), "rpc.rpc-id-reuse");
    }

    #[test]
    fn outcomes_name_an_open_call() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Endpoint, 2, &resp("r", "x"), "rpc.outcome-names-call");
        r.err(Endpoint, 4, &item("r", 1, false), "rpc.outcome-names-call");
        // An error may answer a request refused before a call opened.
        r.ok(Endpoint, 3, &err("r", "invalid_request", false));
        r.ok(Harness, 1, &req("r", "m", "", ""));
        r.ok(Endpoint, 2, &resp("r", "x"));
    }

    #[test]
    fn outcomes_come_from_the_callee() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &req("r", "m", "", ""));
        r.err(Harness, 2, &resp("r", "x"), "rpc.outcome-from-callee");
        r.err(Harness, 4, &item("r", 1, false), "rpc.outcome-from-callee");
        r.ok(Endpoint, 1, &req("s", "m", "", ""));
        r.ok(Harness, 3, &err("s", "internal", true));
        r.ok(Endpoint, 2, &resp("r", "x"));
    }

    #[test]
    fn exactly_one_terminal_outcome() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &req("r", "m", "", ""));
        r.ok(Endpoint, 2, &resp("r", "x"));
        r.err(Endpoint, 2, &resp("r", "y"), "rpc.one-terminal-outcome");
        r.err(
            Endpoint,
            3,
            &err("r", "internal", false),
            "rpc.one-terminal-outcome",
        );
        // A cancel after the outcome is ignored (SI), and the call stays closed.
        r.ok(Harness, 5, &cancel("r"));
        r.err(
            Endpoint,
            3,
            &err("r", "cancelled", false),
            "rpc.one-terminal-outcome",
        );
    }

    #[test]
    fn an_identical_repeat_of_the_terminal_is_the_same_outcome() {
        // Found by tests/rules_differential.rs; SI-P-RPC-2: "exactly one terminal outcome"
        // is met by one outcome sent twice, octet for octet, so the lenient reading holds.
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &req("r", "m", "", ""));
        r.ok(Endpoint, 2, &resp("r", "x"));
        r.ok(Endpoint, 2, &resp("r", "x"));
        // Not from the caller, and any other field makes it a second outcome.
        r.err(Harness, 2, &resp("r", "x"), "rpc.outcome-from-callee");
        r.ok(Harness, 1, &req("s", "m", "", ""));
        r.ok(Endpoint, 3, &err("s", "internal", false));
        r.ok(Endpoint, 3, &err("s", "internal", false));
        let mut other = err("s", "internal", false);
        other.error_message = "another text".into();
        r.err(Endpoint, 3, &other, "rpc.one-terminal-outcome");
        // Stream items still end with the terminal.
        r.err(
            Endpoint,
            4,
            &item("s", 1, false),
            "rpc.no-item-after-terminal",
        );
    }

    #[test]
    fn no_item_after_the_terminal_outcome() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &req("r", "m", "", ""));
        r.ok(Endpoint, 4, &item("r", 1, false));
        r.ok(Endpoint, 3, &err("r", "internal", false));
        r.err(
            Endpoint,
            4,
            &item("r", 2, false),
            "rpc.no-item-after-terminal",
        );
    }

    #[test]
    fn no_item_after_the_last_item() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &req("r", "m", "", ""));
        r.ok(Endpoint, 4, &item("r", 1, true));
        r.err(
            Endpoint,
            4,
            &item("r", 2, false),
            "rpc.no-item-after-last-item",
        );
        // The outcome is still owed after the last item.
        r.ok(Endpoint, 2, &resp("r", "x"));
    }

    #[test]
    fn seq_no_strictly_increases() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &req("r", "m", "", ""));
        r.ok(Endpoint, 4, &item("r", 0, false));
        r.err(Endpoint, 4, &item("r", 0, false), "rpc.seq-no-increasing");
        r.ok(Endpoint, 4, &item("r", 5, false));
        r.err(Endpoint, 4, &item("r", 3, false), "rpc.seq-no-increasing");
        r.ok(Endpoint, 4, &item("r", 6, true));
        // Another call has its own numbering.
        r.ok(Harness, 1, &req("s", "m", "", ""));
        r.ok(Endpoint, 4, &item("s", 0, false));
    }

    #[test]
    fn a_cancel_names_a_call() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Harness, 5, &cancel("r"), "rpc.cancel-names-call");
        r.ok(Harness, 1, &req("r", "m", "", ""));
        r.ok(Harness, 5, &cancel("r"));
        r.ok(Endpoint, 3, &err("r", "cancelled", false));
    }

    #[test]
    fn an_identical_replay_ends_like_the_original() {
        let mut r = windowed();
        r.ok(Harness, 1, &req("r1", "m", "p", "k"));
        r.ok(Endpoint, 2, &resp("r1", "one"));
        r.at(1_000).ok(Harness, 1, &req("r2", "m", "p", "k"));
        r.err(Endpoint, 2, &resp("r2", "two"), "rpc.replay-same-outcome");
        r.err(
            Endpoint,
            3,
            &err("r2", "internal", false),
            "rpc.replay-same-outcome",
        );
        r.ok(Endpoint, 2, &resp("r2", "one"));
        // A replay while the original still runs: both end alike, whichever ends first.
        r.ok(Harness, 1, &req("a1", "m", "p", "j"));
        r.ok(Harness, 1, &req("a2", "m", "p", "j"));
        r.ok(Endpoint, 2, &resp("a2", "x"));
        r.err(Endpoint, 2, &resp("a1", "y"), "rpc.replay-same-outcome");
        r.ok(Endpoint, 2, &resp("a1", "x"));
        // Or the replay is told to retry later, which is no outcome of the key: the
        // original's outcome is still the one later replays owe.
        r.ok(Harness, 1, &req("b1", "m", "p", "i"));
        r.ok(Harness, 1, &req("b2", "m", "p", "i"));
        r.ok(Endpoint, 3, &err("b2", "unavailable", true));
        r.ok(Endpoint, 2, &resp("b1", "z"));
        r.ok(Harness, 1, &req("b3", "m", "p", "i"));
        r.err(
            Endpoint,
            3,
            &err("b3", "unavailable", true),
            "rpc.replay-same-outcome",
        );
        r.ok(Endpoint, 2, &resp("b3", "z"));
        // The original itself failing retryably is its outcome.
        r.ok(Harness, 1, &req("c1", "m", "p", "h"));
        r.ok(Endpoint, 3, &err("c1", "unavailable", true));
        r.ok(Harness, 1, &req("c2", "m", "p", "h"));
        r.err(Endpoint, 2, &resp("c2", "w"), "rpc.replay-same-outcome");
    }

    #[test]
    fn past_the_window_a_key_starts_afresh_and_at_its_edge_nothing_is_judged() {
        let mut r = windowed();
        r.ok(Harness, 1, &req("r1", "m", "p", "k"));
        r.ok(Endpoint, 2, &resp("r1", "one"));
        r.at(10_000).ok(Harness, 1, &req("r2", "m", "p", "k"));
        r.ok(Endpoint, 2, &resp("r2", "edge"));
        r.at(11_001).ok(Harness, 1, &req("r3", "m", "p", "k"));
        r.ok(Endpoint, 2, &resp("r3", "fresh"));
        r.at(12_000).ok(Harness, 1, &req("r4", "m", "p", "k"));
        r.err(Endpoint, 2, &resp("r4", "one"), "rpc.replay-same-outcome");
        r.ok(Endpoint, 2, &resp("r4", "fresh"));
    }

    #[test]
    fn replays_are_not_judged_without_a_declared_window_or_when_the_harness_answers() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &req("r1", "m", "p", "k"));
        r.ok(Endpoint, 2, &resp("r1", "one"));
        r.ok(Harness, 1, &req("r2", "m", "p", "k"));
        r.ok(Endpoint, 2, &resp("r2", "two"));
        let mut r = windowed();
        r.ok(Endpoint, 1, &req("r1", "m", "p", "k"));
        r.ok(Harness, 2, &resp("r1", "one"));
        r.ok(Endpoint, 1, &req("r2", "m", "p", "k"));
        r.ok(Harness, 2, &resp("r2", "two"));
    }

    #[test]
    fn a_conflicting_replay_ends_in_one_deterministic_error() {
        let mut r = windowed();
        r.ok(Harness, 1, &req("r1", "m", "p", "k"));
        r.ok(Endpoint, 2, &resp("r1", "one"));
        r.ok(Harness, 1, &req("r2", "m", "q", "k"));
        r.err(
            Endpoint,
            2,
            &resp("r2", "one"),
            "rpc.replay-conflict-rejected",
        );
        r.ok(Endpoint, 3, &err("r2", "idempotency_conflict", false));
        // The same conflicting inputs again: the same error.
        r.ok(Harness, 1, &req("r3", "m", "q", "k"));
        r.err(
            Endpoint,
            3,
            &err("r3", "idempotency_conflict", true),
            "rpc.replay-conflict-rejected",
        );
        r.err(
            Endpoint,
            3,
            &err("r3", "other", false),
            "rpc.replay-conflict-rejected",
        );
        r.ok(Endpoint, 3, &err("r3", "idempotency_conflict", false));
        // Other conflicting inputs may be refused otherwise: "deterministic" (§6) is the
        // same answer to the same request.
        r.ok(Harness, 1, &req("r4", "n", "p", "k"));
        r.ok(Endpoint, 3, &err("r4", "invalid_request", false));
    }

    fn step() -> impl Strategy<Value = Step> {
        let id = prop::sample::select(vec!["a", "b", "c", ""]);
        let key = prop::sample::select(vec!["", "k", "j"]);
        let side = prop::sample::select(vec![Harness, Endpoint]);
        let msg = prop_oneof![
            (
                id.clone(),
                prop::sample::select(vec!["m", "n"]),
                prop::sample::select(vec!["p", "q"]),
                key
            )
                .prop_map(|(i, m, p, k)| (1u64, enc(&req(i, m, p, k)))),
            (id.clone(), prop::sample::select(vec!["x", "y"]))
                .prop_map(|(i, x)| (2u64, enc(&resp(i, x)))),
            (
                id.clone(),
                prop::sample::select(vec!["c", "d"]),
                any::<bool>()
            )
                .prop_map(|(i, c, t)| (3u64, enc(&err(i, c, t)))),
            (id.clone(), 0u64..4, any::<bool>()).prop_map(|(i, s, l)| (4u64, enc(&item(i, s, l)))),
            id.prop_map(|i| (5u64, enc(&cancel(i)))),
            (0u64..7, prop::collection::vec(any::<u8>(), 0..16)),
        ];
        (0u64..20_000, side, msg).prop_map(|(t, s, (mt, b))| (t, s, mt, b))
    }

    fn sorted(mut steps: Vec<Step>) -> Vec<Step> {
        steps.sort_by_key(|s| s.0);
        steps
    }

    proptest! {
        #[test]
        fn sequences_keep_the_state_on_refusal(steps in prop::collection::vec(step(), 0..40).prop_map(sorted)) {
            sequence_property(PROFILE_ID, &Config::default(), &steps);
            sequence_property(PROFILE_ID, &full_config(), &steps);
        }
    }
}
