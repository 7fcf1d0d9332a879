//! Sans-IO reference implementation of SWP Core v1: stream framing, the E1 envelope
//! encoding, limits and validation, the canonical `ERR_*` taxonomy and profile dispatch.
//!
//! Nothing here performs I/O: callers feed octets and receive envelopes or typed rejects.
//! The optional `tokio-codec` feature adds a tokio-util codec over the same functions.
#![forbid(unsafe_code)]

#[cfg(feature = "tokio-codec")]
pub mod codec;
pub mod dispatch;
pub mod e1;
pub mod envelope;
pub mod error;
pub mod frame;
pub mod limits;
pub mod receiver;
pub mod reject;
pub mod uvarint;
pub mod validate;

pub use envelope::{
    Envelope, EnvelopeRef, Extension, ExtensionRef, Extensions, ExtensionsRef, CORE_VERSION,
};
pub use error::{CoreCategory, ErrorCode, UnknownCodeName};
pub use limits::{Limits, Policy, RateLimit, UnknownProfilePolicy};
pub use receiver::{Event, Receiver};
pub use reject::{CoreError, Field};
pub use validate::Validated;
