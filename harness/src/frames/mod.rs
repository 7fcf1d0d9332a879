//! The harness's own SWP octet codec, written from the spec kit (core-spec, encoding-binding-e1,
//! error-codes) and sharing no code with `swp-core`: the harness encodes what it sends and
//! decodes what it reads with it, so a bug the reference shares with its own codec cannot
//! pass unnoticed (docs/architecture.md, Crates). Depends on `bytes` and `thiserror` only.
//!
//! - [`uvarint`]: E1 §2.1 integers.
//! - [`e1`]: the envelope, its canonical encoder and the limit-enforcing decoder.
//! - [`frame`]: the length prefix, cutting streams into bodies, [`FrameDecoder`].
//! - [`codes`]: the canonical `ERR_*` taxonomy and its legacy aliases.
//! - [`limits`]: [`Limits`] and the spec's recommended defaults.
//!
//! Hostile input never panics and never makes the codec reserve memory from a length it has
//! not seen the octets for.

pub mod codes;
pub mod e1;
pub mod frame;
pub mod limits;
pub mod uvarint;

pub use codes::{ErrorCode, UnknownAlias, UnknownCodeName};
pub use e1::{DecodeError, Envelope, Extensions};
pub use frame::{prefixed, take_frame, BodyTooLong, FrameDecoder, FrameError};
pub use limits::Limits;
pub use uvarint::UvarintError;
