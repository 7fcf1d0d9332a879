//! The envelope policy (`--envelope`): which contract the gateway holds client messages to,
//! and how each canonical error is presented under it. `mcp` (the default) follows the MCP
//! schema of the negotiated protocol version, the normative source for MCP; `seed-003` is the
//! seed's narrower contract (string ids, `params` required, a closed error table with its own
//! HTTP statuses). docs/mcp-gateway.md and docs/spec-issues.md SI-032 say why.

use super::canonical::Canonical;
use std::fmt;
use std::str::FromStr;

/// The contract client messages are validated against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EnvelopePolicy {
    /// The MCP schema of the negotiated version: ids string or integer, `params` optional,
    /// responses from the client (to server-initiated requests) accepted; parse errors are
    /// JSON-RPC's -32700, tool errors MCP's -32602, and a JSON-RPC error answering a request
    /// travels with HTTP 200 (an HTTP 404 means "session gone" to a Streamable HTTP client).
    #[default]
    Mcp,
    /// Seed 003 exactly: string ids, `params` required on requests, nothing but requests and
    /// notifications, and the seed's closed error table (HTTP 400/422/404/500).
    Seed003,
}

/// A policy name `--envelope` does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown envelope policy {0:?} (mcp or seed-003)")]
pub struct UnknownPolicy(pub String);

impl EnvelopePolicy {
    /// Both policies, default first.
    pub const ALL: [EnvelopePolicy; 2] = [EnvelopePolicy::Mcp, EnvelopePolicy::Seed003];

    /// The name `--envelope` and the SUT manifest use.
    pub const fn name(self) -> &'static str {
        match self {
            EnvelopePolicy::Mcp => "mcp",
            EnvelopePolicy::Seed003 => "seed-003",
        }
    }

    /// The HTTP status answering a message refused with `code`.
    pub const fn http_status(self, code: Canonical) -> u16 {
        match (self, code) {
            (EnvelopePolicy::Seed003, c) => c.http_status(),
            // The message itself is unusable: an HTTP client error, as the Streamable HTTP
            // transport asks of input the server cannot accept.
            (EnvelopePolicy::Mcp, Canonical::InvalidEnvelope | Canonical::ParseError) => 400,
            // A valid request answered with a JSON-RPC error: that is a response like any
            // other, so the client's MCP layer (not its HTTP layer) sees it.
            (
                EnvelopePolicy::Mcp,
                Canonical::InvalidToolInput | Canonical::ToolNotFound | Canonical::InternalError,
            ) => 200,
        }
    }

    /// The JSON-RPC error code for `code`.
    pub const fn jsonrpc_code(self, code: Canonical) -> i64 {
        match (self, code) {
            // MCP answers an unknown tool with invalid params (the 2026-07-28 schema says so
            // in as many words); -32001 is the seed's own.
            (EnvelopePolicy::Mcp, Canonical::ToolNotFound) => -32602,
            (_, c) => c.jsonrpc_code(),
        }
    }

    /// The JSON-RPC error message for `code`.
    pub const fn message(self, code: Canonical) -> &'static str {
        match (self, code) {
            (EnvelopePolicy::Mcp, Canonical::InvalidEnvelope) => "Invalid Request",
            (_, c) => c.message(),
        }
    }
}

impl fmt::Display for EnvelopePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EnvelopePolicy {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EnvelopePolicy::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownPolicy(s.to_owned()))
    }
}

/// Whether MCP `version` lets an error response omit its id: from 2025-11-25 on the schema
/// makes it optional; before, it is a `RequestId` (and JSON-RPC fills the gap with null).
/// Versions are dates, so text order is time order; before negotiation (`None`) the newest
/// rules apply.
pub fn error_id_optional(version: Option<&str>) -> bool {
    version.is_none_or(|v| v >= "2025-11-25")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_mcp_is_the_default() {
        assert_eq!(EnvelopePolicy::default(), EnvelopePolicy::Mcp);
        for p in EnvelopePolicy::ALL {
            assert_eq!(p.name().parse(), Ok(p));
        }
        for bad in ["", "MCP", "seed003", "seed-003 "] {
            assert_eq!(
                bad.parse::<EnvelopePolicy>(),
                Err(UnknownPolicy(bad.to_owned()))
            );
        }
    }

    #[test]
    fn the_tables() {
        let row = |p: EnvelopePolicy| -> Vec<_> {
            Canonical::ALL
                .iter()
                .map(|&c| (c.name(), p.http_status(c), p.jsonrpc_code(c)))
                .collect()
        };
        assert_eq!(
            row(EnvelopePolicy::Seed003),
            [
                ("INVALID_ENVELOPE", 400, -32600),
                ("INVALID_TOOL_INPUT", 422, -32602),
                ("TOOL_NOT_FOUND", 404, -32001),
                ("INTERNAL_ERROR", 500, -32603),
                ("PARSE_ERROR", 400, -32700),
            ]
        );
        assert_eq!(
            row(EnvelopePolicy::Mcp),
            [
                ("INVALID_ENVELOPE", 400, -32600),
                ("INVALID_TOOL_INPUT", 200, -32602),
                ("TOOL_NOT_FOUND", 200, -32602),
                ("INTERNAL_ERROR", 200, -32603),
                ("PARSE_ERROR", 400, -32700),
            ]
        );
    }

    #[test]
    fn error_ids_by_version() {
        assert!(!error_id_optional(Some("2024-11-05")));
        assert!(!error_id_optional(Some("2025-06-18")));
        assert!(error_id_optional(Some("2025-11-25")));
        assert!(error_id_optional(Some("2026-07-28")));
        assert!(error_id_optional(None));
    }
}
