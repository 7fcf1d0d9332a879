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
    /// The class claims, `no class claim`, or why no class was judged.
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
    /// One line per required namespace whose catalog-required vectors were not all tested:
    /// a codec-only run, say, leaves most of `s1_*` untested, and says so here.
    pub untested: Vec<String>,
    /// One line per class that can be claimed at all: the claim line when it passed, else
    /// its status and the vectors withholding it.
    pub classes: Vec<String>,
    /// One line per profile granted on top of C0 (its part of a claim line, with versions)
    /// or of which some vector ran (its status and every cause).
    pub profiles: Vec<String>,
    /// The highest class granted with every granted profile it does not cover.
    pub headline: Option<&'r str>,
}

/// Per required namespace, the untested required vectors, from the class verdicts.
fn untested(rep: &Report) -> Vec<String> {
    use crate::report::analysis::classes::WithheldKind;
    use std::collections::{BTreeMap, BTreeSet};
    let mut required: BTreeMap<&str, usize> = BTreeMap::new();
    let mut gaps: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for c in &rep.classes {
        for n in &c.namespaces {
            required.insert(n.namespace.as_str(), n.required);
        }
        for w in c
            .withheld
            .iter()
            .filter(|w| w.kind == WithheldKind::Untested)
        {
            let ns = w.vector_id.split('_').next().unwrap_or("");
            gaps.entry(ns).or_default().insert(w.vector_id.as_str());
        }
    }
    gaps.iter()
        .map(|(ns, ids)| {
            let shown: Vec<&str> = ids.iter().take(6).copied().collect();
            let more = ids.len().saturating_sub(shown.len());
            format!(
                "{ns}_*: {} of {} required vectors untested ({}{})",
                ids.len(),
                required.get(ns).copied().unwrap_or(0),
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        })
        .collect()
}

/// The class lines of the summary.
fn class_lines(rep: &Report) -> Vec<String> {
    use crate::report::analysis::classes::ClassStatus;
    rep.classes
        .iter()
        .filter(|c| c.status != ClassStatus::Unclaimable)
        .map(|c| match &c.claim {
            Some(line) => line.clone(),
            None => format!("{} {}: {}", c.class, c.status.as_str(), c.reason),
        })
        .collect()
}

/// The profile lines of the summary: granted ones, and ones the run tried.
fn profile_lines(rep: &Report) -> Vec<String> {
    rep.profiles
        .iter()
        .filter(|p| p.claim.is_some() || p.namespace.executed > 0)
        .map(|p| match &p.claim {
            Some(c) => format!("{c} on {}", p.baseline),
            None => format!("{} {}: {}", p.profile, p.status.as_str(), p.reason),
        })
        .collect()
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
            claim: if rep.classes.is_empty() {
                // No class was judged: the run executed nothing of an SWP class.
                "none (no SWP class vector ran)".to_owned()
            } else if rep.claims.is_empty() {
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
            untested: untested(rep),
            classes: class_lines(rep),
            profiles: profile_lines(rep),
            headline: rep.headline_claim.as_deref(),
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
