//! `report.md`: a page that fits a CI step summary: the headline claim, class verdicts,
//! counts by level, then every vector that did not pass with its requirements and a short
//! transcript. Run-specific lines sit between the run markers.

use super::shared::{RUN_BEGIN, RUN_END};
use super::summary::Summary;
use crate::method::conv::transcript::is_cut;
use crate::report::analysis::classes::ClassStatus;
use crate::report::analysis::requirements::ReqVerdict;
use crate::report::model::Report;
use crate::report::result::Verdict;
use std::fmt::Write;

/// Transcript lines shown per failure (the last ones; the full transcript is in the JSON).
pub(crate) const SHORT_TRANSCRIPT: usize = 12;

/// Markdown table cell text: no pipes or newlines.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Renders the Markdown.
pub fn render(rep: &Report) -> String {
    let mut s = String::new();
    let sum = Summary::of(rep);
    let _ = writeln!(s, "# {}\n", sum.title);
    let _ = writeln!(s, "{RUN_BEGIN}");
    let _ = writeln!(
        s,
        "Run {} · {} ms · commit `{}` · `{}`{}",
        sum.run.timestamp_utc,
        sum.run.duration_ms,
        sum.run.runner_git_sha,
        cell(&sum.run.command.join(" ")),
        if sum.run.interrupted {
            " · **interrupted: partial results**"
        } else {
            ""
        }
    );
    if let Some(why) = &sum.run.stopped_early {
        let _ = writeln!(s, "\n**Stopped early**: {}", cell(why));
    }
    let _ = writeln!(s, "{RUN_END}\n");
    let _ = writeln!(s, "**Run {} · Claim: {}**\n", sum.verdict(), sum.claim);
    let _ = writeln!(
        s,
        "SUT `{}` · harness `{}`{}",
        cell(sum.reported),
        sum.harness,
        sum.qualifiers
    );
    if let Some(d) = sum.digests {
        let _ = writeln!(
            s,
            "\nmanifest sha256 `{}` · vector set sha256 `{}`",
            d.sut_manifest_sha256, d.vector_set_sha256
        );
    }
    s.push('\n');
    if !sum.untested.is_empty() {
        let _ = writeln!(
            s,
            "**Required vectors not tested** (no class that needs them can be claimed):\n"
        );
        for u in &sum.untested {
            let _ = writeln!(s, "- {}", cell(u));
        }
        s.push('\n');
    }
    if !rep.classes.is_empty() {
        let _ = writeln!(s, "## Conformance classes\n");
        let _ = writeln!(s, "| class | | status | why |");
        let _ = writeln!(s, "|---|---|---|---|");
        for c in &rep.classes {
            let _ = writeln!(
                s,
                "| {} {} | {} | {} | {} |",
                mark(c.status),
                c.class,
                c.title,
                c.status.as_str(),
                cell(&c.reason)
            );
        }
        s.push('\n');
        for c in &rep.classes {
            if let Some(line) = &c.claim {
                let _ = writeln!(s, "Claim: `{}`\n", cell(line));
            }
        }
        for c in rep
            .classes
            .iter()
            .filter(|c| c.status != ClassStatus::Unclaimable && !c.withheld.is_empty())
        {
            let _ = writeln!(
                s,
                "<details><summary>{} {}: withheld by {} vector(s)</summary>\n",
                c.class,
                c.status.as_str(),
                c.withheld.len()
            );
            for w in &c.withheld {
                let _ = writeln!(
                    s,
                    "- `{}` ({}): {}",
                    w.vector_id,
                    w.kind.as_str(),
                    cell(&w.why)
                );
            }
            let _ = writeln!(s, "\n</details>\n");
        }
    }
    profiles(&mut s, rep, &sum);
    let _ = writeln!(s, "## Vectors\n");
    let _ = writeln!(
        s,
        "{} selected, {} executed: {} passed, {} failed ({})\n",
        sum.selected, sum.executed, sum.passed, sum.failed, sum.counts
    );
    not_run(&mut s, rep);
    if rep.steps_not_run > 0 {
        let _ = writeln!(
            s,
            "{} step(s) of executed vectors did not run: a close ended their vector first (each result lists them).\n",
            rep.steps_not_run
        );
    }
    if !rep.incidental.is_empty() {
        let _ = writeln!(s, "## Seen in passing\n");
        let _ = writeln!(
            s,
            "Defects seen while running vectors about something else; each counts once, under its own requirement.\n"
        );
        for i in &rep.incidental {
            let _ = writeln!(
                s,
                "- **{}**: {} (seen in {} vector(s): {})",
                i.requirement,
                cell(&i.detail),
                i.vectors.len(),
                i.vectors.join(", ")
            );
        }
        s.push('\n');
    }
    if let Some(p) = &rep.published {
        published(&mut s, p);
    }
    if !rep.requirement_counts.is_empty() {
        let _ = writeln!(s, "## Requirements by level\n");
        let _ = write!(s, "| level |");
        for v in ReqVerdict::ALL {
            let _ = write!(s, " {} |", v.as_str());
        }
        let _ = write!(s, "\n|---|");
        for _ in ReqVerdict::ALL {
            s.push_str("--:|");
        }
        s.push('\n');
        for (level, m) in &rep.requirement_counts {
            let _ = write!(s, "| {level} |");
            for v in ReqVerdict::ALL {
                let _ = write!(s, " {} |", m.get(v.as_str()).copied().unwrap_or(0));
            }
            s.push('\n');
        }
        let _ = write!(s, "| **all** |");
        for (_, n) in crate::report::analysis::requirements::totals(&rep.requirements) {
            let _ = write!(s, " **{n}** |");
        }
        s.push_str("\n\n");
        let bad: Vec<_> = rep
            .requirements
            .iter()
            .filter(|r| matches!(r.verdict, ReqVerdict::Fail | ReqVerdict::Warn))
            .collect();
        if !bad.is_empty() {
            let _ = writeln!(s, "Requirements not met:\n");
            for r in bad {
                let _ = writeln!(
                    s,
                    "- **{}** {} ({} §{}): {} — {}",
                    r.verdict.as_str(),
                    r.id,
                    r.level,
                    r.section,
                    cell(&r.summary),
                    r.vectors.join(", ")
                );
            }
            s.push('\n');
        }
    }
    if let Some(b) = &rep.baseline {
        let _ = writeln!(s, "## Baseline\n");
        let _ = writeln!(
            s,
            "{} expected failure(s) failed as expected; {} deviation(s).\n",
            b.expected_failures,
            b.deviations.len()
        );
        for d in &b.deviations {
            let _ = writeln!(
                s,
                "- `{}` {}: expected {}, got {}",
                d.vector_id,
                d.kind.as_str(),
                cell(&d.expected),
                cell(&d.got)
            );
        }
        for r in &b.retried {
            let _ = writeln!(
                s,
                "- `{}` flaky: {} attempt(s), {}",
                r.vector_id,
                r.attempts,
                if r.settled {
                    "settled"
                } else {
                    "still unexpected"
                }
            );
        }
        if !b.not_run.is_empty() {
            let _ = writeln!(s, "- listed but not run: {}", b.not_run.join(", "));
        }
        s.push('\n');
    }
    let not_passed: Vec<_> = rep
        .results
        .iter()
        .filter(|r| r.verdict != Verdict::Pass)
        .collect();
    if not_passed.is_empty() {
        let _ = writeln!(s, "## Failures\n\nNone: every executed vector passed.");
        return s;
    }
    let _ = writeln!(s, "## Failures and notes\n");
    for r in not_passed {
        let tag = super::shared::tag(rep, r);
        let _ = writeln!(s, "### {tag} `{}` — {}\n", r.vector_id, r.verdict.as_str());
        let _ = writeln!(s, "- requirements: {}", r.requirements.join(", "));
        let _ = writeln!(s, "- file: `{}`", r.path);
        let _ = writeln!(s, "- expected: {}", cell(&r.expected));
        let _ = writeln!(s, "- observed: {}", cell(&r.observed));
        if let Some(d) = &r.detail {
            let _ = writeln!(s, "- detail: {}", cell(d));
        }
        let t = rep.transcript(r);
        if !t.is_empty() {
            let run_specific = super::shared::transcript_is_run_specific(rep, r);
            s.push('\n');
            if run_specific {
                let _ = writeln!(s, "{RUN_BEGIN}");
            }
            let skip = t.len().saturating_sub(SHORT_TRANSCRIPT);
            s.push_str("```\n");
            if skip > 0 {
                let _ = writeln!(s, "… {skip} earlier line(s) in report.json");
                // A cut among them is said here too: the lines below are not all there was.
                for e in t[..skip].iter().filter(|e| is_cut(e)) {
                    let _ = writeln!(s, "{}", super::shared::transcript_line(e));
                }
            }
            for e in &t[skip..] {
                let _ = writeln!(
                    s,
                    "{}",
                    super::shared::transcript_line(e).replace("```", "`‌``")
                );
            }
            s.push_str("```\n");
            if run_specific {
                let _ = writeln!(s, "{RUN_END}");
            }
        }
        s.push('\n');
    }
    s
}

/// The vectors an early stop left out, each named, with the reason they share.
fn not_run(s: &mut String, rep: &Report) {
    let skipped: Vec<_> = rep
        .not_applicable
        .iter()
        .filter(|n| n.verdict == Verdict::NotRun)
        .collect();
    let Some(first) = skipped.first() else {
        return;
    };
    let _ = writeln!(s, "## Not run\n");
    let _ = writeln!(
        s,
        "{} vector(s) did not run and have no verdict: {}\n",
        skipped.len(),
        cell(&first.detail)
    );
    for n in &skipped {
        let _ = writeln!(s, "- `{}` {}", n.vector_id, cell(&n.title));
    }
    s.push('\n');
}

/// The published-set section: the agreement figure, then every departure with its ruling.
fn published(s: &mut String, p: &crate::report::analysis::published::Section) {
    let _ = writeln!(s, "## Published fixtures\n");
    let _ = writeln!(s, "{}.\n", cell(&p.headline()));
    for c in &p.process_checks {
        let _ = writeln!(
            s,
            "- `{}`: a process check, not testable at runtime; review its evidence, `{}`",
            c.vector_id, c.evidence
        );
    }
    if !p.process_checks.is_empty() {
        s.push('\n');
    }
    if p.disagreements.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "| fixture | published | this SUT | meets it | ruling | clause | SI |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for d in &p.disagreements {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} | {} |",
            d.vector_id,
            cell(&d.published),
            cell(&d.observed),
            match d.sut_agrees {
                Some(true) => "yes",
                Some(false) => "no",
                None => "not run",
            },
            cell(d.ruling.as_deref().unwrap_or("**unruled**")),
            cell(d.clause.as_deref().unwrap_or("")),
            cell(d.si.as_deref().unwrap_or(""))
        );
    }
    s.push('\n');
}

/// The profile claims beside the classes: every profile's status on top of C0, the granted
/// ones with their versions, and the report's headline claim.
fn profiles(s: &mut String, rep: &Report, sum: &super::summary::Summary<'_>) {
    if rep.profiles.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Profile claims\n");
    let _ = writeln!(
        s,
        "Each profile on top of the baseline class C0, its namespace judged by the class rules.\n"
    );
    let _ = writeln!(s, "| profile | | status | why |");
    let _ = writeln!(s, "|---|---|---|---|");
    for p in &rep.profiles {
        let _ = writeln!(
            s,
            "| {} {} | {} | {} | {} |",
            mark(p.status),
            p.profile,
            p.title,
            p.status.as_str(),
            cell(&p.reason)
        );
    }
    s.push('\n');
    if let Some(h) = sum.headline {
        let _ = writeln!(s, "Headline claim: `{}`\n", cell(h));
    }
}

fn mark(st: ClassStatus) -> &'static str {
    match st {
        ClassStatus::Pass => "✅",
        ClassStatus::Fail => "❌",
        ClassStatus::Incomplete => "⚪",
        ClassStatus::Unclaimable => "⛔",
    }
}
