//! The E1 envelope (encoding-binding-e1 §3): the eight fields in their fixed order, the
//! extensions TLV block (§3.1), the canonical encoder, and a decoder that enforces the §4
//! limits and rejection rules with one canonical code per failure.
//!
//! How the decoder reads the spec where it leaves a choice (each choice is a typed variant of
//! [`DecodeError`], so a caller can see which rule fired):
//!
//! - `version` is read first and, when it is not 1, nothing else is parsed: a later version
//!   may lay the body out differently, and reading it with v1 rules would be the implicit
//!   downgrade versioning-compatibility §3 forbids.
//! - A uvarint that starts but does not end inside its region (the body, or the extensions
//!   block for TLV entries) is a truncated uvarint, `ERR_INVALID_UVARINT` (E1 §2.1, §4).
//! - A region that ends exactly where a required element should start lacks that element:
//!   core-spec §4.1 says an envelope MUST include it, so this is an envelope invariant
//!   violation, `ERR_INVALID_ENVELOPE` (core-spec §5).
//! - A declared length is compared with its limit before the octets are looked for, so a
//!   msg_id declaring 2^40 octets is `ERR_MSG_ID_INVALID`, not a truncation, and no length
//!   is ever used to reserve memory.
//! - A bytes field whose declared length runs past its region, and octets left over after
//!   the payload, are `ERR_INVALID_FRAME`: the N octets are not exactly one envelope
//!   (core-spec §3 "Exactly N octets representing the encoded Envelope", and its last
//!   `ERR_INVALID_FRAME` bullet; E1 §4 "other decode truncation/format failures").
//! - msg_id of length 0, below `MIN_MSG_ID_BYTES` or above `MAX_MSG_ID_BYTES` is
//!   `ERR_MSG_ID_INVALID`; extensions over `MAX_EXT_BYTES` is `ERR_EXT_TOO_LARGE`; payload
//!   over `MAX_PAYLOAD_BYTES` is `ERR_PAYLOAD_TOO_LARGE` (E1 §4 mapping, error-codes.md §2).
//! - A body longer than `MAX_FRAME_BYTES` is `ERR_FRAME_TOO_LARGE`, so a body handed over
//!   without its prefix gets the same bound as a framed one.
//! - Extension types, reserved (0-15) or not, are all unknown in v1 and kept as they are
//!   (§3.1 "MUST ignore unknown"); the TLV structure of the whole block is still checked.

use super::codes::ErrorCode;
use super::frame::{prefixed, BodyTooLong};
use super::limits::{Limits, CORE_VERSION};
use super::uvarint::{self, UvarintError};
use bytes::Bytes;
use std::fmt;
use thiserror::Error;

/// One SWP envelope. Fields are zero-copy slices of the decoded body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Envelope {
    /// `version` (1 for Core v1).
    pub version: u64,
    /// `profile_id`.
    pub profile_id: u64,
    /// `msg_type`, profile-defined.
    pub msg_type: u64,
    /// `flags`; no bit is assigned in v1.
    pub flags: u64,
    /// `ts_unix_ms`; 0 when the sender has no clock.
    pub ts_unix_ms: u64,
    /// `msg_id`, opaque.
    pub msg_id: Bytes,
    /// The extensions block.
    pub extensions: Extensions,
    /// `payload`, opaque to the core.
    pub payload: Bytes,
}

/// An extensions block, held as its encoded octets so a decoded block re-encodes exactly.
/// Only well-formed TLV sequences can be built (from entries, or checked by [`decode`]), so
/// iterating never meets a malformed entry.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Extensions {
    block: Bytes,
}

impl Extensions {
    /// The block encoding these entries, in order (duplicates kept: E1 does not forbid
    /// them).
    pub fn from_entries<I, V>(entries: I) -> Self
    where
        I: IntoIterator<Item = (u64, V)>,
        V: AsRef<[u8]>,
    {
        let mut out = Vec::new();
        for (t, v) in entries {
            let v = v.as_ref();
            uvarint::encode(t, &mut out);
            uvarint::encode(v.len() as u64, &mut out);
            out.extend_from_slice(v);
        }
        Extensions {
            block: Bytes::from(out),
        }
    }

    /// Checks that `block` is a sequence of TLV entries and wraps it (no size limit here:
    /// that is the decoder's job).
    pub fn from_block(block: Bytes) -> Result<Self, DecodeError> {
        check_tlv(&block)?;
        Ok(Extensions { block })
    }

    /// Octets of the encoded block (what `MAX_EXT_BYTES` bounds).
    pub fn len(&self) -> usize {
        self.block.len()
    }

    /// Whether the block is empty.
    pub fn is_empty(&self) -> bool {
        self.block.is_empty()
    }

    /// The encoded block.
    pub fn as_bytes(&self) -> &Bytes {
        &self.block
    }

    /// The entries in wire order: `(ext_type, ext_val)`, values zero-copy.
    pub fn iter(&self) -> ExtIter {
        ExtIter {
            rest: self.block.clone(),
        }
    }

    /// The entries collected.
    pub fn to_vec(&self) -> Vec<(u64, Bytes)> {
        self.iter().collect()
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Iterator over the entries of an [`Extensions`] block.
#[derive(Debug, Clone)]
pub struct ExtIter {
    rest: Bytes,
}

impl Iterator for ExtIter {
    type Item = (u64, Bytes);

    fn next(&mut self) -> Option<Self::Item> {
        // The block was checked when built; should it somehow be malformed, iteration ends
        // rather than panicking.
        let (t, a) = uvarint::decode(&self.rest).ok()?;
        let (l, b) = uvarint::decode(self.rest.get(a..)?).ok()?;
        let start = a + b;
        let end = start.checked_add(usize::try_from(l).ok()?)?;
        if end > self.rest.len() {
            return None;
        }
        let v = self.rest.slice(start..end);
        self.rest = self.rest.slice(end..);
        Some((t, v))
    }
}

/// Which element of the envelope a decode error concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `version`.
    Version,
    /// `profile_id`.
    ProfileId,
    /// `msg_type`.
    MsgType,
    /// `flags`.
    Flags,
    /// `ts_unix_ms`.
    TsUnixMs,
    /// `msg_id` (its length prefix or its octets).
    MsgId,
    /// The extensions block (its length prefix or its octets).
    Extensions,
    /// `payload` (its length prefix or its octets).
    Payload,
    /// `ext_type` of the extension entry with this index.
    ExtType(usize),
    /// `ext_val` of the extension entry with this index.
    ExtVal(usize),
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Field::Version => f.write_str("version"),
            Field::ProfileId => f.write_str("profile_id"),
            Field::MsgType => f.write_str("msg_type"),
            Field::Flags => f.write_str("flags"),
            Field::TsUnixMs => f.write_str("ts_unix_ms"),
            Field::MsgId => f.write_str("msg_id"),
            Field::Extensions => f.write_str("extensions"),
            Field::Payload => f.write_str("payload"),
            Field::ExtType(i) => write!(f, "ext_type of extension {i}"),
            Field::ExtVal(i) => write!(f, "ext_val of extension {i}"),
        }
    }
}

/// Why a body is not an acceptable E1 envelope. Each variant has exactly one canonical code
/// ([`DecodeError::code`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// The body is longer than `MAX_FRAME_BYTES`. `ERR_FRAME_TOO_LARGE`.
    #[error("body of {len} octets exceeds MAX_FRAME_BYTES {max}")]
    BodyTooLarge {
        /// Body length.
        len: usize,
        /// The limit.
        max: u32,
    },
    /// A uvarint is malformed. `ERR_INVALID_UVARINT`.
    #[error("{field}: {source}")]
    Uvarint {
        /// Where.
        field: Field,
        /// What.
        source: UvarintError,
    },
    /// `version` is not 1. `ERR_UNSUPPORTED_VERSION`.
    #[error("version {0} is not supported (only 1)")]
    UnsupportedVersion(u64),
    /// The region ends where a required element starts. `ERR_INVALID_ENVELOPE`.
    #[error("{0} is missing: the octets end before it")]
    Missing(Field),
    /// msg_id length outside `[max(1, MIN_MSG_ID_BYTES), MAX_MSG_ID_BYTES]`.
    /// `ERR_MSG_ID_INVALID`.
    #[error("msg_id length {len} is outside [{min}, {max}]")]
    MsgIdLength {
        /// Declared length.
        len: u64,
        /// Smallest length accepted.
        min: usize,
        /// Largest length accepted.
        max: usize,
    },
    /// Extensions block over `MAX_EXT_BYTES`. `ERR_EXT_TOO_LARGE`.
    #[error("extensions block of {len} octets exceeds MAX_EXT_BYTES {max}")]
    ExtTooLarge {
        /// Declared length.
        len: u64,
        /// The limit.
        max: usize,
    },
    /// Payload over `MAX_PAYLOAD_BYTES`. `ERR_PAYLOAD_TOO_LARGE`.
    #[error("payload of {len} octets exceeds MAX_PAYLOAD_BYTES {max}")]
    PayloadTooLarge {
        /// Declared length.
        len: u64,
        /// The limit.
        max: usize,
    },
    /// A bytes field declares more octets than its region holds. `ERR_INVALID_FRAME`.
    #[error("{field} declares {declared} octets but only {available} remain")]
    Truncated {
        /// Which field.
        field: Field,
        /// Declared length.
        declared: u64,
        /// Octets left in the region.
        available: usize,
    },
    /// Octets follow the payload inside the body. `ERR_INVALID_FRAME`.
    #[error("{0} octet(s) follow the payload")]
    Trailing(usize),
}

impl DecodeError {
    /// The canonical code of this failure.
    pub const fn code(&self) -> ErrorCode {
        match self {
            DecodeError::BodyTooLarge { .. } => ErrorCode::FrameTooLarge,
            DecodeError::Uvarint { .. } => ErrorCode::InvalidUvarint,
            DecodeError::UnsupportedVersion(_) => ErrorCode::UnsupportedVersion,
            DecodeError::Missing(_) => ErrorCode::InvalidEnvelope,
            DecodeError::MsgIdLength { .. } => ErrorCode::MsgIdInvalid,
            DecodeError::ExtTooLarge { .. } => ErrorCode::ExtTooLarge,
            DecodeError::PayloadTooLarge { .. } => ErrorCode::PayloadTooLarge,
            DecodeError::Truncated { .. } | DecodeError::Trailing(_) => ErrorCode::InvalidFrame,
        }
    }
}

impl Envelope {
    /// Octets of the canonical body [`encode_body`] writes.
    pub fn encoded_len(&self) -> usize {
        let bytes = |n: usize| uvarint::encoded_len(n as u64) + n;
        uvarint::encoded_len(self.version)
            + uvarint::encoded_len(self.profile_id)
            + uvarint::encoded_len(self.msg_type)
            + uvarint::encoded_len(self.flags)
            + uvarint::encoded_len(self.ts_unix_ms)
            + bytes(self.msg_id.len())
            + bytes(self.extensions.len())
            + bytes(self.payload.len())
    }
}

/// Appends the canonical E1 body of `env` (minimal uvarints, fields in §3 order). No limit
/// is applied: the harness must be able to send what a receiver has to reject.
pub fn encode_body(env: &Envelope, out: &mut Vec<u8>) {
    out.reserve(env.encoded_len());
    for v in [
        env.version,
        env.profile_id,
        env.msg_type,
        env.flags,
        env.ts_unix_ms,
    ] {
        uvarint::encode(v, out);
    }
    for f in [&env.msg_id, env.extensions.as_bytes(), &env.payload] {
        uvarint::encode(f.len() as u64, out);
        out.extend_from_slice(f);
    }
}

/// The canonical body of `env`.
pub fn body_bytes(env: &Envelope) -> Bytes {
    let mut out = Vec::new();
    encode_body(env, &mut out);
    Bytes::from(out)
}

/// The whole frame of `env`: prefix and canonical body.
pub fn frame_bytes(env: &Envelope) -> Result<Bytes, BodyTooLong> {
    prefixed(&body_bytes(env))
}

/// A cursor over one region (the body, or the extensions block).
struct Reader<'a> {
    buf: &'a Bytes,
    pos: usize,
    end: usize,
}

impl Reader<'_> {
    fn remaining(&self) -> usize {
        self.end - self.pos
    }

    fn uvarint(&mut self, field: Field) -> Result<u64, DecodeError> {
        if self.remaining() == 0 {
            return Err(DecodeError::Missing(field));
        }
        let (v, n) = uvarint::decode(&self.buf[self.pos..self.end])
            .map_err(|source| DecodeError::Uvarint { field, source })?;
        self.pos += n;
        Ok(v)
    }

    /// The `len` octets that follow, or `Truncated` when the region holds fewer.
    fn take(&mut self, field: Field, len: u64) -> Result<Bytes, DecodeError> {
        let available = self.remaining();
        match usize::try_from(len) {
            Ok(n) if n <= available => {
                let v = self.buf.slice(self.pos..self.pos + n);
                self.pos += n;
                Ok(v)
            }
            _ => Err(DecodeError::Truncated {
                field,
                declared: len,
                available,
            }),
        }
    }
}

/// Checks the TLV structure of an extensions block.
fn check_tlv(block: &Bytes) -> Result<(), DecodeError> {
    let mut r = Reader {
        buf: block,
        pos: 0,
        end: block.len(),
    };
    let mut i = 0;
    while r.remaining() > 0 {
        r.uvarint(Field::ExtType(i))?;
        let len = r.uvarint(Field::ExtVal(i))?;
        r.take(Field::ExtVal(i), len)?;
        i += 1;
    }
    Ok(())
}

/// Decodes one frame body under `limits`. The fields of the result share `body`'s storage.
pub fn decode(body: &Bytes, limits: &Limits) -> Result<Envelope, DecodeError> {
    if body.len() as u64 > u64::from(limits.max_frame_bytes) {
        return Err(DecodeError::BodyTooLarge {
            len: body.len(),
            max: limits.max_frame_bytes,
        });
    }
    let mut r = Reader {
        buf: body,
        pos: 0,
        end: body.len(),
    };
    let version = r.uvarint(Field::Version)?;
    if version != CORE_VERSION {
        return Err(DecodeError::UnsupportedVersion(version));
    }
    let profile_id = r.uvarint(Field::ProfileId)?;
    let msg_type = r.uvarint(Field::MsgType)?;
    let flags = r.uvarint(Field::Flags)?;
    let ts_unix_ms = r.uvarint(Field::TsUnixMs)?;

    let len = r.uvarint(Field::MsgId)?;
    let min = limits.min_msg_id_bytes.max(1);
    let max = limits.max_msg_id_bytes;
    if len < min as u64 || len > max as u64 {
        return Err(DecodeError::MsgIdLength { len, min, max });
    }
    let msg_id = r.take(Field::MsgId, len)?;

    let len = r.uvarint(Field::Extensions)?;
    if len > limits.max_ext_bytes as u64 {
        return Err(DecodeError::ExtTooLarge {
            len,
            max: limits.max_ext_bytes,
        });
    }
    let extensions = Extensions::from_block(r.take(Field::Extensions, len)?)?;

    let len = r.uvarint(Field::Payload)?;
    if len > limits.max_payload_bytes as u64 {
        return Err(DecodeError::PayloadTooLarge {
            len,
            max: limits.max_payload_bytes,
        });
    }
    let payload = r.take(Field::Payload, len)?;
    if r.remaining() > 0 {
        return Err(DecodeError::Trailing(r.remaining()));
    }
    Ok(Envelope {
        version,
        profile_id,
        msg_type,
        flags,
        ts_unix_ms,
        msg_id,
        extensions,
        payload,
    })
}

#[cfg(test)]
mod tests {
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
}
