//! Every reject and every boundary of SWP Core framing and E1 decoding, each checked for the
//! exact `CoreError` variant and its canonical `ERR_*` code, through every entry point that
//! can see it: `e1::decode`, `e1::decode_owned`, `e1::decode_ref`, `frame::take_frame`,
//! `FrameDecoder`, `Receiver` and the tokio `SwpCodec` (`decode` and `decode_eof`).
#![forbid(unsafe_code)]

use bytes::{Bytes, BytesMut};
use swp_core::codec::{CodecError, SwpCodec};
use swp_core::e1;
use swp_core::envelope::FIRST_PROFILE_EXT_TYPE;
use swp_core::frame::{self, FrameDecoder, Split, PREFIX_LEN};
use swp_core::uvarint::{self, UvarintError};
use swp_core::{
    CoreError, Envelope, ErrorCode, Event, Extension, Extensions, Field, Limits, Policy, RateLimit,
    Receiver, Validated,
};
use tokio_util::codec::Decoder;

/// A realistic sender timestamp (2023-11-14).
const TS: u64 = 1_700_000_000_000;

/// Ten octets whose value needs 65 bits.
const OVERFLOW_10: [u8; 10] = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
/// Eleven octets (value zero, but ten continuation bits).
const TOO_LONG_11: [u8; 11] = [
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
];
/// The canonical encoding of `u64::MAX`: exactly ten octets.
const U64_MAX_10: [u8; 10] = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];

// ---------------------------------------------------------------------------------------
// Building bodies and frames
// ---------------------------------------------------------------------------------------

fn uv(v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    uvarint::encode(v, &mut out);
    out
}

fn with_prefix(body: &[u8]) -> Vec<u8> {
    let n = u32::try_from(body.len()).expect("test bodies fit a u32");
    let mut out = n.to_be_bytes().to_vec();
    out.extend_from_slice(body);
    out
}

/// `count` distinct octets, so a wrong slice is never equal by accident.
fn filler(count: usize, seed: u8) -> Vec<u8> {
    (0..count)
        .map(|i| seed.wrapping_add((i % 251) as u8))
        .collect()
}

/// A raw E1 body kept field by field (each as its exact wire octets), so a test can replace or
/// corrupt any single field and know where every field starts.
#[derive(Debug, Clone)]
struct Raw {
    version: Vec<u8>,
    profile_id: Vec<u8>,
    msg_type: Vec<u8>,
    flags: Vec<u8>,
    ts: Vec<u8>,
    msg_id_len: Vec<u8>,
    msg_id: Vec<u8>,
    ext_len: Vec<u8>,
    ext: Vec<u8>,
    payload_len: Vec<u8>,
    payload: Vec<u8>,
}

/// Whether a wire segment is a uvarint (field value or length) or the octets of a `bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seg {
    Uvarint,
    Content,
}

impl Raw {
    /// Canonical encoding of version 1, profile 1, msg_type 2, no flags, [`TS`].
    fn new(msg_id: &[u8], ext: &[u8], payload: &[u8]) -> Raw {
        Raw {
            version: uv(1),
            profile_id: uv(1),
            msg_type: uv(2),
            flags: uv(0),
            ts: uv(TS),
            msg_id_len: uv(msg_id.len() as u64),
            msg_id: msg_id.to_vec(),
            ext_len: uv(ext.len() as u64),
            ext: ext.to_vec(),
            payload_len: uv(payload.len() as u64),
            payload: payload.to_vec(),
        }
    }

    /// A typical body: 16-octet msg_id, no extensions, a short payload.
    fn typical() -> Raw {
        Raw::new(&filler(16, 1), &[], b"{\"jsonrpc\":\"2.0\"}")
    }

    fn segments(&self) -> [(Field, Seg, &[u8]); 11] {
        [
            (Field::Version, Seg::Uvarint, &self.version),
            (Field::ProfileId, Seg::Uvarint, &self.profile_id),
            (Field::MsgType, Seg::Uvarint, &self.msg_type),
            (Field::Flags, Seg::Uvarint, &self.flags),
            (Field::TsUnixMs, Seg::Uvarint, &self.ts),
            (Field::MsgId, Seg::Uvarint, &self.msg_id_len),
            (Field::MsgId, Seg::Content, &self.msg_id),
            (Field::Extensions, Seg::Uvarint, &self.ext_len),
            (Field::Extensions, Seg::Content, &self.ext),
            (Field::Payload, Seg::Uvarint, &self.payload_len),
            (Field::Payload, Seg::Content, &self.payload),
        ]
    }

    fn body(&self) -> Vec<u8> {
        self.segments()
            .iter()
            .flat_map(|(_, _, b)| b.iter().copied())
            .collect()
    }

    /// The uvarint wire octets of `field` (the length prefix for `bytes` fields).
    fn uvarint_mut(&mut self, field: Field) -> &mut Vec<u8> {
        match field {
            Field::Version => &mut self.version,
            Field::ProfileId => &mut self.profile_id,
            Field::MsgType => &mut self.msg_type,
            Field::Flags => &mut self.flags,
            Field::TsUnixMs => &mut self.ts,
            Field::MsgId => &mut self.msg_id_len,
            Field::Extensions => &mut self.ext_len,
            Field::Payload => &mut self.payload_len,
            Field::ExtType | Field::ExtValue => unreachable!("not an envelope-level field"),
        }
    }
}

/// The envelope [`Raw::new`] describes when it is canonical.
fn envelope(msg_id: &[u8], ext: Extensions, payload: &[u8]) -> Envelope {
    Envelope {
        version: 1,
        profile_id: 1,
        msg_type: 2,
        flags: 0,
        ts_unix_ms: TS,
        msg_id: Bytes::copy_from_slice(msg_id),
        extensions: ext,
        payload: Bytes::copy_from_slice(payload),
    }
}

fn encode_body(env: &Envelope) -> Vec<u8> {
    let mut out = Vec::new();
    e1::encode_body(env, &mut out);
    out
}

/// Limits for a 256-octet frame: msg_id 8..=64, extensions up to 64 octets, and the payload
/// bound `with_max_frame` derives (256 minus the smallest header).
fn small_limits() -> Limits {
    let l = Limits {
        max_ext_bytes: 64,
        ..Limits::with_max_frame(256)
    };
    l.check().expect("coherent limits");
    l
}

/// Receiver policy accepting every timestamp and flag.
fn open_policy() -> Policy {
    Policy::default()
}

fn knows_all(_: u64) -> bool {
    true
}

fn codec_core(r: Result<Option<Result<Envelope, CoreError>>, CodecError>) -> CoreError {
    match r {
        Err(CodecError::Core(e)) => e,
        other => panic!("expected a core framing error from the codec, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// One body through every entry point
// ---------------------------------------------------------------------------------------

/// Runs `body` (framed with its exact length) through every decoding entry point and checks
/// that each produces `expected`, and that a body-level outcome never ends the stream.
fn check_all_paths(body: &[u8], limits: Limits, expected: &Result<Envelope, CoreError>) {
    assert!(!body.is_empty() && body.len() <= limits.max_frame_bytes as usize);
    let frame = with_prefix(body);

    // e1::decode on the body alone, and its owning twin.
    assert_eq!(
        &e1::decode(&Bytes::copy_from_slice(body), &limits),
        expected,
        "e1::decode"
    );
    assert_eq!(
        &e1::decode_owned(Bytes::copy_from_slice(body), &limits),
        expected,
        "e1::decode_owned"
    );
    // The borrowed view: the same fields, or the same error.
    assert_eq!(
        e1::decode_ref(body, &limits),
        expected.as_ref().map(Envelope::view).map_err(Clone::clone),
        "e1::decode_ref"
    );

    // take_frame on a frame already in memory, then e1::decode.
    let held = Bytes::from(frame.clone());
    let (b, rest) = frame::take_frame(&held, &limits)
        .expect("framing accepts the prefix")
        .expect("the frame is whole");
    assert_eq!(&b[..], body);
    assert!(rest.is_empty());
    assert_eq!(
        &e1::decode(&b, &limits),
        expected,
        "take_frame + e1::decode"
    );

    // The incremental decoder.
    let mut d = FrameDecoder::new(limits);
    d.feed(&frame);
    let b = d.next_body().expect("framing").expect("whole frame");
    assert_eq!(&b[..], body);
    assert_eq!(
        &e1::decode(&b, &limits),
        expected,
        "FrameDecoder + e1::decode"
    );
    assert_eq!(d.next_body(), Ok(None));
    assert_eq!(d.finish(), Ok(()));

    // The receiver pipeline (no freshness, every profile known).
    let mut r = Receiver::new(limits, open_policy());
    r.feed(&frame);
    let ev = r.poll(TS, knows_all).expect("one event");
    match (expected, ev) {
        (
            Ok(want),
            Event::Accepted {
                envelope,
                validated,
            },
        ) => {
            assert_eq!(&envelope, want, "Receiver");
            assert_eq!(validated.unknown_flags, want.flags);
        }
        (
            Err(want),
            Event::Rejected {
                error,
                msg_id,
                terminated,
            },
        ) => {
            assert_eq!(&error, want, "Receiver");
            assert_eq!(msg_id, None, "a decode reject has no msg_id to echo");
            assert!(!terminated, "a body-level reject keeps the stream");
        }
        (want, got) => panic!("Receiver: expected {want:?}, got {got:?}"),
    }
    assert_eq!(r.poll(TS, knows_all), None);
    assert!(!r.is_terminated());
    assert_eq!(r.finish(), None);

    // The tokio codec: decode, then decode_eof on an empty buffer; and decode_eof alone.
    let mut c = SwpCodec::new(limits);
    let mut buf = BytesMut::from(&frame[..]);
    let item = c.decode(&mut buf).expect("codec framing").expect("item");
    assert_eq!(&item, expected, "SwpCodec::decode");
    assert!(buf.is_empty());
    assert!(matches!(c.decode(&mut buf), Ok(None)));
    assert!(matches!(c.decode_eof(&mut buf), Ok(None)));
    let mut buf = BytesMut::from(&frame[..]);
    let item = c
        .decode_eof(&mut buf)
        .expect("codec framing")
        .expect("item");
    assert_eq!(&item, expected, "SwpCodec::decode_eof");
    assert!(matches!(c.decode_eof(&mut buf), Ok(None)));
}

/// Asserts `body` is rejected with exactly `err`, whose canonical code is `code`.
#[track_caller]
fn expect_reject(body: &[u8], limits: Limits, err: CoreError, code: ErrorCode) {
    assert_eq!(err.code(), code, "{err:?} must map to {code}");
    assert!(!err.is_framing(), "{err:?} is a body-level reject");
    check_all_paths(body, limits, &Err(err));
}

/// Asserts `body` is accepted everywhere and returns the envelope.
#[track_caller]
fn expect_accept(body: &[u8], limits: Limits) -> Envelope {
    let env = e1::decode(&Bytes::copy_from_slice(body), &limits)
        .unwrap_or_else(|e| panic!("expected acceptance, got {e:?}"));
    check_all_paths(body, limits, &Ok(env.clone()));
    env
}

/// Asserts a stream whose first frame prefix is unacceptable is rejected with `err` (code
/// `code`) by every framing entry point, terminating the stream.
#[track_caller]
fn expect_framing_reject(stream: &[u8], limits: Limits, err: CoreError, code: ErrorCode) {
    assert_eq!(err.code(), code, "{err:?} must map to {code}");
    assert!(err.is_framing());

    assert_eq!(frame::split(stream, &limits), Err(err.clone()), "split");
    assert_eq!(
        frame::take_frame(&Bytes::copy_from_slice(stream), &limits),
        Err(err.clone()),
        "take_frame"
    );

    let mut d = FrameDecoder::new(limits);
    d.feed(stream);
    assert_eq!(d.next_body(), Err(err.clone()), "FrameDecoder");
    assert!(d.is_terminated());
    assert_eq!(d.buffered(), 0, "a terminated decoder holds nothing");
    assert_eq!(d.next_body(), Err(CoreError::Terminated));
    assert_eq!(CoreError::Terminated.code(), ErrorCode::InvalidFrame);

    let mut r = Receiver::new(limits, open_policy());
    r.feed(stream);
    assert_eq!(
        r.poll(TS, knows_all),
        Some(Event::Rejected {
            error: err.clone(),
            msg_id: None,
            terminated: true,
        }),
        "Receiver"
    );
    assert!(r.is_terminated());
    assert_eq!(r.poll(TS, knows_all), None);

    let mut c = SwpCodec::new(limits);
    let mut buf = BytesMut::from(stream);
    assert_eq!(codec_core(c.decode(&mut buf)), err, "SwpCodec::decode");
    let mut buf = BytesMut::from(stream);
    assert_eq!(
        codec_core(c.decode_eof(&mut buf)),
        err,
        "SwpCodec::decode_eof"
    );
}

// ---------------------------------------------------------------------------------------
// Framing: the length prefix
// ---------------------------------------------------------------------------------------

#[test]
fn zero_length_prefix_is_invalid_frame() {
    expect_framing_reject(
        &[0, 0, 0, 0],
        Limits::default(),
        CoreError::ZeroLength,
        ErrorCode::InvalidFrame,
    );
    // A zero prefix followed by what would be a valid body is still rejected.
    let mut stream = vec![0, 0, 0, 0];
    stream.extend(with_prefix(&Raw::typical().body()));
    expect_framing_reject(
        &stream,
        Limits::default(),
        CoreError::ZeroLength,
        ErrorCode::InvalidFrame,
    );
}

#[test]
fn oversized_prefix_is_rejected_from_the_four_prefix_octets_alone() {
    let limits = small_limits();
    for n in [257u32, 258, 65_536, u32::MAX] {
        // Only the prefix: no body octet has arrived.
        expect_framing_reject(
            &n.to_be_bytes(),
            limits,
            CoreError::FrameTooLarge { len: n, max: 256 },
            ErrorCode::FrameTooLarge,
        );
    }
    // Same with the recommended 8 MiB default.
    let max = Limits::default().max_frame_bytes;
    assert_eq!(max, 8 * 1024 * 1024);
    expect_framing_reject(
        &(max + 1).to_be_bytes(),
        Limits::default(),
        CoreError::FrameTooLarge { len: max + 1, max },
        ErrorCode::FrameTooLarge,
    );
    // The exact bound only asks for more octets.
    assert_eq!(
        frame::split(&max.to_be_bytes(), &Limits::default()),
        Ok(Split::NeedMore {
            need: Some(PREFIX_LEN + max as usize)
        })
    );
}

#[test]
fn frame_of_exactly_max_frame_bytes_with_the_largest_payload_is_accepted() {
    let limits = small_limits();
    let msg_id = filler(limits.min_msg_id_bytes, 3);
    let payload = filler(limits.max_payload_bytes, 7);
    // The smallest header: one-octet uvarints (ts 0: no sender clock), shortest msg_id.
    let mut raw = Raw::new(&msg_id, &[], &payload);
    raw.ts = uv(0);
    let body = raw.body();
    assert_eq!(
        body.len(),
        limits.max_frame_bytes as usize,
        "N == MAX_FRAME_BYTES"
    );
    let env = expect_accept(&body, limits);
    assert_eq!(
        env,
        Envelope {
            ts_unix_ms: 0,
            ..envelope(&msg_id, Extensions::empty(), &payload)
        }
    );
    assert_eq!(env.payload.len(), limits.max_payload_bytes);
    assert_eq!(encode_body(&env), body);
}

#[test]
fn frame_one_over_max_frame_bytes_is_rejected_even_when_complete() {
    let limits = small_limits();
    let mut raw = Raw::new(&filler(9, 3), &[], &filler(limits.max_payload_bytes, 7));
    raw.ts = uv(0);
    let body = raw.body();
    assert_eq!(body.len(), 257);
    expect_framing_reject(
        &with_prefix(&body),
        limits,
        CoreError::FrameTooLarge { len: 257, max: 256 },
        ErrorCode::FrameTooLarge,
    );
}

// ---------------------------------------------------------------------------------------
// Size bounds inside the body
// ---------------------------------------------------------------------------------------

#[test]
fn payload_at_max_payload_bytes_is_accepted_and_one_more_is_rejected() {
    // A payload bound well inside the frame bound, so the frame itself is never too large.
    let limits = Limits {
        max_payload_bytes: 100,
        ..small_limits()
    };
    limits.check().unwrap();
    let msg_id = filler(16, 1);
    let env = expect_accept(&Raw::new(&msg_id, &[], &filler(100, 9)).body(), limits);
    assert_eq!(env.payload.len(), 100);
    expect_reject(
        &Raw::new(&msg_id, &[], &filler(101, 9)).body(),
        limits,
        CoreError::PayloadTooLarge { len: 101, max: 100 },
        ErrorCode::PayloadTooLarge,
    );
    // The declared length is judged before the octets are looked for: an oversized
    // declaration with no payload octets is PayloadTooLarge, not a truncation.
    let mut raw = Raw::new(&msg_id, &[], &[]);
    raw.payload_len = uv(u64::from(u32::MAX));
    expect_reject(
        &raw.body(),
        limits,
        CoreError::PayloadTooLarge {
            len: u64::from(u32::MAX),
            max: 100,
        },
        ErrorCode::PayloadTooLarge,
    );
    // The derived default bound: +1 on a body that is otherwise within the frame bound.
    let limits = small_limits();
    let max = limits.max_payload_bytes;
    let mut raw = Raw::new(&filler(8, 1), &[], &filler(max, 9));
    raw.ts = uv(0);
    raw.payload_len = uv(max as u64 + 1);
    raw.payload.pop();
    expect_reject(
        &raw.body(),
        limits,
        CoreError::PayloadTooLarge {
            len: max as u64 + 1,
            max,
        },
        ErrorCode::PayloadTooLarge,
    );
    // Empty payload is fine.
    expect_accept(&Raw::new(&msg_id, &[], &[]).body(), limits);
}

#[test]
fn msg_id_length_bounds() {
    let limits = Limits::default();
    let (min, max) = (limits.min_msg_id_bytes, limits.max_msg_id_bytes);
    assert_eq!((min, max), (8, 64));
    for len in [min, 16, max] {
        let id = filler(len, 5);
        let env = expect_accept(&Raw::new(&id, &[], b"p").body(), limits);
        assert_eq!(&env.msg_id[..], &id[..]);
    }
    for len in [0, 1, min - 1, max + 1, 200] {
        expect_reject(
            &Raw::new(&filler(len, 5), &[], b"p").body(),
            limits,
            CoreError::MsgIdLength {
                len: len as u64,
                min,
                max,
            },
            ErrorCode::MsgIdInvalid,
        );
    }
    // An absurd declared length is judged before the octets are looked for.
    let mut raw = Raw::new(&[], &[], &[]);
    raw.msg_id_len = U64_MAX_10.to_vec();
    expect_reject(
        &raw.body(),
        limits,
        CoreError::MsgIdLength {
            len: u64::MAX,
            min,
            max,
        },
        ErrorCode::MsgIdInvalid,
    );
    // The E1-strict variant (MAX_MSG_ID_BYTES = 32).
    let strict = Limits::e1_strict();
    expect_accept(&Raw::new(&filler(32, 5), &[], b"p").body(), strict);
    expect_reject(
        &Raw::new(&filler(33, 5), &[], b"p").body(),
        strict,
        CoreError::MsgIdLength {
            len: 33,
            min: 8,
            max: 32,
        },
        ErrorCode::MsgIdInvalid,
    );
}

#[test]
fn empty_msg_id_is_rejected_even_when_the_minimum_is_zero() {
    // Limits::check() forbids such limits, but decoding must not rely on that.
    let limits = Limits {
        min_msg_id_bytes: 0,
        ..Limits::default()
    };
    assert!(limits.check().is_err());
    expect_reject(
        &Raw::new(&[], &[], b"p").body(),
        limits,
        CoreError::MsgIdLength {
            len: 0,
            min: 0,
            max: 64,
        },
        ErrorCode::MsgIdInvalid,
    );
    expect_accept(&Raw::new(&[1], &[], b"p").body(), limits);
}

/// A well-formed extensions block of exactly `len` octets (`len >= 3`): one profile entry.
fn ext_block_of(len: usize) -> Vec<u8> {
    assert!((3..=129).contains(&len));
    let value = filler(len - 2, 40);
    let block = Extensions::from_entries([(16, &value[..])]);
    assert_eq!(block.len(), len);
    block.as_bytes().to_vec()
}

#[test]
fn extensions_at_max_ext_bytes_are_accepted_and_one_more_is_rejected() {
    let limits = small_limits();
    assert_eq!(limits.max_ext_bytes, 64);
    let msg_id = filler(8, 1);
    let env = expect_accept(&Raw::new(&msg_id, &ext_block_of(64), b"x").body(), limits);
    assert_eq!(env.extensions.len(), 64);
    expect_reject(
        &Raw::new(&msg_id, &ext_block_of(65), b"x").body(),
        limits,
        CoreError::ExtTooLarge { len: 65, max: 64 },
        ErrorCode::ExtTooLarge,
    );
    // Judged on the declared length, before the octets (and their TLV structure).
    let mut raw = Raw::new(&msg_id, &[], &[]);
    raw.ext_len = uv(1 << 40);
    expect_reject(
        &raw.body(),
        limits,
        CoreError::ExtTooLarge {
            len: 1 << 40,
            max: 64,
        },
        ErrorCode::ExtTooLarge,
    );

    // The recommended default, 4096.
    let limits = Limits::default();
    assert_eq!(limits.max_ext_bytes, 4096);
    for (len, ok) in [(4096, true), (4097, false)] {
        // Entry overhead: type 1 octet, length 2 octets.
        let value = filler(len - 3, 50);
        let block = Extensions::from_entries([(100, &value[..])]);
        assert_eq!(block.len(), len);
        let body = Raw::new(&msg_id, block.as_bytes(), b"x").body();
        if ok {
            let env = expect_accept(&body, limits);
            assert_eq!(env.extensions, block);
        } else {
            expect_reject(
                &body,
                limits,
                CoreError::ExtTooLarge {
                    len: 4097,
                    max: 4096,
                },
                ErrorCode::ExtTooLarge,
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Truncation
// ---------------------------------------------------------------------------------------

/// A valid body where every uvarint field but one is several octets long (the version uses
/// a non-minimal two-octet encoding of 1, which E1 allows), so cuts land inside each.
fn long_fields() -> Raw {
    let ext_value = filler(130, 60);
    let ext = Extensions::from_entries([(3, &b"r"[..]), (16, &ext_value[..])]);
    let mut raw = Raw::new(&filler(16, 1), ext.as_bytes(), &filler(200, 90));
    raw.version = vec![0x81, 0x00];
    raw.profile_id = uv(300);
    raw.msg_type = uv(70_000);
    raw.flags = uv(1 << 40);
    raw.msg_id_len = vec![0x90, 0x00]; // 16, non-minimal
    assert!(raw.ext_len.len() == 2 && raw.payload_len.len() == 2 && raw.ts.len() == 6);
    raw
}

/// The error a strict prefix of `raw`'s body of length `cut` must produce.
fn truncation_error(raw: &Raw, cut: usize) -> CoreError {
    let mut start = 0;
    for (field, seg, octets) in raw.segments() {
        let end = start + octets.len();
        if cut < end || (cut == start && seg == Seg::Uvarint) {
            return match seg {
                Seg::Uvarint if cut == start => CoreError::MissingField { field },
                Seg::Uvarint => CoreError::Uvarint {
                    field,
                    kind: UvarintError::Truncated,
                },
                Seg::Content => CoreError::TruncatedBytes {
                    field,
                    len: octets.len() as u64,
                    available: cut - start,
                },
            };
        }
        start = end;
    }
    unreachable!("cut {cut} is not a strict prefix")
}

#[test]
fn every_strict_prefix_of_a_valid_body_is_rejected_never_accepted() {
    let raw = long_fields();
    let body = raw.body();
    let limits = Limits::default();
    let full = expect_accept(&body, limits);
    assert_eq!(full.version, 1);
    assert_eq!(full.profile_id, 300);
    assert_eq!(full.msg_type, 70_000);
    assert_eq!(full.flags, 1 << 40);
    assert_eq!(full.extensions.iter().count(), 2);

    let mut seen = std::collections::BTreeSet::new();
    for cut in 0..body.len() {
        let want = truncation_error(&raw, cut);
        let code = match &want {
            CoreError::MissingField { .. } => ErrorCode::InvalidEnvelope,
            CoreError::Uvarint { .. } => ErrorCode::InvalidUvarint,
            CoreError::TruncatedBytes { .. } => ErrorCode::InvalidFrame,
            other => unreachable!("{other:?}"),
        };
        seen.insert(format!("{want:?}").split(' ').next().unwrap().to_owned());
        if cut == 0 {
            // An empty body cannot be framed (N = 0), but e1::decode still says why.
            assert_eq!(
                e1::decode(&Bytes::new(), &limits),
                Err(CoreError::MissingField {
                    field: Field::Version
                })
            );
            continue;
        }
        expect_reject(&body[..cut], limits, want, code);
    }
    // All three truncation shapes were met.
    assert_eq!(seen.len(), 3, "{seen:?}");
}

#[test]
fn each_required_field_missing_is_named() {
    let raw = Raw::typical();
    let body = raw.body();
    let mut start = 0;
    for (field, seg, octets) in raw.segments() {
        if seg == Seg::Uvarint && start > 0 {
            expect_reject(
                &body[..start],
                Limits::default(),
                CoreError::MissingField { field },
                ErrorCode::InvalidEnvelope,
            );
        }
        start += octets.len();
    }
}

#[test]
fn every_strict_prefix_of_a_frame_needs_more_then_fails_at_end_of_stream() {
    let body = long_fields().body();
    let frame = with_prefix(&body);
    let limits = Limits::default();
    for k in 1..frame.len() {
        let want = if k < PREFIX_LEN {
            CoreError::TruncatedPrefix { have: k }
        } else {
            CoreError::TruncatedBody {
                have: k - PREFIX_LEN,
                need: body.len(),
            }
        };
        assert_eq!(want.code(), ErrorCode::InvalidFrame);
        assert!(want.is_framing());

        let mut d = FrameDecoder::new(limits);
        d.feed(&frame[..k]);
        assert_eq!(d.next_body(), Ok(None), "need more at {k}");
        assert_eq!(d.buffered(), k);
        assert_eq!(d.finish(), Err(want.clone()), "finish at {k}");
        assert!(d.is_terminated());
        assert_eq!(d.next_body(), Err(CoreError::Terminated));

        let mut r = Receiver::new(limits, open_policy());
        r.feed(&frame[..k]);
        assert_eq!(r.poll(TS, knows_all), None);
        assert_eq!(
            r.finish(),
            Some(Event::Rejected {
                error: want.clone(),
                msg_id: None,
                terminated: true
            })
        );

        assert_eq!(
            frame::take_frame(&Bytes::copy_from_slice(&frame[..k]), &limits),
            Ok(None)
        );

        let mut c = SwpCodec::new(limits);
        let mut buf = BytesMut::from(&frame[..k]);
        assert!(
            matches!(c.decode(&mut buf), Ok(None)),
            "codec need more at {k}"
        );
        assert_eq!(
            buf.len(),
            k,
            "the codec consumes nothing until the frame is whole"
        );
        assert_eq!(
            codec_core(c.decode_eof(&mut buf)),
            want,
            "decode_eof at {k}"
        );
    }
}

#[test]
fn end_of_stream_on_a_clean_boundary_is_not_an_error() {
    let frame = with_prefix(&Raw::typical().body());
    let mut d = FrameDecoder::new(Limits::default());
    assert_eq!(d.finish(), Ok(()), "empty stream");
    let mut d = FrameDecoder::new(Limits::default());
    d.feed(&frame);
    assert!(d.next_body().unwrap().is_some());
    assert_eq!(d.finish(), Ok(()));
    // finish() after finish() stays quiet.
    assert_eq!(d.finish(), Ok(()));
    let mut c = SwpCodec::new(Limits::default());
    assert!(matches!(c.decode_eof(&mut BytesMut::new()), Ok(None)));
}

#[test]
fn end_of_stream_reports_a_truncated_frame_behind_an_undrained_whole_frame() {
    // Two frames buffered, the second cut short; the caller calls finish() without
    // draining. The truncation of the second frame must not go unreported.
    let frame = with_prefix(&Raw::typical().body());
    let body_len = frame.len() - PREFIX_LEN;
    let mut stream = frame.clone();
    stream.extend_from_slice(&frame[..PREFIX_LEN + 3]);
    let want = CoreError::TruncatedBody {
        have: 3,
        need: body_len,
    };
    assert_eq!(
        frame::end_of_stream(&stream, &Limits::default()),
        Err(want.clone())
    );
    let mut d = FrameDecoder::new(Limits::default());
    d.feed(&stream);
    assert_eq!(d.finish(), Err(want.clone()));

    let mut stream = frame.clone();
    stream.extend_from_slice(&frame[..2]);
    assert_eq!(
        frame::end_of_stream(&stream, &Limits::default()),
        Err(CoreError::TruncatedPrefix { have: 2 })
    );
    // Whole frames only: nothing truncated.
    let mut stream = frame.clone();
    stream.extend_from_slice(&frame);
    assert_eq!(frame::end_of_stream(&stream, &Limits::default()), Ok(()));
}

// ---------------------------------------------------------------------------------------
// uvarints
// ---------------------------------------------------------------------------------------

const ENVELOPE_UVARINTS: [Field; 8] = [
    Field::Version,
    Field::ProfileId,
    Field::MsgType,
    Field::Flags,
    Field::TsUnixMs,
    Field::MsgId,
    Field::Extensions,
    Field::Payload,
];

#[test]
fn overflowing_uvarint_in_each_field_is_invalid_uvarint() {
    for field in ENVELOPE_UVARINTS {
        let mut raw = Raw::typical();
        *raw.uvarint_mut(field) = OVERFLOW_10.to_vec();
        expect_reject(
            &raw.body(),
            Limits::default(),
            CoreError::Uvarint {
                field,
                kind: UvarintError::Overflow,
            },
            ErrorCode::InvalidUvarint,
        );
    }
    // The smallest overflow: 2^64 exactly.
    let mut raw = Raw::typical();
    raw.flags = vec![0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02];
    expect_reject(
        &raw.body(),
        Limits::default(),
        CoreError::Uvarint {
            field: Field::Flags,
            kind: UvarintError::Overflow,
        },
        ErrorCode::InvalidUvarint,
    );
}

#[test]
fn eleven_octet_uvarint_in_each_field_is_invalid_uvarint() {
    for field in ENVELOPE_UVARINTS {
        let mut raw = Raw::typical();
        *raw.uvarint_mut(field) = TOO_LONG_11.to_vec();
        expect_reject(
            &raw.body(),
            Limits::default(),
            CoreError::Uvarint {
                field,
                kind: UvarintError::TooLong,
            },
            ErrorCode::InvalidUvarint,
        );
    }
}

#[test]
fn ten_octet_u64_max_is_accepted_in_every_numeric_field() {
    assert_eq!(uv(u64::MAX), U64_MAX_10.to_vec());
    for field in [
        Field::ProfileId,
        Field::MsgType,
        Field::Flags,
        Field::TsUnixMs,
    ] {
        let mut raw = Raw::typical();
        *raw.uvarint_mut(field) = U64_MAX_10.to_vec();
        let env = expect_accept(&raw.body(), Limits::default());
        let mut want = e1::decode(&Bytes::from(Raw::typical().body()), &Limits::default())
            .expect("typical body");
        match field {
            Field::ProfileId => want.profile_id = u64::MAX,
            Field::MsgType => want.msg_type = u64::MAX,
            Field::Flags => want.flags = u64::MAX,
            Field::TsUnixMs => want.ts_unix_ms = u64::MAX,
            _ => unreachable!(),
        }
        assert_eq!(env, want, "{field}");
        assert_eq!(encode_body(&env), raw.body(), "canonical re-encoding");
    }
    // All four at once.
    let mut raw = Raw::typical();
    for field in [
        Field::ProfileId,
        Field::MsgType,
        Field::Flags,
        Field::TsUnixMs,
    ] {
        *raw.uvarint_mut(field) = U64_MAX_10.to_vec();
    }
    let env = expect_accept(&raw.body(), Limits::default());
    assert_eq!(
        (env.profile_id, env.msg_type, env.flags, env.ts_unix_ms),
        (u64::MAX, u64::MAX, u64::MAX, u64::MAX)
    );
}

#[test]
fn non_minimal_uvarints_up_to_ten_octets_are_accepted() {
    let mut raw = Raw::typical();
    // 1 written in ten octets.
    raw.version = vec![0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
    // 0 written in two octets.
    raw.flags = vec![0x80, 0x00];
    let env = expect_accept(&raw.body(), Limits::default());
    assert_eq!(env.version, 1);
    assert_eq!(env.flags, 0);
    assert_eq!(
        env,
        e1::decode(&Bytes::from(Raw::typical().body()), &Limits::default()).unwrap()
    );
}

// ---------------------------------------------------------------------------------------
// Trailing octets, versions
// ---------------------------------------------------------------------------------------

#[test]
fn octets_after_the_payload_are_rejected() {
    for extra in [&[0u8][..], &[0x01, 0x02, 0x03], &[0xff; 40]] {
        let mut body = Raw::typical().body();
        body.extend_from_slice(extra);
        expect_reject(
            &body,
            Limits::default(),
            CoreError::TrailingBytes { count: extra.len() },
            ErrorCode::InvalidFrame,
        );
    }
    // The same with an empty payload: the trailing octets are not taken as a payload.
    let mut body = Raw::new(&filler(8, 1), &[], &[]).body();
    body.push(7);
    expect_reject(
        &body,
        Limits::default(),
        CoreError::TrailingBytes { count: 1 },
        ErrorCode::InvalidFrame,
    );
}

#[test]
fn unsupported_versions_are_rejected_before_the_rest_is_parsed() {
    let garbage: Vec<u8> = [0xffu8; 30].to_vec();
    for (version, octets) in [
        (0u64, uv(0)),
        (2, uv(2)),
        (127, uv(127)),
        (u64::MAX, U64_MAX_10.to_vec()),
    ] {
        let err = CoreError::UnsupportedVersion { version };
        // Followed by garbage that would be an invalid uvarint.
        let mut body = octets.clone();
        body.extend_from_slice(&garbage);
        expect_reject(
            &body,
            Limits::default(),
            err.clone(),
            ErrorCode::UnsupportedVersion,
        );
        // Followed by nothing at all.
        expect_reject(
            &octets,
            Limits::default(),
            err.clone(),
            ErrorCode::UnsupportedVersion,
        );
        // Followed by an otherwise valid v1 body.
        let mut raw = Raw::typical();
        raw.version = octets;
        expect_reject(
            &raw.body(),
            Limits::default(),
            err,
            ErrorCode::UnsupportedVersion,
        );
    }
}

// ---------------------------------------------------------------------------------------
// Extensions TLV
// ---------------------------------------------------------------------------------------

#[test]
fn malformed_tlv_inside_extensions_is_rejected() {
    let cases: Vec<(Vec<u8>, CoreError, ErrorCode)> = vec![
        // Value declares 5 octets, 2 remain in the block.
        (
            vec![0x10, 0x05, 0xaa, 0xbb],
            CoreError::TruncatedBytes {
                field: Field::ExtValue,
                len: 5,
                available: 2,
            },
            ErrorCode::InvalidFrame,
        ),
        // A whole entry, then a second whose value is cut.
        (
            vec![0x10, 0x01, 0xaa, 0x11, 0x02, 0xbb],
            CoreError::TruncatedBytes {
                field: Field::ExtValue,
                len: 2,
                available: 1,
            },
            ErrorCode::InvalidFrame,
        ),
        // Type uvarint cut after its first octet.
        (
            vec![0x80],
            CoreError::Uvarint {
                field: Field::ExtType,
                kind: UvarintError::Truncated,
            },
            ErrorCode::InvalidUvarint,
        ),
        (
            vec![0x10, 0x00, 0xff, 0xff],
            CoreError::Uvarint {
                field: Field::ExtType,
                kind: UvarintError::Truncated,
            },
            ErrorCode::InvalidUvarint,
        ),
        // Type present, value length absent / cut.
        (
            vec![0x10],
            CoreError::Uvarint {
                field: Field::ExtValue,
                kind: UvarintError::Truncated,
            },
            ErrorCode::InvalidUvarint,
        ),
        (
            vec![0x10, 0x80],
            CoreError::Uvarint {
                field: Field::ExtValue,
                kind: UvarintError::Truncated,
            },
            ErrorCode::InvalidUvarint,
        ),
        // Overflowing and overlong uvarints in the type and in the value length.
        (
            OVERFLOW_10.to_vec(),
            CoreError::Uvarint {
                field: Field::ExtType,
                kind: UvarintError::Overflow,
            },
            ErrorCode::InvalidUvarint,
        ),
        (
            TOO_LONG_11.to_vec(),
            CoreError::Uvarint {
                field: Field::ExtType,
                kind: UvarintError::TooLong,
            },
            ErrorCode::InvalidUvarint,
        ),
        (
            [&[0x10][..], &OVERFLOW_10].concat(),
            CoreError::Uvarint {
                field: Field::ExtValue,
                kind: UvarintError::Overflow,
            },
            ErrorCode::InvalidUvarint,
        ),
        (
            [&[0x10][..], &TOO_LONG_11].concat(),
            CoreError::Uvarint {
                field: Field::ExtValue,
                kind: UvarintError::TooLong,
            },
            ErrorCode::InvalidUvarint,
        ),
        // A value length of u64::MAX.
        (
            [&[0x10][..], &U64_MAX_10, &[0x00]].concat(),
            CoreError::TruncatedBytes {
                field: Field::ExtValue,
                len: u64::MAX,
                available: 1,
            },
            ErrorCode::InvalidFrame,
        ),
    ];
    for (block, err, code) in cases {
        assert_eq!(
            Extensions::parse(Bytes::from(block.clone())),
            Err(err.clone()),
            "{block:02x?}"
        );
        expect_reject(
            &Raw::new(&filler(16, 1), &block, b"payload").body(),
            Limits::default(),
            err,
            code,
        );
    }
}

#[test]
fn unknown_and_reserved_extension_types_are_accepted_and_change_nothing_else() {
    let entries: Vec<(u64, Vec<u8>)> = vec![
        (0, b"zero".to_vec()),
        (1, vec![]),
        (15, b"last reserved".to_vec()),
        (FIRST_PROFILE_EXT_TYPE, b"first profile".to_vec()),
        (16, b"repeated type".to_vec()),
        (1000, filler(130, 3)),
        (u64::MAX, b"max".to_vec()),
    ];
    let block = Extensions::from_entries(entries.iter().map(|(t, v)| (*t, &v[..])));
    let msg_id = filler(16, 1);
    let payload = b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}";
    let with = expect_accept(
        &Raw::new(&msg_id, block.as_bytes(), payload).body(),
        Limits::default(),
    );
    let without = expect_accept(&Raw::new(&msg_id, &[], payload).body(), Limits::default());

    // Every other field is identical to the same envelope without extensions.
    assert_eq!(
        Envelope {
            extensions: Extensions::empty(),
            ..with.clone()
        },
        without
    );
    // Iterated in wire order, every entry intact, reserved range reported.
    let got: Vec<Extension> = with.extensions.iter().collect();
    assert_eq!(got.len(), entries.len());
    for (e, (t, v)) in got.iter().zip(&entries) {
        assert_eq!(e.ext_type, *t);
        assert_eq!(&e.value[..], &v[..]);
        assert_eq!(e.is_reserved(), *t < 16);
    }
    // Each unknown type alone, reserved or not.
    for t in [0u64, 7, 15, 16, 17, 4096, u64::MAX] {
        let one = Extensions::from_entries([(t, &b"v"[..])]);
        let env = expect_accept(
            &Raw::new(&msg_id, one.as_bytes(), payload).body(),
            Limits::default(),
        );
        assert_eq!(
            Envelope {
                extensions: Extensions::empty(),
                ..env.clone()
            },
            without
        );
        assert_eq!(
            env.extensions
                .iter()
                .map(|e| e.ext_type)
                .collect::<Vec<_>>(),
            [t]
        );
    }
}

// ---------------------------------------------------------------------------------------
// Flags and receiver policy
// ---------------------------------------------------------------------------------------

#[test]
fn unknown_flag_bits_are_accepted_surfaced_and_change_nothing_else() {
    let known = 0b1u64;
    let policy = Policy {
        known_flags: known,
        ..Policy::default()
    };
    let base = Raw::typical();
    let plain = e1::decode(&Bytes::from(base.body()), &Limits::default()).unwrap();
    for flags in [1u64, 0b10, 0b1011, 1 << 63, u64::MAX] {
        let mut raw = base.clone();
        raw.flags = uv(flags);
        let env = expect_accept(&raw.body(), Limits::default());
        assert_eq!(env.flags, flags);
        assert_eq!(
            Envelope {
                flags: 0,
                ..env.clone()
            },
            plain
        );
        let v = swp_core::validate::validate(&env, &policy, TS).expect("flags never reject");
        assert_eq!(
            v,
            Validated {
                unknown_flags: flags & !known
            }
        );

        let mut r = Receiver::new(Limits::default(), policy);
        r.feed(&with_prefix(&raw.body()));
        assert_eq!(
            r.poll(TS, knows_all),
            Some(Event::Accepted {
                envelope: env,
                validated: v
            })
        );
    }
}

#[test]
fn timestamp_freshness_rejects_stale_future_and_missing() {
    let skew = 1_000;
    let policy = Policy {
        timestamp_freshness: true,
        max_clock_skew_ms: skew,
        ..Policy::default()
    };
    let now = TS;
    let cases = [
        (now - skew, None),
        (now + skew, None),
        (now, None),
        (
            now - skew - 1,
            Some(CoreError::StaleTimestamp {
                ts: now - skew - 1,
                age_ms: skew + 1,
                skew,
            }),
        ),
        (
            1,
            Some(CoreError::StaleTimestamp {
                ts: 1,
                age_ms: now - 1,
                skew,
            }),
        ),
        (
            now + skew + 1,
            Some(CoreError::FutureTimestamp {
                ts: now + skew + 1,
                ahead_ms: skew + 1,
                skew,
            }),
        ),
        (
            u64::MAX,
            Some(CoreError::FutureTimestamp {
                ts: u64::MAX,
                ahead_ms: u64::MAX - now,
                skew,
            }),
        ),
        (0, Some(CoreError::MissingTimestamp)),
    ];
    let msg_id = filler(16, 1);
    for (ts, want) in cases {
        let mut raw = Raw::new(&msg_id, &[], b"p");
        raw.ts = uv(ts);
        let mut r = Receiver::new(Limits::default(), policy);
        r.feed(&with_prefix(&raw.body()));
        let ev = r.poll(now, knows_all).expect("an event");
        match want {
            None => assert!(
                matches!(&ev, Event::Accepted { envelope, .. } if envelope.ts_unix_ms == ts),
                "ts {ts}: {ev:?}"
            ),
            Some(err) => {
                assert_eq!(err.code(), ErrorCode::InvalidEnvelope);
                assert_eq!(
                    ev,
                    Event::Rejected {
                        error: err,
                        msg_id: Some(Bytes::from(msg_id.clone())),
                        terminated: false,
                    },
                    "ts {ts}"
                );
            }
        }
        // Freshness off accepts the same frame.
        let mut r = Receiver::new(Limits::default(), open_policy());
        r.feed(&with_prefix(&raw.body()));
        assert!(matches!(
            r.poll(now, knows_all),
            Some(Event::Accepted { .. })
        ));
    }
}

#[test]
fn unknown_profile_is_rejected_with_the_msg_id_and_the_stream_goes_on() {
    let msg_id = filler(16, 1);
    let mut unknown = Raw::new(&msg_id, &[], b"p");
    unknown.profile_id = uv(7);
    let known = Raw::new(&filler(16, 2), &[], b"q");
    let mut r = Receiver::new(Limits::default(), open_policy());
    r.feed(&with_prefix(&unknown.body()));
    r.feed(&with_prefix(&known.body()));
    let knows = |p: u64| p == 1;
    let err = CoreError::UnknownProfile { profile_id: 7 };
    assert_eq!(err.code(), ErrorCode::UnknownProfile);
    assert_eq!(
        r.poll(TS, knows),
        Some(Event::Rejected {
            error: err,
            msg_id: Some(Bytes::from(msg_id)),
            terminated: false,
        })
    );
    assert!(!r.is_terminated());
    match r.poll(TS, knows) {
        Some(Event::Accepted { envelope, .. }) => assert_eq!(envelope.profile_id, 1),
        other => panic!("{other:?}"),
    }
    // Profile 0 (reserved) with nothing registered.
    let mut zero = Raw::typical();
    zero.profile_id = uv(0);
    let mut r = Receiver::new(Limits::default(), open_policy());
    r.feed(&with_prefix(&zero.body()));
    assert!(matches!(
        r.poll(TS, |_| false),
        Some(Event::Rejected {
            error: CoreError::UnknownProfile { profile_id: 0 },
            ..
        })
    ));
}

#[test]
fn rate_limit_admits_n_frames_per_window_and_rejects_the_next() {
    let limit = RateLimit {
        frames: 3,
        window_ms: 1_000,
    };
    let policy = Policy {
        rate_limit: Some(limit),
        ..Policy::default()
    };
    let frame = with_prefix(&Raw::typical().body());
    let mut r = Receiver::new(Limits::default(), policy);
    let mut at = |now: u64| {
        r.feed(&frame);
        r.poll(now, knows_all).expect("an event")
    };
    let t0 = 10_000;
    for i in 0..3 {
        assert!(matches!(at(t0 + i), Event::Accepted { .. }), "frame {i}");
    }
    let limited = Event::Rejected {
        error: CoreError::RateLimited {
            frames: 3,
            window_ms: 1_000,
        },
        msg_id: None,
        terminated: false,
    };
    assert_eq!(
        CoreError::RateLimited {
            frames: 3,
            window_ms: 1_000
        }
        .code(),
        ErrorCode::RateLimitExceeded
    );
    assert_eq!(at(t0 + 3), limited, "N+1th frame");
    assert_eq!(at(t0 + 999), limited, "still inside the window");
    // The next window opens at t0 + window.
    for i in 0..3 {
        assert!(
            matches!(at(t0 + 1_000 + i), Event::Accepted { .. }),
            "next window {i}"
        );
    }
    assert_eq!(at(t0 + 1_500), limited);
    // A long pause opens a fresh window.
    assert!(matches!(at(t0 + 10_000), Event::Accepted { .. }));
}

#[test]
fn rate_limit_counts_frames_that_fail_to_decode() {
    let policy = Policy {
        rate_limit: Some(RateLimit {
            frames: 1,
            window_ms: 100,
        }),
        ..Policy::default()
    };
    let mut r = Receiver::new(Limits::default(), policy);
    // A body with trailing garbage takes the one slot...
    let mut bad = Raw::typical().body();
    bad.push(0);
    r.feed(&with_prefix(&bad));
    assert!(matches!(
        r.poll(0, knows_all),
        Some(Event::Rejected {
            error: CoreError::TrailingBytes { count: 1 },
            ..
        })
    ));
    // ...so the valid one after it is limited.
    r.feed(&with_prefix(&Raw::typical().body()));
    assert!(matches!(
        r.poll(50, knows_all),
        Some(Event::Rejected {
            error: CoreError::RateLimited { .. },
            ..
        })
    ));
}

// ---------------------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------------------

/// Five different valid frames, as (envelope, frame octets).
fn several_frames() -> Vec<(Envelope, Vec<u8>)> {
    let mut out = Vec::new();
    for i in 0..5u8 {
        let ext = Extensions::from_entries((0..i).map(|t| (u64::from(t) * 9, &b"ext"[..])));
        let mut env = envelope(
            &filler(8 + usize::from(i) * 4, i),
            ext,
            &filler(usize::from(i) * 70, i),
        );
        env.msg_type = u64::from(i) << (i * 12);
        let frame = e1::frame_bytes(&env).unwrap().to_vec();
        out.push((env, frame));
    }
    out
}

#[test]
fn several_frames_fed_one_octet_at_a_time() {
    let frames = several_frames();
    let stream: Vec<u8> = frames.iter().flat_map(|(_, f)| f.clone()).collect();
    let limits = Limits::default();

    let mut d = FrameDecoder::new(limits);
    let mut got = Vec::new();
    for &b in &stream {
        d.feed(&[b]);
        while let Some(body) = d.next_body().expect("valid stream") {
            got.push(e1::decode(&body, &limits).expect("valid body"));
        }
    }
    assert_eq!(d.buffered(), 0);
    assert_eq!(d.finish(), Ok(()));
    assert_eq!(
        got,
        frames.iter().map(|(e, _)| e.clone()).collect::<Vec<_>>()
    );

    let mut r = Receiver::new(limits, open_policy());
    let mut got = Vec::new();
    for &b in &stream {
        r.feed(&[b]);
        while let Some(ev) = r.poll(TS, knows_all) {
            match ev {
                Event::Accepted { envelope, .. } => got.push(envelope),
                other => panic!("{other:?}"),
            }
        }
    }
    assert_eq!(r.finish(), None);
    assert_eq!(
        got,
        frames.iter().map(|(e, _)| e.clone()).collect::<Vec<_>>()
    );

    let mut c = SwpCodec::new(limits);
    let mut buf = BytesMut::new();
    let mut got = Vec::new();
    for &b in &stream {
        buf.extend_from_slice(&[b]);
        while let Some(item) = c.decode(&mut buf).expect("valid stream") {
            got.push(item.expect("valid body"));
        }
    }
    assert!(matches!(c.decode_eof(&mut buf), Ok(None)));
    assert_eq!(
        got,
        frames.iter().map(|(e, _)| e.clone()).collect::<Vec<_>>()
    );
}

#[test]
fn body_level_rejects_keep_the_stream_and_framing_errors_end_it() {
    let frames = several_frames();
    let mut bad = Raw::typical().body();
    bad.push(9); // trailing octet: body-level
    let mut stream = frames[0].1.clone();
    stream.extend(with_prefix(&bad));
    stream.extend(&frames[1].1);
    stream.extend([0, 0, 0, 0]); // zero length: framing
    let after_error = frames[2].1.clone();
    stream.extend(&after_error);

    let limits = Limits::default();
    let mut d = FrameDecoder::new(limits);
    d.feed(&stream);
    assert!(d.next_body().unwrap().is_some());
    let b = d.next_body().unwrap().unwrap();
    assert_eq!(
        e1::decode(&b, &limits),
        Err(CoreError::TrailingBytes { count: 1 })
    );
    assert!(d.next_body().unwrap().is_some());
    assert_eq!(d.next_body(), Err(CoreError::ZeroLength));
    assert!(d.is_terminated());
    assert_eq!(d.buffered(), 0);
    // Terminated for good: new octets are ignored, even a valid frame.
    d.feed(&after_error);
    assert_eq!(d.buffered(), 0);
    assert_eq!(d.next_body(), Err(CoreError::Terminated));
    assert_eq!(d.next_body(), Err(CoreError::Terminated));
    assert_eq!(d.finish(), Ok(()), "the error was already reported");

    let mut r = Receiver::new(limits, open_policy());
    r.feed(&stream);
    assert!(matches!(
        r.poll(TS, knows_all),
        Some(Event::Accepted { .. })
    ));
    assert_eq!(
        r.poll(TS, knows_all),
        Some(Event::Rejected {
            error: CoreError::TrailingBytes { count: 1 },
            msg_id: None,
            terminated: false
        })
    );
    assert!(matches!(
        r.poll(TS, knows_all),
        Some(Event::Accepted { .. })
    ));
    assert_eq!(
        r.poll(TS, knows_all),
        Some(Event::Rejected {
            error: CoreError::ZeroLength,
            msg_id: None,
            terminated: true
        })
    );
    r.feed(&after_error);
    assert_eq!(r.poll(TS, knows_all), None);
    assert_eq!(r.poll(TS, knows_all), None);
    assert_eq!(r.finish(), None);

    let mut c = SwpCodec::new(limits);
    let mut buf = BytesMut::from(&stream[..]);
    assert!(matches!(c.decode(&mut buf), Ok(Some(Ok(_)))));
    assert!(matches!(
        c.decode(&mut buf),
        Ok(Some(Err(CoreError::TrailingBytes { count: 1 })))
    ));
    assert!(matches!(c.decode(&mut buf), Ok(Some(Ok(_)))));
    assert_eq!(codec_core(c.decode(&mut buf)), CoreError::ZeroLength);
}

#[test]
fn oversized_prefix_mid_stream_terminates_after_the_frames_before_it() {
    let limits = small_limits();
    let ok = with_prefix(&Raw::typical().body());
    let mut stream = ok.clone();
    stream.extend(1_000_000u32.to_be_bytes());
    let mut r = Receiver::new(limits, open_policy());
    r.feed(&stream);
    assert!(matches!(
        r.poll(TS, knows_all),
        Some(Event::Accepted { .. })
    ));
    assert_eq!(
        r.poll(TS, knows_all),
        Some(Event::Rejected {
            error: CoreError::FrameTooLarge {
                len: 1_000_000,
                max: 256
            },
            msg_id: None,
            terminated: true
        })
    );
    r.feed(&ok);
    assert_eq!(r.poll(TS, knows_all), None);
}

// ---------------------------------------------------------------------------------------
// The code table
// ---------------------------------------------------------------------------------------

#[test]
fn every_reject_maps_to_its_canonical_code() {
    use ErrorCode as C;
    let table: Vec<(CoreError, ErrorCode)> = vec![
        (CoreError::TruncatedPrefix { have: 1 }, C::InvalidFrame),
        (CoreError::ZeroLength, C::InvalidFrame),
        (
            CoreError::FrameTooLarge { len: 2, max: 1 },
            C::FrameTooLarge,
        ),
        (
            CoreError::TruncatedBody { have: 0, need: 1 },
            C::InvalidFrame,
        ),
        (
            CoreError::Uvarint {
                field: Field::Flags,
                kind: UvarintError::Truncated,
            },
            C::InvalidUvarint,
        ),
        (
            CoreError::MissingField {
                field: Field::Payload,
            },
            C::InvalidEnvelope,
        ),
        (
            CoreError::TruncatedBytes {
                field: Field::MsgId,
                len: 2,
                available: 1,
            },
            C::InvalidFrame,
        ),
        (CoreError::TrailingBytes { count: 1 }, C::InvalidFrame),
        (
            CoreError::UnsupportedVersion { version: 2 },
            C::UnsupportedVersion,
        ),
        (
            CoreError::MsgIdLength {
                len: 0,
                min: 8,
                max: 64,
            },
            C::MsgIdInvalid,
        ),
        (CoreError::ExtTooLarge { len: 2, max: 1 }, C::ExtTooLarge),
        (
            CoreError::PayloadTooLarge { len: 2, max: 1 },
            C::PayloadTooLarge,
        ),
        (
            CoreError::StaleTimestamp {
                ts: 1,
                age_ms: 2,
                skew: 1,
            },
            C::InvalidEnvelope,
        ),
        (
            CoreError::FutureTimestamp {
                ts: 3,
                ahead_ms: 2,
                skew: 1,
            },
            C::InvalidEnvelope,
        ),
        (CoreError::MissingTimestamp, C::InvalidEnvelope),
        (
            CoreError::UnknownProfile { profile_id: 9 },
            C::UnknownProfile,
        ),
        (
            CoreError::RateLimited {
                frames: 1,
                window_ms: 1,
            },
            C::RateLimitExceeded,
        ),
        (CoreError::DuplicateMsgId, C::DuplicateMsgId),
        (CoreError::Terminated, C::InvalidFrame),
    ];
    for (err, code) in &table {
        // Exhaustive: a new variant fails to compile here until it is added to the table.
        match err {
            CoreError::TruncatedPrefix { .. }
            | CoreError::ZeroLength
            | CoreError::FrameTooLarge { .. }
            | CoreError::TruncatedBody { .. }
            | CoreError::Uvarint { .. }
            | CoreError::MissingField { .. }
            | CoreError::TruncatedBytes { .. }
            | CoreError::TrailingBytes { .. }
            | CoreError::UnsupportedVersion { .. }
            | CoreError::MsgIdLength { .. }
            | CoreError::ExtTooLarge { .. }
            | CoreError::PayloadTooLarge { .. }
            | CoreError::StaleTimestamp { .. }
            | CoreError::FutureTimestamp { .. }
            | CoreError::MissingTimestamp
            | CoreError::UnknownProfile { .. }
            | CoreError::RateLimited { .. }
            | CoreError::DuplicateMsgId
            | CoreError::Terminated => {}
        }
        assert_eq!(err.code(), *code, "{err:?}");
        assert!(ErrorCode::ALL.contains(code));
        assert!(code.as_str().starts_with("ERR_"));
    }
    assert_eq!(table.len(), 19);
}
