//! What a vector step expects, in the vector file format: one expectation or a list, each
//! a tagged [`Expect`] with its specification.

use super::send::{Data, ExtSpec, Num};
use schemars::JsonSchema;
use serde::de::{
    self, value::MapAccessDeserializer, value::SeqAccessDeserializer, IntoDeserializer,
};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// One expectation or several, in order.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Expectations {
    /// Several events, in order.
    Many(Vec<Expect>),
    /// Exactly one event.
    One(Box<Expect>),
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
