//! Arbitrary octets through every swp-core decoding entry point.
//!
//! The first input octet chooses how the rest is cut into chunks; the rest is fed to a
//! `Receiver` (small limits, a rate limit and timestamp freshness on), to the tokio
//! `SwpCodec`, and to `e1::decode` / `e1::decode_owned` as one frame body. It asserts that:
//! - nothing panics, and `e1::decode_owned` agrees with `e1::decode` on every input;
//! - every reject carries one of the canonical codes, and terminates the stream exactly
//!   when it is a framing error; nothing is produced after termination;
//! - every accepted envelope respects the limits, and round-trips: encoding it and decoding
//!   the result gives it back;
//! - whatever `e1::decode` accepts re-encodes to the input itself, or (when the input used
//!   non-minimal uvarints) to a shorter body that decodes to the same envelope.
#![no_main]
#![forbid(unsafe_code)]

use bytes::{Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;
use swp_core::codec::{CodecError, SwpCodec};
use swp_core::{
    e1, frame, CoreError, Envelope, ErrorCode, Event, Limits, Policy, RateLimit, Receiver,
};
use tokio_util::codec::Decoder;

fn limits() -> Limits {
    Limits {
        min_msg_id_bytes: 2,
        max_msg_id_bytes: 24,
        max_ext_bytes: 64,
        ..Limits::with_max_frame(512)
    }
}

fn policy() -> Policy {
    Policy {
        timestamp_freshness: true,
        max_clock_skew_ms: 1_000,
        known_flags: 0b1,
        rate_limit: Some(RateLimit {
            frames: 4,
            window_ms: 16,
        }),
        ..Policy::default()
    }
}

fn canonical(e: &CoreError) {
    assert!(ErrorCode::ALL.contains(&e.code()), "{e:?}");
}

fn within_limits(env: &Envelope, l: &Limits) {
    assert_eq!(env.version, 1);
    assert!((l.min_msg_id_bytes.max(1)..=l.max_msg_id_bytes).contains(&env.msg_id.len()));
    assert!(env.extensions.len() <= l.max_ext_bytes);
    assert!(env.payload.len() <= l.max_payload_bytes);
}

/// encode → frame → decode gives the envelope back, and encode(decode(b)) == b.
fn round_trip(env: &Envelope, l: &Limits) {
    let framed = e1::frame_bytes(env).expect("fits a u32 prefix");
    let (body, rest) = frame::take_frame(&framed, l)
        .expect("framing")
        .expect("whole frame");
    assert!(rest.is_empty());
    let back = e1::decode(&body, l).expect("re-encoded envelope decodes");
    assert_eq!(&back, env);
    assert_eq!(e1::frame_bytes(&back).expect("fits"), framed);
    // Extension iteration is total on a validated block.
    let _ = back.extensions.iter().count();
}

/// Chunk lengths cycling through a small pattern chosen by `ctl`.
fn chunk_sizes(ctl: u8) -> [usize; 4] {
    let c = usize::from(ctl);
    [1 + c % 7, 1 + (c / 7) % 13, 1, 1 + c % 61]
}

fn chunks<'a>(data: &'a [u8], sizes: [usize; 4]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut pos = 0;
    let mut i = 0;
    std::iter::from_fn(move || {
        if pos >= data.len() {
            return None;
        }
        let n = sizes[i % sizes.len()].min(data.len() - pos);
        i += 1;
        let c = &data[pos..pos + n];
        pos += n;
        Some(c)
    })
}

fn receiver(data: &[u8], sizes: [usize; 4], l: Limits) {
    let mut r = Receiver::new(l, policy());
    let mut now = 500u64;
    let mut terminated = false;
    for c in chunks(data, sizes) {
        r.feed(c);
        now += 5;
        while let Some(ev) = r.poll(now, |p| p % 3 != 0) {
            assert!(!terminated, "event after termination");
            match ev {
                Event::Accepted {
                    envelope,
                    validated,
                } => {
                    within_limits(&envelope, &l);
                    assert!(envelope.profile_id % 3 != 0);
                    assert!(envelope.ts_unix_ms != 0);
                    assert!(envelope.ts_unix_ms.abs_diff(now) <= 1_000);
                    assert_eq!(validated.unknown_flags, envelope.flags & !0b1);
                    round_trip(&envelope, &l);
                }
                Event::Rejected {
                    error,
                    msg_id,
                    terminated: t,
                } => {
                    canonical(&error);
                    assert_eq!(t, error.is_framing());
                    if let Some(id) = msg_id {
                        assert!(id.len() <= l.max_msg_id_bytes);
                    }
                    terminated |= t;
                }
            }
        }
    }
    assert_eq!(terminated, r.is_terminated());
    if let Some(ev) = r.finish() {
        match ev {
            Event::Rejected {
                error,
                terminated: true,
                ..
            } => {
                assert!(!terminated);
                assert!(matches!(
                    error,
                    CoreError::TruncatedPrefix { .. } | CoreError::TruncatedBody { .. }
                ));
            }
            other => panic!("finish produced {other:?}"),
        }
    }
}

fn codec(data: &[u8], sizes: [usize; 4], l: Limits) {
    let mut c = SwpCodec::new(l);
    let mut buf = BytesMut::new();
    let check = |item: Result<Envelope, CoreError>| match item {
        Ok(env) => {
            within_limits(&env, &l);
            round_trip(&env, &l);
        }
        Err(e) => {
            canonical(&e);
            assert!(!e.is_framing());
        }
    };
    for chunk in chunks(data, sizes) {
        buf.extend_from_slice(chunk);
        loop {
            match c.decode(&mut buf) {
                Ok(Some(item)) => check(item),
                Ok(None) => break,
                Err(CodecError::Core(e)) => {
                    canonical(&e);
                    assert!(e.is_framing());
                    return;
                }
                Err(other) => panic!("{other:?}"),
            }
        }
    }
    loop {
        match c.decode_eof(&mut buf) {
            Ok(Some(item)) => check(item),
            Ok(None) => return,
            Err(CodecError::Core(e)) => {
                canonical(&e);
                assert!(e.is_framing());
                return;
            }
            Err(other) => panic!("{other:?}"),
        }
    }
}

fn body(data: &[u8], l: Limits) {
    let decoded = e1::decode(&Bytes::copy_from_slice(data), &l);
    assert_eq!(e1::decode_owned(Bytes::copy_from_slice(data), &l), decoded);
    match decoded {
        Ok(env) => {
            within_limits(&env, &l);
            let mut re = Vec::new();
            e1::encode_body(&env, &mut re);
            assert!(re.len() <= data.len());
            if re.len() == data.len() {
                assert_eq!(re, data);
            }
            assert_eq!(e1::decode(&Bytes::from(re), &l), Ok(env.clone()));
            if data.len() <= l.max_frame_bytes as usize {
                round_trip(&env, &l);
            }
        }
        Err(e) => {
            canonical(&e);
            assert!(!e.is_framing());
        }
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&ctl, data)) = input.split_first() else {
        return;
    };
    let sizes = chunk_sizes(ctl);
    let l = limits();
    receiver(data, sizes, l);
    codec(data, sizes, l);
    body(data, l);
    body(data, Limits::default());
});
