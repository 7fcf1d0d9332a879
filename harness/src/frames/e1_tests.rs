//! Unit tests of the E1 envelope codec: every field boundary, limit and truncation.
use super::*;
use crate::frames::uvarint::UvarintError;

fn env() -> Envelope {
    Envelope {
        version: 1,
        profile_id: 1,
        msg_type: 1,
        flags: 0,
        ts_unix_ms: 1_771_512_916_253,
        msg_id: Bytes::from_static(b"12345678abcdefgh"),
        extensions: Extensions::default(),
        payload: Bytes::from_static(b"{\"k\":\"v\"}"),
    }
}

fn body(e: &Envelope) -> Bytes {
    body_bytes(e)
}

/// A body built field by field, for shapes the encoder never writes.
fn raw(parts: &[&[u8]]) -> Bytes {
    Bytes::from(parts.concat())
}

fn uv(v: u64) -> Vec<u8> {
    let mut o = Vec::new();
    uvarint::encode(v, &mut o);
    o
}

const HEAD: &[u8] = &[0x01, 0x01, 0x01, 0x00, 0x00];

#[test]
fn a_typical_envelope_encodes_field_by_field_and_decodes_back() {
    let e = env();
    let b = body(&e);
    let mut want = vec![0x01, 0x01, 0x01, 0x00];
    want.extend_from_slice(&uv(e.ts_unix_ms));
    want.push(16);
    want.extend_from_slice(b"12345678abcdefgh");
    want.push(0);
    want.push(9);
    want.extend_from_slice(b"{\"k\":\"v\"}");
    assert_eq!(&b[..], &want[..]);
    assert_eq!(e.encoded_len(), b.len());
    assert_eq!(decode(&b, &Limits::default()), Ok(e));
}

#[test]
fn extensions_keep_every_entry_in_order_and_re_encode_exactly() {
    let mut e = env();
    e.extensions = Extensions::from_entries([
        (0u64, &b""[..]),
        (16, b"opaque"),
        (16, b"dup"),
        (u64::MAX, b"x"),
    ]);
    let b = body(&e);
    let d = decode(&b, &Limits::default()).unwrap();
    assert_eq!(
        d.extensions.to_vec(),
        [
            (0, Bytes::new()),
            (16, Bytes::from_static(b"opaque")),
            (16, Bytes::from_static(b"dup")),
            (u64::MAX, Bytes::from_static(b"x")),
        ]
    );
    assert_eq!(body(&d), b);
}

#[test]
fn a_version_other_than_one_stops_the_parse() {
    // What follows the version would be a malformed uvarint under v1 rules.
    let b = raw(&[&[0x02], &[0xff; 12]]);
    assert_eq!(
        decode(&b, &Limits::default()),
        Err(DecodeError::UnsupportedVersion(2))
    );
    assert_eq!(
        decode(&raw(&[&[0x00]]), &Limits::default()),
        Err(DecodeError::UnsupportedVersion(0))
    );
    let e = decode(&raw(&[&[0x80; 11]]), &Limits::default()).unwrap_err();
    assert_eq!(
        e,
        DecodeError::Uvarint {
            field: Field::Version,
            source: UvarintError::TooLong
        }
    );
    assert_eq!(e.code(), ErrorCode::InvalidUvarint);
}

#[test]
fn non_minimal_header_uvarints_are_accepted_and_re_encoded_minimally() {
    let b = raw(&[
        &[0x81, 0x00, 0x81, 0x80, 0x00, 0x01, 0x00, 0x00, 0x88, 0x00],
        b"12345678",
        &[0x00, 0x00],
    ]);
    let d = decode(&b, &Limits::default()).unwrap();
    assert_eq!((d.version, d.profile_id, d.msg_type), (1, 1, 1));
    assert_eq!(d.msg_id, Bytes::from_static(b"12345678"));
    assert_eq!(
        &body(&d)[..],
        &raw(&[&[1, 1, 1, 0, 0, 8], b"12345678", &[0, 0]])[..]
    );
}

#[test]
fn unknown_flag_bits_are_accepted() {
    let mut e = env();
    e.flags = u64::MAX;
    assert_eq!(decode(&body(&e), &Limits::default()), Ok(e));
}

/// Every cut of a canonical body is rejected, with the rule its position calls for.
#[test]
fn truncation_at_every_position_is_rejected_by_the_right_rule() {
    let mut e = env();
    e.profile_id = 300; // two octets
    e.extensions = Extensions::from_entries([(20u64, b"ab")]);
    let b = body(&e);
    let limits = Limits::default();
    for cut in 0..b.len() {
        let got = decode(&b.slice(..cut), &limits).unwrap_err();
        // Offsets: version 0, profile_id 1-2, msg_type 3, flags 4, ts 5..11,
        // msg_id len 11, msg_id 12..28, ext len 28, ext 29..33, payload len 33, payload.
        let want = match cut {
            0 => DecodeError::Missing(Field::Version),
            1 => DecodeError::Missing(Field::ProfileId),
            2 => DecodeError::Uvarint {
                field: Field::ProfileId,
                source: UvarintError::Truncated { read: 1 },
            },
            3 => DecodeError::Missing(Field::MsgType),
            4 => DecodeError::Missing(Field::Flags),
            5 => DecodeError::Missing(Field::TsUnixMs),
            6..=10 => DecodeError::Uvarint {
                field: Field::TsUnixMs,
                source: UvarintError::Truncated { read: cut - 5 },
            },
            11 => DecodeError::Missing(Field::MsgId),
            12..=27 => DecodeError::Truncated {
                field: Field::MsgId,
                declared: 16,
                available: cut - 12,
            },
            28 => DecodeError::Missing(Field::Extensions),
            29..=32 => DecodeError::Truncated {
                field: Field::Extensions,
                declared: 4,
                available: cut - 29,
            },
            33 => DecodeError::Missing(Field::Payload),
            _ => DecodeError::Truncated {
                field: Field::Payload,
                declared: 9,
                available: cut - 34,
            },
        };
        assert_eq!(got, want, "cut at {cut}");
    }
}

#[test]
fn codes_follow_the_e1_mapping() {
    let cases = [
        (
            DecodeError::BodyTooLarge { len: 2, max: 1 },
            ErrorCode::FrameTooLarge,
        ),
        (
            DecodeError::Uvarint {
                field: Field::Flags,
                source: UvarintError::Overflow { octet: 2 },
            },
            ErrorCode::InvalidUvarint,
        ),
        (
            DecodeError::UnsupportedVersion(2),
            ErrorCode::UnsupportedVersion,
        ),
        (
            DecodeError::Missing(Field::Payload),
            ErrorCode::InvalidEnvelope,
        ),
        (
            DecodeError::MsgIdLength {
                len: 0,
                min: 1,
                max: 2,
            },
            ErrorCode::MsgIdInvalid,
        ),
        (
            DecodeError::ExtTooLarge { len: 2, max: 1 },
            ErrorCode::ExtTooLarge,
        ),
        (
            DecodeError::PayloadTooLarge { len: 2, max: 1 },
            ErrorCode::PayloadTooLarge,
        ),
        (
            DecodeError::Truncated {
                field: Field::MsgId,
                declared: 2,
                available: 1,
            },
            ErrorCode::InvalidFrame,
        ),
        (DecodeError::Trailing(1), ErrorCode::InvalidFrame),
    ];
    for (e, c) in cases {
        assert_eq!(e.code(), c, "{e}");
    }
}

#[test]
fn octets_after_the_payload_are_rejected() {
    let mut b = body(&env()).to_vec();
    b.push(0);
    assert_eq!(
        decode(&Bytes::from(b), &Limits::default()),
        Err(DecodeError::Trailing(1))
    );
}

fn limits() -> Limits {
    Limits {
        max_frame_bytes: 1 << 20,
        min_msg_id_bytes: 4,
        max_msg_id_bytes: 8,
        max_ext_bytes: 10,
        max_payload_bytes: 20,
    }
}

fn with(msg_id: usize, ext_val: Option<usize>, payload: usize) -> Bytes {
    let mut e = env();
    e.msg_id = Bytes::from(vec![b'm'; msg_id]);
    e.extensions = match ext_val {
        // type 16 (1 octet) + length (1 octet) + value
        Some(n) => Extensions::from_entries([(16u64, vec![b'x'; n])]),
        None => Extensions::default(),
    };
    e.payload = Bytes::from(vec![b'p'; payload]);
    body(&e)
}

#[test]
fn msg_id_limits_hold_at_exactly_n_and_fail_one_past() {
    let l = limits();
    assert!(decode(&with(4, None, 0), &l).is_ok());
    assert!(decode(&with(8, None, 0), &l).is_ok());
    for (n, min) in [(3, 4), (9, 4), (0, 4)] {
        assert_eq!(
            decode(&with(n, None, 0), &l),
            Err(DecodeError::MsgIdLength {
                len: n as u64,
                min,
                max: 8
            })
        );
    }
    // An empty msg_id is rejected even when MIN_MSG_ID_BYTES is 0 (E1 §4).
    let zero = Limits {
        min_msg_id_bytes: 0,
        ..l
    };
    assert_eq!(
        decode(&with(0, None, 0), &zero).unwrap_err().code(),
        ErrorCode::MsgIdInvalid
    );
}

#[test]
fn extension_and_payload_limits_hold_at_exactly_n_and_fail_one_past() {
    let l = limits();
    assert!(decode(&with(4, Some(8), 0), &l).is_ok()); // block of 10
    assert_eq!(
        decode(&with(4, Some(9), 0), &l),
        Err(DecodeError::ExtTooLarge { len: 11, max: 10 })
    );
    assert!(decode(&with(4, None, 20), &l).is_ok());
    assert_eq!(
        decode(&with(4, None, 21), &l),
        Err(DecodeError::PayloadTooLarge { len: 21, max: 20 })
    );
}

#[test]
fn the_body_limit_holds_at_exactly_n_and_fails_one_past() {
    let b = with(4, None, 0);
    let at = Limits {
        max_frame_bytes: b.len() as u32,
        ..limits()
    };
    assert!(decode(&b, &at).is_ok());
    let under = Limits {
        max_frame_bytes: b.len() as u32 - 1,
        ..limits()
    };
    assert_eq!(
        decode(&b, &under),
        Err(DecodeError::BodyTooLarge {
            len: b.len(),
            max: b.len() as u32 - 1
        })
    );
}

#[test]
fn declared_lengths_meet_their_limit_before_the_octets_are_looked_for() {
    let huge = uv(1 << 40);
    let b = raw(&[HEAD, &huge]);
    assert_eq!(
        decode(&b, &Limits::default()).unwrap_err().code(),
        ErrorCode::MsgIdInvalid
    );
    let b = raw(&[HEAD, &[8], b"abcdefgh", &huge]);
    assert_eq!(
        decode(&b, &Limits::default()).unwrap_err().code(),
        ErrorCode::ExtTooLarge
    );
    let b = raw(&[HEAD, &[8], b"abcdefgh", &[0], &uv(u64::MAX)]);
    assert_eq!(
        decode(&b, &Limits::default()).unwrap_err().code(),
        ErrorCode::PayloadTooLarge
    );
    // Without limits the same declarations are truncations, and nothing is reserved.
    assert_eq!(
        decode(&b, &Limits::unbounded()),
        Err(DecodeError::Truncated {
            field: Field::Payload,
            declared: u64::MAX,
            available: 0
        })
    );
}

#[test]
fn the_extensions_block_is_parsed_within_its_own_bounds() {
    let l = Limits::default();
    let msg = raw(&[HEAD, &[8], b"12345678"]);
    // ext_val runs past the block, although the body has octets after it.
    let b = raw(&[&msg, &[3, 16, 5, b'a'], &[3], b"xyz"]);
    assert_eq!(
        decode(&b, &l),
        Err(DecodeError::Truncated {
            field: Field::ExtVal(0),
            declared: 5,
            available: 1
        })
    );
    // The block ends after an ext_type.
    let b = raw(&[&msg, &[3, 16, 0, 17], &[0]]);
    assert_eq!(decode(&b, &l), Err(DecodeError::Missing(Field::ExtVal(1))));
    // An ext_type uvarint reaches the end of the block.
    let b = raw(&[&msg, &[2, 0x90, 0x80], &[0]]);
    assert_eq!(
        decode(&b, &l),
        Err(DecodeError::Uvarint {
            field: Field::ExtType(0),
            source: UvarintError::Truncated { read: 2 }
        })
    );
    assert!(Extensions::from_block(Bytes::from_static(&[16, 1, b'a', 0, 0])).is_ok());
    assert!(Extensions::from_block(Bytes::from_static(&[16, 2, b'a'])).is_err());
}

#[test]
fn a_frame_is_its_prefix_and_body() {
    let e = env();
    let f = frame_bytes(&e).unwrap();
    assert_eq!(&f[..4], &(e.encoded_len() as u32).to_be_bytes());
    assert_eq!(&f[4..], &body(&e)[..]);
}
