//! The console summary: one line per vector that did not pass (with its transcript for
//! failures), then counts. Plain text so it reads the same in a terminal and a CI log.

use crate::method::conv::transcript::is_cut;
use crate::report::model::Report;
use crate::report::result::{Dir, Verdict};
use std::fmt::Write;

/// Renders the summary.
pub fn summary(rep: &Report, _strict: bool, transcripts: bool) -> String {
    let mut s = String::new();
    for r in &rep.results {
        if r.verdict == Verdict::Pass {
            continue;
        }
        let tag = super::shared::tag(rep, r);
        let _ = writeln!(
            s,
            "{tag} {} [{}] {}",
            r.vector_id,
            r.verdict.as_str(),
            r.requirements.join(", ")
        );
        let _ = writeln!(s, "     expected: {}", r.expected);
        let _ = writeln!(s, "     observed: {}", r.observed);
        if let Some(d) = &r.detail {
            let _ = writeln!(s, "     detail:   {d}");
        }
        let _ = writeln!(s, "     file:     {}", r.path);
        // Failures always show their transcript (the last lines); `--transcripts` shows it
        // whole, and for every vector that did not pass.
        let show = transcripts || r.verdict.is_failure();
        let transcript = match rep.run.transcripts.get(&r.vector_id) {
            Some(t) => t,
            None => &r.transcript,
        };
        if show {
            let skip = if transcripts {
                0
            } else {
                transcript.len().saturating_sub(12)
            };
            if skip > 0 {
                let _ = writeln!(s, "     … {skip} earlier transcript line(s) in report.json");
                // A cut among them is said here too: the lines below are not all there was.
                for e in transcript[..skip].iter().filter(|e| is_cut(e)) {
                    let _ = writeln!(s, "     · +{}ms {}", e.t_ms, e.data);
                }
            }
            for t in transcript.iter().skip(skip) {
                let arrow = match t.dir {
                    Dir::Sent => "→",
                    Dir::Received => "←",
                    Dir::Note => "·",
                };
                let _ = writeln!(s, "     {arrow} +{}ms {}", t.t_ms, t.data);
            }
        }
    }
    let sum = super::summary::Summary::of(rep);
    let _ = writeln!(
        s,
        "{}: {} vectors selected, {} executed: {}",
        sum.reported, sum.selected, sum.executed, sum.counts
    );
    let _ = writeln!(
        s,
        // `failed` is the v1 count: every executed vector that did not pass, codes that
        // could not be observed included, so it does not mean the run failed.
        "{} passed, {} did not pass{}",
        sum.passed,
        sum.failed,
        if sum.passed_run { "" } else { "  (run FAILED)" }
    );
    if let Some(p) = &rep.published {
        let _ = writeln!(s, "{}", p.headline());
        for d in p.disagreements.iter().filter(|d| d.ruling.is_none()) {
            let _ = writeln!(
                s,
                "  unruled: {}: published {}, observed {}",
                d.vector_id, d.published, d.observed
            );
        }
    }
    for u in &sum.untested {
        let _ = writeln!(s, "untested: {u}");
    }
    for c in &sum.classes {
        let _ = writeln!(s, "class {c}");
    }
    for p in &sum.profiles {
        let _ = writeln!(s, "profile {p}");
    }
    if let Some(h) = sum.headline {
        let _ = writeln!(s, "claim: {h}");
    }
    s
}
