//! The canonical error table of the gateway contract (seed 003): each internal error code
//! has one HTTP status, one JSON-RPC code and one message, on every transport. The table is
//! closed: looking up a code it does not list is an error, never a fallback. The seed lists
//! four codes; `PARSE_ERROR` is the fifth, raised only under the `mcp` envelope policy
//! (JSON-RPC's -32700 for text that is not JSON), and the policy decides how each code is
//! presented (super::policy).

use super::policy::EnvelopePolicy;
use std::fmt;

/// A canonical gateway error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Canonical {
    /// The message is not a valid MCP envelope.
    InvalidEnvelope,
    /// A tools/call input does not satisfy the tool's input schema.
    InvalidToolInput,
    /// A tools/call names a tool the upstream does not list.
    ToolNotFound,
    /// Anything the gateway or the upstream failed at.
    InternalError,
    /// The message is not JSON (the `mcp` policy only: seed 003 calls it an invalid envelope).
    ParseError,
}

/// A code name the table does not list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown canonical error code {0:?} (the table lists INVALID_ENVELOPE, INVALID_TOOL_INPUT, TOOL_NOT_FOUND, INTERNAL_ERROR, PARSE_ERROR)")]
pub struct UnknownCanonical(pub String);

impl Canonical {
    /// Every code, in table order.
    pub const ALL: [Canonical; 5] = [
        Canonical::InvalidEnvelope,
        Canonical::InvalidToolInput,
        Canonical::ToolNotFound,
        Canonical::InternalError,
        Canonical::ParseError,
    ];

    /// The code's name.
    pub const fn name(self) -> &'static str {
        match self {
            Canonical::InvalidEnvelope => "INVALID_ENVELOPE",
            Canonical::InvalidToolInput => "INVALID_TOOL_INPUT",
            Canonical::ToolNotFound => "TOOL_NOT_FOUND",
            Canonical::InternalError => "INTERNAL_ERROR",
            Canonical::ParseError => "PARSE_ERROR",
        }
    }

    /// Looks a code up by name; an unknown name is an error.
    pub fn from_name(name: &str) -> Result<Self, UnknownCanonical> {
        Canonical::ALL
            .into_iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| UnknownCanonical(name.to_owned()))
    }

    /// The HTTP status (seed 003's; the policy may present it otherwise).
    pub const fn http_status(self) -> u16 {
        match self {
            Canonical::InvalidEnvelope | Canonical::ParseError => 400,
            Canonical::InvalidToolInput => 422,
            Canonical::ToolNotFound => 404,
            Canonical::InternalError => 500,
        }
    }

    /// The JSON-RPC error code (seed 003's; the policy may present it otherwise).
    pub const fn jsonrpc_code(self) -> i64 {
        match self {
            Canonical::InvalidEnvelope => -32600,
            Canonical::InvalidToolInput => -32602,
            Canonical::ToolNotFound => -32001,
            Canonical::InternalError => -32603,
            Canonical::ParseError => -32700,
        }
    }

    /// The JSON-RPC error message.
    pub const fn message(self) -> &'static str {
        match self {
            Canonical::InvalidEnvelope => "Invalid MCP envelope",
            Canonical::InvalidToolInput => "Invalid tool input",
            Canonical::ToolNotFound => "Unknown tool",
            Canonical::InternalError => "Internal error",
            Canonical::ParseError => "Parse error",
        }
    }
}

impl fmt::Display for Canonical {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A canonical error with the detail that explains it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {detail}")]
pub struct GatewayError {
    /// The canonical code.
    pub code: Canonical,
    /// Why, for logs and the error's `data.detail`.
    pub detail: String,
}

impl GatewayError {
    /// An error with `code` and a detail.
    pub fn new(code: Canonical, detail: impl Into<String>) -> Self {
        GatewayError {
            code,
            detail: detail.into(),
        }
    }

    /// The JSON-RPC error response under `policy`; `id` is raw JSON text (`null` when the
    /// request's id is unknown).
    pub fn response(&self, policy: EnvelopePolicy, id: &str) -> Vec<u8> {
        let data = serde_json::json!({"canonical": self.code.name(), "detail": self.detail});
        swp_profiles::mcp::jsonrpc::error(
            id,
            policy.jsonrpc_code(self.code),
            policy.message(self.code),
            Some(&data.to_string()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table() {
        let rows: Vec<_> = Canonical::ALL
            .iter()
            .map(|c| (c.name(), c.http_status(), c.jsonrpc_code(), c.message()))
            .collect();
        assert_eq!(
            rows,
            [
                ("INVALID_ENVELOPE", 400, -32600, "Invalid MCP envelope"),
                ("INVALID_TOOL_INPUT", 422, -32602, "Invalid tool input"),
                ("TOOL_NOT_FOUND", 404, -32001, "Unknown tool"),
                ("INTERNAL_ERROR", 500, -32603, "Internal error"),
                ("PARSE_ERROR", 400, -32700, "Parse error"),
            ]
        );
        for c in Canonical::ALL {
            assert_eq!(Canonical::from_name(c.name()), Ok(c));
        }
    }

    #[test]
    fn unknown_codes_are_errors_not_fallbacks() {
        for name in ["", "NOT_A_CODE", "invalid_envelope", "INTERNAL_ERROR "] {
            assert_eq!(
                Canonical::from_name(name),
                Err(UnknownCanonical(name.to_owned()))
            );
        }
    }
}
