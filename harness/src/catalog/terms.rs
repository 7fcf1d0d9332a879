//! The small vocabulary vectors, published fixtures and the translate method's types share:
//! where the SUT sits, which of the harness's connections a step uses, and the
//! unknown-profile path a SUT declares. A leaf, so naming them pulls in no vector type.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where the SUT sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Topology {
    /// Harness ⇄ SUT.
    #[default]
    Endpoint,
    /// Harness client ⇄ SUT ⇄ harness upstream server.
    Intermediary,
}

impl Topology {
    /// The name used in vectors and manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            Topology::Endpoint => "endpoint",
            Topology::Intermediary => "intermediary",
        }
    }
}

/// Which of the harness's two connections a step uses (intermediary topology).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The harness as the SUT's client.
    #[default]
    Client,
    /// The harness as the SUT's upstream server.
    Upstream,
}

/// Unknown-profile handling a SUT declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum UnknownProfile {
    /// Replies with `ERR_UNKNOWN_PROFILE`.
    ErrorReply,
    /// Closes the stream.
    Close,
}
