//! A vector's body: what one family of methods sends and expects, each family its own
//! variant with its own expectations (issue 28). A method reaches its data through its
//! own variant, so no method names another's expectations or per-method blocks; the file
//! format keeps one flat shape (`wire`), converted into these on load.

use super::expect::{
    AcceptSpec, AnswerSpec, Expect, FlowMessage, NoResponseSpec, RejectSpec, ReplySpec,
    ResponseSpec, SilenceSpec, StreamSpec, TaskOutcome,
};
use super::mcpnative::{McpExpect, McpStep, McpVectorSpec};
use super::mcpx::{ArrivesSpec, ProxySpec, TranslatedSpec, TranslationErrorSpec};
use super::send::{Num, Send};
use super::terms::{Side, Topology};
use super::vector::{ConnectSpec, Method, Shape};

/// The methods that run the same kind of vector: a vector's methods all belong to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `codec` and `session`: SWP frames.
    Frames,
    /// `mcp_native` and `mcp_gateway`: JSON-RPC lines and MCP session actions.
    JsonRpc,
    /// `translate`: one MCP message in, its translation out.
    Translate,
    /// `mcp_proxy`: JSON-RPC lines through a version-translating proxy.
    McpProxy,
}

impl Family {
    /// The family `m` belongs to.
    pub fn of(m: Method) -> Family {
        match m {
            Method::Codec | Method::Session => Family::Frames,
            Method::McpNative | Method::McpGateway => Family::JsonRpc,
            Method::Translate => Family::Translate,
            Method::McpProxy => Family::McpProxy,
        }
    }

    /// Its methods, as vectors name them.
    pub fn methods(self) -> &'static str {
        match self {
            Family::Frames => "codec and session",
            Family::JsonRpc => "mcp_native and mcp_gateway",
            Family::Translate => "translate",
            Family::McpProxy => "mcp_proxy",
        }
    }
}

/// What a vector does, by the family of its methods.
#[derive(Debug, Clone)]
pub enum Body {
    /// Methods `codec` and `session`.
    Frames(FramesBody),
    /// Methods `mcp_native` and `mcp_gateway`.
    JsonRpc(JsonRpcBody),
    /// Method `translate`.
    Translate(TranslateBody),
    /// Method `mcp_proxy`.
    McpProxy(ProxyBody),
}

/// The body of a `codec` or `session` vector.
#[derive(Debug, Clone, Default)]
pub struct FramesBody {
    /// How the session method connects (TLS variants for S1).
    pub connect: Option<ConnectSpec>,
    /// The SUT's place: `intermediary` for relays (default `endpoint`).
    pub topology: Option<Topology>,
    /// What a trivial SUT can pass of it (see the file format's `shape`).
    pub shape: Option<Shape>,
    /// The steps, in order.
    pub steps: Vec<Step<FrameExpect>>,
}

/// The body of an `mcp_native` or `mcp_gateway` vector.
#[derive(Debug, Clone)]
pub struct JsonRpcBody {
    /// What the server must declare, and the versions and transport the vector applies to.
    pub mcp: Option<McpVectorSpec>,
    /// The steps, in order.
    pub steps: Vec<Step<JsonRpcExpect>>,
}

/// The body of a `translate` vector.
#[derive(Debug, Clone)]
pub struct TranslateBody {
    /// The steps, in order.
    pub steps: Vec<Step<TranslateExpect>>,
}

/// The body of an `mcp_proxy` vector.
#[derive(Debug, Clone)]
pub struct ProxyBody {
    /// How the proxy under test is configured (the catalog check requires it).
    pub proxy: Option<ProxySpec>,
    /// The catalog check requires `intermediary`; kept to say so where it is missing.
    pub topology: Option<Topology>,
    /// The steps, in order.
    pub steps: Vec<Step<ProxyExpect>>,
}

/// One step: an action and what its family expects after it (`E`). The action fields are
/// the file format's; the catalog check holds each family to the ones it uses.
#[derive(Debug, Clone)]
pub struct Step<E> {
    /// What this step does, for the transcript.
    pub note: Option<String>,
    /// Octets to send.
    pub send: Option<Send>,
    /// End the stream instead of sending.
    pub end: bool,
    /// Write a forged TLS record (session, TLS only).
    pub corrupt_record: bool,
    /// Send again the last TLS record (session, TLS only).
    pub replay_record: bool,
    /// Which connection sends (intermediary topology; default `client`).
    pub side: Option<Side>,
    /// Send and read on a second connection with the second identity (session, TLS).
    pub second_connection: bool,
    /// The requirements this step tests, when narrower than the vector's.
    pub requirements: Vec<String>,
    /// Run this step this many times.
    pub repeat: Option<Num>,
    /// Receiver clock for this step, in ms after `${NOW_MS}`.
    pub at_ms: Option<Num>,
    /// An MCP session action instead of `send` (only the JSON-RPC family holds one: the
    /// conversion refuses it elsewhere).
    pub mcp: Option<McpStep>,
    /// What must follow, in order.
    pub expect: Vec<E>,
}

impl<E> Step<E> {
    /// A step that sends `send` (or ends the stream, without one) and expects `expect`.
    pub fn new(send: Option<Send>, expect: Vec<E>) -> Step<E> {
        Step {
            note: None,
            end: send.is_none(),
            send,
            corrupt_record: false,
            replay_record: false,
            side: None,
            second_connection: false,
            requirements: Vec::new(),
            repeat: None,
            at_ms: None,
            mcp: None,
            expect,
        }
    }
}

/// What a `codec` or `session` step expects (the file format's `Expect` documents each).
#[derive(Debug, Clone)]
pub enum FrameExpect {
    /// A frame is accepted.
    Accept(Box<AcceptSpec>),
    /// A reject with one of the allowed codes.
    Reject(RejectSpec),
    /// Nothing happens.
    Nothing,
    /// The SUT closes the connection.
    Close,
    /// An A2A agent runs these tasks.
    A2aTasks(Vec<TaskOutcome>),
    /// No octets for a while.
    Silence(SilenceSpec),
    /// The SWP-* messages the endpoint sends next.
    Flow(Vec<FlowMessage>),
    /// The next frame matches.
    Reply(Box<ReplySpec>),
    /// The request is refused.
    Denied(RejectSpec),
    /// The request is answered.
    Answer(AnswerSpec),
    /// The preceding reject's error frame carries this JSON.
    ErrorJson(serde_json::Value),
    /// A streamed answer.
    Stream(Box<StreamSpec>),
    /// The identity probe reports the harness's client identity.
    Identity,
    /// The octets arrive unchanged on the other connection.
    Forwarded,
    /// The payload arrives unchanged on the other connection.
    ForwardedPayload,
}

impl FrameExpect {
    /// The requirements that govern a reject's code, when it names them.
    pub fn code_requirements(&self) -> &[String] {
        match self {
            FrameExpect::Reject(RejectSpec::Full(f)) | FrameExpect::Denied(RejectSpec::Full(f)) => {
                &f.code_requirements
            }
            _ => &[],
        }
    }
}

/// What an `mcp_native` or `mcp_gateway` step expects.
#[derive(Debug, Clone)]
pub enum JsonRpcExpect {
    /// A JSON-RPC response with this id.
    Response(Box<ResponseSpec>),
    /// No JSON-RPC response within a window.
    NoResponse(NoResponseSpec),
    /// What an `mcp` step must produce.
    Mcp(Box<McpExpect>),
    /// Nothing to judge.
    Nothing,
}

/// What a `translate` step expects.
#[derive(Debug, Clone)]
pub enum TranslateExpect {
    /// The translator returns exactly this.
    Translated(Box<TranslatedSpec>),
    /// The translator refuses with this typed error.
    TranslationError(TranslationErrorSpec),
    /// Any one of these outcomes.
    OneOf(Vec<TranslateExpect>),
}

/// What an `mcp_proxy` step expects.
#[derive(Debug, Clone)]
pub enum ProxyExpect {
    /// The next line at the harness's `side` is this.
    Arrives(Box<ArrivesSpec>),
    /// Nothing arrives for a while.
    Silence(SilenceSpec),
}

// Each family takes the wire expectations that are its own and hands any other back, so
// the conversion can say which one does not fit.

impl TryFrom<Expect> for FrameExpect {
    type Error = Expect;
    fn try_from(e: Expect) -> Result<Self, Expect> {
        Ok(match e {
            Expect::Accept(a) => FrameExpect::Accept(a),
            Expect::Reject(r) => FrameExpect::Reject(r),
            Expect::Nothing => FrameExpect::Nothing,
            Expect::Close => FrameExpect::Close,
            Expect::A2aTasks(t) => FrameExpect::A2aTasks(t),
            Expect::Silence(s) => FrameExpect::Silence(s),
            Expect::Flow(f) => FrameExpect::Flow(f),
            Expect::Reply(r) => FrameExpect::Reply(r),
            Expect::Denied(r) => FrameExpect::Denied(r),
            Expect::Answer(a) => FrameExpect::Answer(a),
            Expect::ErrorJson(j) => FrameExpect::ErrorJson(j),
            Expect::Stream(s) => FrameExpect::Stream(s),
            Expect::Identity => FrameExpect::Identity,
            Expect::Forwarded => FrameExpect::Forwarded,
            Expect::ForwardedPayload => FrameExpect::ForwardedPayload,
            other => return Err(other),
        })
    }
}

impl TryFrom<Expect> for JsonRpcExpect {
    type Error = Expect;
    fn try_from(e: Expect) -> Result<Self, Expect> {
        Ok(match e {
            Expect::Response(r) => JsonRpcExpect::Response(r),
            Expect::NoResponse(n) => JsonRpcExpect::NoResponse(n),
            Expect::Mcp(m) => JsonRpcExpect::Mcp(m),
            Expect::Nothing => JsonRpcExpect::Nothing,
            other => return Err(other),
        })
    }
}

impl TryFrom<Expect> for TranslateExpect {
    type Error = Expect;
    fn try_from(e: Expect) -> Result<Self, Expect> {
        Ok(match e {
            Expect::Translated(t) => TranslateExpect::Translated(t),
            Expect::TranslationError(t) => TranslateExpect::TranslationError(t),
            Expect::OneOf(alts) => TranslateExpect::OneOf(
                alts.into_iter()
                    .map(TranslateExpect::try_from)
                    .collect::<Result<_, _>>()?,
            ),
            other => return Err(other),
        })
    }
}

impl TryFrom<Expect> for ProxyExpect {
    type Error = Expect;
    fn try_from(e: Expect) -> Result<Self, Expect> {
        Ok(match e {
            Expect::Arrives(a) => ProxyExpect::Arrives(a),
            Expect::Silence(s) => ProxyExpect::Silence(s),
            other => return Err(other),
        })
    }
}

/// What every family's steps share, for code that reads any body alike (requirements,
/// notes, how many steps).
pub struct StepView<'a> {
    /// The step's own requirements (empty: the vector's).
    pub requirements: &'a [String],
    /// Requirements governing the codes of its rejects.
    pub code_requirements: Vec<&'a str>,
}

fn views<E>(steps: &[Step<E>], codes: fn(&E) -> &[String]) -> Vec<StepView<'_>> {
    steps
        .iter()
        .map(|s| StepView {
            requirements: &s.requirements,
            code_requirements: s
                .expect
                .iter()
                .flat_map(codes)
                .map(String::as_str)
                .collect(),
        })
        .collect()
}

impl Body {
    /// The family of the body.
    pub fn family(&self) -> Family {
        match self {
            Body::Frames(_) => Family::Frames,
            Body::JsonRpc(_) => Family::JsonRpc,
            Body::Translate(_) => Family::Translate,
            Body::McpProxy(_) => Family::McpProxy,
        }
    }

    /// Every step, as every family sees it.
    pub fn steps(&self) -> Vec<StepView<'_>> {
        match self {
            Body::Frames(b) => views(&b.steps, FrameExpect::code_requirements),
            Body::JsonRpc(b) => views(&b.steps, |_| &[]),
            Body::Translate(b) => views(&b.steps, |_| &[]),
            Body::McpProxy(b) => views(&b.steps, |_| &[]),
        }
    }

    /// How many steps it has.
    pub fn step_count(&self) -> usize {
        match self {
            Body::Frames(b) => b.steps.len(),
            Body::JsonRpc(b) => b.steps.len(),
            Body::Translate(b) => b.steps.len(),
            Body::McpProxy(b) => b.steps.len(),
        }
    }
}

/// A `codec` or `session` step.
pub type FrameStep = Step<FrameExpect>;
/// An `mcp_native` or `mcp_gateway` step.
pub type JsonRpcStep = Step<JsonRpcExpect>;
/// A `translate` step.
pub type TranslateStep = Step<TranslateExpect>;
/// An `mcp_proxy` step.
pub type ProxyStep = Step<ProxyExpect>;
