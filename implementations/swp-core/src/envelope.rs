//! The SWP envelope (core-spec §4) and its E1 extensions block, held zero-copy in `Bytes`.

use crate::reject::{CoreError, Field};
use crate::uvarint;
use bytes::{BufMut, Bytes};

/// The core version this implementation speaks.
pub const CORE_VERSION: u64 = 1;

/// One decoded envelope. `msg_id`, `extensions` and `payload` share the frame's buffer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Envelope {
    /// Core version (must be 1).
    pub version: u64,
    /// Profile that defines the payload.
    pub profile_id: u64,
    /// Profile-defined message type.
    pub msg_type: u64,
    /// Core flag bits; none are defined in core v1.
    pub flags: u64,
    /// Sender timestamp in ms since the Unix epoch; 0 when unavailable.
    pub ts_unix_ms: u64,
    /// Opaque correlation identifier.
    pub msg_id: Bytes,
    /// The raw extensions TLV block, already checked to be well-formed.
    pub extensions: Extensions,
    /// Opaque profile payload.
    pub payload: Bytes,
}

/// A well-formed extensions TLV block (`ext_type` uvarint, `ext_val` bytes, repeated).
///
/// Kept as the raw block so decoding never allocates; iterate with [`Extensions::iter`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Extensions(Bytes);

/// First extension type available to profiles; `0..=15` are reserved for core and bindings.
pub const FIRST_PROFILE_EXT_TYPE: u64 = 16;

/// One extension entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extension {
    /// `ext_type`.
    pub ext_type: u64,
    /// `ext_val`.
    pub value: Bytes,
}

impl Extension {
    /// Whether the type is in the range reserved for core and bindings.
    pub fn is_reserved(&self) -> bool {
        self.ext_type < FIRST_PROFILE_EXT_TYPE
    }
}

impl Extensions {
    /// An empty block.
    pub const fn empty() -> Self {
        Extensions(Bytes::new())
    }

    /// Checks that `block` is a sequence of whole TLV entries and wraps it.
    pub fn parse(block: Bytes) -> Result<Self, CoreError> {
        Extensions::check(&block)?;
        Ok(Extensions(block))
    }

    /// Wraps a block that [`Extensions::check`] accepted.
    pub(crate) fn from_checked(block: Bytes) -> Self {
        Extensions(block)
    }

    /// Checks that `block` is a sequence of whole TLV entries.
    pub(crate) fn check(block: &[u8]) -> Result<(), CoreError> {
        let mut rest = block;
        while !rest.is_empty() {
            let (_, n) = uvarint::decode(rest).map_err(|kind| CoreError::Uvarint {
                field: Field::ExtType,
                kind,
            })?;
            rest = &rest[n..];
            let (len, n) = uvarint::decode(rest).map_err(|kind| CoreError::Uvarint {
                field: Field::ExtValue,
                kind,
            })?;
            rest = &rest[n..];
            if len > rest.len() as u64 {
                return Err(CoreError::TruncatedBytes {
                    field: Field::ExtValue,
                    len,
                    available: rest.len(),
                });
            }
            rest = &rest[len as usize..];
        }
        Ok(())
    }

    /// Encodes entries into a block, in the order given.
    pub fn from_entries<'a>(entries: impl IntoIterator<Item = (u64, &'a [u8])>) -> Self {
        let mut out = Vec::new();
        for (t, v) in entries {
            uvarint::encode(t, &mut out);
            uvarint::encode(v.len() as u64, &mut out);
            out.put_slice(v);
        }
        Extensions(Bytes::from(out))
    }

    /// The raw block.
    pub fn as_bytes(&self) -> &Bytes {
        &self.0
    }

    /// Octet length of the block.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the block is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries, in wire order. The block was validated on construction, so the
    /// iterator cannot fail.
    pub fn iter(&self) -> impl Iterator<Item = Extension> + '_ {
        let mut pos = 0usize;
        std::iter::from_fn(move || {
            let rest = self.0.get(pos..)?;
            if rest.is_empty() {
                return None;
            }
            let (t, a) = uvarint::decode(rest).ok()?;
            let (len, b) = uvarint::decode(&rest[a..]).ok()?;
            let start = pos + a + b;
            let end = start.checked_add(usize::try_from(len).ok()?)?;
            let value = self.0.get(start..end).map(|_| self.0.slice(start..end))?;
            pos = end;
            Some(Extension { ext_type: t, value })
        })
    }
}

impl Envelope {
    /// Octets the E1 encoding of this envelope takes (the frame body length `N`).
    pub fn encoded_len(&self) -> usize {
        uvarint::encoded_len(self.version)
            + uvarint::encoded_len(self.profile_id)
            + uvarint::encoded_len(self.msg_type)
            + uvarint::encoded_len(self.flags)
            + uvarint::encoded_len(self.ts_unix_ms)
            + uvarint::encoded_len(self.msg_id.len() as u64)
            + self.msg_id.len()
            + uvarint::encoded_len(self.extensions.len() as u64)
            + self.extensions.len()
            + uvarint::encoded_len(self.payload.len() as u64)
            + self.payload.len()
    }
}
