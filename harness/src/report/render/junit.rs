//! `junit.xml` (quick-junit): one testsuite per namespace, one testcase per selected
//! vector, requirement IDs with their levels as properties, so any CI system shows the run.
//! No times or timestamps: the file is deterministic; run-specific transcripts are only
//! referred to.

use crate::report::model::Report;
use crate::report::result::{VectorResult, Verdict};
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};
use std::collections::BTreeMap;

/// Renders the JUnit XML.
pub fn render(rep: &Report) -> Result<String, quick_junit::SerializeError> {
    let levels = super::shared::levels(rep);
    let all = rep.all_results();
    let mut by_ns: BTreeMap<&str, Vec<&VectorResult>> = BTreeMap::new();
    for r in &all {
        by_ns.entry(r.namespace.as_str()).or_default().push(r);
    }
    let mut report = quick_junit::Report::new(format!("swp-conform: {}", rep.sut.reported));
    for (ns, rs) in by_ns {
        let mut suite = TestSuite::new(if ns.is_empty() { "unknown" } else { ns });
        suite.add_property(Property::new("sut", rep.sut.reported.as_str()));
        for r in rs {
            suite.add_test_case(case(rep, r, &levels));
        }
        report.add_test_suite(suite);
    }
    let mut s = report.to_string()?;
    if !s.ends_with('\n') {
        s.push('\n');
    }
    Ok(s)
}

fn case(
    rep: &Report,
    r: &VectorResult,
    levels: &std::collections::HashMap<&str, &str>,
) -> TestCase {
    let tag = super::shared::tag(rep, r);
    let deviation = rep
        .baseline
        .as_ref()
        .and_then(|b| b.deviations.iter().find(|d| d.vector_id == r.vector_id));
    let status = match (r.verdict, tag) {
        (_, "FAIL") => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            match deviation {
                Some(d) => {
                    s.set_type("baseline-deviation");
                    s.set_message(format!("baseline expected {}, got {}", d.expected, d.got));
                }
                None => {
                    s.set_type(r.verdict.as_str());
                    s.set_message(format!(
                        "{}: expected {}, observed {}",
                        r.verdict.as_str(),
                        r.expected,
                        r.observed
                    ));
                }
            }
            s.set_description(description(rep, r));
            s
        }
        (Verdict::Pass, _) => TestCaseStatus::success(),
        (Verdict::NotApplicable | Verdict::Unsupported | Verdict::NotRun, _) => {
            let mut s = TestCaseStatus::skipped();
            s.set_type(r.verdict.as_str());
            s.set_message(r.detail.clone().unwrap_or_default());
            s
        }
        (_, "XFAIL") => {
            let mut s = TestCaseStatus::skipped();
            s.set_type("expected-failure");
            s.set_message(format!("expected by the baseline: {}", r.verdict.as_str()));
            s
        }
        // A SHOULD that failed, or a reject whose code cannot be observed: the run
        // passes, so the case passes, and says why in its output.
        _ => TestCaseStatus::success(),
    };
    let mut tc = TestCase::new(r.vector_id.as_str(), status);
    tc.set_classname(format!("{}.{}", r.namespace, r.vector_id));
    tc.add_property(Property::new("verdict", r.verdict.as_str()));
    if let Some(m) = &r.method {
        tc.add_property(Property::new("method", m.as_str()));
    }
    for id in &r.requirements {
        tc.add_property(Property::new(
            id.as_str(),
            levels.get(id.as_str()).copied().unwrap_or(""),
        ));
    }
    if r.verdict != Verdict::Pass && tag != "FAIL" {
        tc.set_system_out(format!(
            "{tag} {}\n{}",
            r.verdict.as_str(),
            description(rep, r)
        ));
    }
    tc
}

fn description(rep: &Report, r: &VectorResult) -> String {
    let mut s = format!(
        "file: {}\nexpected: {}\nobserved: {}\n",
        r.path, r.expected, r.observed
    );
    if let Some(d) = &r.detail {
        s.push_str(&format!("detail: {d}\n"));
    }
    if super::shared::transcript_is_run_specific(rep, r) {
        s.push_str(&format!(
            "transcript: report.json run.transcripts[\"{}\"]\n",
            r.vector_id
        ));
    } else if !r.transcript.is_empty() {
        s.push_str("transcript:\n");
        for t in &r.transcript {
            s.push_str("  ");
            s.push_str(&super::shared::transcript_line(t));
            s.push('\n');
        }
    }
    s
}
