//! Whole-catalog wall time: every core and E1 vector against the reference, in-process and
//! through one long-lived testee process (`cargo bench -p swp-conform --bench catalog`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::path::Path;
use std::time::Duration;
use swp_conform::catalog::{self, LoadedVector};
use swp_conform::connect::inproc::InProcess;
use swp_conform::connect::testee::TesteeDriver;
use swp_conform::method::codec::CodecMethod;
use swp_conform::sut::{Start, Sut};

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cat = catalog::load::load(&root.join("vectors")).unwrap_or_else(|e| panic!("{e}"));
    let sut = Sut::builtin().unwrap_or_else(|e| panic!("{e}"));
    let all: Vec<&LoadedVector> = cat
        .vectors
        .iter()
        .filter(|v| v.vector.header.namespace == "core" || v.vector.header.namespace == "e1")
        .collect();
    // Vectors that send more than 1 MiB (the boundary vectors move MAX_FRAME_BYTES, 8 MiB)
    // are reported apart, so the per-vector cost of everything else stays visible. Decided
    // by what each vector materialises for this SUT, not by its id.
    let params = sut.params(swp_conform::method::codec::CODEC_NOW_MS);
    let big = |v: &&LoadedVector| {
        swp_conform::plan::materialize::materialise(&v.vector, &params).is_ok_and(|steps| {
            steps
                .iter()
                .map(|s| match &s.action {
                    swp_conform::plan::materialize::Action::Send(b) => b.len(),
                    _ => 0,
                })
                .sum::<usize>()
                > 1024 * 1024
        })
    };
    let small: Vec<&LoadedVector> = all.iter().copied().filter(|v| !big(v)).collect();
    let large: Vec<&LoadedVector> = all.iter().copied().filter(big).collect();

    let mut g = c.benchmark_group("catalog");
    g.sample_size(20).measurement_time(Duration::from_secs(5));
    for (name, plan) in [
        ("all", &all),
        ("without-large-vectors", &small),
        ("large-vectors", &large),
    ] {
        g.throughput(Throughput::Elements(plan.len() as u64));
        g.bench_function(format!("inproc/{name}"), |b| {
            b.iter(|| {
                CodecMethod::new(&sut, Box::new(InProcess))
                    .run(&cat, plan)
                    .unwrap()
            })
        });
    }
    let mut testee = TesteeDriver::new(
        Start {
            command: "${SWP_REF}".into(),
            args: vec!["testee".into()],
            env: Default::default(),
            cwd: None,
        },
        root.clone(),
        Duration::from_secs(60),
        std::env::temp_dir().join("swp-bench-testee.log"),
    );
    for (name, plan) in [
        ("all", &all),
        ("without-large-vectors", &small),
        ("large-vectors", &large),
    ] {
        g.throughput(Throughput::Elements(plan.len() as u64));
        g.bench_function(format!("testee/{name}"), |b| {
            b.iter(|| {
                CodecMethod::new(&sut, Box::new(&mut testee))
                    .run(&cat, plan)
                    .unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
