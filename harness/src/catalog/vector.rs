//! The vector file format (`docs/vector-format.md`): the Rust types a vector YAML file
//! deserializes into, from which the checked-in JSON Schema is generated.

use schemars::JsonSchema;
use serde::de::{
    self, value::MapAccessDeserializer, value::SeqAccessDeserializer, IntoDeserializer,
};
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

/// How a vector can be run (docs/architecture.md, Data flow).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The SUT as a testee: bytes in, structured verdict out.
    Codec,
    /// The SUT as an endpoint seen only through the wire.
    Session,
    /// A plain MCP server (no SWP) driven over stdio with newline-delimited JSON-RPC
    /// (`mcpnative` namespace).
    McpNative,
    /// An MCP gateway holding the seed-003 contract (string ids, `params` objects, the
    /// canonical error table), driven like `mcp_native` over stdio, HTTP or WebSocket
    /// (`gateway` namespace).
    McpGateway,
    /// An MCP version translator: one message in, its translation out (`mcpx` namespace).
    Translate,
    /// An MCP version-translating stdio proxy between the harness as client and the
    /// harness as upstream server (`mcpxproxy` namespace, intermediary topology).
    McpProxy,
}

impl Method {
    /// The name used in vectors, manifests and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Codec => "codec",
            Method::Session => "session",
            Method::McpNative => "mcp_native",
            Method::McpGateway => "mcp_gateway",
            Method::Translate => "translate",
            Method::McpProxy => "mcp_proxy",
        }
    }

    /// Whether its transcripts carry wall-clock times (a real wire), so reports keep them in
    /// the run block; the codec and translate methods' clocks are virtual.
    pub fn on_the_wire(self) -> bool {
        !matches!(self, Method::Codec | Method::Translate)
    }

    /// Whether the method drives plain JSON-RPC (no SWP on the harness side).
    pub fn is_jsonrpc(self) -> bool {
        matches!(self, Method::McpNative | Method::McpGateway)
    }
}

/// One test vector: one file under `vectors/<namespace>/`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Vector {
    /// Unique id, `<namespace>_<4 digits>_<case>`; the file is named `<id>.yaml`.
    pub id: String,
    /// One line saying what is checked.
    pub title: String,
    /// The namespace (`core`, `e1`, ...); the vector lives in `vectors/<namespace>/`.
    pub namespace: String,
    /// Requirement IDs (or their spec-kit trace aliases) this vector exercises.
    pub requirements: Vec<String>,
    /// Methods the vector supports.
    pub methods: Vec<Method>,
    /// Conditions on what the SUT claims; the vector is not applicable otherwise.
    #[serde(default)]
    pub applies_when: Applicability,
    /// Why the vector exists or how to read it; free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// How the session method connects for this vector (TLS variants for S1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<ConnectSpec>,
    /// `intermediary`: the SUT sits between the harness's client and the harness's
    /// upstream server (relays, gateways, proxies). Default `endpoint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<Topology>,
    /// How an MCP proxy under test is configured for this vector (method `mcp_proxy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<super::mcpx::ProxySpec>,
    /// What the server must declare and which versions and transport the vector applies to
    /// (method `mcp_native`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<super::mcpnative::McpVectorSpec>,
    /// What a trivial SUT can pass of this vector (session method): `reject-only` when
    /// every step expects a reject (or nothing at all), `accept-only` when every step
    /// expects an accept confirmed without an answer, nothing or silence. The catalog check
    /// holds the mark
    /// to the steps, and the trivial-SUT test (`harness/tests/trivial.rs`) fails when a
    /// trivial SUT passes a vector not marked with its shape: a judge that credits the wrong
    /// frame shows up there first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
    /// The vector needs the SUT to itself: `run --jobs N` runs it alone, after the others
    /// (a rate limit counts every frame the SUT receives, not only this vector's).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclusive: bool,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The spec kit fixture this vector was read from (`crate::published`): what the kit
    /// expects and what the fixture assumes of the receiver. Never in a YAML file.
    #[serde(skip)]
    #[schemars(skip)]
    pub fixture: Option<std::sync::Arc<crate::published::Fixture>>,
}

/// The shape of a vector whose every step a trivial SUT can answer alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// Every step expects a reject, a refusal or nothing.
    RejectOnly,
    /// Every step expects an accept that needs no answer, nothing or silence.
    AcceptOnly,
}

impl Shape {
    /// The name used in vectors.
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::RejectOnly => "reject-only",
            Shape::AcceptOnly => "accept-only",
        }
    }

    /// The shape the steps of `v` have, if any: what a SUT that refuses (or accepts)
    /// everything alike could pass. Silence fits only a SUT that answers nothing.
    pub fn of(v: &Vector) -> Option<Shape> {
        let (mut rejects, mut accepts, mut silences) = (0, 0, 0);
        for s in &v.steps {
            for e in s.expect.as_slice() {
                match e {
                    Expect::Reject(_) | Expect::Denied(_) => rejects += 1,
                    Expect::Accept(a) if !a.answered && !a.reject_allowed => accepts += 1,
                    // A reply the spec does not owe passes on silence, as an accept does.
                    Expect::Reply(r) if r.when_silent == Some(WhenSilent::Pass) => accepts += 1,
                    Expect::Silence(_) => silences += 1,
                    Expect::Nothing => {}
                    _ => return None,
                }
            }
        }
        match (rejects, accepts, silences) {
            (r, 0, 0) if r > 0 => Some(Shape::RejectOnly),
            (0, a, _) if a > 0 => Some(Shape::AcceptOnly),
            _ => None,
        }
    }
}

/// Conditions on the SUT manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Applicability {
    /// Profiles the SUT must claim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<u64>,
    /// Required timestamp-freshness policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_freshness: Option<bool>,
    /// Required unknown-profile policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_profile: Option<UnknownProfile>,
    /// Whether the SUT must declare a frame-rate limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<bool>,
    /// The SUT's declared duplicate in-flight msg_id policy must be this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reject_duplicate_msg_id: Option<bool>,
    /// The P1 payload form the SUT must declare (for vectors that write P1 octets by hand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p1_payload: Option<crate::p1::P1Form>,
    /// `true`: the SUT must signal rejects with error frames (`reject_signal` mode
    /// `error-frame` or `both`), for vectors about what an error frame carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_frames: Option<bool>,
    /// Conditions on the SUT's parameters that must all hold, e.g.
    /// `${MAX_PAYLOAD_BYTES} + 64 <= ${MAX_FRAME_BYTES}` (operators `<= < >= > == !=`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holds: Vec<String>,
}

/// Connection options for one session vector.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectSpec {
    /// Which client certificate the harness presents over TLS (default `valid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert: Option<ClientCert>,
    /// Offer only TLS 1.2.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls12_only: bool,
    /// Connect in plaintext to a SUT that requires TLS.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plaintext: bool,
}

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

/// A client certificate variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClientCert {
    /// The valid certificate.
    Valid,
    /// None.
    None,
    /// Expired, from the trusted CA.
    Expired,
    /// From a CA the SUT does not trust.
    Untrusted,
    /// The harness's second valid identity, which the SUT authenticates like the first and
    /// authorizes as its manifest declares (`tls.second_identity`).
    Second,
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

/// One step: an action and what must be observed after it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// What this step does, for the transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Octets to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send: Option<Send>,
    /// End the stream (close the write side) instead of sending.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub end: bool,
    /// Write a forged TLS application-data record under the TLS layer (session, TLS only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub corrupt_record: bool,
    /// Send again the last TLS record the harness wrote (a replay; session, TLS only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replay_record: bool,
    /// Which connection sends (intermediary topology; default `client`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<Side>,
    /// This step sends and reads on a second connection to the endpoint, opened with the
    /// harness's second client identity (session, TLS, `tls.second_identity`) and open for
    /// the whole vector beside the first: what one peer does must not change what the
    /// other may do (tenant-scoped ids, authorization).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub second_connection: bool,
    /// The requirements this step tests, when narrower than the vector's (IDs or aliases):
    /// a failure of this step fails only these. Omitted, the step tests the vector's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requirements: Vec<String>,
    /// Run this step this many times (each with a fresh default msg_id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Num>,
    /// Receiver clock for this step, in ms after `${NOW_MS}` (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<Num>,
    /// An `mcp_native` session action (open, request, pick, ...) instead of `send`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<super::mcpnative::McpStep>,
    /// What must follow, in order: one expectation or a list. Only an `mcp` step may leave
    /// it out (its own checks then apply).
    #[serde(default)]
    pub expect: Expectations,
}

/// One expectation or several, in order.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Expectations {
    /// Several events, in order.
    Many(Vec<Expect>),
    /// Exactly one event.
    One(Box<Expect>),
}

impl Vector {
    /// The requirements step `j` tests: its own `requirements`, or the vector's, and the
    /// code requirements of its rejects.
    pub fn step_requirements(&self, j: usize) -> Vec<String> {
        let Some(s) = self.steps.get(j) else {
            return self.requirements.clone();
        };
        let mut out = if s.requirements.is_empty() {
            self.requirements.clone()
        } else {
            s.requirements.clone()
        };
        for e in s.expect.as_slice() {
            if let Expect::Reject(RejectSpec::Full(f)) | Expect::Denied(RejectSpec::Full(f)) = e {
                for r in &f.code_requirements {
                    if !out.contains(r) {
                        out.push(r.clone());
                    }
                }
            }
        }
        out
    }

    /// Every requirement the vector exercises: its `requirements` and the
    /// `code_requirements` of its rejects, as written (IDs or aliases), without repeats.
    pub fn all_requirements(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self.requirements.iter().map(String::as_str).collect();
        for s in &self.steps {
            for e in s.expect.as_slice() {
                if let Expect::Reject(RejectSpec::Full(f)) | Expect::Denied(RejectSpec::Full(f)) = e
                {
                    out.extend(f.code_requirements.iter().map(String::as_str));
                }
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        out.retain(|r| seen.insert(*r));
        out
    }
}

impl Default for Expectations {
    /// None given (an `mcp` step's own checks).
    fn default() -> Self {
        Expectations::Many(Vec::new())
    }
}

impl Expectations {
    /// As a slice.
    pub fn as_slice(&self) -> &[Expect] {
        match self {
            Expectations::Many(v) => v,
            Expectations::One(e) => std::slice::from_ref(e.as_ref()),
        }
    }
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

/// One expected observation.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Expect {
    /// A frame is accepted; listed fields must match.
    Accept(Box<AcceptSpec>),
    /// A reject with one of the allowed canonical codes.
    Reject(RejectSpec),
    /// Nothing happens: the octets do not complete a frame (codec), no reply (session).
    Nothing,
    /// The SUT closes the connection (session).
    Close,
    /// An A2A agent runs these tasks (session): every A2A frame until all of them ended is
    /// collected; per task, exactly `events` Events (when given), then exactly one Result with the given
    /// outcome, nothing after it. Tasks may interleave.
    A2aTasks(Vec<TaskOutcome>),
    /// No octets arrive for `ms` milliseconds (session).
    Silence(SilenceSpec),
    /// The SWP-* messages the endpoint sends next (session, profiles 12, 13, 14, 17, 18):
    /// exactly these, in order, each decoded in the SUT's P1 form and carrying the listed
    /// fields, then nothing more for a quiet window. Every frame of those profiles the
    /// harness sent in the vector and every one read here also goes through the profile's
    /// machine (`swp_profiles`, configured from the manifest's declarations), so what the
    /// endpoint emits is judged by the profile's rules: one terminal outcome per call, no
    /// stream item after it, strictly increasing seq_no, replayed outcomes, chunk order,
    /// range and integrity, state ids, trace context returned unchanged.
    Flow(Vec<FlowMessage>),
    /// The next frame from the SUT matches (session).
    Reply(Box<ReplySpec>),
    /// The request this step sent is refused, not carried out (session; authorization
    /// vectors). A reject with these codes passes as `reject` would (a close where the
    /// manifest allows one; another code fails only the `code_requirements`). So does an
    /// answer that refuses in the request's own profile: a JSON-RPC error response to the
    /// request's msg_id (profile 1), or an A2A Result with `ok: false` before any Event
    /// (profile 2). A success answer, or an A2A Event, means the request was carried out.
    Denied(RejectSpec),
    /// The request this step sent is answered (session): `err` means with its profile's own
    /// error message (`ART_ERR` for an artifact nobody offers, `AGDISC_ERR` for an agent
    /// the endpoint does not know), which the spec allows as the answer to a valid request.
    /// Such a message is never read as a refusal here, whatever the manifest's
    /// `reject_signal.profile_errors` says; an error frame passes only with a code in `also`.
    /// The codec method, which sees no answers, judges it as an accept.
    Answer(AnswerSpec),
    /// The error frame of the `reject` before it in this step carries this JSON (objects
    /// by subset): how a core error is surfaced as JSON-RPC (session).
    ErrorJson(serde_json::Value),
    /// A streamed answer to the request this step sent (session, MCP mapping §7): frames
    /// until the terminal response on the request's msg_id.
    Stream(Box<StreamSpec>),
    /// The answer to the identity probe reports the harness's client identity (session).
    Identity,
    /// The octets sent in this step arrive unchanged on the harness's other connection
    /// (intermediary topology): byte preservation of the whole frame.
    Forwarded,
    /// The frame sent in this step arrives on the harness's other connection with the same
    /// profile_id, msg_type and payload octets (intermediary topology). msg_id, timestamp,
    /// flags and extensions may be the intermediary's own: only payload bytes must be
    /// preserved (MCP mapping §2).
    ForwardedPayload,
    /// A JSON-RPC response with this id arrives (method `mcp_native`).
    Response(Box<ResponseSpec>),
    /// No JSON-RPC response (to `id`, or to anything when `id` is omitted) arrives within
    /// `ms` (method `mcp_native`). Notifications and server requests may arrive meanwhile.
    NoResponse(NoResponseSpec),
    /// The translator returns exactly this (method `translate`).
    Translated(Box<super::mcpx::TranslatedSpec>),
    /// The translator refuses with this typed error (method `translate`).
    TranslationError(super::mcpx::TranslationErrorSpec),
    /// Any one of these `translated` / `translation_error` outcomes (method `translate`):
    /// where the rule forbids an outcome but leaves the choice among others open (an
    /// elicitation toward an older client may be declined, cancelled, answered with an error
    /// or refused; it must never reach the client).
    OneOf(Vec<Expect>),
    /// The next JSON-RPC line arriving at the harness's `side` is exactly this (method
    /// `mcp_proxy`).
    Arrives(Box<super::mcpx::ArrivesSpec>),
    /// What an `mcp` step must produce (method `mcp_native`).
    Mcp(Box<super::mcpnative::McpExpect>),
}

/// What answers a request (`answer`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerSpec {
    /// The profile's own error message.
    pub err: ErrAnswer,
}

/// An answer by the profile's error message (`*_ERR`, whose field 1 is its `code`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrAnswer {
    /// The message's `code` must be this (profile codes are the SUT's own strings, so
    /// vectors take it from a manifest parameter); omitted, any code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Canonical codes of an error frame that answers the request as well (a stack that
    /// reports profile outcomes as error frames, `ERR_NOT_FOUND` say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
}

/// A JSON-RPC response the server must send (method `mcp_native`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResponseSpec {
    /// The response's `id`, exactly (`null` for errors about unreadable requests).
    pub id: serde_json::Value,
    /// The response is a success whose `result` contains this value: objects match by
    /// subset, an array matches when each expected element matches some element (so `[]`
    /// means "an array"), other values exactly; the string `${PROTOCOL_VERSION}` stands for
    /// the manifest's protocol version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    /// The response is an error; with `code`, of that code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorSpec>,
    /// The HTTP status the response came with. Judged on the `http` transport, the only
    /// one with statuses; on stdio and WebSocket the JSON-RPC body alone is judged, so one
    /// vector states transport parity for all three.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
}

/// An expected JSON-RPC error.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorSpec {
    /// The `error.code` (any code when omitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// The `error.message`, exactly (any message when omitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The `error.data` contains this value (subset match, as `result`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

/// No response within a window.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoResponseSpec {
    /// Only a response with this id counts (any response when omitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<serde_json::Value>,
    /// How long to watch.
    pub ms: Num,
}

/// A pattern for a frame the SUT sends.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplySpec {
    /// Expected `profile_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_id: Option<Num>,
    /// Expected `msg_type`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg_type: Option<Num>,
    /// The reply reuses the msg_id of the frame this step sent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub same_msg_id: bool,
    /// The payload, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Data>,
    /// A JSON value the payload must contain (objects match by subset; other values
    /// exactly). The string `${CLIENT_IDENTITY}` stands for the identity of the harness's
    /// TLS client certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_json: Option<serde_json::Value>,
    /// The payload decodes as this P1 message and carries these field values (other fields
    /// and unknown fields are not judged): `{a2a.Result: {ok: true}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub payload_p1: Option<crate::p1::P1Spec>,
    /// With `payload_p1`: the payload octets are the canonical encoding of what they decode
    /// to (known fields in field-number order, defaults omitted, nothing repeated), which is
    /// what a deterministic serializer writes (P1 §4).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub p1_canonical: bool,
    /// What no reply within the step's time means. Absent, it fails the step (a timeout).
    /// `pass`: the spec requires no answer here, so silence conforms and only a frame that
    /// does arrive is judged (a2a_0001: nothing makes a Handshake owe an answer). It is not
    /// an `accept`: a reject still arrives as a frame and fails the pattern.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_silent: Option<WhenSilent>,
}

/// How a `reply` step reads silence (`when_silent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WhenSilent {
    /// Silence conforms: the step passes with nothing to judge.
    Pass,
    /// Silence leaves the requirement untested: the step is inconclusive.
    Inconclusive,
}

/// A streamed answer (expectation `stream`): every frame the endpoint sends until the
/// response (msg_type 2) that reuses the request's msg_id is a partial output; that
/// response is the terminal one. Only what the flags ask is judged, so one vector can
/// hold the MUST (a terminal response) and another the SHOULDs (partials as notifications
/// carrying the request's correlation).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamSpec {
    /// At least this many partial outputs precede the terminal response.
    #[serde(default)]
    pub min_partials: u64,
    /// Every partial output is a notification (msg_type 3) of the request's profile.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partials_are_notifications: bool,
    /// Every partial output carries the request's correlation somewhere in its JSON
    /// `params`: the request's `params._meta.progressToken` when it gave one, else its
    /// JSON-RPC `id` (MCP correlates progress by token).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partials_correlated: bool,
    /// JSON the terminal response contains (objects by subset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_json: Option<serde_json::Value>,
}

/// One message of a `flow` expectation.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowMessage {
    /// The P1 message and the field values it must carry (other fields are not compared):
    /// `{rpc.RpcResp: {rpc_id: r1, result: hi}}`. Its name gives the profile and msg_type.
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub p1: crate::p1::P1Spec,
    /// How many consecutive messages this pattern matches (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Num>,
}

/// What an A2A agent must do with one task (expectation `a2a_tasks`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskOutcome {
    /// The task_id, as a P1 bytes value (`hex:...` or text).
    pub task_id: String,
    /// How many Events precede the Result; absent, any number (a kind whose Events the
    /// vector does not rely on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
    /// The Result's `ok`.
    pub ok: bool,
    /// The Result's `output`, when given (a P1 bytes value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// A substring of the Result's `error_message`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_contains: Option<String>,
    /// Every Event and Result of this task is serialized deterministically in the SUT's P1
    /// form (P1 §4, a SHOULD): the canonical encoding of what it decodes to.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub p1_canonical: bool,
}

/// Assertions on an accepted frame.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcceptSpec {
    /// Expected envelope fields; omitted fields are not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<FieldsSpec>,
    /// Expected unknown flag bits surfaced by the receiver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_flags: Option<Num>,
    /// The frame is one the addressed profile must refuse (a msg_type it does not define,
    /// say) while the core must accept it: a profile-level reject passes, and a close, which
    /// cannot show which layer refused, is `inconclusive` rather than a failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub profile_may_refuse: bool,
    /// The spec leaves accepting the frame open (docs/spec-issues.md): a reject passes too,
    /// but an accept must decode to these fields. Codec method only: on a wire, a reject
    /// ends the connection the accept would be confirmed on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reject_allowed: bool,
    /// The frame is a request and its answer (any frame reusing its msg_id) confirms the
    /// accept (session method), instead of a quiet window or the probe: the probe is a
    /// frame too, and under a rate limit it would change what the vector counts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub answered: bool,
}

/// Expected envelope fields.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldsSpec {
    /// `version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Num>,
    /// `profile_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_id: Option<Num>,
    /// `msg_type`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg_type: Option<Num>,
    /// `flags`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<Num>,
    /// `ts_unix_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts_unix_ms: Option<Num>,
    /// `msg_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg_id: Option<Data>,
    /// `payload`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Data>,
    /// The extension entries, all of them, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<ExtSpec>>,
}

/// An expected reject.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RejectSpec {
    /// Just the canonical code.
    Code(String),
    /// The code with options.
    Full(RejectFull),
}

/// An expected reject, with the codes the spec also allows.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectFull {
    /// The canonical code the spec recommends.
    pub code: String,
    /// Other canonical codes the spec allows for this case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    /// Whether the stream must be terminated afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminates: Option<bool>,
    /// Requirements that govern the code itself (often a SHOULD, while the reject is a
    /// MUST): when the reject happens with another canonical code, only these decide
    /// whether that fails the run. Default: all the vector's requirements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub code_requirements: Vec<String>,
}

/// A bounded wait.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SilenceSpec {
    /// How long.
    pub ms: Num,
    /// A refusal within the window passes too (an error frame, a profile's refusal, a
    /// close): the spec forbids an answer here, not a refusal (mcp_0009: a notification
    /// that carries an id is refused or silently dropped). Any other frame still fails.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refusal_allowed: bool,
}

// The three "this or that" types are deserialised by hand instead of `#[serde(untagged)]`:
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

impl<'de> Deserialize<'de> for Expectations {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Expectations;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an expectation (accept, reject, nothing, close, silence, reply, identity, forwarded) or a list of them")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, a: A) -> Result<Expectations, A::Error> {
                Vec::<Expect>::deserialize(SeqAccessDeserializer::new(a)).map(Expectations::Many)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, a: A) -> Result<Expectations, A::Error> {
                Expect::deserialize(MapAccessDeserializer::new(a))
                    .map(|e| Expectations::One(Box::new(e)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Expectations, E> {
                Expect::deserialize(v.into_deserializer()).map(|e| Expectations::One(Box::new(e)))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for RejectSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = RejectSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a canonical code (ERR_...) or {code, also, terminates, code_requirements}",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RejectSpec, E> {
                Ok(RejectSpec::Code(v.to_owned()))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, a: A) -> Result<RejectSpec, A::Error> {
                RejectFull::deserialize(MapAccessDeserializer::new(a)).map(RejectSpec::Full)
            }
        }
        d.deserialize_any(V)
    }
}
