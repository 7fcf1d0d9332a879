//! Conformance class verdicts (the spec kit's `conformance-classes.md`): a class can be
//! claimed only when every vector of every namespace it requires was run and every one that
//! applies to the SUT passed. A namespace with no vector in the catalog makes its class
//! unclaimable, and the report says so rather than claiming on an empty set.

use crate::catalog::Catalog;
use crate::class::Class;
use crate::model::Verdict;
use crate::report::model::Report;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a class stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ClassStatus {
    /// Every required namespace ran completely and every applicable vector passed.
    Pass,
    /// Some applicable vector of a required namespace did not pass.
    Fail,
    /// Some required namespace was not run completely (selection, shard, interrupt), or
    /// none of its vectors applies to this SUT.
    Incomplete,
    /// Some required namespace has no vector in the catalog: nobody can claim it yet.
    Unclaimable,
}

impl ClassStatus {
    /// Kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ClassStatus::Pass => "pass",
            ClassStatus::Fail => "fail",
            ClassStatus::Incomplete => "incomplete",
            ClassStatus::Unclaimable => "unclaimable",
        }
    }
}

/// One required namespace's counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NamespaceStatus {
    /// Namespace.
    pub namespace: String,
    /// Vectors of this namespace in the catalog.
    pub in_catalog: usize,
    /// Of those, executed in this run.
    pub executed: usize,
    /// Of those, passed.
    pub passed: usize,
    /// Selected but not applicable to this SUT.
    pub not_applicable: usize,
}

/// One class's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClassVerdict {
    /// `C0`..`C5`.
    pub class: Class,
    /// Its name.
    pub title: String,
    /// The verdict.
    pub status: ClassStatus,
    /// Why, in one line.
    pub reason: String,
    /// The namespaces it requires.
    pub namespaces: Vec<NamespaceStatus>,
}

/// A verdict for every class.
pub fn verdicts(cat: &Catalog, rep: &Report) -> Vec<ClassVerdict> {
    let mut in_catalog: BTreeMap<&str, usize> = BTreeMap::new();
    for lv in &cat.vectors {
        *in_catalog.entry(lv.vector.namespace.as_str()).or_default() += 1;
    }
    let mut ran: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for r in &rep.results {
        let e = ran.entry(r.namespace.as_str()).or_default();
        e.0 += 1;
        if r.verdict == Verdict::Pass {
            e.1 += 1;
        }
    }
    let mut na: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &rep.not_applicable {
        *na.entry(s.namespace.as_str()).or_default() += 1;
    }
    Class::ALL
        .into_iter()
        .map(|class| {
            let namespaces: Vec<NamespaceStatus> = class
                .namespaces()
                .iter()
                .map(|ns| {
                    let (executed, passed) = ran.get(ns).copied().unwrap_or_default();
                    NamespaceStatus {
                        namespace: (*ns).to_owned(),
                        in_catalog: in_catalog.get(ns).copied().unwrap_or(0),
                        executed,
                        passed,
                        not_applicable: na.get(ns).copied().unwrap_or(0),
                    }
                })
                .collect();
            let (status, reason) = judge(&namespaces, rep.run.interrupted);
            ClassVerdict {
                class,
                title: class.title().to_owned(),
                status,
                reason,
                namespaces,
            }
        })
        .collect()
}

fn list(v: &[&NamespaceStatus], f: impl Fn(&NamespaceStatus) -> String) -> String {
    v.iter().map(|n| f(n)).collect::<Vec<_>>().join(", ")
}

fn judge(ns: &[NamespaceStatus], interrupted: bool) -> (ClassStatus, String) {
    let empty: Vec<_> = ns.iter().filter(|n| n.in_catalog == 0).collect();
    if !empty.is_empty() {
        return (
            ClassStatus::Unclaimable,
            format!(
                "no vectors in the catalog yet for {}",
                list(&empty, |n| format!("{}_*", n.namespace))
            ),
        );
    }
    let failing: Vec<_> = ns.iter().filter(|n| n.passed < n.executed).collect();
    if !failing.is_empty() {
        return (
            ClassStatus::Fail,
            format!(
                "not every applicable vector passed: {}",
                list(&failing, |n| format!(
                    "{} {}/{}",
                    n.namespace, n.passed, n.executed
                ))
            ),
        );
    }
    let partial: Vec<_> = ns
        .iter()
        .filter(|n| n.executed + n.not_applicable < n.in_catalog)
        .collect();
    if !partial.is_empty() || interrupted {
        return (
            ClassStatus::Incomplete,
            format!(
                "not every vector was run: {}",
                list(&partial, |n| format!(
                    "{} {}/{}",
                    n.namespace,
                    n.executed + n.not_applicable,
                    n.in_catalog
                ))
            ),
        );
    }
    let none: Vec<_> = ns.iter().filter(|n| n.executed == 0).collect();
    if !none.is_empty() {
        return (
            ClassStatus::Incomplete,
            format!(
                "no vector applies to this SUT in {}",
                list(&none, |n| format!("{}_*", n.namespace))
            ),
        );
    }
    let total: usize = ns.iter().map(|n| n.executed).sum();
    let na: usize = ns.iter().map(|n| n.not_applicable).sum();
    (
        ClassStatus::Pass,
        format!("{total}/{total} applicable vectors passed ({na} not applicable)"),
    )
}
