//! A vector made concrete for one SUT: what each step does (octets, the end of the stream,
//! the harness's own actions), with its receiver clock and the expectations, sized and with
//! every expression evaluated; and why a vector could not be made concrete.

use crate::frames::ErrorCode;
use crate::plan::expr::ExprError;
use bytes::Bytes;

/// What one concrete step does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send these octets.
    Send(Bytes),
    /// End the stream.
    End,
    /// Forge a TLS record under the TLS layer.
    CorruptRecord,
    /// Replay the last TLS record.
    ReplayRecord,
    /// Send the manifest's identity probe.
    IdentityProbe,
    /// Send the manifest's slow request with this msg_id.
    SlowRequest(Bytes),
    /// Send this frame with its msg_id replaced by the one last forwarded upstream.
    SendAsReply(Bytes),
}

/// Expected envelope fields, concrete.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields {
    /// `version`.
    pub version: Option<u64>,
    /// `profile_id`.
    pub profile_id: Option<u64>,
    /// `msg_type`.
    pub msg_type: Option<u64>,
    /// `flags`.
    pub flags: Option<u64>,
    /// `ts_unix_ms`.
    pub ts_unix_ms: Option<u64>,
    /// `msg_id`.
    pub msg_id: Option<Bytes>,
    /// `payload`.
    pub payload: Option<Bytes>,
    /// All extension entries, in order.
    pub extensions: Option<Vec<(u64, Bytes)>>,
}

/// One concrete expectation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expectation {
    /// Accepted, with these fields.
    Accept {
        /// Field assertions.
        fields: Fields,
        /// Surfaced unknown flags.
        unknown_flags: Option<u64>,
        /// The addressed profile must refuse the frame (see `AcceptSpec`).
        profile_may_refuse: bool,
        /// A reject passes too (see `AcceptSpec`).
        reject_allowed: bool,
        /// The request's answer confirms it (see `AcceptSpec`).
        answered: bool,
    },
    /// Rejected with one of `allowed` (the first is the recommended code).
    Reject {
        /// Allowed canonical codes; never empty.
        allowed: Vec<ErrorCode>,
        /// Whether the stream must be terminated.
        terminates: Option<bool>,
        /// Requirements governing the code alone (empty: the vector's).
        code_requirements: Vec<String>,
    },
    /// Nothing observable.
    Nothing,
    /// Connection closed.
    Close,
    /// Silence for this long.
    Silence {
        /// Milliseconds.
        ms: u64,
        /// A refusal passes too.
        refusal_allowed: bool,
    },
    /// A frame matching the pattern.
    Reply(ReplyPattern),
    /// The reject's error frame carries this JSON.
    ErrorJson(serde_json::Value),
    /// A streamed answer to the request sent.
    Stream(crate::catalog::vector::StreamSpec),
    /// An A2A agent runs these tasks to their terminal Results.
    A2aTasks(Vec<crate::catalog::vector::TaskOutcome>),
    /// The SWP-* messages the endpoint sends next, judged by their profiles' machines.
    Flow(Vec<FlowItem>),
    /// The identity probe's answer reports the client identity.
    Identity,
    /// The sent octets arrive unchanged on the other side.
    Forwarded,
    /// The sent frame's payload (and profile_id, msg_type) arrive on the other side.
    ForwardedPayload,
    /// The request sent is refused: the `Reject` inside, or an answer that refuses in the
    /// request's own profile (a JSON-RPC error, an A2A Result with `ok: false`).
    Denied(Box<Expectation>),
    /// The request sent is answered by its profile's own error message (or an error frame
    /// with one of `also`), which is an answer here, never a refusal.
    Answer {
        /// The `code` the message must carry; `None`: any.
        code: Option<String>,
        /// Error-frame codes that answer as well.
        also: Vec<ErrorCode>,
    },
}

/// One message pattern of a `flow` expectation, concrete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowItem {
    /// The message and the fields it must carry.
    pub spec: crate::p1::P1Spec,
    /// Its profile.
    pub profile_id: u64,
    /// Its msg_type.
    pub msg_type: u64,
    /// How many consecutive messages match.
    pub count: u64,
}

/// What a reply frame must look like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyPattern {
    /// `profile_id`.
    pub profile_id: Option<u64>,
    /// `msg_type`.
    pub msg_type: Option<u64>,
    /// Reuses the sent msg_id.
    pub same_msg_id: bool,
    /// Exact payload.
    pub payload: Option<Bytes>,
    /// JSON the payload contains.
    pub payload_json: Option<serde_json::Value>,
    /// P1 message and fields the payload carries.
    pub payload_p1: Option<crate::p1::P1Spec>,
    /// The payload is the canonical encoding of its message.
    pub p1_canonical: bool,
    /// What silence means (absent: a timeout).
    pub when_silent: Option<crate::catalog::vector::WhenSilent>,
}

/// One concrete step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcreteStep {
    /// Index of the vector step it comes from.
    pub step: usize,
    /// Repetition number within that step.
    pub rep: u64,
    /// The step's note.
    pub note: Option<String>,
    /// Which connection sends (intermediary topology).
    pub upstream: bool,
    /// The step runs on the second connection (the second client identity).
    pub second: bool,
    /// Receiver clock.
    pub now_ms: u64,
    /// The action.
    pub action: Action,
    /// What must follow.
    pub expect: Vec<Expectation>,
}

/// Why a vector could not be materialised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MaterialiseError {
    /// The SUT's parameters make the vector inapplicable (e.g. no rate limit declared).
    #[error("not applicable: {0}")]
    NotApplicable(String),
    /// The vector would exceed a bound the harness keeps to protect itself.
    #[error("not applicable: {0}")]
    HarnessBound(String),
    /// The vector is sized from a window or size the manifest does not declare: not the SUT's
    /// choice (it must document them, e.g. swp-rpc §6), so the vector is left untested.
    #[error("not applicable: {why}")]
    Undeclared {
        /// Why, in words.
        why: String,
        /// The parameter the manifest does not declare.
        name: String,
    },
    /// The harness cannot build the frame this vector needs for the profile the SUT serves
    /// (a valid payload of a profile it has no builder for): a limit of the harness, never a
    /// choice of the SUT, so the vector is left untested and holds back its class.
    #[error("not applicable: {0}")]
    NotBuildable(String),
    /// The vector itself is wrong.
    #[error("{0}")]
    Invalid(String),
}

impl From<ExprError> for MaterialiseError {
    fn from(e: ExprError) -> Self {
        match e {
            ExprError::Undeclared(ref name) => MaterialiseError::Undeclared {
                name: name.clone(),
                why: e.to_string(),
            },
            ExprError::Range(_) | ExprError::DivZero(_) => {
                MaterialiseError::NotApplicable(format!("{e} with this SUT's limits"))
            }
            _ => MaterialiseError::Invalid(e.to_string()),
        }
    }
}
