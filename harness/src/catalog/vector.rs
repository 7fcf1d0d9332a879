//! The vector file format (`docs/vector-format.md`): the Rust types a vector YAML file
//! deserializes into, from which the checked-in JSON Schema is generated. The vector and
//! its steps are here; what a step sends is in `send`, what it expects in `expect`, and the
//! small vocabulary fixtures share in `terms` (all re-exported, so one path names them).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::expect::{
    AcceptSpec, AnswerSpec, ErrAnswer, ErrorSpec, Expect, Expectations, FieldsSpec, FlowMessage,
    NoResponseSpec, RejectFull, RejectSpec, ReplySpec, ResponseSpec, SilenceSpec, StreamSpec,
    TaskOutcome, WhenSilent,
};
pub use super::send::{Data, ExtSpec, Fill, FrameSpec, Num, Part, Send, Sized};
pub use super::terms::{Side, Topology, UnknownProfile};

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
    /// The spec kit fixture this vector was read from (the published-set front-end): what
    /// the kit expects and what the fixture assumes of the receiver. Never in a YAML file.
    #[serde(skip)]
    #[schemars(skip)]
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
