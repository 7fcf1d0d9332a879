//! The MCP gateway envelope policies a SUT manifest declares (`mcp_native.gateway_envelope`)
//! and a `gateway` vector may require (`applies_when.gateway_envelope`): seed 003's narrower
//! contract, or the MCP schema's (docs/spec-issues.md SI-032).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which contract an MCP gateway holds client messages to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub enum GatewayEnvelope {
    /// The MCP schema of the negotiated version (ids string or integer, `params` optional,
    /// JSON-RPC's parse error, MCP's -32602 for an unknown tool): the default, since for MCP
    /// the official schema is the normative source.
    #[default]
    #[serde(rename = "mcp")]
    Mcp,
    /// Seed 003: string ids, `params` required, and its closed error table (messages,
    /// `data.canonical`, HTTP statuses 400/422/404/500).
    #[serde(rename = "seed-003")]
    Seed003,
}

impl GatewayEnvelope {
    /// The name used in manifests and vectors.
    pub fn as_str(self) -> &'static str {
        match self {
            GatewayEnvelope::Mcp => "mcp",
            GatewayEnvelope::Seed003 => "seed-003",
        }
    }
}
