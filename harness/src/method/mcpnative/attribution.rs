//! Which step a defect in a server message is charged to (`docs/mcp-native.md`,
//! Attribution), sans-IO: the step being run and what it watches, and the rule that decides.

/// What the step being run judges (`docs/mcp-native.md`, Attribution).
#[derive(Debug, Clone, Default)]
pub(super) struct Focus {
    /// The step, 0-based.
    pub step: usize,
    /// The step watches everything that arrives (a quiet window): a message that answers
    /// no request of another step is its business.
    pub watch_all: bool,
    /// The notifications and server requests the step waits for.
    pub expects: Vec<String>,
}

/// The step a violation is charged to, or `None` for an incidental observation (sans-IO).
/// `answers` is the step the message belongs to: the one whose request it answers or whose
/// progress token it carries, or the step being run when it waits for that notification.
/// A message that belongs to no step is the business of a step that watches everything (a
/// quiet window). `ours`: the rule is one the vector itself tests, which makes the message
/// the vector's wherever it is seen, even in the answer to a set-up request.
pub(super) fn charged_step(
    answers: Option<usize>,
    focus: &Focus,
    ours: bool,
    setup: &[bool],
) -> Option<usize> {
    let step = answers.or_else(|| (focus.watch_all || ours).then_some(focus.step))?;
    let set_up = setup.get(step).copied().unwrap_or(false);
    (ours || !set_up).then_some(step)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(step: usize, watch_all: bool) -> Focus {
        Focus {
            step,
            watch_all,
            expects: Vec::new(),
        }
    }

    /// Steps of `mcpnative_0029`: a set-up `open`, then the vector's own requests.
    const SETUP: [bool; 5] = [true, false, false, false, false];

    #[test]
    fn an_answer_is_charged_to_the_step_that_sent_the_request() {
        // A second answer to step 2's request, arriving while step 4 runs.
        assert_eq!(charged_step(Some(1), &at(3, false), false, &SETUP), Some(1));
        assert_eq!(charged_step(Some(1), &at(3, true), false, &SETUP), Some(1));
    }

    #[test]
    fn the_answer_to_a_set_up_request_is_no_step_of_the_vector() {
        assert_eq!(charged_step(Some(0), &at(1, false), false, &SETUP), None);
        // Not even when it arrives in a quiet window: it answers initialize.
        assert_eq!(charged_step(Some(0), &at(4, true), false, &SETUP), None);
    }

    #[test]
    fn a_rule_the_vector_tests_is_the_vectors_wherever_it_is_seen() {
        assert_eq!(charged_step(Some(0), &at(1, false), true, &SETUP), Some(0));
        // A server request during a set-up `pick` in a vector about server requests.
        assert_eq!(charged_step(None, &at(0, false), true, &SETUP), Some(0));
    }

    #[test]
    fn what_answers_no_request_belongs_to_a_step_only_in_its_quiet_window() {
        assert_eq!(charged_step(None, &at(2, false), false, &SETUP), None);
        assert_eq!(charged_step(None, &at(2, true), false, &SETUP), Some(2));
    }
}
