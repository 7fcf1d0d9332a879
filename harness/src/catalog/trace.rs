//! The trace: requirement → vectors, the uncovered requirements, and counts by level.
//! Computed from the catalog alone (no run needed).

use crate::catalog::requirements::{Level, Testable};
use crate::catalog::Catalog;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One requirement's coverage.
#[derive(Debug, Clone)]
pub struct Row {
    /// Canonical ID.
    pub id: String,
    /// Document.
    pub document: String,
    /// Section.
    pub section: String,
    /// Level.
    pub level: Level,
    /// How testable.
    pub testable: Testable,
    /// Vectors naming it (directly or by alias), then those of the requirements it restates.
    pub vectors: Vec<String>,
    /// The requirements it restates (registry `restates`): the same rule stated in another
    /// document, so a vector of theirs tests it too.
    pub via: Vec<String>,
    /// Summary.
    pub summary: String,
}

/// Coverage of every requirement, in document then ID order.
pub fn rows(cat: &Catalog) -> Vec<Row> {
    let mut by_req: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for lv in &cat.vectors {
        for r in lv.vector.all_requirements() {
            for id in cat.requirements.resolve(r).unwrap_or_default() {
                let e = by_req
                    .entry(
                        cat.requirements
                            .by_id
                            .get_key_value(&id)
                            .map_or("", |(k, _)| k.as_str()),
                    )
                    .or_default();
                if !e.contains(&lv.vector.header.id) {
                    e.push(lv.vector.header.id.clone());
                }
            }
        }
    }
    let mut rows: Vec<Row> = cat
        .requirements
        .by_id
        .values()
        .map(|e| Row {
            id: e.req.id.clone(),
            document: e.document.clone(),
            section: e.req.section.clone(),
            level: e.req.level,
            testable: e.req.testable,
            vectors: {
                let mut v = by_req.get(e.req.id.as_str()).cloned().unwrap_or_default();
                for t in &e.req.restates {
                    for x in by_req.get(t.as_str()).into_iter().flatten() {
                        if !v.contains(x) {
                            v.push(x.clone());
                        }
                    }
                }
                v
            },
            via: e.req.restates.clone(),
            summary: e.req.summary.clone(),
        })
        .collect();
    rows.sort_by(|a, b| {
        (a.document.as_str(), id_key(&a.id)).cmp(&(b.document.as_str(), id_key(&b.id)))
    });
    rows
}

fn id_key(id: &str) -> (String, u64) {
    match id.rsplit_once('-') {
        Some((p, n)) => (p.to_owned(), n.parse().unwrap_or(0)),
        None => (id.to_owned(), 0),
    }
}

/// The text report of `swp-conform trace`.
pub fn render(cat: &Catalog, only_uncovered: bool) -> String {
    let rows = rows(cat);
    let mut s = String::new();
    let mut doc = "";
    for r in &rows {
        let covered = !r.vectors.is_empty();
        if only_uncovered && (covered || r.testable == Testable::Process) {
            continue;
        }
        if r.document != doc {
            doc = &r.document;
            let _ = writeln!(s, "\n## {doc}");
        }
        let status = if covered && !r.via.is_empty() {
            format!("{} (restates {})", r.vectors.join(", "), r.via.join(", "))
        } else if covered {
            r.vectors.join(", ")
        } else if r.testable == Testable::Process {
            "not-testable (process duty)".to_owned()
        } else {
            "UNCOVERED".to_owned()
        };
        let _ = writeln!(
            s,
            "{:<14} §{:<5} {:<10} {}  — {}",
            r.id,
            r.section,
            r.level.as_str(),
            status,
            r.summary
        );
    }
    let _ = writeln!(s, "\nCoverage by level (testable requirements with at least one vector / testable / process duties):");
    let mut by_level: BTreeMap<Level, (usize, usize, usize)> = BTreeMap::new();
    for r in &rows {
        let e = by_level.entry(r.level).or_default();
        if r.testable == Testable::Process {
            e.2 += 1;
        } else {
            e.1 += 1;
            if !r.vectors.is_empty() {
                e.0 += 1;
            }
        }
    }
    for (l, (c, t, p)) in &by_level {
        let _ = writeln!(
            s,
            "  {:<10} {c:>4} / {t:<4} covered, {p} process",
            l.as_str()
        );
    }
    let (c, t): (usize, usize) = by_level
        .values()
        .fold((0, 0), |a, v| (a.0 + v.0, a.1 + v.1));
    let _ = writeln!(s, "  {:<10} {c:>4} / {t:<4} covered", "all");
    s
}
