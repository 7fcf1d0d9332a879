//! What every renderer says the same way about one result: its tag (PASS, FAIL, WARN...),
//! a transcript line, where its transcript lives, the levels of the requirements, and the
//! markers around the run-specific parts of a text report. Kept apart from `render/mod.rs`,
//! which calls the renderers, so that the renderers need not import their caller.

use crate::report::model::Report;
use crate::report::result::{Dir, TranscriptEntry, VectorResult, Verdict};

/// The marker lines around run-specific parts of `report.md` and `report.html` (the
/// counterpart of JSON's `run` block): everything outside them is deterministic.
pub const RUN_BEGIN: &str = "<!-- run:begin -->";
/// See [`RUN_BEGIN`].
pub const RUN_END: &str = "<!-- run:end -->";

/// How a result stands for the run: `FAIL` fails it (with a baseline: deviates from it),
/// `WARN` is a SHOULD-level failure that does not, `XFAIL` a failure the baseline expects,
/// `NOTE` neither pass nor failure, `PASS` a pass.
pub fn tag(rep: &Report, r: &VectorResult) -> &'static str {
    if let Some(b) = &rep.baseline {
        // A deviation fails the run, an unexpected pass included.
        if b.deviations.iter().any(|d| d.vector_id == r.vector_id) {
            return "FAIL";
        }
        if r.verdict == Verdict::Pass {
            return "PASS";
        }
        if r.verdict.is_failure() {
            return "XFAIL";
        }
        return "NOTE";
    }
    if r.verdict == Verdict::Pass {
        "PASS"
    } else if crate::report::result::fails_run(r, rep.strict) {
        "FAIL"
    } else if r.verdict.is_failure() {
        "WARN"
    } else {
        "NOTE"
    }
}

/// One transcript line as text: direction arrow, time, data.
pub fn transcript_line(t: &TranscriptEntry) -> String {
    let arrow = match t.dir {
        Dir::Sent => "→",
        Dir::Received => "←",
        Dir::Note => "·",
    };
    format!("{arrow} +{}ms {}", t.t_ms, t.data)
}

/// Whether a vector's transcript lives in the run block (session and MCP-native methods).
pub fn transcript_is_run_specific(rep: &Report, r: &VectorResult) -> bool {
    rep.run.transcripts.contains_key(&r.vector_id)
}

/// The level of each requirement named by the report, by ID.
pub fn levels(rep: &Report) -> std::collections::HashMap<&str, &str> {
    rep.requirements
        .iter()
        .map(|r| (r.id.as_str(), r.level.as_str()))
        .collect()
}
