//! E1 envelope encoding (encoding-binding-e1 §3): the exact field order, size limits applied
//! to declared lengths before they are trusted, and the canonical encoder.

use crate::envelope::{share, Envelope, EnvelopeRef, Extensions, ExtensionsRef, CORE_VERSION};
use crate::limits::Limits;
use crate::reject::{CoreError, Field};
use crate::uvarint;
use bytes::{Buf, BufMut, Bytes};

/// A cursor over one frame body. It works on the plain octets and returns borrowed
/// slices, so no reference count is touched while the body is checked.
struct Reader<'a> {
    body: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
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

    /// Reads a `bytes` field; `bound` is checked before the octets are looked for, so an
    /// oversized declaration is reported as such even when the body is short.
    #[inline(always)]
    fn bytes(
        &mut self,
        field: Field,
        bound: impl FnOnce(u64) -> Result<(), CoreError>,
    ) -> Result<&'a [u8], CoreError> {
        let len = self.uvarint(field)?;
        bound(len)?;
        let rest = &self.body[self.pos..];
        if len > rest.len() as u64 {
            return Err(CoreError::TruncatedBytes {
                field,
                len,
                available: rest.len(),
            });
        }
        self.pos += len as usize;
        Ok(&rest[..len as usize])
    }
}

/// Decodes one E1 envelope from a complete frame body, borrowing from it.
///
/// This is the one implementation of the E1 decoding rules; [`decode`] and
/// [`decode_owned`] are this plus the conversion to `Bytes` fields. Enforced here, because
/// they concern the encoding itself: the version (checked first, and nothing after it is
/// parsed when it is not 1, since a later version may lay the body out differently: no
/// implicit downgrade), uvarint rules, truncation, the msg_id range, `MAX_EXT_BYTES`,
/// `MAX_PAYLOAD_BYTES`, the extensions TLV structure, and trailing octets. Receiver policy
/// (profile, timestamp, flags) is [`crate::validate`]'s job ([`crate::validate::validate_ref`]
/// for this view).
///
/// `msg_id`, the extensions and the payload are slices of `body`: no copy and no
/// reference count, so this is the cheapest way to check a frame. The payload always runs
/// to the end of `body`.
#[inline(always)]
pub fn decode_ref<'a>(body: &'a [u8], limits: &Limits) -> Result<EnvelopeRef<'a>, CoreError> {
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
        Extensions::check(ext)?;
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
    Ok(EnvelopeRef {
        version,
        profile_id,
        msg_type,
        flags,
        ts_unix_ms,
        msg_id,
        extensions: ExtensionsRef::from_checked(ext),
        payload,
    })
}

/// Decodes one E1 envelope from a complete frame body into an owned [`Envelope`]: the
/// rules, order of checks and errors of [`decode_ref`], which it is built on.
///
/// `msg_id`, the extensions and the payload are slices of `body` (no copy, one
/// reference-count increment each). When the caller owns the body, [`decode_owned`] does
/// the same with fewer reference-count updates; when the envelope need not outlive the
/// buffer, [`decode_ref`] needs none.
pub fn decode(body: &Bytes, limits: &Limits) -> Result<Envelope, CoreError> {
    Ok(decode_ref(body, limits)?.to_owned_in(body))
}

/// [`decode`] for a body the caller hands over: identical checks and result, but the
/// payload (the body's tail) reuses the body's own reference instead of taking a new one.
pub fn decode_owned(mut body: Bytes, limits: &Limits) -> Result<Envelope, CoreError> {
    let v = decode_ref(&body, limits)?;
    let msg_id = share(&body, v.msg_id);
    let extensions = Extensions::from_checked(share(&body, v.extensions.as_bytes()));
    // The payload ends the body (trailing octets are rejected), so it is the body advanced
    // past everything before it; `v` borrows `body` and is not used after this line.
    let payload_start = body.len() - v.payload.len();
    let (profile_id, msg_type, flags, ts_unix_ms) =
        (v.profile_id, v.msg_type, v.flags, v.ts_unix_ms);
    let payload = if payload_start == body.len() {
        Bytes::new()
    } else {
        body.advance(payload_start);
        body
    };
    Ok(Envelope {
        version: CORE_VERSION,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reject::Field;

    fn typical() -> Envelope {
        Envelope {
            version: 1,
            profile_id: 1,
            msg_type: 2,
            flags: 0b100,
            ts_unix_ms: 1_700_000_000_000,
            msg_id: Bytes::from_static(b"0123456789abcdef"),
            extensions: Extensions::from_entries([(3, &b"core"[..]), (16, &b"profile"[..])]),
            payload: Bytes::from_static(br#"{"jsonrpc":"2.0"}"#),
        }
    }

    fn body_of(env: &Envelope) -> Bytes {
        let mut out = Vec::new();
        encode_body(env, &mut out);
        Bytes::from(out)
    }

    #[test]
    fn decode_ref_borrows_every_field_from_the_body() {
        let env = typical();
        let body = body_of(&env);
        let v = decode_ref(&body, &Limits::default()).unwrap();
        assert_eq!(v, env.view());
        let ends = |s: &[u8]| s.as_ptr_range();
        let whole = body.as_ptr_range();
        for part in [v.msg_id, v.extensions.as_bytes(), v.payload] {
            assert!(whole.start <= ends(part).start && ends(part).end <= whole.end);
        }
        assert_eq!(
            v.payload.as_ptr_range().end,
            whole.end,
            "payload ends the body"
        );
        let exts: Vec<_> = v.extensions.iter().map(|e| (e.ext_type, e.value)).collect();
        assert_eq!(exts, [(3, &b"core"[..]), (16, &b"profile"[..])]);
        assert!(v.extensions.iter().next().unwrap().is_reserved());
    }

    #[test]
    fn to_owned_in_slices_the_body_it_was_decoded_from() {
        let env = typical();
        let body = body_of(&env);
        let owned = decode_ref(&body, &Limits::default())
            .unwrap()
            .to_owned_in(&body);
        assert_eq!(owned, env);
        // Zero-copy: the owned fields point into the same buffer.
        assert_eq!(owned.payload.as_ptr_range().end, body.as_ptr_range().end);
        assert!(body.as_ptr_range().contains(&owned.msg_id.as_ptr()));
    }

    #[test]
    fn to_owned_in_a_foreign_buffer_copies_instead_of_panicking() {
        let env = typical();
        let body = body_of(&env);
        let other = Bytes::from(vec![0u8; body.len()]);
        let owned = decode_ref(&body, &Limits::default())
            .unwrap()
            .to_owned_in(&other);
        assert_eq!(owned, env);
        assert!(!other.as_ptr_range().contains(&owned.payload.as_ptr()));
    }

    #[test]
    fn decode_ref_rejects_like_decode() {
        let limits = Limits::default();
        let good = body_of(&typical());
        let mut version_2 = good.to_vec();
        version_2[0] = 2;
        let mut trailing = good.to_vec();
        trailing.push(0);
        let short_id = body_of(&Envelope {
            msg_id: Bytes::from_static(b"abc"),
            ..typical()
        });
        let cases: [(&[u8], CoreError); 5] = [
            (&version_2, CoreError::UnsupportedVersion { version: 2 }),
            (&trailing, CoreError::TrailingBytes { count: 1 }),
            (
                &good[..good.len() - 1],
                CoreError::TruncatedBytes {
                    field: Field::Payload,
                    len: 17,
                    available: 16,
                },
            ),
            (
                &good[..1],
                CoreError::MissingField {
                    field: Field::ProfileId,
                },
            ),
            (
                &short_id,
                CoreError::MsgIdLength {
                    len: 3,
                    min: limits.min_msg_id_bytes,
                    max: limits.max_msg_id_bytes,
                },
            ),
        ];
        for (body, err) in cases {
            assert_eq!(decode_ref(body, &limits), Err(err.clone()));
            assert_eq!(decode(&Bytes::copy_from_slice(body), &limits), Err(err));
        }
    }
}
