//! State ids (§4: "`state_id` SHOULD be content-addressable hash"; §6: "enforce hash/id
//! consistency"). The doc fixes neither the hash nor the id's form, so the scheme is
//! configuration. The content is the blob alone: the doc speaks of "content-addressable
//! blobs", and parents are references about the state, not its content.

use bytes::Bytes;
use sha2::{Digest, Sha256};

/// The prefix of a tagged id.
pub const TAG: &[u8] = b"sha256:";

/// How state ids relate to content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IdScheme {
    /// Every id is the 32-octet SHA-256 of the blob (the reference's scheme).
    #[default]
    Sha256,
    /// An id starting with `sha256:` is that prefix and the 64 lower-case hex digits of
    /// the blob's SHA-256, and is checked; any other id is an opaque name.
    Tagged,
    /// Ids are opaque names; nothing is checked.
    Opaque,
}

/// Why an id does not fit its content or its scheme.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// Not of the scheme's form.
    #[error("{0}")]
    Malformed(&'static str),
    /// Of the right form, for other content.
    #[error("the id is not the SHA-256 of the blob")]
    Mismatch,
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

impl IdScheme {
    /// The id of `blob` under this scheme (for `Opaque`, the `Sha256` form: a good name).
    pub fn content_id(self, blob: &[u8]) -> Bytes {
        let d = Sha256::digest(blob);
        match self {
            IdScheme::Sha256 | IdScheme::Opaque => Bytes::copy_from_slice(&d),
            IdScheme::Tagged => {
                let mut v = TAG.to_vec();
                v.extend_from_slice(hex(&d).as_bytes());
                Bytes::from(v)
            }
        }
    }

    /// Checks the form of an id whose content is not at hand (a delta's resulting state).
    pub fn check_form(self, id: &[u8]) -> Result<(), IdError> {
        match self {
            IdScheme::Sha256 if id.len() != 32 => {
                Err(IdError::Malformed("a SHA-256 state id has 32 octets"))
            }
            IdScheme::Tagged if id.starts_with(TAG) => {
                let digits = &id[TAG.len()..];
                if digits.len() == 64
                    && digits
                        .iter()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
                {
                    Ok(())
                } else {
                    Err(IdError::Malformed(
                        "a sha256: state id has 64 lower-case hex digits",
                    ))
                }
            }
            _ => Ok(()),
        }
    }

    /// Checks an id against its blob (STATE-005).
    pub fn verify(self, id: &[u8], blob: &[u8]) -> Result<(), IdError> {
        self.check_form(id)?;
        let checked = match self {
            IdScheme::Sha256 => true,
            IdScheme::Tagged => id.starts_with(TAG),
            IdScheme::Opaque => false,
        };
        if checked && id != &self.content_id(blob)[..] {
            return Err(IdError::Mismatch);
        }
        Ok(())
    }
}
