//! The SUT manifest file format (`docs/sut-manifest.md`): the serde types a manifest YAML
//! file deserializes into, from which `docs/schema/sut-manifest.schema.json` is generated.
//! Whether they fit together is [`super::check`]'s job; the rest of the harness reads the
//! typed [`super::Manifest`].

use crate::catalog::vector::{Method, UnknownProfile};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// How the harness reaches the SUT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The reference implementation linked into the harness.
    Builtin,
    /// A process speaking the testee protocol on stdin/stdout.
    Testee,
    /// A running endpoint seen only through the wire (session method).
    Endpoint,
    /// A plain MCP server (no SWP) over stdio, newline-delimited JSON-RPC (method
    /// `mcp_native`); needs `start` and `mcp_native`.
    McpServer,
    /// An MCP stdio proxy (method `mcp_proxy`): the harness is its client on stdio and its
    /// upstream server behind `${BRIDGE} stdio-bridge --connect ${UPSTREAM_ADDR}`; needs
    /// `start`.
    McpProxy,
}

impl Kind {
    /// The name used in manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Builtin => "builtin",
            Kind::Testee => "testee",
            Kind::Endpoint => "endpoint",
            Kind::McpServer => "mcp-server",
            Kind::McpProxy => "mcp-proxy",
        }
    }
}

/// How the `mcp_native` method talks to a plain MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpNativeSpec {
    /// Transport. The manifest's `start` runs once per vector, or once for a run of vectors
    /// that share a session (`share_session`); for `http` and `websocket`
    /// it must write the port it bound to `${PORT_FILE}` (loopback).
    pub transport: McpTransport,
    /// The MCP protocol version the harness requests (`${PROTOCOL_VERSION}` in vectors),
    /// e.g. `2025-06-18`; `2026-07-28` opens with discovery instead of `initialize`.
    pub protocol_version: String,
    /// The Streamable HTTP endpoint's path (default `/mcp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Deadlines and bounds (`max_frame_bytes` is unused: a line is at most 4 MiB and a
    /// vector reads at most `max_read_bytes`). `silence_ms` is the quiet window: how long
    /// late duplicates are watched for after a vector's last step, and after a resumed
    /// stream's response; over Streamable HTTP it ends early once no response is open.
    #[serde(default)]
    pub timing: Timing,
    /// What this server calls the things vectors refer to, as `${NAME}` values, e.g.
    /// `RESOURCE_URI` (a readable resource) and `PROMPT_NAME` (a prompt without required
    /// arguments). A vector using a name the manifest does not give is not applicable.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    /// Vectors that open a plain session and only send requests and notifications run
    /// one after another on one server process and one session, as a client would use
    /// it (default true); `false` starts the server afresh for every vector.
    #[serde(default = "share_default", skip_serializing_if = "is_true")]
    pub share_session: bool,
    /// Tools the vendor vouches the harness may call, with what a call does besides
    /// answering. The harness otherwise calls only tools annotated `readOnlyHint: true` and
    /// `openWorldHint: false`; a vector about sampling, elicitation or logging during a
    /// call needs a tool named here with that effect, and is not applicable without one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDecl>,
    /// Values for the variables of the server's resource templates, by `uriTemplate` as the
    /// server lists it, e.g. `{"test://items/{id}": {"id": "42"}}`: the expansion must
    /// name a resource that exists. A template vector without one is not applicable.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub templates: BTreeMap<String, BTreeMap<String, String>>,
    /// For an MCP gateway (`mcp_gateway`): the envelope contract it holds clients to, `mcp`
    /// (default) or `seed-003`. Vectors of seed-only rules apply to `seed-003` gateways
    /// only, their MCP readings to `mcp` ones (docs/spec-issues.md SI-032).
    #[serde(default, skip_serializing_if = "is_mcp_envelope")]
    pub gateway_envelope: crate::catalog::gateway::GatewayEnvelope,
}

fn is_mcp_envelope(e: &crate::catalog::gateway::GatewayEnvelope) -> bool {
    *e == crate::catalog::gateway::GatewayEnvelope::Mcp
}

/// A tool a manifest declares safe to call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolDecl {
    /// Its name, as `tools/list` gives it.
    pub name: String,
    /// The arguments to call it with (default: made from its `inputSchema`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Value>,
    /// What a call does besides answering (default: nothing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub does: Vec<ToolEffect>,
}

/// What a call of a declared tool does on the way to its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolEffect {
    /// Sends `sampling/createMessage` to a client that declared `sampling`.
    Sampling,
    /// Sends `elicitation/create` to a client that declared `elicitation`.
    Elicitation,
    /// Sends `notifications/message` log messages.
    Logging,
}

impl ToolEffect {
    /// As written in manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolEffect::Sampling => "sampling",
            ToolEffect::Elicitation => "elicitation",
            ToolEffect::Logging => "logging",
        }
    }
}

/// What carries JSON-RPC messages to a plain MCP server or gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpTransport {
    /// Newline-delimited JSON-RPC on the server's stdin/stdout.
    Stdio,
    /// MCP Streamable HTTP at `http://127.0.0.1:PORT/mcp`, the port written by the server
    /// to `${PORT_FILE}` or chosen by the harness as `${PORT}`; JSON and SSE answers, the
    /// session and protocol-version headers, the HTTP status kept with each response.
    Http,
    /// One JSON-RPC message per text message on a WebSocket at `/mcp`.
    Websocket,
}

impl McpTransport {
    /// The name used in manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            McpTransport::Stdio => "stdio",
            McpTransport::Http => "http",
            McpTransport::Websocket => "websocket",
        }
    }
}

/// What carries frames to an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// The endpoint's stdin/stdout; one process per connection.
    Stdio,
    /// Plain TCP (loopback only, per S1).
    Tcp,
    /// TLS over TCP.
    Tls,
}

impl Transport {
    /// The name used in manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Tcp => "tcp",
            Transport::Tls => "tls",
        }
    }
}

/// Where the TLS material comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PkiSource {
    /// The harness generates a fresh PKI per run and passes it to the endpoint through
    /// `${TLS_CERT}`, `${TLS_KEY}` and `${TLS_CLIENT_CA}` in `start`.
    #[default]
    Generate,
    /// The paths below.
    Files,
}

/// TLS settings of an endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TlsSpec {
    /// Name the server certificate is checked against.
    #[serde(default = "default_server_name")]
    pub server_name: String,
    /// Generated or given PKI.
    #[serde(default)]
    pub pki: PkiSource,
    /// CA of the server certificate (files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<PathBuf>,
    /// The harness's client certificate (files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert: Option<PathBuf>,
    /// Its key (files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key: Option<PathBuf>,
    /// The endpoint requires client certificates (mTLS).
    #[serde(default)]
    pub client_auth: bool,
    /// The endpoint refuses anything below TLS 1.3.
    #[serde(default)]
    pub tls13_only: bool,
    /// The identity the endpoint should surface for the harness's certificate (files;
    /// generated PKIs use their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_identity: Option<String>,
    /// How the endpoint derives a peer identity from a client certificate, which S1 §2.2
    /// leaves to the binding (docs/spec-issues.md SI-042): with a generated PKI, the
    /// identity the harness expects for each of its certificates. Default: the SAN URI.
    #[serde(default, skip_serializing_if = "IdentityForm::is_default")]
    pub identity_form: IdentityForm,
    /// A second client identity the endpoint authenticates but authorizes less, for the
    /// vectors about authorization bound to the channel identity (A2A-016, MCP-028).
    /// Absent: those vectors are not applicable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_identity: Option<SecondIdentity>,
}

/// Which part of a client certificate the endpoint surfaces as the peer identity
/// (`tls.identity_form`), and in what text: `template` wraps it, `{}` standing for it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdentityForm {
    /// The certificate field.
    #[serde(default)]
    pub field: IdentityField,
    /// The text around it, `{}` marking where it goes (`user:{}`); absent, the field alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
}

impl IdentityForm {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The identity surfaced for a certificate with this SAN URI and common name.
    pub fn apply(&self, san_uri: &str, cn: &str) -> String {
        let field = match self.field {
            IdentityField::SanUri => san_uri.to_owned(),
            IdentityField::Cn => cn.to_owned(),
            IdentityField::Subject => format!("CN={cn}"),
        };
        match &self.template {
            Some(t) => t.replace("{}", &field),
            None => field,
        }
    }
}

/// A client certificate field that names its holder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IdentityField {
    /// The URI subject alternative name (a SPIFFE id here).
    #[default]
    SanUri,
    /// The subject's common name.
    Cn,
    /// The subject distinguished name as RFC 4514 text (`CN=...`; the harness's
    /// certificates carry a CN only).
    Subject,
}

/// The harness's second client identity (manifest `tls.second_identity`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecondIdentity {
    /// Its certificate (`pki: files`; a generated PKI makes its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert: Option<PathBuf>,
    /// Its key (`pki: files`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key: Option<PathBuf>,
    /// The identity the endpoint surfaces for it (`pki: files`; a generated PKI's is
    /// `spiffe://swp-conform.test/harness-client-2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_identity: Option<String>,
}

fn default_server_name() -> String {
    "localhost".into()
}

/// How the endpoint signals that it rejected a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RejectMode {
    /// It sends an error frame carrying the code.
    ErrorFrame,
    /// It closes the connection with zero bytes; the code is not observable.
    Close,
    /// Either.
    Both,
}

/// Where an error frame carries its code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorFrameSpec {
    /// `profile_id` of error frames.
    pub profile_id: u64,
    /// `msg_type` of error frames.
    pub msg_type: u64,
    /// JSON pointer to the code inside the (JSON) payload, e.g. `/error/data/swp_error`.
    pub code_pointer: String,
    /// The payload of one of the endpoint's error frames, as it sends it: the loader
    /// refuses a `code_pointer` that finds no code in it, which would otherwise show only
    /// as every reject vector failing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<serde_json::Value>,
    /// How an error frame names the frame it refuses (docs/sut-manifest.md, Attribution):
    /// `msg_id` (the default), by carrying that frame's msg_id where it could be read;
    /// `none`, never, so only the one frame open at the time can be the refused one.
    #[serde(default, skip_serializing_if = "Correlation::is_default")]
    pub correlation: Correlation,
}

/// How an error frame names the frame it refuses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Correlation {
    /// It carries the refused frame's msg_id, where that could be read.
    #[default]
    MsgId,
    /// It carries a msg_id of its own.
    None,
}

impl Correlation {
    /// Whether this is the default, `msg_id` (left out when written).
    pub fn is_default(&self) -> bool {
        *self == Correlation::MsgId
    }
}

/// The reject signal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectSignal {
    /// How.
    pub mode: RejectMode,
    /// The error frame, for `error-frame` and `both`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_frame: Option<ErrorFrameSpec>,
    /// What the endpoint does after a reject it signalled with an error frame: keep reading
    /// the stream or end it. Both are conformant (CORE-039, docs/spec-issues.md SI-002).
    /// Undeclared, a close after a reject makes the vector's later steps inconclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<AfterReject>,
    /// The endpoint may refuse a frame of an SWP-* profile (10, 11, 13-19) with that
    /// profile's own error message (`CRED_ERR`, `RELAY_ERR`, ...) instead of an error frame.
    /// Such a message then counts as the reject, with the code in its `code` field (a code
    /// that is not canonical is graded as one the wire cannot show). The profile docs give
    /// each profile an `*_ERR` class without saying when it replaces a reject
    /// (docs/spec-issues-profiles.md SI-P-ERR).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub profile_errors: bool,
}

/// What an endpoint does with the stream after a reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AfterReject {
    /// It goes on reading frames: later steps are judged, a close is a failure.
    Continue,
    /// It ends the stream: vectors that go on after a reject are not applicable.
    Close,
}

/// A request the endpoint answers, used to tell "accepted and alive" from "silently dead".
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    /// The probe frame (defaults as in vectors; its msg_id is replaced by a fresh one).
    pub frame: crate::catalog::vector::FrameSpec,
    /// `profile_id` of the answer.
    pub reply_profile_id: u64,
    /// `msg_type` of the answer; the answer reuses the probe's msg_id.
    pub reply_msg_type: u64,
}

/// A request whose answer reports the peer identity the endpoint saw (S1 identity surface).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdentityProbe {
    /// The request frame.
    pub frame: crate::catalog::vector::FrameSpec,
    /// JSON pointer to the identity in the answer's payload.
    pub pointer: String,
}

/// Deadlines and bounds for the session method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// Deadline for each expected observation.
    #[serde(default = "default_step_ms")]
    pub step_ms: u64,
    /// Hard limit for a whole vector.
    #[serde(default = "default_vector_ms")]
    pub vector_ms: u64,
    /// How long "nothing happens" is watched.
    #[serde(default = "default_silence_ms")]
    pub silence_ms: u64,
    /// How long the endpoint may take to start listening.
    #[serde(default = "default_start_ms")]
    pub start_ms: u64,
    /// Octets the harness reads from the endpoint per vector before cutting it off.
    #[serde(default = "default_max_read")]
    pub max_read_bytes: u64,
}

fn default_step_ms() -> u64 {
    3000
}
fn default_vector_ms() -> u64 {
    30_000
}
fn default_silence_ms() -> u64 {
    150
}
fn default_start_ms() -> u64 {
    15_000
}
fn default_max_read() -> u64 {
    32 * 1024 * 1024
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            step_ms: default_step_ms(),
            vector_ms: default_vector_ms(),
            silence_ms: default_silence_ms(),
            start_ms: default_start_ms(),
            max_read_bytes: default_max_read(),
        }
    }
}

/// How the session method reaches and reads an endpoint.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionSpec {
    /// Transport.
    pub transport: Transport,
    /// `host:port` of an endpoint that is already listening. Without it, `start` is run
    /// with `${PORT_FILE}`, where the endpoint writes the port it bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// TLS settings (transport `tls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsSpec>,
    /// How rejects are signalled.
    pub reject_signal: RejectSignal,
    /// A request the endpoint answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeSpec>,
    /// A request that reports the peer identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_probe: Option<IdentityProbe>,
    /// A request the endpoint answers only after a while, so its msg_id stays in flight
    /// (duplicate in-flight msg_id vectors). Its msg_id is set by the vector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_request: Option<crate::catalog::vector::FrameSpec>,
    /// Deadlines and bounds.
    #[serde(default)]
    pub timing: Timing,
    /// `intermediary`: the endpoint is started with `${UPSTREAM}`, the address of a
    /// listener the harness opens, and relays to it.
    #[serde(default)]
    pub topology: crate::catalog::vector::Topology,
}

/// How to start a process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Start {
    /// Program; `${SWP_REF}` stands for the reference binary built from this workspace.
    pub command: String,
    /// Arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory, relative to the manifest's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
}

/// What the SUT claims, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Claims")]
pub struct ClaimsFile {
    /// Conformance class, `C0`..`C5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Profile IDs implemented.
    #[serde(default)]
    pub profiles: Vec<u64>,
}

/// Declared limits, named as in the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// `MAX_FRAME_BYTES`.
    #[serde(rename = "MAX_FRAME_BYTES")]
    pub max_frame_bytes: u32,
    /// `MIN_MSG_ID_BYTES`.
    #[serde(rename = "MIN_MSG_ID_BYTES")]
    pub min_msg_id_bytes: u64,
    /// `MAX_MSG_ID_BYTES`.
    #[serde(rename = "MAX_MSG_ID_BYTES")]
    pub max_msg_id_bytes: u64,
    /// `MAX_EXT_BYTES`.
    #[serde(rename = "MAX_EXT_BYTES")]
    pub max_ext_bytes: u64,
    /// `MAX_PAYLOAD_BYTES`.
    #[serde(rename = "MAX_PAYLOAD_BYTES")]
    pub max_payload_bytes: u64,
}

/// Declared limits that cannot describe a receiver.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitsError {
    /// A frame bound of zero accepts nothing.
    #[error("MAX_FRAME_BYTES must be at least 1")]
    ZeroFrame,
    /// E1 rejects an empty msg_id, so the minimum cannot be zero.
    #[error("MIN_MSG_ID_BYTES must be at least 1 (E1 rejects an empty msg_id)")]
    EmptyMsgId,
    /// The msg_id range is empty.
    #[error("MIN_MSG_ID_BYTES ({0}) exceeds MAX_MSG_ID_BYTES ({1})")]
    MsgIdRange(u64, u64),
    /// No payload of the declared size fits a frame.
    #[error("MAX_PAYLOAD_BYTES ({payload}) exceeds MAX_FRAME_BYTES ({frame}) minus the smallest envelope header ({overhead})")]
    PayloadAboveFrame {
        /// The payload bound.
        payload: u64,
        /// The frame bound.
        frame: u32,
        /// The smallest header.
        overhead: u64,
    },
}

impl Limits {
    /// Checks that the limits can describe a receiver at all: a frame bound above zero, a
    /// non-empty msg_id range that excludes the empty msg_id E1 forbids, and room for a
    /// payload of `MAX_PAYLOAD_BYTES` inside `MAX_FRAME_BYTES` beside the smallest header.
    pub fn check(&self) -> Result<(), LimitsError> {
        if self.max_frame_bytes == 0 {
            return Err(LimitsError::ZeroFrame);
        }
        if self.min_msg_id_bytes == 0 {
            return Err(LimitsError::EmptyMsgId);
        }
        if self.min_msg_id_bytes > self.max_msg_id_bytes {
            return Err(LimitsError::MsgIdRange(
                self.min_msg_id_bytes,
                self.max_msg_id_bytes,
            ));
        }
        // Five one-octet fields, the shortest msg_id with its length, an empty extension
        // block and the payload's length prefix.
        let prefix = uvarint_len(self.max_payload_bytes.max(u64::from(self.max_frame_bytes)));
        let overhead = 5 + 1 + self.min_msg_id_bytes + 1 + prefix;
        if self.max_payload_bytes.saturating_add(overhead) > u64::from(self.max_frame_bytes) {
            return Err(LimitsError::PayloadAboveFrame {
                payload: self.max_payload_bytes,
                frame: self.max_frame_bytes,
                overhead,
            });
        }
        Ok(())
    }
}

/// Octets of the uvarint encoding of `v`: seven bits per octet.
fn uvarint_len(v: u64) -> u64 {
    u64::from((64 - v.leading_zeros()).max(1).div_ceil(7))
}

/// A frame-rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    /// Frames per window.
    pub frames: u32,
    /// Window in ms.
    pub window_ms: u64,
}

/// Declared policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Whether `ts_unix_ms` freshness is enforced.
    pub timestamp_freshness: bool,
    /// `MAX_CLOCK_SKEW_MS`.
    #[serde(default = "default_skew")]
    pub max_clock_skew_ms: u64,
    /// Unknown-profile handling.
    #[serde(default = "default_unknown_profile")]
    pub unknown_profile: UnknownProfile,
    /// Frame-rate limit, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateLimit>,
    /// Whether a request reusing the msg_id of one still in flight is rejected
    /// (`ERR_DUPLICATE_MSG_ID`). The spec puts uniqueness on senders only, so a receiver
    /// that checks it declares so here (`docs/spec-issues.md` SI-021).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reject_duplicate_msg_id: bool,
}

fn is_message(f: &crate::p1::P1Form) -> bool {
    *f == crate::p1::P1Form::Message
}

fn default_skew() -> u64 {
    crate::frames::limits::DEFAULT_MAX_CLOCK_SKEW_MS
}

fn default_unknown_profile() -> UnknownProfile {
    UnknownProfile::ErrorReply
}

/// A SUT manifest file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Manifest")]
pub struct ManifestFile {
    /// Implementation name.
    pub name: String,
    /// Implementation version.
    pub version: String,
    /// How it is reached.
    pub kind: Kind,
    /// How to start it (testee).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Start>,
    /// Methods it supports.
    pub methods: Vec<Method>,
    /// What it claims.
    #[serde(default)]
    pub claims: ClaimsFile,
    /// The profile core vectors address when they need a known profile (default: 1 when
    /// claimed, else the lowest claimed profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_profile_id: Option<u64>,
    /// How the SUT shapes P1 payloads (A2A, SWP-*): the bare message (default) or the
    /// annex's `Payload` wrapper. The spec allows both (docs/spec-issues.md).
    #[serde(default, skip_serializing_if = "is_message")]
    pub p1_payload: crate::p1::P1Form,
    /// What this SUT calls the things portable vectors need, as `${NAME}` values in the
    /// JSON they send and expect: `INTERNAL_ERROR_METHOD` (a request that fails inside the
    /// endpoint), `STREAM_METHOD` and `STREAM_PARAMS` (a request answered with incremental
    /// output; declaring it claims MCP mapping §7 streaming), `ANSWERED_METHOD` (a request
    /// answered with a result). A string that is exactly `${NAME}` takes the value as JSON
    /// of any type. A vector using a name not given here is not applicable
    /// (`docs/sut-manifest.md`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, serde_json::Value>,
    /// Limits (SWP kinds; an `mcp-server` or `mcp-proxy` speaks no SWP and may omit them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// Policies (SWP kinds; an `mcp-server` or `mcp-proxy` may omit them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Policy>,
    /// Session-method settings (kind `endpoint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionSpec>,
    /// Plain-MCP settings (kind `mcp-server`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_native: Option<McpNativeSpec>,
}

fn share_default() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl Limits {
    /// What an MCP-only manifest that declares no limits stands for: the reference's
    /// limits, which no MCP method reads.
    pub const UNUSED: Limits = Limits {
        max_frame_bytes: 8 * 1024 * 1024,
        min_msg_id_bytes: 8,
        max_msg_id_bytes: 64,
        max_ext_bytes: 4096,
        max_payload_bytes: 8 * 1024 * 1024 - 1024,
    };
}

impl Policy {
    /// What an MCP-only manifest that declares no policy stands for; no MCP method reads
    /// it.
    pub fn unused() -> Policy {
        Policy {
            timestamp_freshness: false,
            max_clock_skew_ms: default_skew(),
            unknown_profile: default_unknown_profile(),
            rate_limit: None,
            reject_duplicate_msg_id: false,
        }
    }
}
