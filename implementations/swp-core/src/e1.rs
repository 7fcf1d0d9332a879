//! E1 envelope encoding (encoding-binding-e1 §3): the exact field order, size limits applied
//! to declared lengths before they are trusted, and the canonical encoder.

use crate::envelope::{Envelope, Extensions, CORE_VERSION};
use crate::limits::Limits;
use crate::reject::{CoreError, Field};
use crate::uvarint;
use bytes::{Buf, BufMut, Bytes};
use std::ops::Range;

/// Where each field of a valid body lies: the scalars, and the ranges of the `bytes` fields.
struct Layout {
    profile_id: u64,
    msg_type: u64,
    flags: u64,
    ts_unix_ms: u64,
    msg_id: Range<usize>,
    ext: Range<usize>,
    /// Always runs to the end of the body (trailing octets are rejected).
    payload_start: usize,
}

/// A cursor over one frame body. It works on the plain octets and only records ranges, so
/// no reference count is touched until the whole body is known to be valid.
struct Reader<'a> {
    body: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    #[inline(always)]
    fn remaining(&self) -> usize {
        self.body.len() - self.pos
    }

    /// Reads a required uvarint field. A body that ends exactly before the field is a
    /// missing field; one that ends inside it is a truncated uvarint.
    #[inline(always)]
    fn uvarint(&mut self, field: Field) -> Result<u64, CoreError> {
        match self.body.get(self.pos) {
            // One-octet values (every field of a typical frame but the timestamp).
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                Ok(u64::from(b))
            }
            Some(_) => self.uvarint_long(field),
            None => Err(CoreError::MissingField { field }),
        }
    }

    #[inline(never)]
    fn uvarint_long(&mut self, field: Field) -> Result<u64, CoreError> {
        let (v, n) = uvarint::decode(&self.body[self.pos..])
            .map_err(|kind| CoreError::Uvarint { field, kind })?;
        self.pos += n;
        Ok(v)
    }

    /// Reads the length of a `bytes` field; `bound` is checked before the octets are looked
    /// for, so an oversized declaration is reported as such even when the body is short.
    #[inline(always)]
    fn bytes(
        &mut self,
        field: Field,
        bound: impl FnOnce(u64) -> Result<(), CoreError>,
    ) -> Result<Range<usize>, CoreError> {
        let len = self.uvarint(field)?;
        bound(len)?;
        let available = self.remaining();
        if len > available as u64 {
            return Err(CoreError::TruncatedBytes {
                field,
                len,
                available,
            });
        }
        let start = self.pos;
        self.pos += len as usize;
        Ok(start..self.pos)
    }
}

/// Checks a whole body and says where its fields lie; see [`decode`] for the rules.
#[inline(always)]
fn layout(body: &[u8], limits: &Limits) -> Result<Layout, CoreError> {
    let mut r = Reader { body, pos: 0 };
    let version = r.uvarint(Field::Version)?;
    if version != CORE_VERSION {
        return Err(CoreError::UnsupportedVersion { version });
    }
    let profile_id = r.uvarint(Field::ProfileId)?;
    let msg_type = r.uvarint(Field::MsgType)?;
    let flags = r.uvarint(Field::Flags)?;
    let ts_unix_ms = r.uvarint(Field::TsUnixMs)?;
    let msg_id = r.bytes(Field::MsgId, |len| {
        if len == 0 || len < limits.min_msg_id_bytes as u64 || len > limits.max_msg_id_bytes as u64
        {
            Err(CoreError::MsgIdLength {
                len,
                min: limits.min_msg_id_bytes,
                max: limits.max_msg_id_bytes,
            })
        } else {
            Ok(())
        }
    })?;
    let ext = r.bytes(Field::Extensions, |len| {
        if len > limits.max_ext_bytes as u64 {
            Err(CoreError::ExtTooLarge {
                len,
                max: limits.max_ext_bytes,
            })
        } else {
            Ok(())
        }
    })?;
    if !ext.is_empty() {
        Extensions::check(&body[ext.clone()])?;
    }
    let payload = r.bytes(Field::Payload, |len| {
        if len > limits.max_payload_bytes as u64 {
            Err(CoreError::PayloadTooLarge {
                len,
                max: limits.max_payload_bytes,
            })
        } else {
            Ok(())
        }
    })?;
    if r.remaining() != 0 {
        return Err(CoreError::TrailingBytes {
            count: r.remaining(),
        });
    }
    Ok(Layout {
        profile_id,
        msg_type,
        flags,
        ts_unix_ms,
        msg_id,
        ext,
        payload_start: payload.start,
    })
}

/// Decodes one E1 envelope from a complete frame body.
///
/// Enforced here, because they concern the encoding itself: the version (checked first,
/// and nothing after it is parsed when it is not 1, since a later version may lay the body
/// out differently: no implicit downgrade), uvarint rules, truncation, the msg_id range,
/// `MAX_EXT_BYTES`, `MAX_PAYLOAD_BYTES`, the extensions TLV structure, and trailing octets.
/// Receiver policy (profile, timestamp, flags) is [`crate::validate`]'s job.
///
/// `msg_id`, the extensions and the payload are slices of `body` (no copy). When the caller
/// owns the body, [`decode_owned`] does the same with fewer reference-count updates.
pub fn decode(body: &Bytes, limits: &Limits) -> Result<Envelope, CoreError> {
    let l = layout(body, limits)?;
    Ok(assemble(body.clone(), l))
}

/// [`decode`] for a body the caller hands over: identical checks and result, but the
/// payload (the body's tail) reuses the body's own reference instead of taking a new one.
pub fn decode_owned(body: Bytes, limits: &Limits) -> Result<Envelope, CoreError> {
    let l = layout(&body, limits)?;
    Ok(assemble(body, l))
}

/// Builds the envelope of a checked body: `msg_id` and the extensions are slices of it,
/// and the payload is the body itself, advanced to the payload's start.
#[inline(always)]
fn assemble(mut body: Bytes, l: Layout) -> Envelope {
    let msg_id = body.slice(l.msg_id);
    let extensions = Extensions::from_checked(body.slice(l.ext));
    let payload = if l.payload_start == body.len() {
        Bytes::new()
    } else {
        body.advance(l.payload_start);
        body
    };
    Envelope {
        version: CORE_VERSION,
        profile_id: l.profile_id,
        msg_type: l.msg_type,
        flags: l.flags,
        ts_unix_ms: l.ts_unix_ms,
        msg_id,
        extensions,
        payload,
    }
}

/// Appends the canonical E1 body of `env` (no length prefix).
pub fn encode_body(env: &Envelope, out: &mut impl BufMut) {
    uvarint::encode(env.version, out);
    uvarint::encode(env.profile_id, out);
    uvarint::encode(env.msg_type, out);
    uvarint::encode(env.flags, out);
    uvarint::encode(env.ts_unix_ms, out);
    uvarint::encode(env.msg_id.len() as u64, out);
    out.put_slice(&env.msg_id);
    uvarint::encode(env.extensions.len() as u64, out);
    out.put_slice(env.extensions.as_bytes());
    uvarint::encode(env.payload.len() as u64, out);
    out.put_slice(&env.payload);
}

/// The frame (length prefix + body) could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("encoded envelope is {len} octets, which does not fit a u32 length prefix")]
pub struct EncodeError {
    /// The body length.
    pub len: usize,
}

/// Appends a whole frame: the 4-octet big-endian length prefix, then the E1 body.
pub fn encode_frame(env: &Envelope, out: &mut impl BufMut) -> Result<(), EncodeError> {
    let len = env.encoded_len();
    let n = u32::try_from(len).map_err(|_| EncodeError { len })?;
    out.put_u32(n);
    encode_body(env, out);
    Ok(())
}

/// Encodes a whole frame into a fresh buffer sized exactly once.
pub fn frame_bytes(env: &Envelope) -> Result<Bytes, EncodeError> {
    let mut out = Vec::with_capacity(4 + env.encoded_len());
    encode_frame(env, &mut out)?;
    Ok(Bytes::from(out))
}
