//! The reference endpoint as an A2A agent (profile 2): it answers a Handshake with its
//! capabilities, runs a few deterministic task kinds, and checks the lifecycle of every
//! Task, Event and Result on the channel (its own included) with `swp_profiles::a2a`.
//!
//! | kind     | input                  | outcome |
//! |----------|------------------------|---------|
//! | `echo`   | any octets             | Result ok, output = input |
//! | `fail`   | ignored                | Result ok=false, "execution failed" |
//! | `events` | decimal N, 0..=16      | N Events ("step k of N", event_payload = [k]), then Result ok, output = input |
//! | `sum`    | decimal integers, `,`-separated | Result ok, output = the sum in decimal |
//! | other    |                        | Result ok=false, "unsupported capability: KIND" |
//!
//! Malformed input (`events`, `sum`) ends in Result ok=false, "malformed task input: ..."
//! (§8: profile failures surface as a terminal Result). A Task equal to one already seen is
//! idempotent: nothing runs twice and nothing is sent, since §6 forbids a second Result. Events and Results
//! received are accepted silently when the lifecycle allows them, ignored when they repeat
//! the terminal Result, and rejected otherwise.

use super::reply::Reject;
use bytes::Bytes;
use swp_profiles::a2a::{self, A2aMessage, Lifecycle, Seen};
use swp_profiles::p1::pb::a2a::{Event, Handshake, Result as A2aResult, Task};
use swp_profiles::p1::P1Form;

/// The agent id the reference advertises.
pub const AGENT_ID: &str = "swp-ref";
/// The capabilities the reference advertises (task kinds it runs).
pub const CAPABILITIES: [&str; 4] = ["echo", "fail", "events", "sum"];
/// Most Events an `events` task emits.
pub const MAX_EVENTS: u64 = 16;

/// What the connection should do with one A2A envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send these (msg_type, payload) in order, each with a fresh msg_id.
    Send(Vec<(u64, Vec<u8>)>),
    /// Nothing to send.
    Nothing,
    /// Reject the frame with an error frame.
    Reject(Reject),
}

/// One channel's agent state.
#[derive(Debug, Default)]
pub struct Agent {
    lifecycle: Lifecycle,
    form: P1Form,
}

fn failure(task_id: &Bytes, why: String) -> A2aResult {
    A2aResult {
        task_id: task_id.clone(),
        ok: false,
        output: Bytes::new(),
        error_message: why,
    }
}

/// Runs a task: the Events and the terminal Result it produces.
fn run(t: &Task) -> (Vec<Event>, A2aResult) {
    let ok = |output: Bytes| A2aResult {
        task_id: t.task_id.clone(),
        ok: true,
        output,
        error_message: String::new(),
    };
    let text = std::str::from_utf8(&t.input);
    match t.kind.as_str() {
        "echo" => (vec![], ok(t.input.clone())),
        "fail" => (vec![], failure(&t.task_id, "execution failed".into())),
        "events" => match text.ok().and_then(|s| s.trim().parse::<u64>().ok()) {
            Some(n) if n <= MAX_EVENTS => {
                let events = (1..=n)
                    .map(|k| Event {
                        task_id: t.task_id.clone(),
                        message: format!("step {k} of {n}"),
                        event_payload: Bytes::from(vec![k as u8]),
                    })
                    .collect();
                (events, ok(t.input.clone()))
            }
            _ => (
                vec![],
                failure(
                    &t.task_id,
                    format!("malformed task input: events takes a count 0..={MAX_EVENTS}"),
                ),
            ),
        },
        "sum" => {
            let parsed: Option<Vec<i64>> = text
                .ok()
                .and_then(|s| s.split(',').map(|x| x.trim().parse::<i64>().ok()).collect());
            match parsed.and_then(|v| v.into_iter().try_fold(0i64, i64::checked_add)) {
                Some(total) => (vec![], ok(Bytes::from(total.to_string()))),
                None => (
                    vec![],
                    failure(
                        &t.task_id,
                        "malformed task input: sum takes comma-separated integers".into(),
                    ),
                ),
            }
        }
        other => (
            vec![],
            failure(&t.task_id, format!("unsupported capability: {other}")),
        ),
    }
}

impl Agent {
    /// An agent reading and writing P1 payloads in `form`.
    pub fn new(form: P1Form) -> Self {
        Agent {
            lifecycle: Lifecycle::default(),
            form,
        }
    }

    /// Handles one accepted A2A envelope from the peer `identity` (the lifecycle scope); a
    /// Task whose kind `authz` refuses to that peer is rejected with `ERR_SECURITY_POLICY`
    /// and never opens.
    pub fn handle(
        &mut self,
        msg_type: u64,
        payload: &[u8],
        identity: Option<&str>,
        authz: &crate::endpoint::authz::Authz,
    ) -> Action {
        let scope = identity.unwrap_or_default();
        let form = self.form;
        let encode = |m: &A2aMessage| a2a::encode_form(form, m);
        let msg = match a2a::decode_form(form, msg_type, payload) {
            Ok(m) => m,
            Err(e) => return Action::Reject(Reject::profile(e.code(), e.to_string())),
        };
        let reject =
            |e: a2a::LifecycleError| Action::Reject(Reject::profile(e.code(), e.to_string()));
        match msg {
            A2aMessage::Handshake(_) => {
                let h = Handshake {
                    agent_id: AGENT_ID.into(),
                    capabilities: CAPABILITIES.iter().map(|c| (*c).to_owned()).collect(),
                };
                Action::Send(vec![(
                    a2a::MSG_HANDSHAKE,
                    encode(&A2aMessage::Handshake(h)),
                )])
            }
            A2aMessage::Task(t) if authz.denies(identity, &t.kind) => {
                Action::Reject(Reject::profile(
                    swp_core::ErrorCode::SecurityPolicy,
                    format!(
                        "{} is not authorized for task kind {}",
                        identity.unwrap_or("a peer without an identity"),
                        t.kind
                    ),
                ))
            }
            A2aMessage::Task(t) => match self.lifecycle.task(scope, &t) {
                Err(e) => reject(e),
                // Idempotent: the task already ran (or is running), and §6 forbids sending
                // its Result twice, so an equivalent duplicate gets nothing.
                Ok(Seen::DuplicateTask) => Action::Nothing,
                Ok(_) => {
                    let (events, result) = run(&t);
                    let mut out = Vec::with_capacity(events.len() + 1);
                    for e in events {
                        // Our own messages go through the same machine: a bug that sent an
                        // Event after a Result would be refused here, not emitted.
                        if self.lifecycle.event(scope, &e).is_ok() {
                            out.push((a2a::MSG_EVENT, encode(&A2aMessage::Event(e))));
                        }
                    }
                    if self.lifecycle.result(scope, &result).is_ok() {
                        out.push((a2a::MSG_RESULT, encode(&A2aMessage::Result(result))));
                    }
                    Action::Send(out)
                }
            },
            A2aMessage::Event(e) => match self.lifecycle.event(scope, &e) {
                Ok(_) => Action::Nothing,
                Err(err) => reject(err),
            },
            A2aMessage::Result(r) => match self.lifecycle.result(scope, &r) {
                Ok(_) => Action::Nothing,
                Err(err) => reject(err),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::authz::Authz;
    use prost::Message;
    use swp_core::ErrorCode;

    fn task(id: &'static [u8], kind: &str, input: &'static [u8]) -> Vec<u8> {
        Task {
            task_id: Bytes::from_static(id),
            kind: kind.into(),
            input: Bytes::from_static(input),
        }
        .encode_to_vec()
    }

    fn sent(a: Action) -> Vec<(u64, A2aMessage)> {
        match a {
            Action::Send(v) => v
                .into_iter()
                .map(|(t, p)| (t, a2a::decode(t, &p).unwrap()))
                .collect(),
            other => panic!("expected messages, got {other:?}"),
        }
    }

    fn code(a: Action) -> ErrorCode {
        match a {
            Action::Reject(r) => r.code(),
            other => panic!("expected a reject, got {other:?}"),
        }
    }

    #[test]
    fn tasks_run_deterministically() {
        let mut ag = Agent::default();
        let out = sent(ag.handle(2, &task(b"t1", "events", b"2"), None, &Authz::default()));
        assert_eq!(out.iter().map(|(t, _)| *t).collect::<Vec<_>>(), [3, 3, 4]);
        let out = sent(ag.handle(2, &task(b"t2", "sum", b"1, 2,39"), None, &Authz::default()));
        assert!(matches!(&out[0].1, A2aMessage::Result(r) if r.ok && &r.output[..] == b"42"));
        for (id, kind, input, why) in [
            (&b"t3"[..], "sum", &b"1,x"[..], "malformed task input"),
            (b"t4", "events", b"99", "malformed task input"),
            (b"t5", "translate", b"", "unsupported capability: translate"),
            (b"t6", "fail", b"", "execution failed"),
        ] {
            let p = Task {
                task_id: Bytes::copy_from_slice(id),
                kind: kind.into(),
                input: Bytes::copy_from_slice(input),
            }
            .encode_to_vec();
            let out = sent(ag.handle(2, &p, None, &Authz::default()));
            assert!(
                matches!(&out[..], [(4, A2aMessage::Result(r))] if !r.ok && r.error_message.contains(why)),
                "{kind}: {out:?}"
            );
        }
    }

    #[test]
    fn lifecycle_is_enforced_on_the_channel() {
        let mut ag = Agent::default();
        let first = sent(ag.handle(2, &task(b"t", "echo", b"a"), None, &Authz::default()));
        // Equivalent duplicate: nothing re-run, nothing sent.
        assert_eq!(
            ag.handle(2, &task(b"t", "echo", b"a"), None, &Authz::default()),
            Action::Nothing
        );
        assert_eq!(
            code(ag.handle(2, &task(b"t", "echo", b"b"), None, &Authz::default())),
            ErrorCode::InvalidProfilePayload
        );
        let ev = Event {
            task_id: Bytes::from_static(b"t"),
            message: "late".into(),
            ..Default::default()
        }
        .encode_to_vec();
        assert_eq!(
            code(ag.handle(3, &ev, None, &Authz::default())),
            ErrorCode::InvalidProfilePayload
        );
        let A2aMessage::Result(r) = &first[0].1 else {
            panic!()
        };
        assert_eq!(
            ag.handle(4, &r.encode_to_vec(), None, &Authz::default()),
            Action::Nothing
        );
        let conflicting = A2aResult {
            ok: false,
            error_message: "x".into(),
            ..r.clone()
        }
        .encode_to_vec();
        assert_eq!(
            code(ag.handle(4, &conflicting, None, &Authz::default())),
            ErrorCode::InvalidProfilePayload
        );
        let unknown = Event {
            task_id: Bytes::from_static(b"zz"),
            message: "m".into(),
            ..Default::default()
        }
        .encode_to_vec();
        assert_eq!(
            code(ag.handle(3, &unknown, None, &Authz::default())),
            ErrorCode::InvalidProfilePayload
        );
        assert_eq!(
            code(ag.handle(5, b"", None, &Authz::default())),
            ErrorCode::UnsupportedMsgType
        );
        // Under S1 the lifecycle is scoped to the peer identity.
        assert!(matches!(
            ag.handle(3, &ev, Some("spiffe://other"), &Authz::default()),
            Action::Reject(_)
        ));
    }

    #[test]
    fn handshake_advertises_capabilities() {
        let mut ag = Agent::default();
        let h = Handshake {
            agent_id: "peer".into(),
            capabilities: vec![],
        }
        .encode_to_vec();
        let out = sent(ag.handle(1, &h, None, &Authz::default()));
        assert!(
            matches!(&out[0], (1, A2aMessage::Handshake(h)) if h.agent_id == AGENT_ID && h.capabilities.len() == 4)
        );
    }
}
