//! Report rendering: a 1,000-vector result set into every format (`report.json`,
//! `junit.xml`, `report.md`, `report.html`), and building the report model itself
//! (`cargo bench -p swp-conform --bench reports`).
//!
//! The result set is the reference's real in-process results (transcripts included),
//! repeated under fresh vector ids up to 1,000, with every 20th turned into a failure so the
//! failure sections have work to do.

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::Path;
use swp_conform::catalog::{self, LoadedVector};
use swp_conform::connect::inproc::InProcess;
use swp_conform::method::codec::CodecMethod;
use swp_conform::report::model::{Digests, Report, RunInfo, SutInfo};
use swp_conform::report::result::{VectorResult, Verdict};
use swp_conform::sut::Sut;

const N: usize = 1000;

fn results(cat: &catalog::Catalog) -> Vec<VectorResult> {
    let sut = Sut::builtin().unwrap_or_else(|e| panic!("{e}"));
    let plan: Vec<&LoadedVector> = cat.vectors.iter().collect();
    let base = CodecMethod::new(&sut, Box::new(InProcess))
        .run(cat, &plan)
        .unwrap_or_else(|e| panic!("{e}"));
    (0..N)
        .map(|i| {
            let mut r = base[i % base.len()].clone();
            r.vector_id = format!("{}_{i:04}", r.vector_id);
            if i % 20 == 0 && r.verdict == Verdict::Pass {
                r.verdict = Verdict::Fail;
                r.pass = false;
                r.observed = "accepted".into();
                r.detail = Some("bench: made to fail".into());
            }
            r
        })
        .collect()
}

fn build(cat: &catalog::Catalog, rs: Vec<VectorResult>) -> Report {
    let mut rep = Report::new(
        RunInfo {
            pattern: "*".into(),
            no_fallback: true,
            timestamp_utc: "2026-11-26T00:00:00Z".into(),
            runner_git_sha: "bench".into(),
            ..Default::default()
        },
        SutInfo {
            name: "swp-ref".into(),
            version: "0.1.0".into(),
            reported: "swp-ref 0.1.0 (in-process)".into(),
        },
        rs,
        false,
    );
    rep.attach(cat, Digests::default());
    rep
}

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cat = catalog::load::load(&root.join("vectors")).unwrap_or_else(|e| panic!("{e}"));
    let rs = results(&cat);
    let rep = build(&cat, rs.clone());
    let sizes: Vec<(&str, usize)> = swp_conform::report::render_all(&rep)
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|(n, t)| (*n, t.len()))
        .collect();
    eprintln!(
        "{} results ({} executed, {} failed), {} requirements; output sizes: {sizes:?}",
        N,
        rep.total,
        rep.failed,
        rep.requirements.len()
    );
    let mut g = c.benchmark_group("reports_1000");
    g.bench_function("render_all_formats", |b| {
        b.iter(|| swp_conform::report::render_all(&rep))
    });
    g.bench_function("json", |b| b.iter(|| rep.to_json()));
    g.bench_function("junit", |b| {
        b.iter(|| swp_conform::report::render::junit::render(&rep))
    });
    g.bench_function("markdown", |b| {
        b.iter(|| swp_conform::report::render::markdown::render(&rep))
    });
    g.bench_function("html", |b| {
        b.iter(|| swp_conform::report::render::html::render(&rep))
    });
    g.bench_function("model_build_and_trace", |b| {
        b.iter(|| build(&cat, rs.clone()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
