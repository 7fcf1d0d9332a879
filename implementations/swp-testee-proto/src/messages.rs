//! The messages of testee protocol v1 (`docs/testee-protocol.md`): requests, replies and
//! the octet strings they carry as hex.

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Octets carried as a lowercase hex string.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash, PartialOrd, Ord)]
pub struct Hex(pub Bytes);

/// Lowercase hex of `b`. Table-driven: the testee protocol moves frames of several MiB as
/// hex, and the per-octet branchy encoders cost more than the JSON around them.
pub fn hex_encode(b: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = Vec::with_capacity(b.len() * 2);
    for &x in b {
        out.push(DIGITS[usize::from(x >> 4)]);
        out.push(DIGITS[usize::from(x & 0xf)]);
    }
    // Only ASCII digits were pushed.
    String::from_utf8(out).unwrap_or_default()
}

const fn nibble_table() -> [u8; 256] {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
}

static NIBBLE: [u8; 256] = nibble_table();

/// Decodes hex digits (either case); `None` on odd length or a non-hex character.
pub fn hex_decode(s: &[u8]) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() / 2);
    for pair in s.chunks_exact(2) {
        let (h, l) = (NIBBLE[usize::from(pair[0])], NIBBLE[usize::from(pair[1])]);
        if (h | l) & 0xf0 != 0 {
            return None;
        }
        out.push(h << 4 | l);
    }
    Some(out)
}

impl Serialize for Hex {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex_encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for Hex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        hex_decode(s.as_bytes())
            .map(|v| Hex(Bytes::from(v)))
            .ok_or_else(|| serde::de::Error::custom("expected an even number of hex digits"))
    }
}

/// Every request: an id echoed in the reply, an operation name and its arguments.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request<A> {
    /// Correlates the reply.
    pub id: u64,
    /// Operation name.
    pub op: String,
    /// Operation arguments.
    pub args: A,
}

/// `hello`: the first request; the testee names itself and what it supports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelloRequest {
    /// The harness's name and version.
    pub harness: String,
    /// The protocol version the harness speaks.
    pub protocol: u32,
}

/// The `hello` reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelloReply {
    /// Implementation name.
    pub name: String,
    /// Implementation version.
    pub version: String,
    /// Protocol version the testee speaks.
    pub protocol: u32,
    /// Operations it supports (for example `decode`).
    pub supports: Vec<String>,
}

/// Limits the testee must apply (core-spec §3.1-3.2, E1 §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// `MAX_FRAME_BYTES`.
    pub max_frame_bytes: u32,
    /// `MIN_MSG_ID_BYTES`.
    pub min_msg_id_bytes: u64,
    /// `MAX_MSG_ID_BYTES`.
    pub max_msg_id_bytes: u64,
    /// `MAX_EXT_BYTES`.
    pub max_ext_bytes: u64,
    /// `MAX_PAYLOAD_BYTES`.
    pub max_payload_bytes: u64,
}

/// A frame-rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitSpec {
    /// Frames per window.
    pub frames: u32,
    /// Window in ms.
    pub window_ms: u64,
}

/// Receiver policy the testee must apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    /// Enforce `ts_unix_ms` freshness.
    pub timestamp_freshness: bool,
    /// `MAX_CLOCK_SKEW_MS`.
    pub max_clock_skew_ms: u64,
    /// Frame-rate limit, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateLimitSpec>,
}

/// The receiver configuration for one `decode` request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodecConfig {
    /// Size limits.
    pub limits: LimitsSpec,
    /// Policy.
    pub policy: PolicySpec,
    /// Profile IDs the receiver treats as known.
    pub known_profiles: Vec<u64>,
    /// Profiles whose payloads the receiver also validates after the core accepts a frame:
    /// P1 decode, required fields and, for A2A, the lifecycle across the request's frames
    /// (one channel). A testee lists `validate:N` in `supports` for each profile it can
    /// validate; the field is absent when empty, so older testees never see it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validate_profiles: Vec<u64>,
    /// How P1 payloads are shaped (`message`, the default, or `wrapper`); absent when the
    /// default, so testees that predate it never see it.
    #[serde(default, skip_serializing_if = "P1PayloadForm::is_message")]
    pub p1_payload: P1PayloadForm,
}

/// The shape of P1 payloads: the bare message of the msg_type, or the profile annex's
/// `Payload` wrapper with that member set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum P1PayloadForm {
    /// The bare message.
    #[default]
    Message,
    /// The `Payload` wrapper.
    Wrapper,
}

impl P1PayloadForm {
    /// Whether this is the default form.
    pub fn is_message(&self) -> bool {
        *self == P1PayloadForm::Message
    }
}

/// Octets that arrive together, at receiver time `now_ms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chunk {
    /// Receiver clock for this chunk, ms since the Unix epoch.
    pub now_ms: u64,
    /// The octets.
    pub bytes: Hex,
}

/// `decode`: run one fresh receiver over a stream given as chunks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecodeRequest {
    /// Receiver configuration.
    pub config: CodecConfig,
    /// The stream, in arrival order.
    pub chunks: Vec<Chunk>,
    /// Whether the stream ends after the last chunk.
    pub end_of_stream: bool,
}

/// One extension entry of a decoded envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtensionView {
    /// `ext_type`.
    pub ext_type: u64,
    /// `ext_val`.
    pub value: Hex,
}

/// A decoded envelope as the testee reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvelopeView {
    /// `version`.
    pub version: u64,
    /// `profile_id`.
    pub profile_id: u64,
    /// `msg_type`.
    pub msg_type: u64,
    /// `flags`.
    pub flags: u64,
    /// `ts_unix_ms`.
    pub ts_unix_ms: u64,
    /// `msg_id`.
    pub msg_id: Hex,
    /// Extension entries in wire order.
    pub extensions: Vec<ExtensionView>,
    /// `payload`.
    pub payload: Hex,
}

/// What the receiver did with one frame (or with the stream).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    /// A frame was accepted.
    Accept {
        /// The decoded envelope.
        envelope: EnvelopeView,
        /// Unknown flag bits the receiver surfaced, if it surfaces them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unknown_flags: Option<u64>,
    },
    /// A frame or the stream was rejected.
    Reject {
        /// Canonical `ERR_*` code, when the implementation knows it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        /// Runtime or legacy alias, when the implementation uses one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        alias: Option<String>,
        /// Human-readable reason.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
        /// Whether the stream is terminated after this reject.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        terminated: Option<bool>,
    },
}

/// The `decode` reply: the events each chunk produced, then those of end of stream.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecodeReply {
    /// `chunks[i]` holds the events chunk `i` completed.
    pub chunks: Vec<Vec<Event>>,
    /// Events at end of stream (a truncation reject), empty when the stream did not end.
    pub end: Vec<Event>,
}

/// `translate`: one MCP message from one protocol version to another
/// (`docs/testee-protocol.md`, `docs/mcp-translation.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TranslateRequest {
    /// The sender's MCP version, e.g. `2025-06-18`.
    pub from: String,
    /// The receiver's MCP version.
    pub to: String,
    /// `client_to_server` or `server_to_client`.
    pub direction: String,
    /// For a result response: the method of the request it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<String>,
    /// The JSON-RPC message (or 2025-03-26 batch).
    pub message: serde_json::Value,
}

/// One structured warning of a translation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranslateWarning {
    /// `dropped`, `converted`, `fallback_added`, `version_rewritten`,
    /// `notification_dropped`, `answered_on_behalf`, `response_dropped`, `batch_split`,
    /// `unknown_method_forwarded`.
    pub kind: String,
    /// JSON Pointer into the input message.
    pub path: String,
    /// Free text.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// The `translate` reply: the translation, or the translator's typed refusal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TranslateReply {
    /// Translated.
    Translated {
        /// Messages for the receiver, in order.
        messages: Vec<serde_json::Value>,
        /// Responses sent back to the sender on the receiver's behalf.
        #[serde(default)]
        replies: Vec<serde_json::Value>,
        /// Every dropped or converted field.
        #[serde(default)]
        warnings: Vec<TranslateWarning>,
    },
    /// Refused with a typed error.
    Error {
        /// `invalid_input`, `unrepresentable`, `missing_context` or `invalid_output`.
        kind: String,
        /// The message type, e.g. `tools/list result`.
        message_type: String,
        /// JSON Pointer into the input.
        #[serde(default)]
        path: String,
        /// Free text.
        #[serde(default)]
        details: String,
    },
}

/// Every reply: exactly one of `ok`, `unsupported` or `error`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply<T> {
    /// The request's id.
    pub id: u64,
    /// Success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<T>,
    /// The testee does not implement this operation or option; the reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<String>,
    /// The testee failed to process the request (not a protocol verdict).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_garbage() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(hex_decode(hex_encode(&all).as_bytes()), Some(all));
        assert_eq!(hex_decode(b"0A0b"), Some(vec![10, 11]));
        assert_eq!(hex_decode(b"abc"), None);
        assert_eq!(hex_decode(b"zz"), None);
    }
}
