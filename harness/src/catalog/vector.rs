//! The typed vector (`docs/vector-format.md`): a [`Header`] every method reads and a
//! [`Body`] of its methods' family (`body`), read from the flat file shape (`wire`, which
//! the checked-in JSON Schema is generated from). What a step sends is in `send`, what it
//! expects in `expect`, and the small vocabulary fixtures share in `terms` (all
//! re-exported, so one path names them).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::body::{
    Body, Family, FrameExpect, FrameStep, FramesBody, JsonRpcBody, JsonRpcExpect, JsonRpcStep,
    ProxyBody, ProxyExpect, ProxyStep, Step, StepView, TranslateBody, TranslateExpect,
    TranslateStep,
};
pub use super::expect::{
    AcceptSpec, AnswerSpec, ErrAnswer, ErrorSpec, Expect, Expectations, FieldsSpec, FlowMessage,
    NoResponseSpec, RejectFull, RejectSpec, ReplySpec, ResponseSpec, SilenceSpec, StreamSpec,
    TaskOutcome, WhenSilent,
};
pub use super::send::{Data, ExtSpec, Fill, FrameSpec, Num, Part, Send, Sized};
pub use super::terms::{Side, Topology, UnknownProfile};
pub use super::wire::{BodyError, StepFile, VectorFile};

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

/// As vectors name it (messages about which method a block belongs to).
impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One test vector: one file under `vectors/<namespace>/`, read through its file shape
/// ([`VectorFile`]): what every method reads, and the body of its methods' family.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "VectorFile")]
pub struct Vector {
    /// What every method reads.
    pub header: Header,
    /// What the vector's family of methods sends and expects.
    pub body: Body,
}

/// The schema is the file's: the typed vector is only ever read from it.
impl JsonSchema for Vector {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        VectorFile::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        VectorFile::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        VectorFile::json_schema(generator)
    }
}

/// What every method reads of a vector, whatever its family.
#[derive(Debug, Clone)]
pub struct Header {
    /// Unique id, `<namespace>_<4 digits>_<case>`; the file is named `<id>.yaml`.
    pub id: String,
    /// One line saying what is checked.
    pub title: String,
    /// The namespace (`core`, `e1`, ...); the vector lives in `vectors/<namespace>/`.
    pub namespace: String,
    /// Requirement IDs (or their spec-kit trace aliases) this vector exercises.
    pub requirements: Vec<String>,
    /// Methods the vector supports, all of one [`Family`].
    pub methods: Vec<Method>,
    /// Conditions on what the SUT claims; the vector is not applicable otherwise.
    pub applies_when: Applicability,
    /// Why the vector exists or how to read it; free text.
    pub notes: Option<String>,
    /// The vector needs the SUT to itself (`run --jobs N` runs it alone, after the others).
    pub exclusive: bool,
    /// The spec kit fixture this vector was read from (the published-set front-end): what
    /// the kit expects and what the fixture assumes of the receiver. Never in a YAML file.
    pub fixture: Option<std::sync::Arc<super::fixture::Fixture>>,
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

    /// The shape `steps` have, if any: what a SUT that refuses (or accepts) everything
    /// alike could pass. Silence fits only a SUT that answers nothing.
    pub fn of(steps: &[Step<FrameExpect>]) -> Option<Shape> {
        let (mut rejects, mut accepts, mut silences) = (0, 0, 0);
        for s in steps {
            for e in &s.expect {
                match e {
                    FrameExpect::Reject(_) | FrameExpect::Denied(_) => rejects += 1,
                    FrameExpect::Accept(a) if !a.answered && !a.reject_allowed => accepts += 1,
                    // A reply the spec does not owe passes on silence, as an accept does.
                    FrameExpect::Reply(r) if r.when_silent == Some(WhenSilent::Pass) => {
                        accepts += 1
                    }
                    FrameExpect::Silence(_) => silences += 1,
                    FrameExpect::Nothing => {}
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
    /// The envelope contract an MCP gateway must declare (`mcp_native.gateway_envelope`):
    /// `seed-003` for the seed's own rules, `mcp` for their MCP readings (SI-032).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_envelope: Option<super::gateway::GatewayEnvelope>,
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

impl Vector {
    /// The requirements step `j` tests: its own `requirements`, or the vector's, and the
    /// code requirements of its rejects.
    pub fn step_requirements(&self, j: usize) -> Vec<String> {
        let steps = self.body.steps();
        let Some(s) = steps.get(j) else {
            return self.header.requirements.clone();
        };
        let mut out = if s.requirements.is_empty() {
            self.header.requirements.clone()
        } else {
            s.requirements.to_vec()
        };
        for r in &s.code_requirements {
            if !out.iter().any(|o| o == r) {
                out.push((*r).to_owned());
            }
        }
        out
    }

    /// Every requirement the vector exercises: its `requirements` and the
    /// `code_requirements` of its rejects, as written (IDs or aliases), without repeats.
    pub fn all_requirements(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self
            .header
            .requirements
            .iter()
            .map(String::as_str)
            .collect();
        for s in self.body.steps() {
            out.extend(s.code_requirements);
        }
        let mut seen = std::collections::BTreeSet::new();
        out.retain(|r| seen.insert(*r));
        out
    }

    /// How many steps it has, whatever its family.
    pub fn step_count(&self) -> usize {
        self.body.step_count()
    }

    /// The frames body, when the vector is a `codec`/`session` one.
    pub fn frames(&self) -> Option<&FramesBody> {
        match &self.body {
            Body::Frames(b) => Some(b),
            _ => None,
        }
    }
}
