//! Why a vector (or a step) of the MCP-native method stopped before its end: the verdict,
//! the reason, what was expected and observed, the requirements broken.

use crate::report::result::{NaCause, Verdict};

/// Why a vector stopped before its end.
#[derive(Debug, Clone)]
pub(super) struct Stop {
    pub verdict: Verdict,
    pub why: String,
    pub expected: String,
    pub observed: String,
    /// The requirements the failure broke (empty: the vector's own).
    pub broke: Vec<String>,
    /// For not-applicable: whose choice.
    pub na: Option<NaCause>,
    /// The defect's class without ids or times (`initialize unanswered`), for the key of an
    /// incidental observation when the stop belongs to no step of the vector. Boxed: the
    /// stop travels in every `Err`, so it stays small.
    pub key: Option<Box<str>>,
}

impl Stop {
    pub fn fail(
        why: impl Into<String>,
        expected: impl Into<String>,
        observed: impl Into<String>,
    ) -> Stop {
        Stop {
            verdict: Verdict::Fail,
            why: why.into(),
            expected: expected.into(),
            observed: observed.into(),
            broke: Vec::new(),
            na: None,
            key: None,
        }
    }

    pub fn harness(why: impl Into<String>) -> Stop {
        Stop {
            verdict: Verdict::HarnessError,
            ..Stop::fail(why, "", "")
        }
    }

    pub fn not_applicable(cause: NaCause, why: impl Into<String>) -> Stop {
        Stop {
            verdict: Verdict::NotApplicable,
            na: Some(cause),
            ..Stop::fail(why, "", "")
        }
    }

    /// The same stop, attributed to `rules` (none: unchanged).
    pub fn breaking(mut self, rules: &[String]) -> Stop {
        if !rules.is_empty() {
            self.broke = rules.to_vec();
        }
        self
    }

    /// The same stop, attributed to `rule` unless it already names one.
    pub fn or_breaking(self, rule: &str) -> Stop {
        if self.broke.is_empty() {
            self.breaking(&[rule.to_owned()])
        } else {
            self
        }
    }

    /// The same stop with the class of its defect, unless it already has one.
    pub fn keyed(mut self, key: impl Into<String>) -> Stop {
        if self.key.is_none() {
            self.key = Some(key.into().into_boxed_str());
        }
        self
    }
}
