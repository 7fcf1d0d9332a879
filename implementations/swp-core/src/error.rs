//! The canonical `ERR_*` taxonomy, its legacy aliases and the MCP mapping's JSON-RPC codes.
//!
//! Every failure the core can produce maps to exactly one [`ErrorCode`]; parsing a code name
//! that is neither canonical nor a registered alias is an error, never a fallback.

use std::fmt;
use std::str::FromStr;

/// A canonical conformance error code (spec kit `error-codes.md` §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    /// Invalid or truncated frame prefix/body, malformed frame boundary.
    InvalidFrame,
    /// Frame length exceeds the configured maximum.
    FrameTooLarge,
    /// Malformed, truncated, overflowing or overlong uvarint.
    InvalidUvarint,
    /// Unsupported core or binding-required version.
    UnsupportedVersion,
    /// Envelope invariant violation.
    InvalidEnvelope,
    /// Message identifier missing, of invalid length or format.
    MsgIdInvalid,
    /// Payload exceeds the configured maximum.
    PayloadTooLarge,
    /// Extension block exceeds the configured maximum.
    ExtTooLarge,
    /// Unknown or unsupported profile identifier.
    UnknownProfile,
    /// Security binding or policy-gate rejection.
    SecurityPolicy,
    /// Rate or quota policy rejection.
    RateLimitExceeded,
    /// Unsupported profile message type.
    UnsupportedMsgType,
    /// Invalid MCP mapping payload shape or encoding.
    InvalidMcpPayload,
    /// Invalid profile payload semantics or encoding.
    InvalidProfilePayload,
    /// Duplicate in-flight `msg_id`.
    DuplicateMsgId,
    /// Deterministic not-found outcome where a profile defines one.
    NotFound,
    /// Process or policy compatibility check failure.
    CompatibilityPolicy,
}

/// The core error category a code belongs to (core-spec §5); the MCP mapping profile's
/// JSON-RPC table is keyed by these legacy names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoreCategory {
    /// `INVALID_FRAME`: framing and envelope decoding failures.
    InvalidFrame,
    /// `UNSUPPORTED_VERSION`.
    UnsupportedVersion,
    /// `UNKNOWN_PROFILE`.
    UnknownProfile,
    /// `INVALID_ENVELOPE`: envelope invariant failures.
    InvalidEnvelope,
    /// `INTERNAL_ERROR`: not a wire failure; the endpoint itself failed.
    InternalError,
}

/// The code name did not match any canonical code or registered alias.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown error code name {0:?}: expected a canonical ERR_* code or a registered legacy alias"
)]
pub struct UnknownCodeName(pub String);

impl ErrorCode {
    /// Every canonical code, in the order of `error-codes.md`.
    pub const ALL: [ErrorCode; 17] = [
        ErrorCode::InvalidFrame,
        ErrorCode::FrameTooLarge,
        ErrorCode::InvalidUvarint,
        ErrorCode::UnsupportedVersion,
        ErrorCode::InvalidEnvelope,
        ErrorCode::MsgIdInvalid,
        ErrorCode::PayloadTooLarge,
        ErrorCode::ExtTooLarge,
        ErrorCode::UnknownProfile,
        ErrorCode::SecurityPolicy,
        ErrorCode::RateLimitExceeded,
        ErrorCode::UnsupportedMsgType,
        ErrorCode::InvalidMcpPayload,
        ErrorCode::InvalidProfilePayload,
        ErrorCode::DuplicateMsgId,
        ErrorCode::NotFound,
        ErrorCode::CompatibilityPolicy,
    ];

    /// The canonical name, e.g. `ERR_INVALID_FRAME`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidFrame => "ERR_INVALID_FRAME",
            ErrorCode::FrameTooLarge => "ERR_FRAME_TOO_LARGE",
            ErrorCode::InvalidUvarint => "ERR_INVALID_UVARINT",
            ErrorCode::UnsupportedVersion => "ERR_UNSUPPORTED_VERSION",
            ErrorCode::InvalidEnvelope => "ERR_INVALID_ENVELOPE",
            ErrorCode::MsgIdInvalid => "ERR_MSG_ID_INVALID",
            ErrorCode::PayloadTooLarge => "ERR_PAYLOAD_TOO_LARGE",
            ErrorCode::ExtTooLarge => "ERR_EXT_TOO_LARGE",
            ErrorCode::UnknownProfile => "ERR_UNKNOWN_PROFILE",
            ErrorCode::SecurityPolicy => "ERR_SECURITY_POLICY",
            ErrorCode::RateLimitExceeded => "ERR_RATE_LIMIT_EXCEEDED",
            ErrorCode::UnsupportedMsgType => "ERR_UNSUPPORTED_MSG_TYPE",
            ErrorCode::InvalidMcpPayload => "ERR_INVALID_MCP_PAYLOAD",
            ErrorCode::InvalidProfilePayload => "ERR_INVALID_PROFILE_PAYLOAD",
            ErrorCode::DuplicateMsgId => "ERR_DUPLICATE_MSG_ID",
            ErrorCode::NotFound => "ERR_NOT_FOUND",
            ErrorCode::CompatibilityPolicy => "ERR_COMPATIBILITY_POLICY",
        }
    }

    /// The legacy alias that `error-codes.md` §3 lists for this code, if any.
    ///
    /// `INVALID_FRAME` is the alias of both `ERR_INVALID_FRAME` and `ERR_FRAME_TOO_LARGE`, so
    /// an alias alone cannot always recover the canonical code: see [`ErrorCode::from_alias`].
    pub const fn legacy_alias(self) -> Option<&'static str> {
        Some(match self {
            ErrorCode::InvalidFrame | ErrorCode::FrameTooLarge => "INVALID_FRAME",
            ErrorCode::UnsupportedVersion => "UNSUPPORTED_VERSION",
            ErrorCode::UnknownProfile => "UNKNOWN_PROFILE",
            ErrorCode::InvalidEnvelope => "INVALID_ENVELOPE",
            ErrorCode::SecurityPolicy => "SECURITY_POLICY",
            ErrorCode::UnsupportedMsgType => "UNSUPPORTED_MSG_TYPE",
            ErrorCode::InvalidMcpPayload => "INVALID_MCP_PAYLOAD",
            ErrorCode::InvalidProfilePayload => "INVALID_PROFILE_PAYLOAD",
            ErrorCode::DuplicateMsgId => "DUPLICATE_MSG_ID",
            ErrorCode::RateLimitExceeded => "RATE_LIMIT_EXCEEDED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::CompatibilityPolicy => "COMPATIBILITY_POLICY",
            ErrorCode::InvalidUvarint
            | ErrorCode::MsgIdInvalid
            | ErrorCode::PayloadTooLarge
            | ErrorCode::ExtTooLarge => return None,
        })
    }

    /// The canonical codes a legacy alias may stand for (one, or two for `INVALID_FRAME`).
    pub fn from_alias(alias: &str) -> Result<&'static [ErrorCode], UnknownCodeName> {
        const FRAME: [ErrorCode; 2] = [ErrorCode::InvalidFrame, ErrorCode::FrameTooLarge];
        Ok(match alias {
            "INVALID_FRAME" => &FRAME,
            "UNSUPPORTED_VERSION" => &[ErrorCode::UnsupportedVersion],
            "UNKNOWN_PROFILE" => &[ErrorCode::UnknownProfile],
            "INVALID_ENVELOPE" => &[ErrorCode::InvalidEnvelope],
            "SECURITY_POLICY" => &[ErrorCode::SecurityPolicy],
            "UNSUPPORTED_MSG_TYPE" => &[ErrorCode::UnsupportedMsgType],
            "INVALID_MCP_PAYLOAD" => &[ErrorCode::InvalidMcpPayload],
            "INVALID_PROFILE_PAYLOAD" => &[ErrorCode::InvalidProfilePayload],
            "DUPLICATE_MSG_ID" => &[ErrorCode::DuplicateMsgId],
            "RATE_LIMIT_EXCEEDED" => &[ErrorCode::RateLimitExceeded],
            "NOT_FOUND" => &[ErrorCode::NotFound],
            "COMPATIBILITY_POLICY" => &[ErrorCode::CompatibilityPolicy],
            other => return Err(UnknownCodeName(other.to_owned())),
        })
    }

    /// The core category of this code, for codes that core-spec §5 assigns to one.
    pub const fn core_category(self) -> Option<CoreCategory> {
        Some(match self {
            ErrorCode::InvalidFrame | ErrorCode::FrameTooLarge | ErrorCode::InvalidUvarint => {
                CoreCategory::InvalidFrame
            }
            ErrorCode::UnsupportedVersion => CoreCategory::UnsupportedVersion,
            ErrorCode::UnknownProfile => CoreCategory::UnknownProfile,
            ErrorCode::InvalidEnvelope
            | ErrorCode::MsgIdInvalid
            | ErrorCode::PayloadTooLarge
            | ErrorCode::ExtTooLarge => CoreCategory::InvalidEnvelope,
            _ => return None,
        })
    }

    /// The JSON-RPC error code a gateway surfaces for this core error (MCP mapping profile §6),
    /// or `None` when the code is not a core error (profile and policy errors are surfaced by
    /// their profile, not by this table).
    pub const fn jsonrpc_code(self) -> Option<i64> {
        match self.core_category() {
            Some(c) => Some(c.jsonrpc_code()),
            None => None,
        }
    }
}

impl CoreCategory {
    /// The legacy name used by the MCP mapping profile's table.
    pub const fn as_str(self) -> &'static str {
        match self {
            CoreCategory::InvalidFrame => "INVALID_FRAME",
            CoreCategory::UnsupportedVersion => "UNSUPPORTED_VERSION",
            CoreCategory::UnknownProfile => "UNKNOWN_PROFILE",
            CoreCategory::InvalidEnvelope => "INVALID_ENVELOPE",
            CoreCategory::InternalError => "INTERNAL_ERROR",
        }
    }

    /// JSON-RPC code per MCP mapping profile §6.
    pub const fn jsonrpc_code(self) -> i64 {
        match self {
            CoreCategory::InvalidFrame => -32700,
            CoreCategory::UnsupportedVersion | CoreCategory::InvalidEnvelope => -32600,
            CoreCategory::UnknownProfile => -32601,
            CoreCategory::InternalError => -32603,
        }
    }
}

impl FromStr for ErrorCode {
    type Err = UnknownCodeName;

    /// Parses a canonical `ERR_*` name only. Aliases go through [`ErrorCode::from_alias`]
    /// because one alias can stand for two canonical codes.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorCode::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCodeName(s.to_owned()))
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_name() {
        for c in ErrorCode::ALL {
            assert_eq!(c.as_str().parse::<ErrorCode>(), Ok(c));
        }
    }

    #[test]
    fn unknown_names_are_errors_not_fallbacks() {
        assert!("ERR_SOMETHING".parse::<ErrorCode>().is_err());
        assert!("INVALID_FRAME".parse::<ErrorCode>().is_err());
        assert!(ErrorCode::from_alias("ERR_INVALID_FRAME").is_err());
        assert!(ErrorCode::from_alias("").is_err());
    }

    #[test]
    fn aliases_resolve_to_the_codes_that_list_them() {
        for c in ErrorCode::ALL {
            if let Some(a) = c.legacy_alias() {
                assert!(ErrorCode::from_alias(a).unwrap().contains(&c), "{c}");
            }
        }
        assert_eq!(ErrorCode::from_alias("INVALID_FRAME").unwrap().len(), 2);
    }

    #[test]
    fn jsonrpc_mapping_follows_the_mcp_profile_table() {
        assert_eq!(ErrorCode::InvalidFrame.jsonrpc_code(), Some(-32700));
        assert_eq!(ErrorCode::FrameTooLarge.jsonrpc_code(), Some(-32700));
        assert_eq!(ErrorCode::UnsupportedVersion.jsonrpc_code(), Some(-32600));
        assert_eq!(ErrorCode::UnknownProfile.jsonrpc_code(), Some(-32601));
        assert_eq!(ErrorCode::InvalidEnvelope.jsonrpc_code(), Some(-32600));
        assert_eq!(ErrorCode::MsgIdInvalid.jsonrpc_code(), Some(-32600));
        assert_eq!(CoreCategory::InternalError.jsonrpc_code(), -32603);
        assert_eq!(ErrorCode::UnsupportedMsgType.jsonrpc_code(), None);
    }
}
