//! The early stop (`run --stop-after-silent N`): a SUT that answers nothing costs a full
//! timeout on every vector, so once it has answered nothing in N vectors in a row the plan
//! loop stops, and the vectors it did not reach are reported as `not-run` with the reason.
//!
//! A vector is **silent** when both of these observable facts hold: its verdict is
//! `timeout` (the harness waited for something from the SUT and the deadline passed), and
//! nothing at all came from the SUT while it ran at the layer the method judges: no octet
//! of its framing (session), no line, message or HTTP response (MCP-native, MCP proxy), no
//! testee reply (codec, translate). That is the `received` entries of its transcript, those
//! the transcript's bound cut included, and an HTTP status. A close, an exit or a crash is
//! no timeout, so it is an answer. Vectors the SUT was not driven through (not applicable,
//! not run) leave the count where it was; any other driven vector starts it again.

use crate::report::result::{VectorResult, Verdict};
use std::collections::VecDeque;

/// The default of `--stop-after-silent`: ten vectors in a row without a single octet from
/// the SUT is no slow SUT, and still stops a dead one after ten timeouts rather than one
/// per vector of the catalog.
pub const DEFAULT_STOP_AFTER_SILENT: u32 = 10;

/// Ids of the silent vectors a stop names (the last ones).
const NAMED: usize = 5;

/// Whether `r` is silent (see the module's documentation).
pub fn silent(r: &VectorResult) -> bool {
    r.verdict == Verdict::Timeout && !r.heard
}

/// Why a run stopped early.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the run stopped early: the SUT answered nothing in {count} vectors in a row (the last: {}); \
     the vectors not run are listed as not-run in the report (--stop-after-silent 0 never stops)",
    last.join(", ")
)]
pub struct EarlyStop {
    /// How many silent vectors in a row stopped it.
    pub count: u32,
    /// The last of them, in the order they finished.
    pub last: Vec<String>,
}

/// Counts silent vectors in a row as results come in.
#[derive(Debug, Clone)]
pub struct Silence {
    limit: u32,
    row: u32,
    last: VecDeque<String>,
    stopped: Option<EarlyStop>,
}

impl Silence {
    /// Stops after `limit` silent vectors in a row; 0 never stops.
    pub fn new(limit: u32) -> Silence {
        Silence {
            limit,
            row: 0,
            last: VecDeque::with_capacity(NAMED),
            stopped: None,
        }
    }

    /// Never stops (tests, retries of a baseline's flaky vectors).
    pub fn never() -> Silence {
        Silence::new(0)
    }

    /// Counts `r`; whether the run must stop now.
    pub fn observe(&mut self, r: &VectorResult) -> bool {
        if self.stopped.is_some() {
            return true;
        }
        if !r.verdict.executed() {
            return false;
        }
        if !silent(r) {
            self.row = 0;
            self.last.clear();
            return false;
        }
        self.row += 1;
        if self.last.len() == NAMED {
            self.last.pop_front();
        }
        self.last.push_back(r.vector_id.clone());
        if self.limit > 0 && self.row >= self.limit {
            self.stopped = Some(EarlyStop {
                count: self.row,
                last: self.last.iter().cloned().collect(),
            });
        }
        self.stopped.is_some()
    }

    /// Why the run stopped, once it did.
    pub fn stopped(&self) -> Option<&EarlyStop> {
        self.stopped.as_ref()
    }
}

impl EarlyStop {
    /// `scaffold` (a vector's result before it ran, `method::result_base`) as the result of
    /// a vector the run did not reach.
    pub fn not_run(&self, mut scaffold: VectorResult) -> VectorResult {
        scaffold.verdict = Verdict::NotRun;
        scaffold.pass = false;
        scaffold.detail = Some(format!(
            "not run: the run stopped after the SUT answered nothing in {} vectors in a row \
             (the last: {})",
            self.count,
            self.last.join(", ")
        ));
        scaffold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, verdict: Verdict, heard: bool) -> VectorResult {
        let mut r = VectorResult::new(id.into(), "core".into(), String::new(), vec![], true);
        r.verdict = verdict;
        r.heard = heard;
        r
    }

    #[test]
    fn only_timeouts_that_heard_nothing_are_silent() {
        assert!(silent(&result("a", Verdict::Timeout, false)));
        assert!(!silent(&result("a", Verdict::Timeout, true)));
        assert!(!silent(&result("a", Verdict::Fail, false)));
        assert!(!silent(&result("a", Verdict::Crash, false)));
    }

    #[test]
    fn a_row_of_silent_vectors_stops_and_an_answer_starts_it_again() {
        let mut s = Silence::new(3);
        assert!(!s.observe(&result("a", Verdict::Timeout, false)));
        assert!(!s.observe(&result("b", Verdict::Timeout, false)));
        // Answered: the row starts again.
        assert!(!s.observe(&result("c", Verdict::Fail, true)));
        assert!(!s.observe(&result("d", Verdict::Timeout, false)));
        // Not driven: the row goes on.
        assert!(!s.observe(&result("e", Verdict::NotApplicable, false)));
        assert!(!s.observe(&result("f", Verdict::Timeout, false)));
        assert!(s.observe(&result("g", Verdict::Timeout, false)));
        let stop = s.stopped().cloned();
        assert_eq!(
            stop,
            Some(EarlyStop {
                count: 3,
                last: vec!["d".into(), "f".into(), "g".into()]
            })
        );
        let text = stop.map(|s| s.to_string()).unwrap_or_default();
        assert!(text.contains("answered nothing in 3 vectors in a row (the last: d, f, g)"));
    }

    #[test]
    fn zero_never_stops_and_a_stop_names_the_last_five() {
        let mut never = Silence::never();
        let mut five = Silence::new(7);
        for i in 0..7 {
            let r = result(&format!("v{i}"), Verdict::Timeout, false);
            assert!(!never.observe(&r));
            five.observe(&r);
        }
        assert_eq!(
            five.stopped().map(|s| s.last.clone()),
            Some(vec![
                "v2".into(),
                "v3".into(),
                "v4".into(),
                "v5".into(),
                "v6".into()
            ])
        );
    }
}
