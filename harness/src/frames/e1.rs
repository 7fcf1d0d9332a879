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
#[path = "e1_tests.rs"]
mod tests;
