//! Typed reasons for rejecting input; each maps to exactly one canonical [`ErrorCode`].

use crate::error::ErrorCode;
use crate::uvarint::UvarintError;
use std::fmt;

/// An E1 envelope field, for error messages and partial decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    /// `msg_id`.
    MsgId,
    /// `extensions`.
    Extensions,
    /// `payload`.
    Payload,
    /// `ext_type` of an extension entry.
    ExtType,
    /// `ext_val` of an extension entry.
    ExtValue,
}

impl Field {
    /// The field's name as the spec writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Field::Version => "version",
            Field::ProfileId => "profile_id",
            Field::MsgType => "msg_type",
            Field::Flags => "flags",
            Field::TsUnixMs => "ts_unix_ms",
            Field::MsgId => "msg_id",
            Field::Extensions => "extensions",
            Field::Payload => "payload",
            Field::ExtType => "ext_type",
            Field::ExtValue => "ext_val",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why the core rejected input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoreError {
    /// The stream ended inside the 4-octet length prefix.
    #[error("stream ended after {have} of the 4 length-prefix octets")]
    TruncatedPrefix {
        /// Octets of the prefix that arrived.
        have: usize,
    },
    /// `N = 0`.
    #[error("length prefix is zero")]
    ZeroLength,
    /// `N > MAX_FRAME_BYTES`, decided from the prefix alone.
    #[error("length prefix {len} exceeds MAX_FRAME_BYTES {max}")]
    FrameTooLarge {
        /// Declared length.
        len: u32,
        /// The bound.
        max: u32,
    },
    /// The stream ended inside a frame body.
    #[error("stream ended after {have} of {need} frame-body octets")]
    TruncatedBody {
        /// Body octets that arrived.
        have: usize,
        /// Declared body length.
        need: usize,
    },
    /// A field's uvarint is malformed.
    #[error("{field}: uvarint {kind}")]
    Uvarint {
        /// Which field.
        field: Field,
        /// How it is malformed.
        kind: UvarintError,
    },
    /// The body ended cleanly before a required field began.
    #[error("required field {field} is missing: the frame body ends before it")]
    MissingField {
        /// The first absent field.
        field: Field,
    },
    /// A `bytes` field declares more octets than remain in the frame body.
    #[error("{field} declares {len} octets but only {available} remain in the frame body")]
    TruncatedBytes {
        /// Which field.
        field: Field,
        /// Declared length.
        len: u64,
        /// Octets remaining.
        available: usize,
    },
    /// Octets follow the payload inside the frame body.
    #[error("{count} octet(s) follow the payload inside the frame body")]
    TrailingBytes {
        /// How many.
        count: usize,
    },
    /// `version != 1`.
    #[error("unsupported core version {version} (this receiver supports 1)")]
    UnsupportedVersion {
        /// The version received.
        version: u64,
    },
    /// `msg_id` length outside `[MIN_MSG_ID_BYTES, MAX_MSG_ID_BYTES]` (or empty).
    #[error("msg_id is {len} octets, outside [{min}, {max}]")]
    MsgIdLength {
        /// The length received.
        len: u64,
        /// The lower bound.
        min: usize,
        /// The upper bound.
        max: usize,
    },
    /// The extensions block exceeds `MAX_EXT_BYTES`.
    #[error("extensions block of {len} octets exceeds MAX_EXT_BYTES {max}")]
    ExtTooLarge {
        /// Declared length.
        len: u64,
        /// The bound.
        max: usize,
    },
    /// The payload exceeds `MAX_PAYLOAD_BYTES`.
    #[error("payload of {len} octets exceeds MAX_PAYLOAD_BYTES {max}")]
    PayloadTooLarge {
        /// Declared length.
        len: u64,
        /// The bound.
        max: usize,
    },
    /// `ts_unix_ms` is older than the freshness window.
    #[error("ts_unix_ms {ts} is {age_ms} ms old, beyond MAX_CLOCK_SKEW_MS {skew}")]
    StaleTimestamp {
        /// The timestamp.
        ts: u64,
        /// How old it is.
        age_ms: u64,
        /// The window.
        skew: u64,
    },
    /// `ts_unix_ms` is ahead of the receiver clock by more than the window.
    #[error("ts_unix_ms {ts} is {ahead_ms} ms in the future, beyond MAX_CLOCK_SKEW_MS {skew}")]
    FutureTimestamp {
        /// The timestamp.
        ts: u64,
        /// How far ahead.
        ahead_ms: u64,
        /// The window.
        skew: u64,
    },
    /// `ts_unix_ms = 0` (unavailable) while the policy requires freshness.
    #[error("ts_unix_ms is 0 (unavailable) but the freshness policy requires a timestamp")]
    MissingTimestamp,
    /// No profile is registered for `profile_id`.
    #[error("no profile is registered for profile_id {profile_id}")]
    UnknownProfile {
        /// The identifier received.
        profile_id: u64,
    },
    /// More frames than the rate limit allows.
    #[error("more than {frames} frames within {window_ms} ms")]
    RateLimited {
        /// Allowed frames per window.
        frames: u32,
        /// The window.
        window_ms: u64,
    },
    /// A request reused the `msg_id` of an interaction still in flight.
    #[error("msg_id is already in flight on this connection")]
    DuplicateMsgId,
    /// Input after the stream was terminated by an earlier framing error.
    #[error("stream already terminated by an earlier framing error")]
    Terminated,
}

impl CoreError {
    /// The one canonical code this failure maps to.
    pub fn code(&self) -> ErrorCode {
        match self {
            CoreError::TruncatedPrefix { .. }
            | CoreError::ZeroLength
            | CoreError::TruncatedBody { .. }
            | CoreError::TruncatedBytes { .. }
            | CoreError::TrailingBytes { .. }
            | CoreError::Terminated => ErrorCode::InvalidFrame,
            CoreError::FrameTooLarge { .. } => ErrorCode::FrameTooLarge,
            CoreError::Uvarint { .. } => ErrorCode::InvalidUvarint,
            CoreError::MissingField { .. }
            | CoreError::StaleTimestamp { .. }
            | CoreError::FutureTimestamp { .. }
            | CoreError::MissingTimestamp => ErrorCode::InvalidEnvelope,
            CoreError::UnsupportedVersion { .. } => ErrorCode::UnsupportedVersion,
            CoreError::MsgIdLength { .. } => ErrorCode::MsgIdInvalid,
            CoreError::ExtTooLarge { .. } => ErrorCode::ExtTooLarge,
            CoreError::PayloadTooLarge { .. } => ErrorCode::PayloadTooLarge,
            CoreError::UnknownProfile { .. } => ErrorCode::UnknownProfile,
            CoreError::RateLimited { .. } => ErrorCode::RateLimitExceeded,
            CoreError::DuplicateMsgId => ErrorCode::DuplicateMsgId,
        }
    }

    /// Whether the frame boundary is lost, so the stream cannot continue: a receiver
    /// terminates the stream after these (core-spec §3.1 for oversized prefixes).
    pub fn is_framing(&self) -> bool {
        matches!(
            self,
            CoreError::TruncatedPrefix { .. }
                | CoreError::ZeroLength
                | CoreError::FrameTooLarge { .. }
                | CoreError::TruncatedBody { .. }
                | CoreError::Terminated
        )
    }
}
