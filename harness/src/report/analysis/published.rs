//! The report's section on a published set: how many of the kit's expectations this SUT
//! meets, and every published expectation that the SUT or the project's reading departs
//! from, each with the ruling and the clause (`docs/spec-issues.md` SI-034). Computed from
//! the results alone, like every other part of the report.

use crate::catalog::Catalog;
use crate::frames::ErrorCode;
use crate::published::rulings::Effect;
use crate::published::Fixture;
use crate::report::result::{VectorResult, Verdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Namespaces whose expectations the agreement figure counts: the core, its encoding and
/// security binding, the MCP mapping and the kit's proof-of-concept fixtures. A2A and SWP-*
/// fixtures carry placeholder payloads and are counted apart; those judged on decoding only
/// are counted in neither (their expectation is not compared).
pub(crate) const AGREEMENT_NAMESPACES: [&str; 5] = ["core", "e1", "s1", "mcp", "poc"];

/// How many executed expectations the SUT met.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Agreement {
    /// Fixtures executed against the SUT.
    pub executed: usize,
    /// Of those, the ones whose published expectation the SUT's behaviour meets (codes
    /// graded as the catalog grades them).
    pub agree: usize,
}

impl Agreement {
    /// `agree` of `executed` as a percentage with one decimal, `-` when nothing ran.
    pub fn percent(&self) -> String {
        if self.executed == 0 {
            return "-".into();
        }
        let tenths = (self.agree * 1000 + self.executed / 2) / self.executed;
        format!("{}.{}%", tenths / 10, tenths % 10)
    }
}

/// A published expectation the SUT or the project's reading departs from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Disagreement {
    /// The fixture.
    pub vector_id: String,
    /// What the kit expects.
    pub published: String,
    /// What this SUT did, or why the fixture did not run.
    pub observed: String,
    /// Whether what the SUT did meets the published expectation; absent when it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sut_agrees: Option<bool>,
    /// The project's ruling; absent for a departure nobody has ruled on yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ruling: Option<String>,
    /// The clause the ruling rests on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clause: Option<String>,
    /// The `docs/spec-issues.md` entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub si: Option<String>,
}

/// A published process check: judged by reviewing its evidence, never at runtime.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessCheck {
    /// The fixture.
    pub vector_id: String,
    /// The evidence file the metadata names (`none named` when it names none).
    pub evidence: String,
}

/// The published-set section of a report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Section {
    /// Published fixtures selected in this run.
    pub fixtures: usize,
    /// Core, E1, S1, MCP and poc expectations ([`AGREEMENT_NAMESPACES`]).
    pub agreement: Agreement,
    /// A2A and SWP-* expectations.
    pub profiles: Agreement,
    /// Every departure, ruled or not, in fixture order.
    pub disagreements: Vec<Disagreement>,
    /// Departures of the SUT that no ruling covers.
    pub unruled: usize,
    /// Process checks among the selected fixtures: not testable at runtime, each listed
    /// with its evidence file so a reviewer knows what to read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub process_checks: Vec<ProcessCheck>,
    /// Fixtures the harness could not run (their results say why); counted in neither
    /// figure, since they show nothing about the SUT.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub harness_errors: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Section {
    /// The section in one line.
    pub fn headline(&self) -> String {
        let mut s = format!(
            "published fixtures: {} of {} executed core/E1/S1/MCP/poc expectations agree with this SUT ({}); A2A and SWP-*: {} of {}; {} fixture(s) ruled on or departed from, {} departure(s) unruled",
            self.agreement.agree,
            self.agreement.executed,
            self.agreement.percent(),
            self.profiles.agree,
            self.profiles.executed,
            self.disagreements.len(),
            self.unruled
        );
        if !self.process_checks.is_empty() {
            s.push_str(&format!(
                "; {} process check(s) not testable at runtime",
                self.process_checks.len()
            ));
        }
        if self.harness_errors > 0 {
            s.push_str(&format!(
                "; {} fixture(s) the harness could not run",
                self.harness_errors
            ));
        }
        s
    }
}

/// Whether what the SUT did meets the published expectation, for an executed fixture;
/// `None` where a ruling judges the fixture on decoding only: the kit's expectation is then
/// about a scenario the frame does not carry, so neither answer would agree or disagree.
fn sut_agrees(fx: &Fixture, r: &VectorResult) -> Option<bool> {
    let code = r
        .observed_error_code
        .as_deref()
        .and_then(|c| c.parse::<ErrorCode>().ok());
    match fx.ruling.map(|x| x.effect) {
        Some(Effect::DecodingOnly) => None,
        Some(Effect::Expect(_)) => Some(if fx.published.accept {
            // The ruled vector expects a reject: the SUT met the published accept when the
            // reject did not come.
            code.is_none() && r.verdict == Verdict::Fail
        } else {
            match code {
                Some(c) => fx.published.allowed.contains(&c),
                None => r.verdict == Verdict::RejectCodeNotObservable,
            }
        }),
        // Accepting and refusing both pass, so the verdict does not say which the SUT did;
        // what it observed does (an accept has no code and reads `accept`).
        Some(Effect::EitherWay(_)) => {
            let accepted = code.is_none() && r.observed.starts_with("accept");
            Some(if fx.published.accept {
                accepted
            } else {
                !accepted && code.is_none_or(|c| fx.published.allowed.contains(&c))
            })
        }
        // The vector runs the published expectation with the catalog's grading.
        _ => Some(matches!(
            r.verdict,
            Verdict::Pass | Verdict::RejectCodeNotObservable
        )),
    }
}

fn observed(r: &VectorResult) -> String {
    if r.verdict == Verdict::NotApplicable {
        return format!(
            "not applicable: {}",
            r.detail.as_deref().unwrap_or_default()
        );
    }
    let mut s = format!("{} ({})", r.observed, r.verdict.as_str());
    if r.verdict != Verdict::Pass {
        if let Some(d) = &r.detail {
            s.push_str(&format!(": {d}"));
        }
    }
    s
}

/// The section for the published fixtures among every selected vector's result (`all`,
/// executed or not); `None` when the run has none.
pub fn section(cat: &Catalog, all: &[VectorResult]) -> Option<Section> {
    let fixtures: BTreeMap<&str, &Fixture> = cat
        .vectors
        .iter()
        .filter_map(|lv| {
            lv.vector
                .header
                .fixture
                .as_deref()
                .map(|f| (lv.vector.header.id.as_str(), f))
        })
        .collect();
    if fixtures.is_empty() {
        return None;
    }
    let mut s = Section::default();
    for r in all {
        let Some(fx) = fixtures.get(r.vector_id.as_str()) else {
            continue;
        };
        s.fixtures += 1;
        if let Some(e) = &fx.evidence {
            s.process_checks.push(ProcessCheck {
                vector_id: r.vector_id.clone(),
                evidence: e.clone(),
            });
        }
        if r.verdict == Verdict::HarnessError {
            s.harness_errors += 1;
            continue;
        }
        let agrees = r.verdict.executed().then(|| sut_agrees(fx, r)).flatten();
        if let Some(a) = agrees {
            let tally = if AGREEMENT_NAMESPACES.contains(&r.namespace.as_str()) {
                &mut s.agreement
            } else {
                &mut s.profiles
            };
            tally.executed += 1;
            tally.agree += usize::from(a);
        }
        if fx.ruling.is_none() && agrees != Some(false) {
            continue;
        }
        if fx.ruling.is_none() {
            s.unruled += 1;
        }
        s.disagreements.push(Disagreement {
            vector_id: r.vector_id.clone(),
            published: fx.published.text.clone(),
            observed: observed(r),
            sut_agrees: agrees,
            ruling: fx.ruling.map(|x| x.reading.to_owned()),
            clause: fx.ruling.map(|x| x.clause.to_owned()),
            si: fx.ruling.map(|x| x.si.to_owned()),
        });
    }
    Some(s)
}
