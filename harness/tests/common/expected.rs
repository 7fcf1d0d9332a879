//! Expected-verdict files for SUTs we did not write (reports/third-party/*/expected.json,
//! implementations/foreign-py/expected-verdicts.json): one entry per vector, and every
//! non-pass explained (the rule it breaks, or why it is no failure of the SUT) with a piece of
//! the observed detail, so a verdict that changes, or changes its reason, shows.

use std::collections::BTreeMap;
use std::path::Path;
use swp_conform::report::result::{VectorResult, Verdict};

/// What a third-party server is expected to do on one vector. A non-pass names the rule it
/// breaks and a piece of the observed behaviour that must appear in the result's detail.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedResult {
    /// The verdict.
    pub verdict: String,
    /// For a non-pass: the rule it breaks, or why it is not a failure of the SUT.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rule: String,
    /// For a non-pass: a piece of the result's detail that must still appear.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub observed: String,
}

pub fn read_expected(path: &Path) -> Result<BTreeMap<String, ExpectedResult>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The expected file for `rs`: verdicts and observed details from this run, rules kept from
/// the previous file where the verdict did not change (a new deviation gets a rule to fill).
pub fn rebuild_expected(
    rs: &[VectorResult],
    previous: &BTreeMap<String, ExpectedResult>,
    default_rule: impl Fn(&VectorResult) -> Option<String>,
) -> BTreeMap<String, ExpectedResult> {
    rs.iter()
        .map(|r| {
            let verdict = r.verdict.as_str().to_owned();
            let e = if r.verdict == Verdict::Pass {
                ExpectedResult {
                    verdict,
                    rule: String::new(),
                    observed: String::new(),
                }
            } else {
                let old = previous.get(&r.vector_id).filter(|o| o.verdict == verdict);
                ExpectedResult {
                    rule: old
                        .map(|o| o.rule.clone())
                        .or_else(|| default_rule(r))
                        .unwrap_or_else(|| "TODO: the rule this breaks, and why".into()),
                    observed: r.detail.clone().unwrap_or_default(),
                    verdict,
                }
            };
            (r.vector_id.clone(), e)
        })
        .collect()
}

/// Every difference between a run and its expected file, one line each.
pub fn compare_expected(
    rs: &[VectorResult],
    want: &BTreeMap<String, ExpectedResult>,
) -> Vec<String> {
    let mut diff = Vec::new();
    for r in rs {
        let Some(w) = want.get(&r.vector_id) else {
            diff.push(format!("  {}: not in the expected file", r.vector_id));
            continue;
        };
        if w.verdict != r.verdict.as_str() {
            diff.push(format!(
                "  {}: expected {}, got {} ({})",
                r.vector_id,
                w.verdict,
                r.verdict.as_str(),
                r.detail.as_deref().unwrap_or("")
            ));
            continue;
        }
        if r.verdict != Verdict::Pass {
            if w.rule.is_empty() || w.rule.starts_with("TODO") || w.observed.is_empty() {
                diff.push(format!(
                    "  {}: a {} without the rule it breaks and what was observed",
                    r.vector_id, w.verdict
                ));
            } else if !r.detail.as_deref().unwrap_or("").contains(&w.observed) {
                diff.push(format!(
                    "  {}: {} for another reason: expected {:?}, got {:?}",
                    r.vector_id,
                    w.verdict,
                    w.observed,
                    r.detail.as_deref().unwrap_or("")
                ));
            }
        }
    }
    for id in want.keys() {
        if !rs.iter().any(|r| &r.vector_id == id) {
            diff.push(format!("  {id}: expected but not run"));
        }
    }
    diff
}

/// Runs the whole catalog against the manifest `manifest` (a path from the workspace root)
/// in `target/<work>`, and compares the verdicts with `expected` (its expected-verdict file).
/// With `SWP_UPDATE_REPORTS=1` it rewrites the file (rules kept, `default_why` for new
/// non-passes) and fails. Returns the results and the file's entries, for the caller's own
/// checks of that SUT.
pub fn catalog_matches_expected(
    manifest: &str,
    expected: &str,
    work: &str,
    default_why: fn(&VectorResult) -> Option<String>,
) -> (
    swp_conform::sut::Sut,
    Vec<VectorResult>,
    BTreeMap<String, ExpectedResult>,
) {
    use swp_conform::method::{self, Setup};
    let cat = super::catalog();
    let sut = swp_conform::sut::Sut::load(&super::root().join(manifest))
        .unwrap_or_else(|e| panic!("{e}"));
    let work = super::root().join("target").join(work);
    std::fs::create_dir_all(&work).unwrap();
    let plan: Vec<_> = cat.vectors.iter().collect();
    let rs = method::run(&cat, &sut, &Setup::new(&work), &plan).unwrap();
    let path = super::root().join(expected);
    let previous = read_expected(&path).unwrap_or_default();
    if super::update_switch("SWP_UPDATE_REPORTS") {
        let rebuilt = rebuild_expected(&rs, &previous, default_why);
        let text = serde_json::to_string_pretty(&rebuilt).unwrap() + "\n";
        std::fs::write(&path, text).unwrap();
        super::rewrote(1, "SWP_UPDATE_REPORTS");
    }
    let want = read_expected(&path).unwrap_or_else(|e| panic!("{e}"));
    let diff = compare_expected(&rs, &want);
    assert!(
        diff.is_empty(),
        "{expected}: results changed (SWP_UPDATE_REPORTS=1 rewrites it; then explain every non-pass):\n{}\n{}",
        diff.join("\n"),
        super::explain(&rs)
    );
    (sut, rs, want)
}
