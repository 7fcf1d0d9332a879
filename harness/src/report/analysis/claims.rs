//! Profile claims beside the classes (`conformance-classes.md`: "optional additive profile
//! claims beyond class baseline", narrower claims outside the taxonomy;
//! `conformance-claims-checklist.md` §2: each claimed profile needs 100% pass on its vector
//! namespace), and the claim of a class with profiles added to it, `SWP C0 + SWP-RELAY
//! (swp-relay Draft v0.1, P1 Draft)`. A profile is judged by the class rules themselves
//! ([`Judge::judge`] over its one namespace) and granted only on top of a granted class; the
//! combined claim names every cause of every part at once (`causes`).

use crate::catalog::class::{Class, Profile, P1};
use crate::catalog::Catalog;
use crate::report::analysis::causes::Causes;
use crate::report::analysis::classes::{
    claim_line_with, document_version, Claimant, ClassStatus, ClassVerdict, Judge, NamespaceStatus,
    Withheld,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The class a profile claim adds to when none is named: Core, E1 and S1.
pub const BASELINE: Class = Class::C0;

/// One profile's verdict in a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProfileVerdict {
    /// Its name on the command line: its vector namespace (`relay`).
    pub profile: String,
    /// Its title in the registry (`SWP-RELAY`).
    pub title: String,
    /// Its specification (`swp-relay`).
    pub document: String,
    /// Its `profile_id` in the profile registry.
    pub profile_id: u64,
    /// The status of its namespace by the class rules.
    pub status: ClassStatus,
    /// Why, in one line, every cause named.
    pub reason: String,
    /// Its namespace's counts.
    pub namespace: NamespaceStatus,
    /// Every vector that withholds it, in id order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<Withheld>,
    /// Extra vectors that failed at SHOULD level (not withholding).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Required rejects whose code this wire cannot show.
    #[serde(default)]
    pub codes_not_observed: usize,
    /// The class it is claimed on top of (`C0`).
    pub baseline: Class,
    /// Its part of a claim line with the versions, when its namespace passed and the
    /// baseline class is granted: `SWP-RELAY (swp-relay Draft v0.1, P1 Draft)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
}

/// A profile as a claim line names it: its title, then its specification's version and,
/// for a P1 profile, P1's (`profile-payload-encoding-p1.md` §7), each as its own document's
/// heading states it.
pub fn profile_claim(cat: &Catalog, p: Profile) -> String {
    let part = p.part();
    let title = cat
        .requirements
        .documents
        .get(part.document)
        .map_or(part.document, String::as_str);
    let mut versions = format!("{} {}", part.document, document_version(cat, part.document));
    if p.uses_p1() {
        versions.push_str(&format!(", P1 {}", document_version(cat, P1.document)));
    }
    format!("{title} ({versions})")
}

/// A verdict for every claimable profile, judged as the classes are; `classes` are the
/// class verdicts of the same results, for the baseline.
pub fn verdicts(judge: &Judge<'_>, cat: &Catalog, classes: &[ClassVerdict]) -> Vec<ProfileVerdict> {
    let baseline_granted = classes
        .iter()
        .any(|c| c.class == BASELINE && c.status == ClassStatus::Pass);
    Profile::all()
        .into_iter()
        .map(|p| {
            let j = judge.judge(&[p.namespace()]);
            let part = p.part();
            ProfileVerdict {
                profile: p.namespace().to_owned(),
                title: cat
                    .requirements
                    .documents
                    .get(part.document)
                    .cloned()
                    .unwrap_or_else(|| part.document.to_owned()),
                document: part.document.to_owned(),
                profile_id: part.profile_id.unwrap_or_default(),
                claim: (j.status == ClassStatus::Pass && baseline_granted)
                    .then(|| profile_claim(cat, p)),
                status: j.status,
                reason: j.reason,
                namespace: j
                    .namespaces
                    .into_iter()
                    .next()
                    .unwrap_or_else(|| NamespaceStatus {
                        namespace: p.namespace().to_owned(),
                        in_catalog: 0,
                        executed: 0,
                        passed: 0,
                        not_applicable: 0,
                        required: 0,
                        required_settled: 0,
                    }),
                withheld: j.withheld,
                warnings: j.warnings,
                codes_not_observed: j.codes_not_observed,
                baseline: BASELINE,
            }
        })
        .collect()
}

/// The claim of a class with profiles added to it, as `claim` prints it and `verify`
/// re-derives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClaimVerdict {
    /// The class.
    pub class: Class,
    /// The profiles added to it, by name.
    pub profiles: Vec<String>,
    /// The worst status of the class and the profiles.
    pub status: ClassStatus,
    /// Every cause in one line (the class's own reason when no profile is added).
    pub reason: String,
    /// Every cause, grouped, one line per vector.
    pub causes: Vec<String>,
    /// The claim line, when the class and every profile passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
}

impl ClaimVerdict {
    /// What the claim states: `SWP C0 + SWP-RELAY + SWP-CRED`.
    pub fn statement(&self, cat: &Catalog) -> String {
        let mut s = format!("SWP {}", self.class);
        for p in &self.profiles {
            let title = p
                .parse::<Profile>()
                .ok()
                .and_then(|p| cat.requirements.documents.get(p.part().document))
                .map_or(p.as_str(), String::as_str);
            s.push_str(&format!(" + {title}"));
        }
        s
    }
}

/// The claim of `class` (its verdict) with `profiles` (each with its verdict) added, for
/// `who`. Without profiles it is the class's own verdict and claim line.
pub fn combine(
    cat: &Catalog,
    who: &Claimant<'_>,
    class: &ClassVerdict,
    profiles: &[(Profile, &ProfileVerdict)],
    interrupted: bool,
) -> ClaimVerdict {
    let mut causes = Causes::of(&class.withheld, &class.namespaces, interrupted);
    let ns: Vec<Vec<NamespaceStatus>> = profiles
        .iter()
        .map(|(_, v)| vec![v.namespace.clone()])
        .collect();
    for ((_, v), n) in profiles.iter().zip(&ns) {
        causes.add(&v.withheld, n);
    }
    let mut status = causes.status();
    // A part whose own judgement is worse than its causes show (the SUT could not be
    // started, say) keeps the claim withheld.
    for s in std::iter::once(class.status).chain(profiles.iter().map(|(_, v)| v.status)) {
        if s != ClassStatus::Pass && status == ClassStatus::Pass {
            status = s;
        }
    }
    let claim = (status == ClassStatus::Pass).then(|| {
        let additions: Vec<String> = profiles
            .iter()
            .map(|(p, _)| profile_claim(cat, *p))
            .collect();
        let codes = class.codes_not_observed
            + profiles
                .iter()
                .map(|(_, v)| v.codes_not_observed)
                .sum::<usize>();
        claim_line_with(cat, who, class.class, &additions, codes)
    });
    let reason = if profiles.is_empty() || status == ClassStatus::Pass {
        class.reason.clone()
    } else {
        causes.one_line()
    };
    ClaimVerdict {
        class: class.class,
        profiles: profiles.iter().map(|(p, _)| p.to_string()).collect(),
        status,
        reason,
        causes: causes.lines(),
        claim,
    }
}

/// The report's headline: the highest class granted, then every granted profile it does
/// not cover (`SWP C0 + SWP-RELAY (swp-relay Draft v0.1, P1 Draft)`); none when no class is.
pub fn headline(classes: &[ClassVerdict], profiles: &[ProfileVerdict]) -> Option<String> {
    let top = classes
        .iter()
        .filter(|c| c.status == ClassStatus::Pass)
        .map(|c| c.class)
        .max()?;
    let mut s = format!("SWP {top}");
    for v in profiles {
        let (Some(claim), Ok(p)) = (&v.claim, v.profile.parse::<Profile>()) else {
            continue;
        };
        if !top.covers(p) {
            s.push_str(&format!(" + {claim}"));
        }
    }
    Some(s)
}
