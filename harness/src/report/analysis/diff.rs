//! `swp-conform diff OLD NEW`: what changed between two reports, per vector and per
//! requirement, regressions first. A regression is a vector or requirement that fails now
//! and did not before (a new failing vector included).

use super::requirements::ReqVerdict;
use crate::report::model::Report;
use crate::report::result::{VectorResult, Verdict};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The kind of a change, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Fails now, did not before.
    Regression,
    /// Failed before, does not now.
    Fixed,
    /// Anything else that changed (verdict, observation, added, removed).
    Changed,
}

/// One change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Its kind.
    pub kind: Kind,
    /// `vector` or `requirement`.
    pub what: &'static str,
    /// Vector or requirement ID.
    pub id: String,
    /// Before (`absent` when new).
    pub old: String,
    /// After (`absent` when removed).
    pub new: String,
}

/// The changes from `old` to `new`, regressions first, then by kind, kind of item and id.
pub fn changes(old: &Report, new: &Report) -> Vec<Change> {
    let mut out = Vec::new();
    let index = |r: &Report| -> BTreeMap<String, VectorResult> {
        r.all_results()
            .into_iter()
            .map(|v| (v.vector_id.clone(), v))
            .collect()
    };
    let (a, b) = (index(old), index(new));
    let failing = |v: Option<&VectorResult>| v.is_some_and(|v| v.verdict.is_failure());
    let show = |v: Option<&VectorResult>| match v {
        None => "absent".to_owned(),
        Some(v) if v.verdict == Verdict::Pass || v.observed.is_empty() => {
            v.verdict.as_str().to_owned()
        }
        Some(v) => format!("{} ({})", v.verdict.as_str(), v.observed),
    };
    let ids: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for id in ids {
        let (x, y) = (a.get(id), b.get(id));
        let same = match (x, y) {
            (Some(x), Some(y)) => x.verdict == y.verdict && x.observed == y.observed,
            _ => false,
        };
        if same {
            continue;
        }
        let kind = match (failing(x), failing(y)) {
            (false, true) => Kind::Regression,
            (true, false) if y.is_some() => Kind::Fixed,
            _ => Kind::Changed,
        };
        out.push(Change {
            kind,
            what: "vector",
            id: id.clone(),
            old: show(x),
            new: show(y),
        });
    }
    let reqs = |r: &Report| -> BTreeMap<String, ReqVerdict> {
        r.requirements
            .iter()
            .map(|q| (q.id.clone(), q.verdict))
            .collect()
    };
    let (a, b) = (reqs(old), reqs(new));
    let bad = |v: Option<&ReqVerdict>| matches!(v, Some(ReqVerdict::Fail | ReqVerdict::Warn));
    let ids: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for id in ids {
        let (x, y) = (a.get(id), b.get(id));
        if x == y {
            continue;
        }
        let kind = match (bad(x), bad(y)) {
            (false, true) => Kind::Regression,
            (true, false) if y.is_some() => Kind::Fixed,
            _ if x == Some(&ReqVerdict::Warn) && y == Some(&ReqVerdict::Fail) => Kind::Regression,
            _ => Kind::Changed,
        };
        let s = |v: Option<&ReqVerdict>| v.map_or("absent", |v| v.as_str()).to_owned();
        out.push(Change {
            kind,
            what: "requirement",
            id: id.clone(),
            old: s(x),
            new: s(y),
        });
    }
    out.sort_by(|p, q| {
        (p.kind, p.what != "vector", &p.id).cmp(&(q.kind, q.what != "vector", &q.id))
    });
    out
}

/// The diff as Markdown-friendly text.
pub fn render(old: &Report, new: &Report, changes: &[Change]) -> String {
    let mut s = String::new();
    let regressions = changes
        .iter()
        .filter(|c| c.kind == Kind::Regression)
        .count();
    let fixed = changes.iter().filter(|c| c.kind == Kind::Fixed).count();
    let _ = writeln!(
        s,
        "# swp-conform diff: {} → {}\n\n{} regression(s), {} fixed, {} other change(s)",
        old.sut.reported,
        new.sut.reported,
        regressions,
        fixed,
        changes.len() - regressions - fixed
    );
    if let (Some(a), Some(b)) = (&old.digests, &new.digests) {
        if a.vector_set_sha256 != b.vector_set_sha256 {
            let _ = writeln!(s, "\nThe vector set changed between the two reports.");
        }
        if a.sut_manifest_sha256 != b.sut_manifest_sha256 {
            let _ = writeln!(s, "\nThe SUT manifest changed between the two reports.");
        }
    }
    if old.claims != new.claims {
        let _ = writeln!(
            s,
            "\nClaims: [{}] → [{}]",
            old.claims.join(", "),
            new.claims.join(", ")
        );
    }
    if old.profile_claims != new.profile_claims {
        let _ = writeln!(
            s,
            "\nProfile claims: [{}] → [{}]",
            old.profile_claims.join(", "),
            new.profile_claims.join(", ")
        );
    }
    let mut last = None;
    for c in changes {
        if last != Some(c.kind) {
            last = Some(c.kind);
            let _ = writeln!(
                s,
                "\n## {}\n",
                match c.kind {
                    Kind::Regression => "Regressions",
                    Kind::Fixed => "Fixed",
                    Kind::Changed => "Other changes",
                }
            );
        }
        let _ = writeln!(s, "- {} `{}`: {} → {}", c.what, c.id, c.old, c.new);
    }
    s
}
