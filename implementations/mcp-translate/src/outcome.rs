//! What a translation hands back: the translated messages, answers given on the receiver's
//! behalf, the structured warnings naming every dropped or converted field, and the typed
//! error when a message cannot be translated faithfully.

use crate::version::Version;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What happened to a piece of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// A field the target version does not define was removed.
    Dropped,
    /// A field, content block, value or whole message was rewritten into a form the
    /// target version has (audio → text, resource_link → text, title → annotations.title,
    /// initialize ↔ server/discover, input_required → server requests, ...).
    Converted,
    /// Something the target requires and the source lacks was supplied: a text block
    /// carrying the JSON of a dropped `structuredContent`, empty client capabilities, an
    /// "unknown" client or server `Implementation`, an `elicitationId`.
    FallbackAdded,
    /// `protocolVersion` was rewritten to the target version.
    VersionRewritten,
    /// A whole notification the target version cannot receive was not forwarded.
    NotificationDropped,
    /// A request the target version cannot receive was answered on its behalf.
    AnsweredOnBehalf,
    /// An error response the target version cannot receive (no `id`) was not forwarded.
    ResponseDropped,
    /// A JSON-RPC batch was split into single messages for a peer without batches.
    BatchSplit,
    /// A method no known version defines was forwarded unchanged.
    UnknownMethodForwarded,
}

/// One structured warning: what was lost or changed, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Warning {
    /// What happened.
    pub kind: WarningKind,
    /// JSON Pointer (RFC 6901) into the input message; for a batch, starting with the
    /// element index.
    pub path: String,
    /// Human-readable detail (not part of the contract: vectors compare kind and path).
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub detail: std::borrow::Cow<'static, str>,
}

/// The result of translating one input (a message or a batch).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Translation {
    /// Messages to deliver to the receiver, in order: none when the input was dropped or
    /// answered on the receiver's behalf, several when a batch was split.
    pub messages: Vec<Value>,
    /// Messages to send back to the sender on the receiver's behalf: answers to requests
    /// the receiver's version cannot take (elicitation for an old client, tasks methods,
    /// ping toward 2026-07-28), and the notifications a bridge to 2026-07-28 owes the
    /// sender (`notifications/initialized`, `notifications/subscriptions/acknowledged`).
    pub replies: Vec<Value>,
    /// Every dropped or converted field, in the order met.
    pub warnings: Vec<Warning>,
}

/// Why a translation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The input is not a valid message of its version (JSON-RPC structure, a required
    /// field missing or of the wrong type, an unknown content kind).
    InvalidInput,
    /// The input is valid but has no faithful form in the target version.
    Unrepresentable,
    /// A response arrived and the method of the request it answers is not known.
    MissingContext,
    /// The translated message failed validation against the target version (a bug in a
    /// rule: never silently forwarded).
    InvalidOutput,
}

/// A message that cannot be translated; never a silently corrupted output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot translate {message_type} from {from} to {to} ({kind:?} at {path:?}): {details}")]
pub struct TranslateError {
    /// The sender's version.
    pub from: Version,
    /// The receiver's version.
    pub to: Version,
    /// The kind of message, e.g. `tools/list result`, `notifications/progress`, `batch`.
    pub message_type: String,
    /// The class of failure.
    pub kind: ErrorKind,
    /// JSON Pointer into the input where the problem is (empty for the whole message).
    pub path: String,
    /// What is wrong.
    pub details: String,
}
