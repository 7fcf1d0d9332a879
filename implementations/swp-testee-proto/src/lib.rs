//! The testee protocol of `swp-conform` (`docs/testee-protocol.md`): what a codec-method SUT
//! and the harness exchange. A vendor writing a testee in Rust depends on this crate alone;
//! the harness and the reference testee (`swp-ref testee`) depend on it too, so all three
//! read one definition.
//!
//! Each message is a JSON document preceded by its length as a 4-octet big-endian unsigned
//! integer: requests on the testee's stdin, replies on its stdout.
#![forbid(unsafe_code)]

pub mod framing;
pub mod messages;

pub use framing::{read_message, write_message, ReadError};
pub use messages::*;

/// The protocol version this crate speaks (its major version).
pub const PROTOCOL_VERSION: u32 = 1;

/// Largest message either side accepts; a larger length prefix is a protocol error.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
