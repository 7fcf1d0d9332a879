//! A2A (profile 2, a2a-profile.md): the Handshake/Task/Event/Result fields (§4) and the task
//! lifecycle (§6-§7): a Task opens a task_id, Events and the Result name an open one, and
//! nothing follows the Result.
//!
//! Roles: the profile does not say which side delegates (SI-031). A lifecycle is kept per
//! (opening side, task_id); an Event or Result from a side may belong to a Task of the other
//! side (per-direction reading) or of its own (per-channel reading), and is refused only when
//! both readings refuse it.

use super::common::{digest, show, trackable, Digest, Table};
use super::config::Ctx;
use super::verdict::{decode, Level, Rule, Side, Violation};
use crate::p1::pb::types::a2a::{Event, Handshake, Result as A2aResult, Task};

/// The profile_id of A2A.
pub(super) const PROFILE_ID: u64 = 2;

const MSG_TYPE: Rule = Rule {
    name: "a2a.msg-type-assigned",
    profile: "A2A",
    requirement: "A2A-023",
    level: Level::Must,
    section: "§3",
    checks: "msg_type is 1 Handshake, 2 Task, 3 Event or 4 Result",
};
const HANDSHAKE_FIELDS: Rule = Rule {
    name: "a2a.handshake-fields",
    profile: "A2A",
    requirement: "A2A-024",
    level: Level::Must,
    section: "§4",
    checks: "a Handshake carries a non-empty agent_id (capabilities may be empty)",
};
const TASK_FIELDS: Rule = Rule {
    name: "a2a.task-fields",
    profile: "A2A",
    requirement: "A2A-025",
    level: Level::Must,
    section: "§4",
    checks: "a Task carries a non-empty task_id and kind (input may be empty)",
};
const EVENT_FIELDS: Rule = Rule {
    name: "a2a.event-fields",
    profile: "A2A",
    requirement: "A2A-026",
    level: Level::Must,
    section: "§4",
    checks: "an Event carries a non-empty task_id and content: message and/or event_payload",
};
const RESULT_FIELDS: Rule = Rule {
    name: "a2a.result-fields",
    profile: "A2A",
    requirement: "A2A-027",
    level: Level::Must,
    section: "§4, SI-024",
    checks: "a Result carries a non-empty task_id, and an error_message when ok is false",
};
const TASK_CONFLICT: Rule = Rule {
    name: "a2a.task-conflict",
    profile: "A2A",
    requirement: "A2A-011",
    level: Level::Must,
    section: "§7",
    checks: "a Task repeating a task_id its sender opened carries the same kind and input",
};
const EVENT_AFTER_TASK: Rule = Rule {
    name: "a2a.event-after-task",
    profile: "A2A",
    requirement: "A2A-005",
    level: Level::MustNot,
    section: "§6",
    checks: "an Event names a task_id some Task opened before it",
};
const RESULT_NAMES_TASK: Rule = Rule {
    name: "a2a.result-names-task",
    profile: "A2A",
    requirement: "A2A-004",
    level: Level::Must,
    section: "§6",
    checks: "a Result names a task_id some Task opened before it",
};
const CLOSED_AFTER_RESULT: Rule = Rule {
    name: "a2a.closed-after-result",
    profile: "A2A",
    requirement: "A2A-007",
    level: Level::MustNot,
    section: "§6",
    checks: "no Event or Result (even an equivalent one) follows the Result of a task_id",
};

/// Every A2A rule.
pub(super) const RULES: &[&Rule] = &[
    &MSG_TYPE,
    &HANDSHAKE_FIELDS,
    &TASK_FIELDS,
    &EVENT_FIELDS,
    &RESULT_FIELDS,
    &TASK_CONFLICT,
    &EVENT_AFTER_TASK,
    &RESULT_NAMES_TASK,
    &CLOSED_AFTER_RESULT,
];

/// A decoded A2A message whose own fields hold.
pub(super) enum Msg {
    Handshake,
    Task(Task),
    Event(Event),
    Result(A2aResult),
}

/// Decodes by msg_type and checks the class's required fields (§4).
pub(super) fn check(msg_type: u64, bare: &[u8]) -> Result<Msg, Violation> {
    match msg_type {
        1 => {
            let m: Handshake = decode(bare, "a2a.Handshake")?;
            if m.agent_id.is_empty() {
                return Err(HANDSHAKE_FIELDS.violation("Handshake without agent_id"));
            }
            Ok(Msg::Handshake)
        }
        2 => {
            let m: Task = decode(bare, "a2a.Task")?;
            if m.task_id.is_empty() {
                return Err(TASK_FIELDS.violation("Task without task_id"));
            }
            if m.kind.is_empty() {
                return Err(TASK_FIELDS.violation("Task without kind"));
            }
            Ok(Msg::Task(m))
        }
        3 => {
            let m: Event = decode(bare, "a2a.Event")?;
            if m.task_id.is_empty() {
                return Err(EVENT_FIELDS.violation("Event without task_id"));
            }
            if m.message.is_empty() && m.event_payload.is_empty() {
                return Err(EVENT_FIELDS
                    .violation("Event without content: neither message nor event_payload"));
            }
            Ok(Msg::Event(m))
        }
        4 => {
            let m: A2aResult = decode(bare, "a2a.Result")?;
            if m.task_id.is_empty() {
                return Err(RESULT_FIELDS.violation("Result without task_id"));
            }
            // SI-024: a failure needs its reason; an empty success output is not judged.
            if !m.ok && m.error_message.is_empty() {
                return Err(RESULT_FIELDS.violation("Result ok=false without error_message"));
            }
            Ok(Msg::Result(m))
        }
        t => Err(MSG_TYPE.violation(format!("msg_type {t} is not assigned in A2A"))),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Lifecycle {
    /// Digest of the Task's kind and input, to tell a repeat from a conflict.
    content: Digest,
    closed: bool,
}

/// The task lifecycles of one connection.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct State {
    tasks: Table<(Side, Vec<u8>), Lifecycle>,
}

/// Where an Event or Result lands.
enum Found {
    Open((Side, Vec<u8>)),
    Closed,
    /// Not judged: the id is too long to remember, or the table dropped tasks.
    Untracked,
}

impl State {
    /// Judges `msg` from `ctx.side`, then records it.
    pub(super) fn observe(&mut self, ctx: &Ctx, msg: Msg) -> Result<(), Violation> {
        match msg {
            Msg::Handshake => Ok(()),
            Msg::Task(t) => {
                if !trackable(&t.task_id) {
                    return Ok(());
                }
                let key = (ctx.side, t.task_id.to_vec());
                let content = digest(&[t.kind.as_bytes(), &t.input]);
                match self.tasks.get(&key) {
                    // An equivalent repeat is handled idempotently (§7, A2A-010): nothing new.
                    Some(l) if l.content == content => Ok(()),
                    Some(_) => Err(TASK_CONFLICT.violation(format!(
                        "Task {} repeats a task_id with other kind or input",
                        show(&t.task_id)
                    ))),
                    None => {
                        self.tasks.insert(
                            key,
                            Lifecycle {
                                content,
                                closed: false,
                            },
                        );
                        Ok(())
                    }
                }
            }
            Msg::Event(e) => match self.find(ctx.side, &e.task_id) {
                Some(Found::Open(_)) | Some(Found::Untracked) => Ok(()),
                Some(Found::Closed) => Err(CLOSED_AFTER_RESULT.violation(format!(
                    "Event for task {} after its Result",
                    show(&e.task_id)
                ))),
                None => Err(EVENT_AFTER_TASK.violation(format!(
                    "Event for task {}, which no Task opened",
                    show(&e.task_id)
                ))),
            },
            Msg::Result(r) => match self.find(ctx.side, &r.task_id) {
                Some(Found::Open(key)) => {
                    if let Some(l) = self.tasks.get_mut(&key) {
                        l.closed = true;
                    }
                    Ok(())
                }
                Some(Found::Untracked) => Ok(()),
                Some(Found::Closed) => Err(CLOSED_AFTER_RESULT
                    .violation(format!("a second Result for task {}", show(&r.task_id)))),
                None => Err(RESULT_NAMES_TASK.violation(format!(
                    "Result for task {}, which no Task opened",
                    show(&r.task_id)
                ))),
            },
        }
    }

    /// The lifecycle an Event or Result from `side` belongs to: an open one of the other
    /// side's Tasks first, then one of its own; `None` when no Task opened the id.
    fn find(&self, side: Side, task_id: &[u8]) -> Option<Found> {
        if !trackable(task_id) {
            return Some(Found::Untracked);
        }
        let keys = [(side.other(), task_id.to_vec()), (side, task_id.to_vec())];
        if let Some(k) = keys
            .iter()
            .find(|k| self.tasks.get(k).is_some_and(|l| !l.closed))
        {
            return Some(Found::Open(k.clone()));
        }
        if keys.iter().any(|k| self.tasks.contains(k)) {
            return Some(Found::Closed);
        }
        if self.tasks.overflowed() {
            return Some(Found::Untracked);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{enc, sequence_property, Run, Step};
    use super::super::{Config, Side::*};
    use super::*;
    use proptest::prelude::*;

    fn task(id: &str, kind: &str) -> Task {
        Task {
            task_id: id.as_bytes().to_vec().into(),
            kind: kind.into(),
            input: b"x".to_vec().into(),
        }
    }
    fn event(id: &str) -> Event {
        Event {
            task_id: id.as_bytes().to_vec().into(),
            message: "working".into(),
            event_payload: Default::default(),
        }
    }
    fn result(id: &str, ok: bool) -> A2aResult {
        A2aResult {
            task_id: id.as_bytes().to_vec().into(),
            ok,
            output: Default::default(),
            error_message: if ok { String::new() } else { "failed".into() },
        }
    }

    #[test]
    fn msg_type_must_be_assigned() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Endpoint, 5, &task("t", "k"), "a2a.msg-type-assigned");
        r.err(Endpoint, 0, &task("t", "k"), "a2a.msg-type-assigned");
        r.ok(Endpoint, 2, &task("t", "k"));
    }

    #[test]
    fn undecodable_payloads_break_p1_decode() {
        let mut r = Run::new(PROFILE_ID);
        // A length-delimited field running past the end.
        let v = r
            .conn
            .observe(0, Endpoint, 2, 2, b"\x0a\x05ab")
            .unwrap_err();
        assert_eq!(v.rule, "p1.decode");
    }

    #[test]
    fn handshake_needs_agent_id() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Endpoint, 1, &Handshake::default(), "a2a.handshake-fields");
        r.ok(
            Endpoint,
            1,
            &Handshake {
                agent_id: "a".into(),
                capabilities: vec![],
            },
        );
    }

    #[test]
    fn task_needs_id_and_kind() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Harness, 2, &task("", "k"), "a2a.task-fields");
        r.err(Harness, 2, &task("t", ""), "a2a.task-fields");
        let mut t = task("t", "k");
        t.input = Default::default();
        r.ok(Harness, 2, &t);
    }

    #[test]
    fn event_needs_id_and_content() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 2, &task("t", "k"));
        r.err(Endpoint, 3, &event(""), "a2a.event-fields");
        let mut e = event("t");
        e.message.clear();
        r.err(Endpoint, 3, &e, "a2a.event-fields");
        e.event_payload = b"p".to_vec().into();
        r.ok(Endpoint, 3, &e);
        r.ok(Endpoint, 3, &event("t"));
    }

    #[test]
    fn failed_result_needs_a_reason() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 2, &task("t", "k"));
        let mut res = result("t", false);
        res.error_message.clear();
        r.err(Endpoint, 4, &res, "a2a.result-fields");
        r.err(Endpoint, 4, &result("", true), "a2a.result-fields");
        r.ok(Endpoint, 4, &result("t", false));
    }

    #[test]
    fn a_conflicting_repeat_task_is_refused_an_equivalent_one_is_not() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 2, &task("t", "k"));
        r.ok(Harness, 2, &task("t", "k"));
        r.err(Harness, 2, &task("t", "other"), "a2a.task-conflict");
        // The peer opening the same id is the per-direction reading: not refused (SI-031).
        r.ok(Endpoint, 2, &task("t", "other"));
    }

    #[test]
    fn event_before_task_is_refused() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Endpoint, 3, &event("t"), "a2a.event-after-task");
        r.ok(Harness, 2, &task("t", "k"));
        r.ok(Endpoint, 3, &event("t"));
    }

    #[test]
    fn result_for_an_unknown_task_is_refused() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Endpoint, 4, &result("t", true), "a2a.result-names-task");
        r.ok(Harness, 2, &task("t", "k"));
        r.ok(Endpoint, 4, &result("t", true));
    }

    #[test]
    fn nothing_follows_the_result() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 2, &task("t", "k"));
        r.ok(Endpoint, 3, &event("t"));
        r.ok(Endpoint, 4, &result("t", true));
        r.err(Endpoint, 3, &event("t"), "a2a.closed-after-result");
        r.err(Endpoint, 4, &result("t", true), "a2a.closed-after-result");
        r.err(Endpoint, 4, &result("t", false), "a2a.closed-after-result");
        // A Task repeated after the Result is equivalent: idempotent, and the task stays closed.
        r.ok(Harness, 2, &task("t", "k"));
        r.err(Endpoint, 3, &event("t"), "a2a.closed-after-result");
        // Another task is independent.
        r.ok(Harness, 2, &task("u", "k"));
        r.ok(Endpoint, 4, &result("u", true));
    }

    #[test]
    fn a_full_table_judges_unknown_ids_leniently() {
        let mut r = Run::new(PROFILE_ID);
        for i in 0..super::super::MAX_ENTRIES {
            r.ok(Harness, 2, &task(&format!("t{i}"), "k"));
        }
        r.ok(Harness, 2, &task("dropped", "k"));
        r.ok(Endpoint, 3, &event("dropped"));
        r.ok(Endpoint, 3, &event("never-opened"));
        let long = "x".repeat(super::super::MAX_ID_BYTES + 1);
        r.ok(Endpoint, 4, &result(&long, true));
        r.ok(Endpoint, 4, &result(&long, true));
    }

    fn step() -> impl Strategy<Value = Step> {
        let id = prop::sample::select(vec!["a", "b", "c", ""]);
        let side = prop::sample::select(vec![Harness, Endpoint]);
        let body = prop_oneof![
            (id.clone(), prop::sample::select(vec!["k", "j"]))
                .prop_map(|(i, k)| (2u64, enc(&task(i, k)))),
            id.clone().prop_map(|i| (3u64, enc(&event(i)))),
            (id, any::<bool>()).prop_map(|(i, ok)| (4u64, enc(&result(i, ok)))),
            Just((1u64, enc(&Handshake::default()))),
            prop::collection::vec(any::<u8>(), 0..16).prop_map(|b| (2u64, b)),
            (0u64..8, prop::collection::vec(any::<u8>(), 0..16)),
        ];
        (0u64..1000, side, body).prop_map(|(t, s, (mt, b))| (t, s, mt, b))
    }

    proptest! {
        #[test]
        fn sequences_keep_the_state_on_refusal(steps in prop::collection::vec(step(), 0..40)) {
            sequence_property(PROFILE_ID, &Config::default(), &steps);
        }
    }
}
