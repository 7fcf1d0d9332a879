//! Conformance class verdicts (the spec kit's `conformance-classes.md`, read as in
//! `docs/spec-issues.md` SI-035): a class passes only when every catalog-required vector of
//! its namespaces ran and passed (a reject whose code this wire cannot show counts as
//! passed; a SHOULD-level failure is a warning), or did not apply because of a choice the
//! spec leaves to the SUT. A required vector left untested (the test method, a missing
//! manifest section or trigger, a harness bound, or not selected) makes the class
//! `incomplete`, and an executed vector of its namespaces failing at MUST level makes it
//! `fail`. Every vector that withholds the claim is named.

use crate::catalog::class::Class;
use crate::catalog::Catalog;
use crate::report::result::{NaCause, VectorResult, Verdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Where a class stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ClassStatus {
    /// Every required vector passed or did not apply by the SUT's declared choice.
    Pass,
    /// A vector of a required namespace failed at MUST level (or the SUT said it does not
    /// support a required one).
    Fail,
    /// Some required vector was not tested: not selected, interrupted, not runnable by this
    /// method or manifest, or its result was inconclusive or a harness error. No claim.
    Incomplete,
    /// Some required vector does not exist yet in the catalog: nobody can claim it.
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
    /// Catalog-required vectors of this namespace (`vectors/catalog-index.yaml`).
    #[serde(default)]
    pub required: usize,
    /// Of those, settled for the claim: passed, code not observable, SHOULD-level warning,
    /// or not applicable by the SUT's choice.
    #[serde(default)]
    pub required_settled: usize,
}

/// A vector that withholds a class, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct Withheld {
    /// Vector id.
    pub vector_id: String,
    /// `fail` (it failed) or `untested` (it leaves the class incomplete).
    pub kind: WithheldKind,
    /// Why it withholds the claim, in a few words.
    pub why: String,
}

/// Whether a withholding vector failed or was not tested.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum WithheldKind {
    /// It failed at MUST level, or the SUT does not support it.
    Fail,
    /// It was not tested, or its result decides nothing.
    Untested,
}

impl WithheldKind {
    /// Kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            WithheldKind::Fail => "fail",
            WithheldKind::Untested => "untested",
        }
    }
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
    /// Every vector that withholds the claim, in id order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<Withheld>,
    /// Vectors that failed only at SHOULD level: reported, not withholding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Required rejects that were observed but whose code this wire cannot show.
    #[serde(default)]
    pub codes_not_observed: usize,
    /// The claim line, when the class passed: `SWP Cx`, the SUT, the Core protocol
    /// version and the version of every specification the class covers, the vector set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
}

/// Who claims what, for a claim line: the SUT as its manifest names it, the vector set
/// tested and the harness that tested it (the report's header fields).
#[derive(Debug, Clone, Copy)]
pub struct Claimant<'a> {
    /// The SUT manifest's name.
    pub sut_name: &'a str,
    /// The SUT manifest's version.
    pub sut_version: &'a str,
    /// SHA-256 over the vector set, when known.
    pub vector_set_sha256: Option<&'a str>,
    /// Harness name and version.
    pub harness: &'a str,
}

/// The claim line of a passing class (`conformance-classes.md` §Claim format: the class,
/// then version references for Core, bindings and profiles).
pub fn claim_line(cat: &Catalog, who: &Claimant<'_>, v: &ClassVerdict) -> String {
    let specs: Vec<String> = v
        .class
        .documents()
        .iter()
        .map(|(what, doc)| {
            let ver = cat
                .requirements
                .versions
                .get(*doc)
                .map_or("version not stated", String::as_str);
            if *what == "Core" {
                format!(
                    "Core v{} ({doc} {ver})",
                    crate::frames::limits::CORE_VERSION
                )
            } else {
                format!("{what} ({doc} {ver})")
            }
        })
        .collect();
    let mut line = format!(
        "SWP {} — {} {}; {}; vector set sha256:{}; verified by {}",
        v.class,
        who.sut_name,
        who.sut_version,
        specs.join(", "),
        who.vector_set_sha256.unwrap_or("unknown"),
        who.harness
    );
    if v.codes_not_observed > 0 {
        line.push_str(&format!(
            "; {} reject code(s) not observable on this SUT's wire",
            v.codes_not_observed
        ));
    }
    line
}

/// How one required vector's result bears on a claim.
enum Bearing {
    Settled,
    Warning,
    CodeUnobserved,
    Incomplete(String),
    Fail(String),
}

fn bearing(r: &VectorResult) -> Bearing {
    match r.verdict {
        Verdict::Pass => Bearing::Settled,
        Verdict::RejectCodeNotObservable => Bearing::CodeUnobserved,
        Verdict::NotApplicable => match r.na_cause {
            Some(NaCause::SutChoice) => Bearing::Settled,
            _ => Bearing::Incomplete(format!(
                "not tested: {}",
                r.detail.as_deref().unwrap_or("not applicable")
            )),
        },
        Verdict::Fail | Verdict::Timeout | Verdict::Crash if !r.absolute => Bearing::Warning,
        Verdict::Fail | Verdict::Timeout | Verdict::Crash => {
            Bearing::Fail(format!("{} at MUST level", r.verdict.as_str()))
        }
        Verdict::Unsupported => Bearing::Fail("the SUT does not support it".into()),
        Verdict::Inconclusive => Bearing::Incomplete("inconclusive on this wire".into()),
        Verdict::HarnessError if r.sut_not_started.is_some() => {
            Bearing::Incomplete("harness error: the SUT could not be started".into())
        }
        Verdict::HarnessError => Bearing::Incomplete("harness error".into()),
        Verdict::Interrupted => Bearing::Incomplete("interrupted".into()),
        Verdict::NotRun => Bearing::Incomplete(format!(
            "not run: {}",
            r.detail.as_deref().unwrap_or("the run stopped early")
        )),
    }
}

/// A verdict for every class, from every selected vector's result (`all`, executed or not);
/// `interrupted`: the run was cut short, so a class with gaps may only be incomplete.
pub fn verdicts(cat: &Catalog, all: &[VectorResult], interrupted: bool) -> Vec<ClassVerdict> {
    let mut in_catalog: BTreeMap<&str, usize> = BTreeMap::new();
    for lv in &cat.vectors {
        *in_catalog
            .entry(lv.vector.header.namespace.as_str())
            .or_default() += 1;
    }
    let by_id: BTreeMap<&str, &VectorResult> =
        all.iter().map(|r| (r.vector_id.as_str(), r)).collect();
    let required: BTreeSet<&str> = cat
        .index
        .catalog
        .iter()
        .filter(|e| e.excluded.is_none())
        .map(|e| e.id.as_str())
        .collect();
    Class::ALL
        .into_iter()
        .map(|class| {
            let mut v = ClassVerdict {
                class,
                title: class.title().to_owned(),
                status: ClassStatus::Pass,
                reason: String::new(),
                namespaces: Vec::new(),
                withheld: Vec::new(),
                warnings: Vec::new(),
                codes_not_observed: 0,
                claim: None,
            };
            let (mut fails, mut gaps, mut pending) = (0, 0, Vec::new());
            // Why the SUT could not be started, when it could not for a vector of the class:
            // the reason leads with it, since no vector it left untested says more.
            let mut not_started: Option<&str> = None;
            for ns in class.namespaces() {
                let mut st = NamespaceStatus {
                    namespace: (*ns).to_owned(),
                    in_catalog: in_catalog.get(ns).copied().unwrap_or(0),
                    executed: 0,
                    passed: 0,
                    not_applicable: 0,
                    required: 0,
                    required_settled: 0,
                };
                for r in all.iter().filter(|r| r.namespace == *ns) {
                    not_started = not_started.or(r.sut_not_started.as_deref());
                    if r.verdict == Verdict::NotApplicable {
                        st.not_applicable += 1;
                    } else {
                        st.executed += 1;
                        st.passed += usize::from(r.verdict == Verdict::Pass);
                    }
                    // An extra vector (not catalog-required) counts only when it fails at
                    // MUST level: the claim says the SUT breaks no rule we test.
                    if !required.contains(r.vector_id.as_str()) {
                        if let Bearing::Fail(why) = bearing(r) {
                            fails += 1;
                            v.withheld.push(Withheld {
                                vector_id: r.vector_id.clone(),
                                kind: WithheldKind::Fail,
                                why,
                            });
                        }
                    }
                }
                let prefix = format!("{ns}_");
                for id in required.iter().filter(|id| id.starts_with(&prefix)) {
                    st.required += 1;
                    if cat.index.catalog.iter().any(|e| e.id == *id && e.pending.is_some()) {
                        pending.push((*id).to_owned());
                        continue;
                    }
                    let Some(r) = by_id.get(id) else {
                        gaps += 1;
                        v.withheld.push(Withheld {
                            vector_id: (*id).to_owned(),
                            kind: WithheldKind::Untested,
                            why: "not run (not selected, another shard, or interrupted)".into(),
                        });
                        continue;
                    };
                    match bearing(r) {
                        Bearing::Settled => st.required_settled += 1,
                        Bearing::CodeUnobserved => {
                            st.required_settled += 1;
                            v.codes_not_observed += 1;
                        }
                        Bearing::Warning => {
                            st.required_settled += 1;
                            v.warnings.push((*id).to_owned());
                        }
                        Bearing::Incomplete(why) => {
                            gaps += 1;
                            v.withheld.push(Withheld {
                                vector_id: (*id).to_owned(),
                                kind: WithheldKind::Untested,
                                why,
                            });
                        }
                        Bearing::Fail(why) => {
                            fails += 1;
                            v.withheld.push(Withheld {
                                vector_id: (*id).to_owned(),
                                kind: WithheldKind::Fail,
                                why,
                            });
                        }
                    }
                }
                v.namespaces.push(st);
            }
            v.withheld.sort();
            v.withheld.dedup();
            v.warnings.sort();
            let empty: Vec<&str> = v
                .namespaces
                .iter()
                .filter(|n| n.in_catalog == 0 || n.required == 0)
                .map(|n| n.namespace.as_str())
                .collect();
            let idle: Vec<&str> = v
                .namespaces
                .iter()
                .filter(|n| n.executed == 0)
                .map(|n| n.namespace.as_str())
                .collect();
            let listed = |xs: &[&str]| {
                xs.iter()
                    .map(|n| format!("{n}_*"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            (v.status, v.reason) = if !empty.is_empty() || !pending.is_empty() {
                let mut why = Vec::new();
                if !empty.is_empty() {
                    why.push(format!("no vectors in the catalog yet for {}", listed(&empty)));
                }
                if !pending.is_empty() {
                    let shown: Vec<&str> = pending.iter().take(3).map(String::as_str).collect();
                    why.push(format!(
                        "{} required vector(s) not built yet ({}{})",
                        pending.len(),
                        shown.join(", "),
                        if pending.len() > shown.len() { ", …" } else { "" }
                    ));
                }
                (ClassStatus::Unclaimable, why.join("; "))
            } else if fails > 0 {
                (
                    ClassStatus::Fail,
                    format!(
                        "{fails} vector(s) failed at MUST level: {}",
                        names(&v.withheld, WithheldKind::Fail)
                    ),
                )
            } else if gaps > 0 || interrupted {
                let mut why = format!(
                    "{gaps} required vector(s) untested: {}",
                    names(&v.withheld, WithheldKind::Untested)
                );
                if interrupted {
                    why.push_str(" (the run was interrupted)");
                }
                (ClassStatus::Incomplete, why)
            } else if !idle.is_empty() {
                (
                    ClassStatus::Incomplete,
                    format!("no vector of {} ran against this SUT", listed(&idle)),
                )
            } else {
                let req: usize = v.namespaces.iter().map(|n| n.required).sum();
                let mut why = format!("all {req} required vectors passed or do not apply by the SUT's declared choices");
                if v.codes_not_observed > 0 {
                    why.push_str(&format!(
                        "; {} reject code(s) not observable on this wire",
                        v.codes_not_observed
                    ));
                }
                if !v.warnings.is_empty() {
                    why.push_str(&format!("; {} SHOULD-level warning(s)", v.warnings.len()));
                }
                (ClassStatus::Pass, why)
            };
            if let (Some(why), false) = (not_started, v.status == ClassStatus::Pass) {
                v.reason = format!("the SUT could not be started: {why}; {}", v.reason);
            }
            v
        })
        .collect()
}

/// The first few withholding vector ids of one kind, then a count of the rest (the report
/// lists all of them).
fn names(w: &[Withheld], kind: WithheldKind) -> String {
    const SHOWN: usize = 8;
    let of: Vec<&Withheld> = w.iter().filter(|x| x.kind == kind).collect();
    let mut s: Vec<String> = of.iter().take(SHOWN).map(|x| x.vector_id.clone()).collect();
    if of.len() > SHOWN {
        s.push(format!("and {} more", of.len() - SHOWN));
    }
    s.join(", ")
}
