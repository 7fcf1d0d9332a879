//! How a [`Report`] is assembled: [`Report::new`] from the results (counts, run verdict,
//! the split into executed and not applicable), then [`Report::attach`] with what needs the
//! catalog, each part computed by its analysis (`report::analysis`) from the results alone.
//! The analyses never see the `Report`, so they do not depend on the document they fill.

use crate::catalog::class::{Class, Profile};
use crate::catalog::Catalog;
use crate::report::analysis::{claims, classes, published, requirements};
use crate::report::model::{Digests, Report, RunInfo, Skipped, SutInfo};
use crate::report::result::{fails_run, VectorResult, Verdict};
use std::collections::BTreeMap;

impl Report {
    /// Builds the report; `results` may be in any order.
    pub fn new(mut run: RunInfo, sut: SutInfo, mut all: Vec<VectorResult>, strict: bool) -> Report {
        all.sort_by(|a, b| a.vector_id.cmp(&b.vector_id));
        for r in &mut all {
            // Wire methods time their transcripts with a real clock; only the codec and
            // translate methods' transcripts are deterministic and stay in the result.
            if r.method.is_some_and(|m| m.on_the_wire()) && !r.transcript.is_empty() {
                run.transcripts
                    .insert(r.vector_id.clone(), std::mem::take(&mut r.transcript));
            }
        }
        let mut verdicts = BTreeMap::new();
        for r in &all {
            *verdicts.entry(r.verdict.as_str().to_owned()).or_insert(0) += 1;
        }
        let run_failed = all.iter().any(|r| fails_run(r, strict));
        let incidental = requirements::incidental(&all);
        let (results, skipped): (Vec<_>, Vec<_>) =
            all.into_iter().partition(|r| r.verdict.executed());
        let passed = results.iter().filter(|r| r.pass).count();
        let failures: Vec<_> = results.iter().filter(|r| !r.pass).cloned().collect();
        Report {
            schema_version: 1,
            run,
            harness: format!("swp-conform {}", env!("CARGO_PKG_VERSION")),
            harness_version: env!("CARGO_PKG_VERSION").to_owned(),
            sut,
            digests: None,
            strict,
            shard: None,
            total: results.len(),
            passed,
            failed: results.len() - passed,
            fallback_count: 0,
            verdicts,
            run_failed,
            claims: Vec::new(),
            classes: Vec::new(),
            profile_claims: Vec::new(),
            headline_claim: None,
            profiles: Vec::new(),
            requirement_counts: BTreeMap::new(),
            requirements: Vec::new(),
            incidental,
            steps_not_run: results
                .iter()
                .flat_map(|r| &r.steps)
                .filter(|s| s.verdict.is_none())
                .count(),
            baseline: None,
            published: None,
            failures,
            not_applicable: skipped
                .into_iter()
                .map(|r| Skipped {
                    vector_id: r.vector_id,
                    title: r.title,
                    namespace: r.namespace,
                    path: r.path,
                    requirements: r.requirements,
                    verdict: r.verdict,
                    detail: r.detail.unwrap_or_default(),
                    cause: r.na_cause.unwrap_or_default(),
                    lacks: r.lacks,
                    incidental: r.incidental,
                })
                .collect(),
            results,
        }
    }

    /// Adds what needs the catalog: a verdict per requirement and per class, the claims,
    /// the published-set section and the digests of the manifest and the vector set.
    pub fn attach(&mut self, cat: &Catalog, digests: Digests) {
        let all = self.all_results();
        self.requirements = requirements::verdicts(cat, &all, &self.incidental);
        let reg = &cat.requirements;
        if self
            .incidental
            .iter()
            .any(|i| self.strict || reg.level(&i.requirement).is_some_and(|l| l.is_absolute()))
        {
            self.run_failed = true;
        }
        self.requirement_counts = requirements::counts(&self.requirements);
        self.digests = Some(digests);
        let (classes, profiles) = self.verdicts_of(cat, &all);
        self.claims = classes
            .iter()
            .filter(|c| c.claim.is_some())
            .map(|c| format!("SWP {}", c.class))
            .collect();
        self.profile_claims = profiles
            .iter()
            .filter(|p| p.claim.is_some())
            .map(|p| p.title.clone())
            .collect();
        self.headline_claim = claims::headline(&classes, &profiles);
        self.classes = classes;
        self.profiles = profiles;
        self.published = published::section(cat, &all);
    }

    /// The verdict of every class, with its claim line where it passed, from this report's
    /// results, SUT, digests and harness: what [`Report::attach`] grants, and what
    /// `swp-conform verify` re-derives from a bundle's `report.json` to check its claim.
    pub fn class_verdicts(&self, cat: &Catalog) -> Vec<classes::ClassVerdict> {
        self.verdicts_of(cat, &self.all_results()).0
    }

    /// The claim of `class` with `profiles` added, from this report's results by the same
    /// rules that grant the classes: what `claim` prints and `verify` re-derives. `None`
    /// when the report judged no class (it ran nothing of any class's namespaces).
    pub fn claim_verdict(
        &self,
        cat: &Catalog,
        class: Class,
        profiles: &[Profile],
    ) -> Option<claims::ClaimVerdict> {
        let (classes, verdicts) = self.verdicts_of(cat, &self.all_results());
        let c = classes.iter().find(|c| c.class == class)?;
        let ps: Vec<(Profile, &claims::ProfileVerdict)> = profiles
            .iter()
            .filter_map(|p| {
                verdicts
                    .iter()
                    .find(|v| v.profile == p.namespace())
                    .map(|v| (*p, v))
            })
            .collect();
        Some(claims::combine(
            cat,
            &self.claimant(),
            c,
            &ps,
            self.run.interrupted,
        ))
    }

    fn claimant(&self) -> classes::Claimant<'_> {
        classes::Claimant {
            sut_name: &self.sut.name,
            sut_version: &self.sut.version,
            vector_set_sha256: self.digests.as_ref().map(|d| d.vector_set_sha256.as_str()),
            harness: &self.harness,
        }
    }

    fn verdicts_of(
        &self,
        cat: &Catalog,
        all: &[VectorResult],
    ) -> (Vec<classes::ClassVerdict>, Vec<claims::ProfileVerdict>) {
        // A run that executed nothing of any class's namespaces (an MCP server, a gateway
        // or a proxy, or a selection outside them) is not about classes: it gets no class
        // or profile lines, which would only list every SWP vector as untested.
        let about_classes = all.iter().any(|r| {
            r.verdict != Verdict::NotApplicable
                && Class::ALL
                    .iter()
                    .any(|c| c.namespaces().contains(&r.namespace.as_str()))
        });
        if !about_classes {
            return (Vec::new(), Vec::new());
        }
        let judge = classes::Judge::new(cat, all, self.run.interrupted);
        let mut classes = classes::verdicts(cat, all, self.run.interrupted);
        let who = self.claimant();
        for c in &mut classes {
            if c.status == classes::ClassStatus::Pass {
                c.claim = Some(classes::claim_line(cat, &who, c));
            }
        }
        let profiles = claims::verdicts(&judge, cat, &classes);
        (classes, profiles)
    }
}
