//! E1 envelope encoding (encoding-binding-e1 §3): the exact field order, size limits applied
//! to declared lengths before they are trusted, and the canonical encoder.

use crate::envelope::{Envelope, Extensions, CORE_VERSION};
use crate::limits::Limits;
use crate::reject::{CoreError, Field};
use crate::uvarint;
use bytes::{BufMut, Bytes};

/// A cursor over one frame body.
struct Reader<'a> {
    body: &'a Bytes,
    pos: usize,
}

impl Reader<'_> {
    fn remaining(&self) -> usize {
        self.body.len() - self.pos
    }

    /// Reads a required uvarint field. A body that ends exactly before the field is a
    /// missing field; one that ends inside it is a truncated uvarint.
    #[inline]
    fn uvarint(&mut self, field: Field) -> Result<u64, CoreError> {
        let rest = &self.body[self.pos..];
        if rest.is_empty() {
            return Err(CoreError::MissingField { field });
        }
        let (v, n) = uvarint::decode(rest).map_err(|kind| CoreError::Uvarint { field, kind })?;
        self.pos += n;
        Ok(v)
    }

    /// Reads the length of a `bytes` field; `bound` is checked before the octets are looked
    /// for, so an oversized declaration is reported as such even when the body is short.
    #[inline]
    fn bytes(
        &mut self,
        field: Field,
        bound: impl FnOnce(u64) -> Result<(), CoreError>,
    ) -> Result<Bytes, CoreError> {
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
        Ok(self.body.slice(start..self.pos))
    }
}

/// Decodes one E1 envelope from a complete frame body.
///
/// Enforced here, because they concern the encoding itself: the version (checked first,
/// and nothing after it is parsed when it is not 1, since a later version may lay the body
/// out differently: no implicit downgrade), uvarint rules, truncation, the msg_id range,
/// `MAX_EXT_BYTES`, `MAX_PAYLOAD_BYTES`, the extensions TLV structure, and trailing octets.
/// Receiver policy (profile, timestamp, flags) is [`crate::validate`]'s job.
pub fn decode(body: &Bytes, limits: &Limits) -> Result<Envelope, CoreError> {
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
        if len == 0
            || len < limits.min_msg_id_bytes as u64
            || len > limits.max_msg_id_bytes as u64
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
    let extensions = if ext.is_empty() {
        Extensions::empty()
    } else {
        Extensions::parse(ext)?
    };
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
