//! The SWP envelope (core-spec §4) and its E1 extensions block: owned and zero-copy in
//! `Bytes` ([`Envelope`]), or borrowed from the frame body ([`EnvelopeRef`]).

use crate::reject::{CoreError, Field};
use crate::uvarint;
use bytes::{BufMut, Bytes};
use std::ops::Range;

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

/// A decoded envelope borrowed from its frame body: `msg_id`, `extensions` and `payload`
/// are plain slices of the body, so producing and dropping it touches no reference count.
///
/// Returned by [`crate::e1::decode_ref`]; suited to paths that inspect a frame and are done
/// with it before the body's buffer is released (validate-and-forward, e.g. a relay). Keep
/// an [`Envelope`] instead ([`EnvelopeRef::to_owned_in`]) when the envelope must outlive
/// the buffer borrow, e.g. in a receive queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvelopeRef<'a> {
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
    pub msg_id: &'a [u8],
    /// The raw extensions TLV block, already checked to be well-formed.
    pub extensions: ExtensionsRef<'a>,
    /// Opaque profile payload.
    pub payload: &'a [u8],
}

impl EnvelopeRef<'_> {
    /// The owned [`Envelope`] with the same fields. Each `bytes` field that lies within
    /// `body` (always the case when `body` holds the octets this view was decoded from) is
    /// a slice of `body`: a reference-count increment, no copy. A field that does not lie
    /// within `body` is copied instead, so a wrong `body` costs an allocation, never a
    /// wrong result or a panic.
    pub fn to_owned_in(&self, body: &Bytes) -> Envelope {
        Envelope {
            version: self.version,
            profile_id: self.profile_id,
            msg_type: self.msg_type,
            flags: self.flags,
            ts_unix_ms: self.ts_unix_ms,
            msg_id: share(body, self.msg_id),
            extensions: Extensions::from_checked(share(body, self.extensions.as_bytes())),
            payload: share(body, self.payload),
        }
    }
}

/// Where `part` starts within `whole`, if it lies entirely within it. Compares addresses
/// only (no pointer is dereferenced), which is how a borrowed field is mapped back to the
/// `Bytes` it was borrowed from.
#[inline(always)]
fn offset_in(whole: &[u8], part: &[u8]) -> Option<usize> {
    let start = part.as_ptr().addr().checked_sub(whole.as_ptr().addr())?;
    (start.checked_add(part.len())? <= whole.len()).then_some(start)
}

/// `part` as a slice of `body` when it lies within it, else a copy.
#[inline(always)]
pub(crate) fn share(body: &Bytes, part: &[u8]) -> Bytes {
    if part.is_empty() {
        return Bytes::new();
    }
    match offset_in(body, part) {
        Some(start) => body.slice(start..start + part.len()),
        None => Bytes::copy_from_slice(part),
    }
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
        entries(&self.0).filter_map(|(ext_type, value)| {
            Some(Extension {
                ext_type,
                // `entries` only yields ranges it checked against the block.
                value: self.0.get(value.clone()).map(|_| self.0.slice(value))?,
            })
        })
    }

    /// A borrowed view of the same block.
    pub fn view(&self) -> ExtensionsRef<'_> {
        ExtensionsRef(&self.0)
    }
}

/// The entries of a checked TLV block as `(ext_type, range of ext_val)`, the one TLV walker
/// behind both [`Extensions::iter`] and [`ExtensionsRef::iter`]. It stops at the first
/// malformed entry instead of failing, which cannot happen on a checked block.
fn entries(block: &[u8]) -> impl Iterator<Item = (u64, Range<usize>)> + '_ {
    let mut pos = 0usize;
    std::iter::from_fn(move || {
        let rest = block.get(pos..)?;
        if rest.is_empty() {
            return None;
        }
        let (t, a) = uvarint::decode(rest).ok()?;
        let (len, b) = uvarint::decode(rest.get(a..)?).ok()?;
        let start = pos + a + b;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        block.get(start..end)?;
        pos = end;
        Some((t, start..end))
    })
}

/// A well-formed extensions TLV block borrowed from a frame body: [`Extensions`] without
/// the reference count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExtensionsRef<'a>(&'a [u8]);

/// One extension entry borrowed from the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtensionRef<'a> {
    /// `ext_type`.
    pub ext_type: u64,
    /// `ext_val`.
    pub value: &'a [u8],
}

impl ExtensionRef<'_> {
    /// Whether the type is in the range reserved for core and bindings.
    pub fn is_reserved(&self) -> bool {
        self.ext_type < FIRST_PROFILE_EXT_TYPE
    }
}

impl<'a> ExtensionsRef<'a> {
    /// Checks that `block` is a sequence of whole TLV entries and wraps it.
    pub fn parse(block: &'a [u8]) -> Result<Self, CoreError> {
        Extensions::check(block)?;
        Ok(ExtensionsRef(block))
    }

    /// Wraps a block that [`Extensions::check`] accepted.
    pub(crate) fn from_checked(block: &'a [u8]) -> Self {
        ExtensionsRef(block)
    }

    /// The raw block.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    /// Octet length of the block.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the block is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries, in wire order, borrowed from the block. The block was validated on
    /// construction, so the iterator cannot fail.
    pub fn iter(&self) -> impl Iterator<Item = ExtensionRef<'a>> + 'a {
        let block = self.0;
        entries(block).filter_map(move |(ext_type, value)| {
            Some(ExtensionRef {
                ext_type,
                value: block.get(value)?,
            })
        })
    }
}

impl Envelope {
    /// A borrowed view of this envelope (no reference count is touched).
    pub fn view(&self) -> EnvelopeRef<'_> {
        EnvelopeRef {
            version: self.version,
            profile_id: self.profile_id,
            msg_type: self.msg_type,
            flags: self.flags,
            ts_unix_ms: self.ts_unix_ms,
            msg_id: &self.msg_id,
            extensions: self.extensions.view(),
            payload: &self.payload,
        }
    }

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
