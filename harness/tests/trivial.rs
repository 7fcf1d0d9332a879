//! The judge against SUTs that do one thing to every frame (`examples/trivialsut.rs`):
//! `reject-all` refuses every frame with an error frame on its msg_id, `reject-all-slow`
//! does so 250 ms late (after the quiet window that confirms accepts), `accept-all` answers
//! nothing. Each runs the whole catalog, and may pass only the vectors marked with its
//! shape (`shape: reject-only` for the first two, `accept-only` for the third): a pass of
//! any other vector is a refusal credited to the wrong frame, or silence taken for an answer.
//! The test prints what each passes, so a new pass is seen in review.

mod common;
use common::catalog;
use common::trivial::manifest;

use std::path::Path;
use swp_conform::catalog::vector::{Method, Shape};
use swp_conform::method::{self, Setup};
use swp_conform::report::result::Verdict;
use swp_conform::sut::Sut;

/// Runs every session vector against `mode` on four connections at once and checks that it
/// passes only vectors of `shape`; returns how many it executed and passed.
fn passes_only(mode: &str, shape: Shape) -> (usize, Vec<String>) {
    let cat = catalog();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("trivial-{mode}"));
    let sut = Sut::load(&manifest(mode, &work)).unwrap_or_else(|e| panic!("{e}"));
    let plan: Vec<_> = cat
        .vectors
        .iter()
        .filter(|v| v.vector.header.methods.contains(&Method::Session))
        .collect();
    let setup = Setup::new(&work);
    let mut runner = method::open(&cat, &sut, &setup).unwrap();
    let mut helpers: Vec<_> = (0..3)
        .map(|_| method::open(&cat, &sut, &setup).unwrap())
        .collect();
    let rs = method::run_plan_jobs(
        runner.as_mut(),
        &mut helpers,
        &plan,
        &swp_conform::support::cancel::Cancel::new(),
        &mut method::Silence::never(),
        &mut |_| {},
    )
    .unwrap();
    let executed = rs
        .iter()
        .filter(|r| r.verdict != Verdict::NotApplicable)
        .count();
    let mut passed = Vec::new();
    let mut wrong = Vec::new();
    for r in rs.iter().filter(|r| r.verdict == Verdict::Pass) {
        let marked = cat
            .vectors
            .iter()
            .find(|v| v.vector.header.id == r.vector_id)
            .and_then(|v| v.vector.frames().and_then(|b| b.shape));
        passed.push(r.vector_id.clone());
        if marked != Some(shape) {
            wrong.push(format!(
                "{} (marked {})",
                r.vector_id,
                marked.map_or("with no shape", Shape::as_str)
            ));
        }
    }
    eprintln!(
        "{mode}: executed {executed} vectors, passed {}: {}",
        passed.len(),
        passed.join(", ")
    );
    assert!(
        wrong.is_empty(),
        "{mode} passes vectors a SUT that does the same to every frame must not pass:\n  {}\n{}",
        wrong.join("\n  "),
        common::explain(
            &rs.iter()
                .filter(|r| wrong.iter().any(|w| w.starts_with(&r.vector_id)))
                .cloned()
                .map(|mut r| {
                    r.verdict = Verdict::Fail;
                    r
                })
                .collect::<Vec<_>>()
        )
    );
    // Most of the catalog runs: a SUT the harness could not drive would pass nothing
    // vacuously.
    assert!(executed >= 150, "{mode}: only {executed} vectors executed");
    (executed, passed)
}

#[test]
fn reject_all_passes_only_reject_only_vectors() {
    let (_, passed) = passes_only("reject-all", Shape::RejectOnly);
    assert!(!passed.is_empty(), "it refuses as some vectors ask");
}

#[test]
fn reject_all_slow_passes_only_reject_only_vectors() {
    let (_, passed) = passes_only("reject-all-slow", Shape::RejectOnly);
    assert!(!passed.is_empty(), "it refuses as some vectors ask");
}

#[test]
fn accept_all_passes_only_accept_only_vectors() {
    let (_, passed) = passes_only("accept-all", Shape::AcceptOnly);
    assert!(!passed.is_empty(), "it accepts as some vectors ask");
}
