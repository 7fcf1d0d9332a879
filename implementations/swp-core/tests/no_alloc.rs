//! Decoding a frame already held in `bytes::Bytes` performs zero heap allocations, on all
//! three paths: `frame::take_frame` + `e1::decode` or `e1::decode_owned` +
//! `validate::validate`, and `frame::split` + `e1::decode_ref` + `validate::validate_ref`
//! on the borrowed octets; each includes iterating the extensions.
//!
//! Counted with `stats_alloc`'s instrumented system allocator, so this file needs no unsafe
//! code. The counter is process-wide, so this file runs without libtest (`harness = false`):
//! libtest's own threads (output capture, progress) allocated while it measured and made the
//! count flaky on a busy machine; here the main thread is the only one.
#![forbid(unsafe_code)]

use bytes::{Bytes, BytesMut};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::hint::black_box;
use swp_core::frame::{Split, PREFIX_LEN};
use swp_core::{e1, frame, validate, Envelope, Extensions, Limits, Policy};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Allocations (fresh or by reallocation) that `f` performs.
fn allocations_in(f: impl FnOnce()) -> usize {
    let region = Region::new(GLOBAL);
    f();
    let s = region.change();
    s.allocations + s.reallocations
}

/// Which decoding path [`decode_all`] takes.
#[derive(Debug, Clone, Copy)]
enum Path {
    /// `take_frame` + `e1::decode` + `validate`.
    Decode,
    /// `take_frame` + `e1::decode_owned` + `validate`.
    Owned,
    /// `split` + `e1::decode_ref` + `validate_ref`: no `Bytes` is created or cloned.
    Ref,
}

const PATHS: [Path; 3] = [Path::Decode, Path::Owned, Path::Ref];

/// Decodes and validates every frame in `stream` along `path`; returns a checksum (the same
/// for every path) so nothing is optimised away.
fn decode_all(stream: &Bytes, limits: &Limits, policy: &Policy, now_ms: u64, path: Path) -> u64 {
    let mut sum = 0u64;
    if let Path::Ref = path {
        let mut rest: &[u8] = stream;
        while let Split::Frame { body_len } = frame::split(rest, limits).expect("valid framing") {
            let (frame, next) = rest.split_at(PREFIX_LEN + body_len);
            let env = e1::decode_ref(&frame[PREFIX_LEN..], limits).expect("valid body");
            let v = validate::validate_ref(&env, policy, now_ms).expect("valid envelope");
            sum = sum
                .wrapping_add(env.profile_id)
                .wrapping_add(env.payload.len() as u64)
                .wrapping_add(v.unknown_flags);
            for ext in env.extensions.iter() {
                sum = sum.wrapping_add(ext.ext_type ^ ext.value.len() as u64);
            }
            rest = next;
        }
        return sum;
    }
    let mut rest = stream.clone();
    while let Some((body, next)) = frame::take_frame(&rest, limits).expect("valid framing") {
        let env = match path {
            Path::Owned => e1::decode_owned(body, limits),
            _ => e1::decode(&body, limits),
        }
        .expect("valid body");
        let v = validate::validate(&env, policy, now_ms).expect("valid envelope");
        sum = sum
            .wrapping_add(env.profile_id)
            .wrapping_add(env.payload.len() as u64)
            .wrapping_add(v.unknown_flags);
        for ext in env.extensions.iter() {
            sum = sum.wrapping_add(ext.ext_type ^ ext.value.len() as u64);
        }
        rest = next;
    }
    sum
}

fn envelope(payload_len: usize, ext: Extensions) -> Envelope {
    let mut payload = br#"{"jsonrpc":"2.0","id":"a1","method":"tools/call","params":{}}"#.to_vec();
    payload.resize(payload_len, b' ');
    Envelope {
        version: 1,
        profile_id: 1,
        msg_type: 1,
        flags: 0b100,
        ts_unix_ms: 1_700_000_000_000,
        msg_id: Bytes::from_static(b"0123456789abcdef"),
        extensions: ext,
        payload: Bytes::from(payload),
    }
}

fn main() {
    decoding_a_frame_held_in_bytes_allocates_nothing();
    println!("no_alloc: decoding a frame held in bytes allocates nothing: ok");
}

fn decoding_a_frame_held_in_bytes_allocates_nothing() {
    let limits = Limits::default();
    let policy = Policy {
        timestamp_freshness: true,
        ..Policy::default()
    };
    let now = 1_700_000_000_500;
    let exts = Extensions::from_entries([(3, &b"reserved"[..]), (16, &b"profile"[..])]);
    let frames = [
        envelope(200, Extensions::empty()),
        envelope(200, exts.clone()),
        envelope(64 * 1024, exts),
    ];
    let mut stream = Vec::new();
    for env in &frames {
        stream.extend_from_slice(&e1::frame_bytes(env).unwrap());
    }
    let expected: u64 = frames
        .iter()
        .map(|e| {
            let one = e1::frame_bytes(e).unwrap();
            decode_all(&one, &limits, &policy, now, Path::Decode)
        })
        .fold(0, u64::wrapping_add);
    for path in PATHS {
        let stream = Bytes::from(stream.clone());
        assert_eq!(
            decode_all(&stream, &limits, &policy, now, path),
            expected,
            "{path:?}"
        );
    }

    // 0. The borrowed path never creates a `Bytes` slice, so it does not even trigger the
    //    one-off promotion of a Vec-backed buffer described in 1.
    let fresh = Bytes::from(stream.clone());
    let n = allocations_in(|| {
        black_box(decode_all(
            black_box(&fresh),
            &limits,
            &policy,
            now,
            Path::Ref,
        ));
    });
    assert_eq!(n, 0, "decode_ref on a fresh Vec-backed Bytes");

    // 1. Frames in a Bytes that owns a Vec (e1::frame_bytes, Bytes::from(Vec)). The bytes
    //    crate promotes such a buffer to a shared one on its first slice: one allocation,
    //    once per buffer, not per frame.
    let held = Bytes::from(stream.clone());
    let first = allocations_in(|| {
        black_box(decode_all(
            black_box(&held),
            &limits,
            &policy,
            now,
            Path::Decode,
        ));
    });
    assert_eq!(
        first, 1,
        "first decode of a Vec-backed Bytes: the one promotion"
    );
    let mut sum = 0;
    let n = allocations_in(|| {
        for i in 0..1_000 {
            sum = black_box(decode_all(
                black_box(&held),
                &limits,
                &policy,
                now,
                PATHS[i % 3],
            ));
        }
    });
    assert_eq!(sum, expected, "the decode really ran");
    assert_eq!(
        n, 0,
        "1000 decodes (all three paths) of 3 frames from a shared Bytes"
    );

    // 2. Frames as received from a socket buffer: BytesMut, frozen.
    let received = BytesMut::from(&stream[..]).freeze();
    let _warm = decode_all(&received, &limits, &policy, now, Path::Decode);
    let n = allocations_in(|| {
        for i in 0..1_000 {
            sum = black_box(decode_all(
                black_box(&received),
                &limits,
                &policy,
                now,
                PATHS[i % 3],
            ));
        }
    });
    assert_eq!(sum, expected);
    assert_eq!(
        n, 0,
        "1000 decodes (all three paths) of 3 frames from a frozen BytesMut"
    );

    // 3. A static buffer: zero from the very first decode.
    let leaked: &'static [u8] = Box::leak(stream.into_boxed_slice());
    let fixed = Bytes::from_static(leaked);
    let n = allocations_in(|| {
        sum = 0;
        for path in PATHS {
            sum = sum.wrapping_add(black_box(decode_all(
                black_box(&fixed),
                &limits,
                &policy,
                now,
                path,
            )));
        }
    });
    assert_eq!(sum, expected.wrapping_mul(3));
    assert_eq!(n, 0, "first decodes (all three paths) of a static Bytes");

    // The counter does see allocations (the check above is not vacuous).
    let n = allocations_in(|| {
        black_box(e1::frame_bytes(&frames[0]).unwrap());
    });
    assert_eq!(n, 1, "encoding into a fresh buffer allocates exactly once");
}
