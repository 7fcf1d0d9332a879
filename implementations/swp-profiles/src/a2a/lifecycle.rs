//! The A2A task lifecycle (§5-7) as a sans-IO state machine keyed by `(scope, task_id)`:
//! a Task opens a lifecycle, Events need an open one, a Result closes it, nothing follows.
//! Duplicates are deterministic: an equivalent Task or Result is recognised, a conflicting
//! one is an error.
//!
//! The machine judges a channel, not one direction: an endpoint feeds it the messages it
//! receives and the ones it sends, so an Event that arrives after the endpoint's own
//! terminal Result is as closed as one after a received Result. `scope` is the peer
//! identity under S1 (task_id uniqueness per tenant, §9) or empty.

use crate::bounded::Bounded;
use crate::p1::pb::a2a::{Event, Result as A2aResult, Task};
use bytes::Bytes;
use swp_core::ErrorCode;

/// Default bound on lifecycles remembered per channel.
pub const DEFAULT_MAX_TASKS: usize = 4096;

/// What a message did to the lifecycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A Task opened a new lifecycle.
    Opened,
    /// A Task equivalent to the one that opened this lifecycle: idempotent, nothing new.
    DuplicateTask,
    /// An Event on an open lifecycle.
    Progress,
    /// The terminal Result.
    Closed,
    /// A Result equivalent to the terminal one already seen: ignored.
    DuplicateResult,
}

/// A lifecycle breach.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LifecycleError {
    /// An Event or Result naming a task_id with no Task (§6, §8).
    #[error("{what} names task_id {task} that no Task opened")]
    UnknownTask {
        /// Event or Result.
        what: &'static str,
        /// The task_id, hex.
        task: String,
    },
    /// A Task reusing a task_id with different content (§7).
    #[error("Task {0} conflicts with the Task that opened this task_id")]
    ConflictingTask(String),
    /// An Event after the terminal Result (§6).
    #[error("Event for task_id {0} after its terminal Result")]
    EventAfterTerminal(String),
    /// A Result differing from the terminal one (§7).
    #[error("Result for task_id {0} conflicts with its terminal Result")]
    ConflictingResult(String),
    /// Too many open lifecycles on this channel.
    #[error("more than {0} open tasks on this channel")]
    Full(usize),
}

impl LifecycleError {
    /// The canonical code: lifecycle breaches are invalid profile payload semantics; a full
    /// table is a quota.
    pub fn code(&self) -> ErrorCode {
        match self {
            LifecycleError::Full(_) => ErrorCode::RateLimitExceeded,
            _ => ErrorCode::InvalidProfilePayload,
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[derive(Debug, Clone)]
struct Entry {
    task: Task,
    result: Option<A2aResult>,
}

type Key = (String, Bytes);

/// The lifecycles of one channel.
#[derive(Debug, Clone)]
pub struct Lifecycle {
    /// Lifecycles in opening order, for evicting the oldest closed one when full.
    tasks: Bounded<Key, Entry>,
    max: usize,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle::new(DEFAULT_MAX_TASKS)
    }
}

impl Lifecycle {
    /// A machine remembering at most `max` lifecycles.
    pub fn new(max: usize) -> Self {
        Lifecycle {
            tasks: Bounded::new(max),
            max: max.max(1),
        }
    }

    fn key(scope: &str, task_id: &Bytes) -> Key {
        (scope.to_owned(), task_id.clone())
    }

    /// A Task.
    pub fn task(&mut self, scope: &str, t: &Task) -> Result<Seen, LifecycleError> {
        let key = Self::key(scope, &t.task_id);
        if let Some(e) = self.tasks.get(&key) {
            return if &e.task == t {
                Ok(Seen::DuplicateTask)
            } else {
                Err(LifecycleError::ConflictingTask(hex(&t.task_id)))
            };
        }
        if self.tasks.len() >= self.max {
            // Forget the oldest closed lifecycle; open ones are never forgotten.
            self.tasks
                .evict_oldest_where(|e| e.result.is_some())
                .ok_or(LifecycleError::Full(self.max))?;
        }
        self.tasks.insert(
            key,
            Entry {
                task: t.clone(),
                result: None,
            },
        );
        Ok(Seen::Opened)
    }

    /// An Event.
    pub fn event(&mut self, scope: &str, e: &Event) -> Result<Seen, LifecycleError> {
        match self.tasks.get(&Self::key(scope, &e.task_id)) {
            None => Err(LifecycleError::UnknownTask {
                what: "Event",
                task: hex(&e.task_id),
            }),
            Some(x) if x.result.is_some() => {
                Err(LifecycleError::EventAfterTerminal(hex(&e.task_id)))
            }
            Some(_) => Ok(Seen::Progress),
        }
    }

    /// A Result.
    pub fn result(&mut self, scope: &str, r: &A2aResult) -> Result<Seen, LifecycleError> {
        let Some(x) = self.tasks.get_mut(&Self::key(scope, &r.task_id)) else {
            return Err(LifecycleError::UnknownTask {
                what: "Result",
                task: hex(&r.task_id),
            });
        };
        match &x.result {
            None => {
                x.result = Some(r.clone());
                Ok(Seen::Closed)
            }
            Some(prev) if prev == r => Ok(Seen::DuplicateResult),
            Some(_) => Err(LifecycleError::ConflictingResult(hex(&r.task_id))),
        }
    }

    /// Lifecycles remembered.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether none is remembered.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &'static [u8], input: &'static [u8]) -> Task {
        Task {
            task_id: Bytes::from_static(id),
            kind: "echo".into(),
            input: Bytes::from_static(input),
        }
    }
    fn event(id: &'static [u8]) -> Event {
        Event {
            task_id: Bytes::from_static(id),
            message: "x".into(),
            ..Default::default()
        }
    }
    fn result(id: &'static [u8], ok: bool) -> A2aResult {
        A2aResult {
            task_id: Bytes::from_static(id),
            ok,
            error_message: if ok { String::new() } else { "no".into() },
            ..Default::default()
        }
    }

    #[test]
    fn the_lifecycle() {
        let mut l = Lifecycle::default();
        assert!(matches!(
            l.event("", &event(b"a")),
            Err(LifecycleError::UnknownTask { .. })
        ));
        assert!(matches!(
            l.result("", &result(b"a", true)),
            Err(LifecycleError::UnknownTask { .. })
        ));
        assert_eq!(l.task("", &task(b"a", b"1")), Ok(Seen::Opened));
        assert_eq!(l.task("", &task(b"a", b"1")), Ok(Seen::DuplicateTask));
        assert_eq!(
            l.task("", &task(b"a", b"2")),
            Err(LifecycleError::ConflictingTask("61".into()))
        );
        assert_eq!(l.event("", &event(b"a")), Ok(Seen::Progress));
        // Another task interleaves freely.
        assert_eq!(l.task("", &task(b"b", b"")), Ok(Seen::Opened));
        assert_eq!(l.event("", &event(b"b")), Ok(Seen::Progress));
        assert_eq!(l.result("", &result(b"a", true)), Ok(Seen::Closed));
        assert_eq!(l.result("", &result(b"a", true)), Ok(Seen::DuplicateResult));
        assert_eq!(
            l.result("", &result(b"a", false)),
            Err(LifecycleError::ConflictingResult("61".into()))
        );
        assert_eq!(
            l.event("", &event(b"a")),
            Err(LifecycleError::EventAfterTerminal("61".into()))
        );
        assert_eq!(l.event("", &event(b"b")), Ok(Seen::Progress));
        // Scopes (peer identities) do not share task_ids.
        assert!(matches!(
            l.event("peer-2", &event(b"b")),
            Err(LifecycleError::UnknownTask { .. })
        ));
        assert_eq!(l.task("peer-2", &task(b"a", b"9")), Ok(Seen::Opened));
    }

    #[test]
    fn bounded() {
        let mut l = Lifecycle::new(2);
        l.task("", &task(b"a", b"")).unwrap();
        l.task("", &task(b"b", b"")).unwrap();
        assert_eq!(l.task("", &task(b"c", b"")), Err(LifecycleError::Full(2)));
        l.result("", &result(b"a", true)).unwrap();
        // The closed lifecycle is forgotten to make room.
        assert_eq!(l.task("", &task(b"c", b"")), Ok(Seen::Opened));
        assert_eq!(l.len(), 2);
    }
}
