//! Latency histogram of mcp-translate: a bounded loop that times each translation of a
//! typical tools/list result (10 tools, 2025-11-25 → 2024-11-05, and the same list from
//! 2026-07-28 to 2024-11-05) one by one and prints percentiles, so the P99 target (≤ 20 µs)
//! is read from a distribution, not a mean.
//! Inputs are cloned and outputs dropped outside the timed region.
//!
//! Run: `cargo bench -p mcp-translate --bench latency`
#![forbid(unsafe_code)]

mod common;

use mcp_translate::{translate, translate_bytes, Answering, Direction, Hop, Version};
use std::hint::black_box;
use std::time::{Duration, Instant};

const WARMUP: usize = 2_000;
const SAMPLES: usize = 100_000;

fn report(name: &str, mut ns: Vec<u64>) {
    if ns.is_empty() {
        return;
    }
    ns.sort_unstable();
    let p = |q: f64| ns[((ns.len() as f64 - 1.0) * q).round() as usize] as f64 / 1000.0;
    println!(
        "{name:<44} n={} p50={:.2}µs p90={:.2}µs p99={:.2}µs p99.9={:.2}µs max={:.2}µs",
        ns.len(),
        p(0.50),
        p(0.90),
        p(0.99),
        p(0.999),
        *ns.last().unwrap_or(&0) as f64 / 1000.0
    );
}

fn time<T, O>(name: &str, mut input: impl FnMut() -> T, mut f: impl FnMut(T) -> O) -> Vec<u64> {
    // Further arguments after `--bench` filter the scenarios by name.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
        return Vec::new();
    }
    for _ in 0..WARMUP {
        drop(black_box(f(input())));
    }
    let mut out = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let i = input();
        let t = Instant::now();
        let o = black_box(f(i));
        let d: Duration = t.elapsed();
        drop(o);
        out.push(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    }
    out
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run briefly.
    if !std::env::args().any(|a| a == "--bench") {
        println!("latency: run with `cargo bench -p mcp-translate --bench latency`");
        return;
    }
    let tools = common::tools_list(10);
    let bytes = serde_json::to_vec(&tools).unwrap();
    let lookup = Answering("tools/list");
    let down = Hop {
        from: Version::V2025_11_25,
        to: Version::V2024_11_05,
        direction: Direction::ServerToClient,
    };
    let same = Hop {
        to: Version::V2025_11_25,
        ..down
    };
    println!("tools/list, 10 tools: {} octets as JSON", bytes.len());
    let n = "downgrade value 2025-11-25 → 2024-11-05";
    report(
        n,
        time(
            n,
            || tools.clone(),
            |m| translate(m, &down, &lookup).unwrap(),
        ),
    );
    let n = "downgrade octets (parse+translate+serialise)";
    report(
        n,
        time(
            n,
            || (),
            |_| translate_bytes(&bytes, &down, &lookup).unwrap(),
        ),
    );
    let tools26 = translate(
        tools.clone(),
        &Hop {
            to: Version::V2026_07_28,
            ..same
        },
        &lookup,
    )
    .unwrap()
    .messages
    .remove(0);
    let down26 = Hop {
        from: Version::V2026_07_28,
        ..down
    };
    let n = "downgrade value 2026-07-28 → 2024-11-05";
    report(
        n,
        time(
            n,
            || tools26.clone(),
            |m| translate(m, &down26, &lookup).unwrap(),
        ),
    );
    let n = "upgrade value 2025-11-25 → 2026-07-28";
    let up26 = Hop {
        to: Version::V2026_07_28,
        ..same
    };
    report(
        n,
        time(
            n,
            || tools.clone(),
            |m| translate(m, &up26, &lookup).unwrap(),
        ),
    );
    let n = "same-version passthrough octets";
    report(
        n,
        time(
            n,
            || (),
            |_| translate_bytes(&bytes, &same, &lookup).unwrap(),
        ),
    );
}
