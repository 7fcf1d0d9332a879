//! Criterion benchmarks of mcp-translate: same-version passthrough of octets, downgrading a
//! typical tools/list result (10 tools, 2025-11-25 → 2024-11-05) as a value and as octets
//! (parse + translate + serialise), the reverse upgrade, the same list across the stateless
//! boundary (2025-11-25 → 2026-07-28 and 2026-07-28 → 2024-11-05), and downgrading a
//! tools/call result carrying 1 MiB of text. Inputs are cloned outside the timed region
//! (`iter_batched`).
//!
//! Run: `cargo bench -p mcp-translate --bench translate -- --warm-up-time 1 --measurement-time 3`
#![forbid(unsafe_code)]

mod common;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mcp_translate::{translate, translate_bytes, Answering, Direction, Hop, Version};
use std::hint::black_box;

fn hop(from: Version, to: Version) -> Hop {
    Hop {
        from,
        to,
        direction: Direction::ServerToClient,
    }
}

fn benches(c: &mut Criterion) {
    let tools = common::tools_list(10);
    let tools_bytes = serde_json::to_vec(&tools).unwrap();
    let down = hop(Version::V2025_11_25, Version::V2024_11_05);
    let same = hop(Version::V2025_11_25, Version::V2025_11_25);
    let lookup = Answering("tools/list");

    let mut g = c.benchmark_group("tools_list_10");
    g.throughput(Throughput::Bytes(tools_bytes.len() as u64));
    g.bench_function("passthrough_bytes_same_version", |b| {
        b.iter(|| black_box(translate_bytes(black_box(&tools_bytes), &same, &lookup).unwrap()))
    });
    g.bench_function("downgrade_value_11_to_2024", |b| {
        b.iter_batched(
            || tools.clone(),
            |m| black_box(translate(m, &down, &lookup).unwrap()),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("downgrade_bytes_11_to_2024", |b| {
        b.iter(|| black_box(translate_bytes(black_box(&tools_bytes), &down, &lookup).unwrap()))
    });
    let old = translate(tools.clone(), &down, &lookup)
        .unwrap()
        .messages
        .remove(0);
    let up = hop(Version::V2024_11_05, Version::V2025_11_25);
    g.bench_function("upgrade_value_2024_to_11", |b| {
        b.iter_batched(
            || old.clone(),
            |m| black_box(translate(m, &up, &lookup).unwrap()),
            BatchSize::SmallInput,
        )
    });
    g.finish();

    let up26 = hop(Version::V2025_11_25, Version::V2026_07_28);
    let tools26 = translate(tools.clone(), &up26, &lookup)
        .unwrap()
        .messages
        .remove(0);
    let tools26_bytes = serde_json::to_vec(&tools26).unwrap();
    let down26 = hop(Version::V2026_07_28, Version::V2024_11_05);
    let same26 = hop(Version::V2026_07_28, Version::V2026_07_28);
    let mut g = c.benchmark_group("tools_list_10_2026");
    g.throughput(Throughput::Bytes(tools26_bytes.len() as u64));
    g.bench_function("upgrade_value_11_to_2026", |b| {
        b.iter_batched(
            || tools.clone(),
            |m| black_box(translate(m, &up26, &lookup).unwrap()),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("downgrade_value_2026_to_2024", |b| {
        b.iter_batched(
            || tools26.clone(),
            |m| black_box(translate(m, &down26, &lookup).unwrap()),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("downgrade_bytes_2026_to_2024", |b| {
        b.iter(|| black_box(translate_bytes(black_box(&tools26_bytes), &down26, &lookup).unwrap()))
    });
    g.bench_function("passthrough_bytes_same_version", |b| {
        b.iter(|| black_box(translate_bytes(black_box(&tools26_bytes), &same26, &lookup).unwrap()))
    });
    g.finish();

    let big = common::call_result(1 << 20);
    let big_bytes = serde_json::to_vec(&big).unwrap();
    let call = Answering("tools/call");
    let down06 = hop(Version::V2025_06_18, Version::V2024_11_05);
    let mut g = c.benchmark_group("call_result_1mib");
    g.throughput(Throughput::Bytes(big_bytes.len() as u64));
    g.sample_size(20);
    g.bench_function("downgrade_value_06_to_2024", |b| {
        b.iter_batched(
            || big.clone(),
            |m| black_box(translate(m, &down06, &call).unwrap()),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("passthrough_bytes_same_version", |b| {
        let same06 = hop(Version::V2025_06_18, Version::V2025_06_18);
        b.iter(|| black_box(translate_bytes(black_box(&big_bytes), &same06, &call).unwrap()))
    });
    let big26 = translate(
        big.clone(),
        &hop(Version::V2025_06_18, Version::V2026_07_28),
        &call,
    )
    .unwrap()
    .messages
    .remove(0);
    let down26 = hop(Version::V2026_07_28, Version::V2024_11_05);
    g.bench_function("downgrade_value_2026_to_2024", |b| {
        b.iter_batched(
            || big26.clone(),
            |m| black_box(translate(m, &down26, &call).unwrap()),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(group, benches);
criterion_main!(group);
