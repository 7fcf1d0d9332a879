//! What a vector step sends, in the vector file format: a structural frame, raw parts
//! where the octets must be malformed, a JSON-RPC line or a message to translate; and
//! [`Num`], the number-or-expression every size and value is written as.

use schemars::JsonSchema;
use serde::de::{self};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// A number, or an expression over the SUT's parameters such as `${MAX_FRAME_BYTES} + 1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Num {
    /// A literal.
    Lit(u64),
    /// An expression: integers, `${NAME}`, `+ - *`, parentheses, `min(a, b)`, `max(a, b)`.
    Expr(String),
}

/// Octets to send: a structural frame, or raw parts where the bytes must be malformed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Send {
    /// A well-formed frame (length prefix + E1 body) built from envelope fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<Box<FrameSpec>>,
    /// Raw octets, concatenated from parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Vec<Part>>,
    /// The manifest's identity probe (session): a request whose answer reports the peer
    /// identity the endpoint surfaced.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub identity_probe: bool,
    /// The manifest's slow request (session), sent with this msg_id: it stays in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_request: Option<Data>,
    /// Intermediary topology, a frame sent from the upstream side: its msg_id is replaced by
    /// the msg_id of the frame the intermediary last forwarded upstream, so an answer
    /// correlates even when the intermediary re-issued the client's msg_id.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reply_to_forwarded: bool,
    /// One line of text sent as-is, followed by `\n` (method `mcp_native`): a JSON-RPC
    /// message, or deliberately malformed JSON. `${PROTOCOL_VERSION}` stands for the
    /// manifest's `mcp_native.protocol_version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jsonrpc_line: Option<String>,
    /// One MCP message for the translator (method `translate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub translate: Option<Box<super::mcpx::TranslateSend>>,
}

/// An envelope written field by field; omitted fields take defaults.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FrameSpec {
    /// Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Num>,
    /// Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_id: Option<Num>,
    /// Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg_type: Option<Num>,
    /// Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<Num>,
    /// Default `${NOW_MS}`: the sender stamps the receiver's clock origin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts_unix_ms: Option<Num>,
    /// Default: 16 octets unique to the vector step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg_id: Option<Data>,
    /// Extension entries, in order. Default none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<ExtSpec>,
    /// Default empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Data>,
}

/// One extension entry.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtSpec {
    /// `ext_type`.
    #[serde(rename = "type")]
    pub ext_type: Num,
    /// `ext_val`.
    pub value: Data,
}

/// Octets written in one of several forms.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Data {
    /// Hex digits (whitespace allowed).
    Hex(String),
    /// UTF-8 text.
    Text(String),
    /// A JSON value, serialised compactly with keys in the order written.
    Json(serde_json::Value),
    /// A repeated octet.
    Fill(Fill),
    /// A P1 (protobuf) payload: `{a2a.Task: {task_id: "hex:0a0b", kind: echo}}`, encoded
    /// through the embedded descriptors; `unknown_fields: HEX` beside it appends raw octets.
    P1(#[schemars(with = "serde_json::Map<String, serde_json::Value>")] crate::p1::P1Spec),
    /// A payload valid for the frame's profile and msg_type, built by the harness so core
    /// vectors never send what the addressed profile must refuse: for profile 1 a JSON-RPC
    /// request (1), response (2) or notification (3) padded with JSON whitespace; for
    /// profile 2 a Handshake (1) whose agent_id is padded, in the SUT's P1 form. `len` or
    /// `body_len` sizes it exactly; without either it is as short as it can be.
    Valid(Sized),
}

/// How long a generated payload is.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sized {
    /// The length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub len: Option<Num>,
    /// Size the payload so the frame body is exactly this many octets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_len: Option<Num>,
}

/// A run of one repeated octet.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fill {
    /// The octet.
    pub byte: u8,
    /// The length; or omit it and give `body_len`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub len: Option<Num>,
    /// Size this field so the frame body is exactly this many octets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_len: Option<Num>,
}

/// One piece of a raw send.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Part {
    /// Hex digits.
    Hex(String),
    /// A 4-octet big-endian integer (a length prefix).
    U32be(Num),
    /// A canonical uvarint.
    Uvarint(Num),
    /// `len` copies of `byte`.
    Fill(Fill),
    /// UTF-8 text.
    Text(String),
    /// A whole frame (prefix + body).
    Frame(Box<FrameSpec>),
    /// An E1 body without its prefix.
    Body(Box<FrameSpec>),
    /// A 4-octet big-endian length counting the nested parts, then those parts: a frame
    /// whose body is written by hand (for malformed bodies).
    Prefixed(Vec<Part>),
}

// `Num` is, like the other "this or that" types, deserialised by hand instead of `#[serde(untagged)]`:
// untagged enums buffer the input and report only "did not match any variant", losing what
// was expected; these visitors say it, and do not depend on how the YAML parser buffers
// numbers.
impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative integer or an expression string such as \"${MAX_FRAME_BYTES} + 1\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num::Lit(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                u64::try_from(v).map(Num::Lit).map_err(|_| {
                    E::custom(format!("{v} is negative; expected a non-negative integer"))
                })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
                Ok(Num::Expr(v.to_owned()))
            }
        }
        d.deserialize_any(V)
    }
}
