//! The vector-file types of the `translate` method (`vectors/mcpx/`): one MCP message, the
//! versions and direction of the hop, and the exact translation or typed error expected.

use super::terms::Side;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An MCP protocol version the translation vectors name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum McpVersion {
    /// 2024-11-05.
    #[serde(rename = "2024-11-05")]
    V2024_11_05,
    /// 2025-03-26.
    #[serde(rename = "2025-03-26")]
    V2025_03_26,
    /// 2025-06-18.
    #[serde(rename = "2025-06-18")]
    V2025_06_18,
    /// 2025-11-25.
    #[serde(rename = "2025-11-25")]
    V2025_11_25,
    /// 2026-07-28 (stateless: discovery instead of `initialize`).
    #[serde(rename = "2026-07-28")]
    V2026_07_28,
}

impl McpVersion {
    /// As written in `protocolVersion`.
    pub fn as_str(self) -> &'static str {
        match self {
            McpVersion::V2024_11_05 => "2024-11-05",
            McpVersion::V2025_03_26 => "2025-03-26",
            McpVersion::V2025_06_18 => "2025-06-18",
            McpVersion::V2025_11_25 => "2025-11-25",
            McpVersion::V2026_07_28 => "2026-07-28",
        }
    }
}

/// Which way the message travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpDirection {
    /// Client requests and notifications, and client responses to server requests.
    ClientToServer,
    /// Server requests and notifications, and server responses.
    ServerToClient,
}

impl McpDirection {
    /// As written on the testee protocol.
    pub fn as_str(self) -> &'static str {
        match self {
            McpDirection::ClientToServer => "client_to_server",
            McpDirection::ServerToClient => "server_to_client",
        }
    }
}

/// `send: {translate: ...}`: hand one message to the translator.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranslateSend {
    /// The sender's version.
    pub from: McpVersion,
    /// The receiver's version.
    pub to: McpVersion,
    /// Which way it travels.
    pub direction: McpDirection,
    /// For a result response (or a batch of them): the method of the request answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<String>,
    /// The JSON-RPC message, or a 2025-03-26 batch (an array).
    pub message: serde_json::Value,
}

/// What a translation reports having done to a piece of the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WarningKindSpec {
    /// A field the target does not define was removed.
    Dropped,
    /// A field, block or value was rewritten into a form the target has.
    Converted,
    /// A text block carrying dropped structuredContent was added.
    FallbackAdded,
    /// `protocolVersion` was rewritten.
    VersionRewritten,
    /// A notification was not forwarded.
    NotificationDropped,
    /// A request was answered on the receiver's behalf.
    AnsweredOnBehalf,
    /// An error response was not forwarded.
    ResponseDropped,
    /// A batch was split.
    BatchSplit,
    /// A method no version defines was forwarded.
    UnknownMethodForwarded,
}

impl WarningKindSpec {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            WarningKindSpec::Dropped => "dropped",
            WarningKindSpec::Converted => "converted",
            WarningKindSpec::FallbackAdded => "fallback_added",
            WarningKindSpec::VersionRewritten => "version_rewritten",
            WarningKindSpec::NotificationDropped => "notification_dropped",
            WarningKindSpec::AnsweredOnBehalf => "answered_on_behalf",
            WarningKindSpec::ResponseDropped => "response_dropped",
            WarningKindSpec::BatchSplit => "batch_split",
            WarningKindSpec::UnknownMethodForwarded => "unknown_method_forwarded",
        }
    }
}

/// One expected warning.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WarningSpec {
    /// What happened.
    pub kind: WarningKindSpec,
    /// JSON Pointer into the input message (`""` for the whole message).
    pub path: String,
}

/// `expect: {translated: ...}`: the exact translation.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranslatedSpec {
    /// The messages delivered to the receiver, exactly (object key order aside), in order.
    pub messages: Vec<serde_json::Value>,
    /// The responses sent back to the sender on the receiver's behalf, exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replies: Vec<serde_json::Value>,
    /// The warnings, exactly, in order (kind and path).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<WarningSpec>,
}

/// The class of a translation failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKindSpec {
    /// Not a valid message of its version.
    InvalidInput,
    /// Valid, but with no faithful form in the target.
    Unrepresentable,
    /// A result whose request is unknown.
    MissingContext,
    /// The translator produced an invalid message and refused it.
    InvalidOutput,
}

impl ErrorKindSpec {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKindSpec::InvalidInput => "invalid_input",
            ErrorKindSpec::Unrepresentable => "unrepresentable",
            ErrorKindSpec::MissingContext => "missing_context",
            ErrorKindSpec::InvalidOutput => "invalid_output",
        }
    }
}

/// `expect: {translation_error: ...}`: the translator refuses with a typed error.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranslationErrorSpec {
    /// The class of failure.
    pub kind: ErrorKindSpec,
    /// The message type the error names (`tools/list result`, `batch`, ...), when checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_type: Option<String>,
    /// The JSON Pointer the error names, when checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// `proxy:` on a vector of method `mcp_proxy`: how the proxy is started.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProxySpec {
    /// The version the proxy presents to its client (`${CLIENT_VERSION}` in the manifest).
    pub client_version: McpVersion,
}

/// `expect: {arrives: ...}`: the next line at one side of the harness.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArrivesSpec {
    /// Where it arrives: `client` (the proxy's stdout) or `upstream` (the proxy's server
    /// connection).
    pub side: Side,
    /// The JSON-RPC message, exactly (object key order aside; an error response's
    /// `error.message` may be any string).
    pub json: serde_json::Value,
    /// `json` is an error response whose `error.code` the sender chooses (a proxy failing a
    /// request for a reason no specification gives a code to): any integer code matches.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub any_error_code: bool,
}

/// The capture a whole JSON string (value or object key) of an `arrives` names: `?{name}`
/// matches any value (any key) the first time and binds it; later uses must be equal, and a
/// later `jsonrpc_line` writes the bound value (as JSON text) wherever it says `?{name}`.
/// Proxies choose their own ids, keys and request states, and a vector that spelled out the
/// reference's choices would fail every other proxy.
pub fn capture_name(s: &str) -> Option<&str> {
    let n = s.strip_prefix("?{")?.strip_suffix('}')?;
    let ok = !n.is_empty()
        && n.len() <= 64
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    ok.then_some(n)
}

/// The captures `json` binds, in document order (keys before their values).
pub fn captures_in(json: &serde_json::Value, out: &mut Vec<String>) {
    match json {
        serde_json::Value::String(s) => out.extend(capture_name(s).map(str::to_owned)),
        serde_json::Value::Array(a) => a.iter().for_each(|x| captures_in(x, out)),
        serde_json::Value::Object(o) => {
            for (k, v) in o {
                out.extend(capture_name(k).map(str::to_owned));
                captures_in(v, out);
            }
        }
        _ => {}
    }
}

/// A piece of a line to send: text as written, or the name of a capture it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Sent as is.
    Text(&'a str),
    /// `?{name}`: written as the capture's bound value.
    Use(&'a str),
}

/// A line to send, cut into text and `?{name}` uses, in order (a `?{` not followed by a
/// name and `}` is text).
pub fn pieces(line: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let (mut text_from, mut search_from) = (0, 0);
    while let Some(i) = line[search_from..].find("?{").map(|i| i + search_from) {
        let name = line[i..]
            .find('}')
            .and_then(|j| capture_name(&line[i..=i + j]));
        match name {
            Some(n) => {
                if text_from < i {
                    out.push(Piece::Text(&line[text_from..i]));
                }
                out.push(Piece::Use(n));
                text_from = i + n.len() + 3;
                search_from = text_from;
            }
            None => search_from = i + 2,
        }
    }
    if text_from < line.len() {
        out.push(Piece::Text(&line[text_from..]));
    }
    out
}
