//! Extra memory of translation, counted by `stats_alloc`'s instrumented system allocator
//! (no unsafe code of ours): every octet allocated while translating is summed, which bounds
//! the peak of extra live memory from above. Target: downgrading a tools/call result
//! carrying 1 MiB of content allocates at most 1.5× the message size.
//!
//! Run: `cargo bench -p mcp-translate --bench memory`
#![forbid(unsafe_code)]

mod common;

use mcp_translate::{translate, translate_bytes, Answering, Direction, Hop, Version};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::hint::black_box;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Octets allocated (fresh allocations plus realloc growth) while `f` runs.
fn allocated<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let r = Region::new(GLOBAL);
    let out = f();
    let s = r.change();
    let grown = usize::try_from(s.bytes_reallocated.max(0)).unwrap_or(0);
    (out, s.bytes_allocated + grown)
}

fn main() {
    let msg = common::call_result(1 << 20);
    let size = serde_json::to_vec(&msg).map(|b| b.len()).unwrap_or(0);
    let hop = Hop {
        from: Version::V2025_06_18,
        to: Version::V2024_11_05,
        direction: Direction::ServerToClient,
    };
    let lookup = Answering("tools/call");
    let input = msg.clone();
    let (out, extra) = allocated(|| translate(input, &hop, &lookup).unwrap());
    black_box(&out);
    let ratio = extra as f64 / size as f64;
    println!(
        "tools/call result of {size} octets, value API, 2025-06-18 → 2024-11-05: {extra} octets allocated while translating ({ratio:.4}× the message){}",
        if ratio <= 1.5 { "" } else { "  ABOVE the 1.5× target" }
    );
    let bytes = serde_json::to_vec(&msg).unwrap();
    let (out, all) = allocated(|| translate_bytes(&bytes, &hop, &lookup).unwrap());
    black_box(&out);
    println!(
        "same, octets API (parse + translate + serialise): {all} octets allocated ({:.4}× the message; the parsed value and the serialised output are each about 1×)",
        all as f64 / size as f64
    );
    let same = Hop {
        to: Version::V2025_06_18,
        ..hop
    };
    let (out, pass) = allocated(|| translate_bytes(&bytes, &same, &lookup).unwrap());
    black_box(&out);
    println!("same-version passthrough of the octets: {pass} octets allocated");
    let up = Hop {
        to: Version::V2026_07_28,
        ..hop
    };
    let msg26 = translate(msg.clone(), &up, &lookup)
        .unwrap()
        .messages
        .remove(0);
    let size26 = serde_json::to_vec(&msg26).map(|b| b.len()).unwrap_or(0);
    let down26 = Hop {
        from: Version::V2026_07_28,
        ..hop
    };
    let (out, extra26) = allocated(|| translate(msg26, &down26, &lookup).unwrap());
    black_box(&out);
    let ratio26 = extra26 as f64 / size26 as f64;
    println!(
        "the same result from 2026-07-28, value API, → 2024-11-05: {extra26} octets allocated ({ratio26:.4}× the message){}",
        if ratio26 <= 1.5 { "" } else { "  ABOVE the 1.5× target" }
    );
    if ratio > 1.5 || ratio26 > 1.5 {
        std::process::exit(1);
    }
}
