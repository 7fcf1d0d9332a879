//! The canonical `ERR_*` taxonomy of error-codes.md §2, its names, and the legacy/runtime
//! aliases of §3 that conformance artifacts may carry instead of a canonical code.

use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// One canonical conformance error code (error-codes.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    /// `ERR_INVALID_FRAME`: invalid or truncated prefix or body, broken frame boundary.
    InvalidFrame,
    /// `ERR_FRAME_TOO_LARGE`: frame length over the configured maximum.
    FrameTooLarge,
    /// `ERR_INVALID_UVARINT`: malformed, truncated, overflowing or over-10-octet uvarint.
    InvalidUvarint,
    /// `ERR_UNSUPPORTED_VERSION`: unsupported Core or binding-required version.
    UnsupportedVersion,
    /// `ERR_INVALID_ENVELOPE`: an envelope invariant is violated.
    InvalidEnvelope,
    /// `ERR_MSG_ID_INVALID`: msg_id missing, of invalid length or format.
    MsgIdInvalid,
    /// `ERR_PAYLOAD_TOO_LARGE`: payload over the configured maximum.
    PayloadTooLarge,
    /// `ERR_EXT_TOO_LARGE`: extensions block over the configured maximum.
    ExtTooLarge,
    /// `ERR_UNKNOWN_PROFILE`: unknown or unsupported profile identifier.
    UnknownProfile,
    /// `ERR_SECURITY_POLICY`: security binding or policy gate rejection.
    SecurityPolicy,
    /// `ERR_RATE_LIMIT_EXCEEDED`: rate or quota policy rejection.
    RateLimitExceeded,
    /// `ERR_UNSUPPORTED_MSG_TYPE`: the profile does not support the message type.
    UnsupportedMsgType,
    /// `ERR_INVALID_MCP_PAYLOAD`: MCP mapping payload of invalid shape or encoding.
    InvalidMcpPayload,
    /// `ERR_INVALID_PROFILE_PAYLOAD`: profile payload of invalid semantics or encoding.
    InvalidProfilePayload,
    /// `ERR_DUPLICATE_MSG_ID`: duplicate in-flight msg_id policy violation.
    DuplicateMsgId,
    /// `ERR_NOT_FOUND`: deterministic not-found outcome where a profile defines one.
    NotFound,
    /// `ERR_COMPATIBILITY_POLICY`: process or policy compatibility check failure.
    CompatibilityPolicy,
}

/// A name that is not a canonical `ERR_*` code.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("'{0}' is not a canonical ERR_* code of error-codes.md")]
pub struct UnknownCodeName(pub String);

/// A name that is not one of the legacy aliases error-codes.md §3 registers.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("'{0}' is not a registered alias of a canonical ERR_* code")]
pub struct UnknownAlias(pub String);

impl ErrorCode {
    /// Every canonical code, in the order error-codes.md §2 lists them.
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

    /// The canonical name, `ERR_…`.
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

    /// The canonical codes a legacy alias (error-codes.md §3) stands for. `INVALID_FRAME`
    /// stands for two: the doc maps it to `ERR_INVALID_FRAME` or `ERR_FRAME_TOO_LARGE`
    /// "based on rejection reason". Canonical names are not aliases; parse those with
    /// `FromStr`.
    pub fn from_alias(alias: &str) -> Result<&'static [ErrorCode], UnknownAlias> {
        use ErrorCode as C;
        Ok(match alias {
            "INVALID_FRAME" => &[C::InvalidFrame, C::FrameTooLarge],
            "UNSUPPORTED_VERSION" => &[C::UnsupportedVersion],
            "UNKNOWN_PROFILE" => &[C::UnknownProfile],
            "INVALID_ENVELOPE" => &[C::InvalidEnvelope],
            "SECURITY_POLICY" => &[C::SecurityPolicy],
            "UNSUPPORTED_MSG_TYPE" => &[C::UnsupportedMsgType],
            "INVALID_MCP_PAYLOAD" => &[C::InvalidMcpPayload],
            "INVALID_PROFILE_PAYLOAD" => &[C::InvalidProfilePayload],
            "DUPLICATE_MSG_ID" => &[C::DuplicateMsgId],
            "RATE_LIMIT_EXCEEDED" => &[C::RateLimitExceeded],
            "NOT_FOUND" => &[C::NotFound],
            "COMPATIBILITY_POLICY" => &[C::CompatibilityPolicy],
            _ => return Err(UnknownAlias(alias.to_owned())),
        })
    }

    /// Whether the code is decided above the core, by the profile a frame was dispatched
    /// to: an unknown message type is rejected "by the owning profile"
    /// (versioning-compatibility §3), payload shape and semantics are profile-defined
    /// (core-spec §4.1 "interpreted according to profile_id"), and not-found exists only
    /// "where profile defines it" (error-codes.md §2). Seeing one of these means the core
    /// accepted and dispatched the frame. Duplicate msg_id and the policy codes are not
    /// included: they concern core fields or the binding, not a profile's payload.
    pub const fn is_profile_level(self) -> bool {
        matches!(
            self,
            ErrorCode::UnsupportedMsgType
                | ErrorCode::InvalidMcpPayload
                | ErrorCode::InvalidProfilePayload
                | ErrorCode::NotFound
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ErrorCode {
    type Err = UnknownCodeName;

    /// Exact canonical names only: `ERR_INVALID_FRAME`, not `INVALID_FRAME` or lower case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorCode::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCodeName(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_code() {
        for c in ErrorCode::ALL {
            assert_eq!(c.as_str().parse::<ErrorCode>(), Ok(c));
            assert_eq!(c.to_string(), c.as_str());
        }
        let mut names: Vec<_> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 17);
    }

    #[test]
    fn parsing_is_exact() {
        for bad in [
            "INVALID_FRAME",
            "err_invalid_frame",
            "ERR_INVALID_FRAME ",
            "",
            "ERR_",
        ] {
            assert_eq!(
                bad.parse::<ErrorCode>(),
                Err(UnknownCodeName(bad.to_owned())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn every_alias_names_codes_whose_name_it_is_the_tail_of() {
        let aliases = [
            "INVALID_FRAME",
            "UNSUPPORTED_VERSION",
            "UNKNOWN_PROFILE",
            "INVALID_ENVELOPE",
            "SECURITY_POLICY",
            "UNSUPPORTED_MSG_TYPE",
            "INVALID_MCP_PAYLOAD",
            "INVALID_PROFILE_PAYLOAD",
            "DUPLICATE_MSG_ID",
            "RATE_LIMIT_EXCEEDED",
            "NOT_FOUND",
            "COMPATIBILITY_POLICY",
        ];
        for a in aliases {
            let set = ErrorCode::from_alias(a).expect(a);
            assert_eq!(set[0].as_str(), format!("ERR_{a}"));
        }
        assert_eq!(
            ErrorCode::from_alias("INVALID_FRAME"),
            Ok(&[ErrorCode::InvalidFrame, ErrorCode::FrameTooLarge][..])
        );
    }

    #[test]
    fn unregistered_aliases_and_canonical_names_are_not_aliases() {
        for bad in [
            "ERR_INVALID_FRAME",
            "INTERNAL_ERROR",
            "MSG_ID_INVALID",
            "invalid_frame",
        ] {
            assert_eq!(
                ErrorCode::from_alias(bad),
                Err(UnknownAlias(bad.to_owned()))
            );
        }
    }

    #[test]
    fn exactly_the_four_profile_decided_codes_are_profile_level() {
        let level: Vec<_> = ErrorCode::ALL
            .into_iter()
            .filter(|c| c.is_profile_level())
            .collect();
        assert_eq!(
            level,
            [
                ErrorCode::UnsupportedMsgType,
                ErrorCode::InvalidMcpPayload,
                ErrorCode::InvalidProfilePayload,
                ErrorCode::NotFound
            ]
        );
    }
}
