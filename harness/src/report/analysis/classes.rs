//! Conformance class verdicts (the spec kit's `conformance-classes.md`, read as in
//! `docs/spec-issues.md` SI-035 and SI-050): a class passes only when every catalog-required
//! vector of its namespaces ran and passed (a reject whose code this wire cannot show counts
//! as passed), or did not apply because of a choice the spec leaves to the SUT. A required
//! vector left untested (the test method, a missing manifest section or trigger, a harness
//! bound, or not selected) makes the class `incomplete`; an executed vector of its
//! namespaces failing at MUST level, or a required one failing at SHOULD level (the
//! checklist's "100% pass"), makes it `fail`. Every vector that withholds the claim is named,
//! and the reason names every group of causes at once (`causes`). [`judge`] is the one
//! judgement of a set of namespaces: the classes here and the profiles (`claims`) use it.

use crate::catalog::class::Class;
use crate::catalog::Catalog;
use crate::report::analysis::causes::Causes;
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
    /// Of those, settled for the claim: passed, code not observable, or not applicable by
    /// the SUT's choice.
    #[serde(default)]
    pub required_settled: usize,
}

/// A vector that withholds a class, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct Withheld {
    /// Vector id.
    pub vector_id: String,
    /// `fail` (at MUST level), `should` (a required vector at SHOULD level), `untested` (it
    /// leaves the class incomplete) or `unbuilt` (not in the catalog yet).
    pub kind: WithheldKind,
    /// Why it withholds the claim, in a few words.
    pub why: String,
    /// For an untested vector: the manifest declarations it lacks (`params` names,
    /// `session.slow_request`), when a missing declaration is why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lacks: Vec<String>,
}

/// Whether a withholding vector failed or was not tested.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum WithheldKind {
    /// It failed at MUST level, or the SUT does not support it.
    Fail,
    /// A catalog-required vector failed at SHOULD level: not the "100% pass" a claim needs
    /// (SI-050).
    Should,
    /// It was not tested, or its result decides nothing.
    Untested,
    /// A required vector the catalog does not have yet (`pending` in the catalog index).
    Unbuilt,
}

impl WithheldKind {
    /// Kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            WithheldKind::Fail => "fail",
            WithheldKind::Should => "should",
            WithheldKind::Untested => "untested",
            WithheldKind::Unbuilt => "unbuilt",
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
    /// Vectors outside the catalog's required list (our `01xx` extras) that failed at SHOULD
    /// level: reported, not withholding.
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
    claim_line_with(cat, who, v.class, &[], v.codes_not_observed)
}

/// The claim line of `class` with additive profile claims after it (`SWP C0 + SWP-RELAY
/// (swp-relay Draft v0.1, P1 Draft)`), each already written with its versions by
/// `claims::profile_claim`; `codes_not_observed` over the class and the profiles.
pub fn claim_line_with(
    cat: &Catalog,
    who: &Claimant<'_>,
    class: Class,
    additions: &[String],
    codes_not_observed: usize,
) -> String {
    let specs: Vec<String> = class
        .parts()
        .iter()
        .map(|p| {
            let (what, doc) = (p.what, p.document);
            let ver = document_version(cat, doc);
            if what == "Core" {
                format!(
                    "Core v{} ({doc} {ver})",
                    crate::frames::limits::CORE_VERSION
                )
            } else {
                format!("{what} ({doc} {ver})")
            }
        })
        .collect();
    let mut head = format!("SWP {class}");
    for a in additions {
        head.push_str(" + ");
        head.push_str(a);
    }
    let mut line = format!(
        "{head} — {} {}; {}; vector set sha256:{}; verified by {}",
        who.sut_name,
        who.sut_version,
        specs.join(", "),
        who.vector_set_sha256.unwrap_or("unknown"),
        who.harness
    );
    if codes_not_observed > 0 {
        line.push_str(&format!(
            "; {codes_not_observed} reject code(s) not observable on this SUT's wire"
        ));
    }
    line
}

/// A spec document's version as its own heading states it (the requirement registry, the
/// source `swp-conform --version` prints).
pub fn document_version<'c>(cat: &'c Catalog, doc: &str) -> &'c str {
    cat.requirements
        .versions
        .get(doc)
        .map_or("version not stated", String::as_str)
}

/// How one vector's result bears on a claim.
enum Bearing {
    Settled,
    CodeUnobserved,
    /// Failed at SHOULD level.
    Should(String),
    /// Untested: why, and the declarations it lacks.
    Incomplete(String, Vec<String>),
    Fail(String),
}

fn bearing(r: &VectorResult) -> Bearing {
    let untested = |why: String| Bearing::Incomplete(why, Vec::new());
    match r.verdict {
        Verdict::Pass => Bearing::Settled,
        Verdict::RejectCodeNotObservable => Bearing::CodeUnobserved,
        Verdict::NotApplicable => match r.na_cause {
            Some(NaCause::SutChoice) => Bearing::Settled,
            _ => Bearing::Incomplete(
                format!(
                    "not tested: {}",
                    r.detail.as_deref().unwrap_or("not applicable")
                ),
                r.lacks.clone(),
            ),
        },
        Verdict::Fail | Verdict::Timeout | Verdict::Crash if !r.absolute => {
            Bearing::Should(format!("{} at SHOULD level", r.verdict.as_str()))
        }
        Verdict::Fail | Verdict::Timeout | Verdict::Crash => {
            Bearing::Fail(format!("{} at MUST level", r.verdict.as_str()))
        }
        Verdict::Unsupported => Bearing::Fail("the SUT does not support it".into()),
        Verdict::Inconclusive => untested("inconclusive on this wire".into()),
        Verdict::HarnessError if r.sut_not_started.is_some() => {
            untested("harness error: the SUT could not be started".into())
        }
        Verdict::HarnessError => untested("harness error".into()),
        Verdict::Interrupted => untested("interrupted".into()),
        Verdict::NotRun => untested(format!(
            "not run: {}",
            r.detail.as_deref().unwrap_or("the run stopped early")
        )),
    }
}

/// What the results say of a set of namespaces: the judgement a class or a profile claim
/// rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// The verdict.
    pub status: ClassStatus,
    /// Every cause, grouped, in one line.
    pub reason: String,
    /// Each namespace's counts.
    pub namespaces: Vec<NamespaceStatus>,
    /// Every vector that withholds the claim, in id order.
    pub withheld: Vec<Withheld>,
    /// Extra vectors that failed at SHOULD level (not withholding).
    pub warnings: Vec<String>,
    /// Required rejects whose code this wire cannot show.
    pub codes_not_observed: usize,
}

/// The results of one run, indexed once for judging many sets of namespaces.
pub struct Judge<'a> {
    cat: &'a Catalog,
    all: &'a [VectorResult],
    interrupted: bool,
    in_catalog: BTreeMap<&'a str, usize>,
    by_id: BTreeMap<&'a str, &'a VectorResult>,
    required: BTreeSet<&'a str>,
}

impl<'a> Judge<'a> {
    /// Indexes every selected vector's result (`all`, executed or not); `interrupted`: the
    /// run was cut short, so a set with gaps may only be incomplete.
    pub fn new(cat: &'a Catalog, all: &'a [VectorResult], interrupted: bool) -> Judge<'a> {
        let mut in_catalog: BTreeMap<&str, usize> = BTreeMap::new();
        for lv in &cat.vectors {
            *in_catalog
                .entry(lv.vector.header.namespace.as_str())
                .or_default() += 1;
        }
        Judge {
            cat,
            all,
            interrupted,
            in_catalog,
            by_id: all.iter().map(|r| (r.vector_id.as_str(), r)).collect(),
            required: cat
                .index
                .catalog
                .iter()
                .filter(|e| e.excluded.is_none())
                .map(|e| e.id.as_str())
                .collect(),
        }
    }

    /// The judgement of `namespaces` together: the same rules for a class and a profile.
    pub fn judge(&self, namespaces: &[&str]) -> Judged {
        let mut j = Judged {
            status: ClassStatus::Pass,
            reason: String::new(),
            namespaces: Vec::new(),
            withheld: Vec::new(),
            warnings: Vec::new(),
            codes_not_observed: 0,
        };
        // Why the SUT could not be started, when it could not for a vector of the set: the
        // reason leads with it, since no vector it left untested says more.
        let mut not_started: Option<&str> = None;
        let withhold = |j: &mut Judged, id: &str, kind, why, lacks| {
            j.withheld.push(Withheld {
                vector_id: id.to_owned(),
                kind,
                why,
                lacks,
            })
        };
        for ns in namespaces {
            let mut st = NamespaceStatus {
                namespace: (*ns).to_owned(),
                in_catalog: self.in_catalog.get(ns).copied().unwrap_or(0),
                executed: 0,
                passed: 0,
                not_applicable: 0,
                required: 0,
                required_settled: 0,
            };
            for r in self.all.iter().filter(|r| r.namespace == *ns) {
                not_started = not_started.or(r.sut_not_started.as_deref());
                if r.verdict == Verdict::NotApplicable {
                    st.not_applicable += 1;
                } else {
                    st.executed += 1;
                    st.passed += usize::from(r.verdict == Verdict::Pass);
                }
                // An extra vector (not catalog-required) counts only when it fails at MUST
                // level: the claim says the SUT breaks no rule we test; the catalog's
                // "100% pass" is over its own required vectors (SI-050).
                if !self.required.contains(r.vector_id.as_str()) {
                    match bearing(r) {
                        Bearing::Fail(why) => {
                            withhold(&mut j, &r.vector_id, WithheldKind::Fail, why, Vec::new())
                        }
                        Bearing::Should(_) => j.warnings.push(r.vector_id.clone()),
                        _ => {}
                    }
                }
            }
            let prefix = format!("{ns}_");
            for id in self.required.iter().filter(|id| id.starts_with(&prefix)) {
                st.required += 1;
                if self
                    .cat
                    .index
                    .catalog
                    .iter()
                    .any(|e| e.id == *id && e.pending.is_some())
                {
                    let why = "not built yet (pending in the catalog index)".to_owned();
                    withhold(&mut j, id, WithheldKind::Unbuilt, why, Vec::new());
                    continue;
                }
                let Some(r) = self.by_id.get(id) else {
                    let why = "not run (not selected, another shard, or interrupted)".to_owned();
                    withhold(&mut j, id, WithheldKind::Untested, why, Vec::new());
                    continue;
                };
                match bearing(r) {
                    Bearing::Settled => st.required_settled += 1,
                    Bearing::CodeUnobserved => {
                        st.required_settled += 1;
                        j.codes_not_observed += 1;
                    }
                    Bearing::Should(why) => {
                        withhold(&mut j, id, WithheldKind::Should, why, Vec::new())
                    }
                    Bearing::Incomplete(why, lacks) => {
                        withhold(&mut j, id, WithheldKind::Untested, why, lacks)
                    }
                    Bearing::Fail(why) => withhold(&mut j, id, WithheldKind::Fail, why, Vec::new()),
                }
            }
            j.namespaces.push(st);
        }
        j.withheld.sort();
        j.withheld.dedup();
        j.warnings.sort();
        j.warnings.dedup();
        let causes = Causes::of(&j.withheld, &j.namespaces, self.interrupted);
        j.status = causes.status();
        j.reason = if j.status == ClassStatus::Pass {
            let req: usize = j.namespaces.iter().map(|n| n.required).sum();
            let mut why = format!(
                "all {req} required vectors passed or do not apply by the SUT's declared choices"
            );
            if j.codes_not_observed > 0 {
                why.push_str(&format!(
                    "; {} reject code(s) not observable on this wire",
                    j.codes_not_observed
                ));
            }
            if !j.warnings.is_empty() {
                why.push_str(&format!(
                    "; {} SHOULD-level warning(s) outside the required vectors",
                    j.warnings.len()
                ));
            }
            why
        } else {
            causes.one_line()
        };
        if let (Some(why), false) = (not_started, j.status == ClassStatus::Pass) {
            j.reason = format!("the SUT could not be started: {why}; {}", j.reason);
        }
        j
    }
}

/// A verdict for every class, from every selected vector's result (`all`, executed or not);
/// `interrupted`: the run was cut short, so a class with gaps may only be incomplete.
pub fn verdicts(cat: &Catalog, all: &[VectorResult], interrupted: bool) -> Vec<ClassVerdict> {
    let judge = Judge::new(cat, all, interrupted);
    Class::ALL
        .into_iter()
        .map(|class| {
            let j = judge.judge(&class.namespaces());
            ClassVerdict {
                class,
                title: class.title().to_owned(),
                status: j.status,
                reason: j.reason,
                namespaces: j.namespaces,
                withheld: j.withheld,
                warnings: j.warnings,
                codes_not_observed: j.codes_not_observed,
                claim: None,
            }
        })
        .collect()
}
