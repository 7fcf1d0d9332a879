//! Property tests: the E1 encoder and decoder are inverse on every envelope within limits,
//! and arbitrary octets in arbitrary chunkings never panic any entry point and only ever
//! produce a frame, a "need more", or a typed reject carrying a canonical code; and the
//! borrowed decoder (`e1::decode_ref`) agrees exactly with the owned one on every body.
#![forbid(unsafe_code)]

use bytes::{Bytes, BytesMut};
use proptest::prelude::*;
use swp_core::codec::{CodecError, SwpCodec};
use swp_core::e1;
use swp_core::frame::{self, FrameDecoder};
use swp_core::validate;
use swp_core::{
    CoreError, Envelope, ErrorCode, Event, Extensions, Limits, Policy, RateLimit, Receiver,
};
use tokio_util::codec::Decoder;

/// Limits small enough that random inputs hit every bound.
fn small_limits() -> Limits {
    let l = Limits {
        min_msg_id_bytes: 2,
        max_msg_id_bytes: 24,
        max_ext_bytes: 48,
        ..Limits::with_max_frame(512)
    };
    l.check().expect("coherent");
    l
}

/// A uvarint value weighted towards the encoding boundaries.
fn any_uvarint() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..=127,
        128u64..=16_383,
        any::<u64>(),
        (0u32..64).prop_map(|s| 1u64 << s),
        (1u32..64).prop_map(|s| (1u64 << s) - 1),
        Just(u64::MAX),
    ]
}

fn any_extensions(max_entries: usize, max_value: usize) -> impl Strategy<Value = Extensions> {
    prop::collection::vec(
        (
            any_uvarint(),
            prop::collection::vec(any::<u8>(), 0..=max_value),
        ),
        0..=max_entries,
    )
    .prop_map(|entries| Extensions::from_entries(entries.iter().map(|(t, v)| (*t, &v[..]))))
}

/// Envelopes within `limits` (the extension block may exceed them; filtered below).
fn any_envelope(limits: Limits) -> impl Strategy<Value = Envelope> {
    (
        any_uvarint(),
        any_uvarint(),
        any_uvarint(),
        any_uvarint(),
        prop::collection::vec(
            any::<u8>(),
            limits.min_msg_id_bytes..=limits.max_msg_id_bytes,
        ),
        any_extensions(4, 12),
        prop::collection::vec(any::<u8>(), 0..=limits.max_payload_bytes.min(300)),
    )
        .prop_filter("extensions within MAX_EXT_BYTES", move |t| {
            t.5.len() <= limits.max_ext_bytes
        })
        .prop_map(
            |(profile_id, msg_type, flags, ts_unix_ms, msg_id, extensions, payload)| Envelope {
                version: 1,
                profile_id,
                msg_type,
                flags,
                ts_unix_ms,
                msg_id: Bytes::from(msg_id),
                extensions,
                payload: Bytes::from(payload),
            },
        )
}

/// Splits `data` into consecutive chunks whose lengths cycle through `sizes`.
fn chunks<'a>(data: &'a [u8], sizes: &'a [usize]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut pos = 0;
    let mut i = 0;
    std::iter::from_fn(move || {
        if pos >= data.len() {
            return None;
        }
        let n = sizes[i % sizes.len()].max(1).min(data.len() - pos);
        i += 1;
        let c = &data[pos..pos + n];
        pos += n;
        Some(c)
    })
}

fn canonical(e: &CoreError) {
    assert!(ErrorCode::ALL.contains(&e.code()), "{e:?}");
}

/// Random octets that often start like a real frame: a plausible prefix and version.
fn stream_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..600),
        (
            prop::collection::vec(any_envelope(small_limits()), 1..4),
            prop::collection::vec((any::<usize>(), any::<u8>()), 0..4),
        )
            .prop_map(|(envs, flips)| {
                // Valid frames with a few octets overwritten.
                let mut out: Vec<u8> = envs
                    .iter()
                    .flat_map(|e| e1::frame_bytes(e).unwrap().to_vec())
                    .collect();
                for (at, v) in flips {
                    let n = out.len();
                    out[at % n] = v;
                }
                out
            }),
    ]
}

/// Bodies that are random (with or without a valid version), or valid (under the small limits) with a few octets overwritten
/// and possibly cut or extended, so both accepts and every kind of reject are common.
fn body_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..400),
        // Past the version check, so the later fields see random octets too.
        prop::collection::vec(any::<u8>(), 0..400).prop_map(|mut b| {
            b.insert(0, 1);
            b
        }),
        (
            any_envelope(small_limits()),
            prop::collection::vec((any::<usize>(), any::<u8>()), 0..3),
            prop_oneof![Just(0isize), -3isize..=3],
        )
            .prop_map(|(env, flips, resize)| {
                let mut out = Vec::new();
                e1::encode_body(&env, &mut out);
                for (at, v) in flips {
                    let n = out.len();
                    out[at % n] = v;
                }
                let len = out.len().saturating_add_signed(resize);
                out.resize(len, 0);
                out
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn decode_ref_agrees_exactly_with_decode(
        body in body_bytes(),
        now in prop_oneof![Just(0u64), any::<u64>()],
        freshness in any::<bool>(),
    ) {
        let policy = Policy {
            timestamp_freshness: freshness,
            max_clock_skew_ms: 1_000,
            known_flags: 0b101,
            ..Policy::default()
        };
        for limits in [Limits::default(), small_limits()] {
            let held = Bytes::from(body.clone());
            let owned = e1::decode(&held, &limits);
            let borrowed = e1::decode_ref(&held, &limits);
            // Same fields or the same error, compared both ways round.
            prop_assert_eq!(&borrowed, &owned.as_ref().map(Envelope::view).map_err(Clone::clone));
            prop_assert_eq!(&borrowed.clone().map(|v| v.to_owned_in(&held)), &owned);
            if let (Ok(v), Ok(e)) = (&borrowed, &owned) {
                let a: Vec<_> = v.extensions.iter().map(|x| (x.ext_type, x.value)).collect();
                let b: Vec<_> = e.extensions.iter().map(|x| (x.ext_type, x.value)).collect();
                prop_assert_eq!(a.len(), b.len());
                for ((ta, va), (tb, vb)) in a.iter().zip(&b) {
                    prop_assert_eq!(ta, tb);
                    prop_assert_eq!(*va, &vb[..]);
                }
                prop_assert_eq!(
                    validate::validate_ref(v, &policy, now),
                    validate::validate(e, &policy, now)
                );
            }
        }
    }

    #[test]
    fn round_trip_default_limits(env in any_envelope(Limits::default())) {
        let limits = Limits::default();
        let frame = e1::frame_bytes(&env).unwrap();
        let (body, rest) = frame::take_frame(&frame, &limits).unwrap().unwrap();
        prop_assert!(rest.is_empty());
        prop_assert_eq!(body.len(), env.encoded_len());
        let back = e1::decode(&body, &limits).unwrap();
        prop_assert_eq!(&back, &env);
        prop_assert_eq!(&e1::decode_owned(body, &limits).unwrap(), &env);
        prop_assert_eq!(
            back.extensions.iter().count(),
            env.extensions.iter().count()
        );
        // encode(decode(b)) == b
        prop_assert_eq!(e1::frame_bytes(&back).unwrap(), frame);
    }

    #[test]
    fn round_trip_small_limits_through_every_entry_point(env in any_envelope(small_limits())) {
        let limits = small_limits();
        let frame = e1::frame_bytes(&env).unwrap();
        prop_assume!(frame.len() - 4 <= limits.max_frame_bytes as usize);

        let mut r = Receiver::new(limits, Policy::default());
        r.feed(&frame);
        match r.poll(0, |_| true) {
            Some(Event::Accepted { envelope, validated }) => {
                prop_assert_eq!(&envelope, &env);
                prop_assert_eq!(validated.unknown_flags, env.flags);
            }
            other => prop_assert!(false, "{:?}", other),
        }

        let mut c = SwpCodec::new(limits);
        let mut buf = BytesMut::from(&frame[..]);
        match c.decode_eof(&mut buf) {
            Ok(Some(Ok(e))) => prop_assert_eq!(&e, &env),
            other => prop_assert!(false, "{:?}", other),
        }
        let mut out = BytesMut::new();
        tokio_util::codec::Encoder::encode(&mut c, &env, &mut out).unwrap();
        prop_assert_eq!(&out[..], &frame[..]);
    }

    #[test]
    fn arbitrary_bodies_never_panic_e1_decode(body in prop::collection::vec(any::<u8>(), 0..400)) {
        for limits in [Limits::default(), small_limits()] {
            let decoded = e1::decode(&Bytes::from(body.clone()), &limits);
            prop_assert_eq!(&e1::decode_owned(Bytes::from(body.clone()), &limits), &decoded);
            match decoded {
                Ok(env) => {
                    // Whatever decodes re-encodes to a body that decodes the same; it is the
                    // input itself unless the input used non-minimal uvarints (longer).
                    let mut re = Vec::new();
                    e1::encode_body(&env, &mut re);
                    prop_assert!(re.len() <= body.len());
                    if re.len() == body.len() {
                        prop_assert_eq!(&re, &body);
                    }
                    prop_assert_eq!(e1::decode(&Bytes::from(re), &limits).unwrap(), env);
                }
                Err(e) => {
                    canonical(&e);
                    prop_assert!(!e.is_framing(), "{:?}", e);
                }
            }
        }
    }

    #[test]
    fn arbitrary_streams_in_arbitrary_chunks_never_panic(
        data in stream_bytes(),
        sizes in prop::collection::vec(1usize..64, 1..8),
        freshness in any::<bool>(),
    ) {
        let limits = small_limits();

        // FrameDecoder: frames, need-more, or one framing error that terminates it.
        let mut d = FrameDecoder::new(limits);
        let mut fed = 0usize;
        let mut taken = 0usize;
        let mut failed = None;
        for c in chunks(&data, &sizes) {
            d.feed(c);
            fed += c.len();
            loop {
                match d.next_body() {
                    Ok(Some(b)) => {
                        prop_assert!(failed.is_none());
                        prop_assert!(!b.is_empty() && b.len() <= limits.max_frame_bytes as usize);
                        taken += 4 + b.len();
                        if let Err(e) = e1::decode(&b, &limits) { canonical(&e); }
                    }
                    Ok(None) => {
                        prop_assert!(failed.is_none());
                        prop_assert_eq!(d.buffered(), fed - taken);
                        break;
                    }
                    Err(CoreError::Terminated) => {
                        prop_assert!(failed.is_some());
                        break;
                    }
                    Err(e) => {
                        prop_assert!(e.is_framing(), "{:?}", e);
                        canonical(&e);
                        prop_assert!(failed.is_none());
                        prop_assert!(d.is_terminated());
                        failed = Some(e);
                    }
                }
            }
        }
        match d.finish() {
            Ok(()) => {}
            Err(e) => {
                prop_assert!(failed.is_none());
                prop_assert!(matches!(
                    e,
                    CoreError::TruncatedPrefix { .. } | CoreError::TruncatedBody { .. }
                ), "{:?}", e);
            }
        }

        // The same octets in one piece give the same frames (chunking is invisible).
        let mut whole = FrameDecoder::new(limits);
        whole.feed(&data);
        let mut whole_taken = 0usize;
        while let Ok(Some(b)) = whole.next_body() {
            whole_taken += 4 + b.len();
        }
        prop_assert_eq!(whole_taken, taken);

        // Receiver with every policy switch on.
        let policy = Policy {
            timestamp_freshness: freshness,
            max_clock_skew_ms: 1_000,
            rate_limit: Some(RateLimit { frames: 2, window_ms: 10 }),
            ..Policy::default()
        };
        let mut r = Receiver::new(limits, policy);
        let mut now = 1_000_000u64;
        let mut terminated = false;
        for c in chunks(&data, &sizes) {
            r.feed(c);
            now += 3;
            while let Some(ev) = r.poll(now, |p| p % 2 == 1) {
                prop_assert!(!terminated, "no event after termination");
                match ev {
                    Event::Accepted { envelope, validated } => {
                        prop_assert_eq!(envelope.version, 1);
                        prop_assert_eq!(envelope.profile_id % 2, 1);
                        prop_assert_eq!(validated.unknown_flags, envelope.flags);
                    }
                    Event::Rejected { error, terminated: t, .. } => {
                        canonical(&error);
                        prop_assert_eq!(t, error.is_framing());
                        terminated |= t;
                    }
                }
            }
        }
        prop_assert_eq!(terminated, r.is_terminated());
        if let Some(Event::Rejected { error, terminated: t, .. }) = r.finish() {
            prop_assert!(t);
            canonical(&error);
        }

        // The tokio codec.
        let mut codec = SwpCodec::new(limits);
        let mut buf = BytesMut::new();
        'outer: for c in chunks(&data, &sizes) {
            buf.extend_from_slice(c);
            loop {
                match codec.decode(&mut buf) {
                    Ok(Some(Ok(_))) => {}
                    Ok(Some(Err(e))) => canonical(&e),
                    Ok(None) => break,
                    Err(CodecError::Core(e)) => {
                        canonical(&e);
                        break 'outer;
                    }
                    Err(other) => prop_assert!(false, "{:?}", other),
                }
            }
        }
        loop {
            match codec.decode_eof(&mut buf) {
                Ok(Some(Ok(_))) => {}
                Ok(Some(Err(e))) => canonical(&e),
                Ok(None) => break,
                Err(CodecError::Core(e)) => {
                    canonical(&e);
                    break;
                }
                Err(other) => prop_assert!(false, "{:?}", other),
            }
        }
    }
}
