//! Criterion benchmarks of the swp-core codec: decode, decode + validate and encode of a
//! typical frame (16-octet msg_id, 200-octet JSON-RPC request payload) and of a frame with
//! a 64 KiB payload, plus the whole receive pipeline (`Receiver::feed` + `poll`).
//!
//! Decoding works on a frame already held in `Bytes` (`frame::take_frame` + `e1::decode`):
//! the decoded `msg_id`, extensions and payload are slices of that buffer, never copies.
//! Each routine uses its results in place (`black_box(&env)`) and drops them inside the
//! timed loop, so the reference-count releases are measured; `decode_validate_moved` shows
//! the extra cost of moving the results out with `expect()` (a memcpy of the Envelope).
//! The `decode_ref*` rows take the borrowed path instead: `frame::split` on the held
//! octets + `e1::decode_ref`, which creates no `Bytes` and touches no reference count.
//!
//! Run: `cargo bench -p swp-core --bench codec -- --warm-up-time 1 --measurement-time 3`
#![forbid(unsafe_code)]

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use swp_core::frame::{Split, PREFIX_LEN};
use swp_core::{e1, frame, validate, Envelope, Event, Extensions, Limits, Policy, Receiver};

/// Sender timestamp of the benchmark frames; the receiver clock is half a second later.
const TS: u64 = 1_700_000_000_000;
const NOW: u64 = TS + 500;

/// A JSON-RPC `tools/call` request, padded (inside the query string) to exactly `len` octets.
fn jsonrpc_request(len: usize) -> Vec<u8> {
    let head = r#"{"jsonrpc":"2.0","id":"4f1c2a9e-7b3d-4e8a-9c61-0d5e7f2b8a13","method":"tools/call","params":{"name":"search_docs","arguments":{"query":"frame length prefix"#;
    let tail = r#"","limit":10}}}"#;
    assert!(
        head.len() + tail.len() <= len,
        "payload too short for the request"
    );
    let mut out = head.as_bytes().to_vec();
    let words = b" big endian uvarint envelope";
    let mut i = 0;
    while out.len() + tail.len() < len {
        out.push(words[i % words.len()]);
        i += 1;
    }
    out.extend_from_slice(tail.as_bytes());
    assert_eq!(out.len(), len);
    out
}

fn envelope(payload: Vec<u8>) -> Envelope {
    Envelope {
        version: 1,
        profile_id: 1,
        msg_type: 1,
        flags: 0,
        ts_unix_ms: TS,
        msg_id: Bytes::from_static(
            b"\x01\x8f\x3a\x5c\x7e\x21\x44\x09\xb2\x6d\x10\xce\x93\x5a\x0f\x77",
        ),
        extensions: Extensions::empty(),
        payload: Bytes::from(payload),
    }
}

/// The policy a typical deployment runs: freshness on, no rate limit (not per-frame work).
fn policy() -> Policy {
    Policy {
        timestamp_freshness: true,
        ..Policy::default()
    }
}

fn bench_frame(c: &mut Criterion, name: &str, env: &Envelope) {
    let limits = Limits::default();
    let policy = policy();
    // A frame as it sits in a shared receive buffer; slicing it is a refcount increment.
    let held = e1::frame_bytes(env).expect("frame");
    let _promote = held.clone();
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Bytes(held.len() as u64));

    // Each routine matches on its results in place, as a receive loop does; the variant
    // `decode_validate_moved` moves them out with `expect()` instead, which copies the
    // 136-octet Envelope (and the take_frame tuple) once more.
    g.bench_function("decode", |b| {
        b.iter(|| {
            let framed = frame::take_frame(black_box(&held), &limits);
            let Ok(Some((body, _rest))) = &framed else {
                unreachable!("valid frame")
            };
            let env = e1::decode(body, &limits);
            assert!(env.is_ok());
            black_box(&env);
        })
    });

    g.bench_function("decode_validate", |b| {
        b.iter(|| {
            let framed = frame::take_frame(black_box(&held), &limits);
            let Ok(Some((body, _rest))) = &framed else {
                unreachable!("valid frame")
            };
            let env = e1::decode(body, &limits);
            let Ok(env) = &env else {
                unreachable!("valid body")
            };
            let v = validate::validate(env, &policy, black_box(NOW));
            assert!(v.is_ok());
            black_box((env, &v));
        })
    });

    g.bench_function("decode_validate_moved", |b| {
        b.iter(|| {
            let (body, _rest) = frame::take_frame(black_box(&held), &limits)
                .expect("framing")
                .expect("whole");
            let env = e1::decode(&body, &limits).expect("decode");
            let v = validate::validate(&env, &policy, black_box(NOW)).expect("valid");
            black_box((&env, v));
        })
    });

    // The same with `e1::decode_owned`, which the Receiver and the tokio codec use: the
    // body taken from the buffer is handed over, and the payload reuses its reference.
    g.bench_function("decode_owned", |b| {
        b.iter(|| {
            let framed = frame::take_frame(black_box(&held), &limits);
            let Ok(Some((body, _rest))) = framed else {
                unreachable!("valid frame")
            };
            let env = e1::decode_owned(body, &limits);
            assert!(env.is_ok());
            black_box(&env);
        })
    });

    g.bench_function("decode_owned_validate", |b| {
        b.iter(|| {
            let framed = frame::take_frame(black_box(&held), &limits);
            let Ok(Some((body, _rest))) = framed else {
                unreachable!("valid frame")
            };
            let env = e1::decode_owned(body, &limits);
            let Ok(env) = &env else {
                unreachable!("valid body")
            };
            let v = validate::validate(env, &policy, black_box(NOW));
            assert!(v.is_ok());
            black_box((env, &v));
        })
    });

    // The borrowed path: the same frame, split and decoded as plain octets; the view's
    // fields are slices of `held`, so no reference count changes.
    g.bench_function("decode_ref", |b| {
        b.iter(|| {
            let buf: &[u8] = black_box(&held);
            let Ok(Split::Frame { body_len }) = frame::split(buf, &limits) else {
                unreachable!("valid frame")
            };
            let body = &buf[PREFIX_LEN..PREFIX_LEN + body_len];
            let env = e1::decode_ref(body, &limits);
            assert!(env.is_ok());
            black_box(&env);
        })
    });

    g.bench_function("decode_ref_validate", |b| {
        b.iter(|| {
            let buf: &[u8] = black_box(&held);
            let Ok(Split::Frame { body_len }) = frame::split(buf, &limits) else {
                unreachable!("valid frame")
            };
            let body = &buf[PREFIX_LEN..PREFIX_LEN + body_len];
            let env = e1::decode_ref(body, &limits);
            let Ok(env) = &env else {
                unreachable!("valid body")
            };
            let v = validate::validate_ref(env, &policy, black_box(NOW));
            assert!(v.is_ok());
            black_box((env, &v));
        })
    });

    // Encoding into a reused buffer: the codec's own cost.
    let mut out = Vec::with_capacity(held.len());
    g.bench_function("encode", |b| {
        b.iter(|| {
            out.clear();
            e1::encode_frame(black_box(env), &mut out).expect("encode");
            black_box(out.len())
        })
    });

    // Encoding into a fresh, exactly sized buffer (one allocation).
    g.bench_function("encode_alloc", |b| {
        b.iter(|| e1::frame_bytes(black_box(env)).expect("encode"))
    });

    // The whole receive pipeline from octets: copy into the stream buffer, frame, decode,
    // rate limit (none), validate, profile lookup.
    let mut rx = Receiver::new(limits, policy);
    rx.feed(&held);
    assert!(
        matches!(rx.poll(NOW, |p| p == 1), Some(Event::Accepted { ref envelope, .. }) if envelope == env),
        "the benchmark frame is accepted"
    );
    g.bench_function("receiver_feed_poll", |b| {
        b.iter(|| {
            rx.feed(black_box(&held));
            let ev = rx.poll(black_box(NOW), |p| p == 1).expect("an event");
            black_box(&ev);
        })
    });
    g.finish();
}

fn codec(c: &mut Criterion) {
    let typical = envelope(jsonrpc_request(200));
    bench_frame(c, "typical_200B", &typical);
    let large = envelope(jsonrpc_request(64 * 1024));
    bench_frame(c, "payload_64KiB", &large);
}

criterion_group!(benches, codec);
criterion_main!(benches);
