//! The summary every human-facing format opens with (the console, Markdown and HTML): what
//! was tested with what, whether the run passed, the claim, and the counts. Computed once
//! here so the formats cannot disagree.

use crate::report::model::{Digests, Report, RunInfo};

/// The head of a report, ready to print.
#[derive(Debug, Clone)]
pub struct Summary<'r> {
    /// `Conformance report: NAME VERSION`.
    pub title: String,
    /// The SUT as it described itself.
    pub reported: &'r str,
    /// Harness name and version.
    pub harness: &'r str,
    /// ` · shard K/N` and ` · strict`, when they apply.
    pub qualifiers: String,
    /// Digests of the manifest and the vector set.
    pub digests: Option<&'r Digests>,
    /// The run block.
    pub run: &'r RunInfo,
    /// Whether the run passed.
    pub passed_run: bool,
    /// The class claims, or `no class claim`.
    pub claim: String,
    /// Vectors selected (executed and not applicable).
    pub selected: usize,
    /// Vectors executed.
    pub executed: usize,
    /// Executed vectors that passed.
    pub passed: usize,
    /// Executed vectors that did not.
    pub failed: usize,
    /// `N verdict` for every verdict seen, in verdict order.
    pub counts: String,
}

impl<'r> Summary<'r> {
    /// The summary of `rep`.
    pub fn of(rep: &'r Report) -> Summary<'r> {
        let mut qualifiers = String::new();
        if let Some(k) = rep.shard {
            qualifiers.push_str(&format!(" · shard {k}"));
        }
        if rep.strict {
            qualifiers.push_str(" · strict");
        }
        Summary {
            title: format!("Conformance report: {} {}", rep.sut.name, rep.sut.version),
            reported: &rep.sut.reported,
            harness: &rep.harness,
            qualifiers,
            digests: rep.digests.as_ref(),
            run: &rep.run,
            passed_run: !rep.run_failed,
            claim: if rep.claims.is_empty() {
                "no class claim".to_owned()
            } else {
                rep.claims.join(", ")
            },
            selected: rep.total + rep.not_applicable.len(),
            executed: rep.total,
            passed: rep.passed,
            failed: rep.failed,
            counts: rep
                .verdicts
                .iter()
                .map(|(k, v)| format!("{v} {k}"))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// `PASSED` or `FAILED`.
    pub fn verdict(&self) -> &'static str {
        if self.passed_run {
            "PASSED"
        } else {
            "FAILED"
        }
    }
}
