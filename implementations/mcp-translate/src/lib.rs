//! Sans-IO translation of MCP JSON-RPC messages between protocol versions 2024-11-05,
//! 2025-03-26, 2025-06-18, 2025-11-25 and the stateless 2026-07-28, in both directions
//! (`docs/mcp-translation.md`).
//!
//! [`translate`] takes one message (or a 2025-03-26 batch) from the sender's version to the
//! receiver's and returns the messages to deliver, the answers given on the receiver's
//! behalf, and a structured [`Warning`] for every field dropped or converted; or a typed
//! [`TranslateError`], never a silently corrupted message. Every output is checked against
//! the target version's types before it is returned. [`translate_bytes`] is the same over
//! serialised messages and passes same-version traffic through without parsing it.
//!
//! Results do not say what they answer, so translating one needs the method of its
//! request: a [`RequestLookup`], such as [`correlate::Pending`] kept by an intermediary.
//! Between a session version and 2026-07-28 some messages need what the session
//! established (the client's capabilities, the log level, open listen streams):
//! [`translate_with`] takes a [`correlate::Session`]; the multi-round-trip requests of
//! 2026-07-28 are bridged by [`correlate::rounds`].
#![forbid(unsafe_code)]

mod content;
pub mod correlate;
mod entities;
mod envelope;
mod methods;
mod outcome;
mod rules;
mod stateless;
mod version;
mod walk;

pub use outcome::{ErrorKind, TranslateError, Translation, Warning, WarningKind};
pub use version::{Direction, UnknownVersion, Version};

use correlate::Session;
use envelope::Fate;
use serde_json::Value;
use walk::{Cx, Seg};

/// Gives the method of the request a response answers.
pub trait RequestLookup {
    /// The method of the request with this `id`, if known.
    fn method_of(&self, id: &Value) -> Option<&str>;
}

/// No request is known: results cannot be translated (requests, notifications and errors
/// can).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRequests;

impl RequestLookup for NoRequests {
    fn method_of(&self, _: &Value) -> Option<&str> {
        None
    }
}

/// Every response answers a request of this method (a single message whose request is
/// known to the caller).
#[derive(Debug, Clone, Copy)]
pub struct Answering<'a>(pub &'a str);

impl RequestLookup for Answering<'_> {
    fn method_of(&self, _: &Value) -> Option<&str> {
        Some(self.0)
    }
}

/// One translation step: the sender's version, the receiver's, and which way it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    /// The version the sender speaks.
    pub from: Version,
    /// The version the receiver speaks.
    pub to: Version,
    /// Which way the message travels.
    pub direction: Direction,
}

impl Hop {
    /// The way back: answers given on the receiver's behalf travel it.
    pub fn reverse(self) -> Hop {
        Hop {
            from: self.to,
            to: self.from,
            direction: self.direction.reverse(),
        }
    }
}

fn one(
    cx: &mut Cx<'_>,
    v: &mut Value,
    lookup: &dyn RequestLookup,
    out: &mut Translation,
    answers: &mut Vec<String>,
) -> Result<(), TranslateError> {
    match envelope::message(cx, v, lookup)? {
        Fate::Forward => out.messages.push(std::mem::take(v)),
        Fate::Drop => {}
        Fate::Reply(r, method) => {
            out.replies.push(r);
            answers.push(method);
        }
        Fate::Also(r) => {
            out.messages.push(std::mem::take(v));
            out.replies.push(r);
            answers.push(String::new());
        }
        Fate::Instead(ms) => out.messages.extend(ms),
    }
    Ok(())
}

/// Translates `msg` for `hop`. Same-version input is returned as it is. A lone message
/// knows nothing of its connection: see [`translate_with`].
pub fn translate(
    msg: Value,
    hop: &Hop,
    lookup: &dyn RequestLookup,
) -> Result<Translation, TranslateError> {
    translate_with(msg, hop, lookup, &Session::new())
}

/// [`translate`] with what the connection's session established, for the rules between a
/// session version and 2026-07-28: a session client's capabilities, identity and log
/// level go into each 2026-07-28 request; per-request values equal to the session's are
/// removed without a warning; list-change notifications reach the listen streams that
/// asked for them.
pub fn translate_with(
    mut msg: Value,
    hop: &Hop,
    lookup: &dyn RequestLookup,
    session: &Session,
) -> Result<Translation, TranslateError> {
    let mut out = Translation::default();
    if hop.from == hop.to {
        out.messages.push(msg);
        return Ok(out);
    }
    let mut warnings = Vec::new();
    let mut answers = Vec::new();
    {
        let mut cx = Cx::new(
            hop.from,
            hop.to,
            hop.direction,
            false,
            &mut warnings,
            session,
        );
        if let Value::Array(items) = &mut msg {
            cx.message_type = "batch".into();
            if !hop.from.has_batches() {
                return Err(cx.invalid(format!(
                    "JSON-RPC batches exist in 2025-03-26 only, not in {}",
                    hop.from
                )));
            }
            if items.is_empty() {
                return Err(cx.invalid("an empty batch is not a valid JSON-RPC message"));
            }
            if !hop.to.has_batches() {
                cx.warn(
                    WarningKind::BatchSplit,
                    None,
                    format!(
                        "{} has no batches: {} messages sent one by one",
                        hop.to,
                        items.len()
                    ),
                )?;
            }
            for (i, item) in items.iter_mut().enumerate() {
                cx.at(Seg::I(i), |cx| {
                    one(cx, item, lookup, &mut out, &mut answers)
                })?;
            }
        } else {
            one(&mut cx, &mut msg, lookup, &mut out, &mut answers)?;
        }
    }
    out.warnings = warnings;
    check_output(&mut out, hop, lookup, &answers)?;
    Ok(out)
}

/// Runs `f` translating for `hop`, as the bridges of [`correlate::rounds`] do for the pieces
/// of the messages they rebuild; returns its value and the warnings it collected.
/// With `check`, `hop.from` must equal `hop.to` and any change `f` would make is an error.
pub(crate) fn walk<T>(
    hop: &Hop,
    check: bool,
    message_type: &str,
    f: impl FnOnce(&mut Cx<'_>) -> walk::R<T>,
) -> Result<(T, Vec<Warning>), TranslateError> {
    let mut warnings = Vec::new();
    let session = Session::new();
    let mut cx = Cx::new(
        hop.from,
        hop.to,
        hop.direction,
        check,
        &mut warnings,
        &session,
    );
    cx.message_type = message_type.into();
    let v = f(&mut cx)?;
    Ok((v, warnings))
}

/// Validates every output against its version: messages against the target, replies
/// against the sender's (each typed by the request it answers). A failure here is a rule
/// that produced an invalid message.
fn check_output(
    out: &mut Translation,
    hop: &Hop,
    lookup: &dyn RequestLookup,
    answers: &[String],
) -> Result<(), TranslateError> {
    let mut none = Vec::new();
    let session = Session::new();
    for m in &mut out.messages {
        let mut cx = Cx::new(hop.to, hop.to, hop.direction, true, &mut none, &session);
        envelope::message(&mut cx, m, lookup)?;
    }
    let back = hop.reverse();
    for (r, method) in out.replies.iter_mut().zip(answers) {
        let mut cx = Cx::new(back.to, back.to, back.direction, true, &mut none, &session);
        envelope::message(&mut cx, r, &Answering(method))?;
    }
    Ok(())
}

/// Checks that `msg` is valid for `version` travelling `direction`: JSON-RPC structure,
/// the method exists in that version and is sent by that side, required fields, and no
/// field, content kind or capability the version does not define.
pub fn validate(
    msg: &Value,
    version: Version,
    direction: Direction,
    lookup: &dyn RequestLookup,
) -> Result<(), TranslateError> {
    let mut none = Vec::new();
    let session = Session::new();
    let mut cx = Cx::new(version, version, direction, true, &mut none, &session);
    let mut m = msg.clone();
    match &mut m {
        Value::Array(items) => {
            cx.message_type = "batch".into();
            if !version.has_batches() || items.is_empty() {
                return Err(cx.invalid(format!("no batches in {version}")));
            }
            for (i, item) in items.iter_mut().enumerate() {
                cx.at(Seg::I(i), |cx| {
                    envelope::message(cx, item, lookup).map(|_| ())
                })?;
            }
            Ok(())
        }
        m => envelope::message(&mut cx, m, lookup).map(|_| ()),
    }
}

/// The result of [`translate_bytes`].
#[derive(Debug, Clone, PartialEq)]
pub enum BytesOutput<'a> {
    /// Deliver the input octets as they are (same version, or nothing to change).
    Unchanged(&'a [u8]),
    /// Deliver these.
    Translated {
        /// Serialised messages for the receiver.
        messages: Vec<Vec<u8>>,
        /// Serialised answers for the sender.
        replies: Vec<Vec<u8>>,
        /// Every dropped or converted field.
        warnings: Vec<Warning>,
    },
}

/// [`translate`] over one serialised message. When both sides speak the same version the
/// octets are not parsed at all; when the rules change nothing, the input octets are
/// returned instead of a re-serialisation.
pub fn translate_bytes<'a>(
    input: &'a [u8],
    hop: &Hop,
    lookup: &dyn RequestLookup,
) -> Result<BytesOutput<'a>, TranslateError> {
    if hop.from == hop.to {
        return Ok(BytesOutput::Unchanged(input));
    }
    let v: Value = serde_json::from_slice(input).map_err(|e| TranslateError {
        from: hop.from,
        to: hop.to,
        message_type: "JSON-RPC message".into(),
        kind: ErrorKind::InvalidInput,
        path: String::new(),
        details: format!("not JSON: {e}"),
    })?;
    let batch = v.is_array();
    let t = translate(v, hop, lookup)?;
    if !batch && t.warnings.is_empty() && t.messages.len() == 1 && t.replies.is_empty() {
        return Ok(BytesOutput::Unchanged(input));
    }
    // Sized from the input so a large message is written without repeated regrowth.
    let cap = input.len().saturating_add(64);
    let ser = |v: &Value| {
        let mut out = Vec::with_capacity(if batch { 256 } else { cap });
        match serde_json::to_writer(&mut out, v) {
            Ok(()) => out,
            Err(_) => Vec::new(),
        }
    };
    Ok(BytesOutput::Translated {
        messages: t.messages.iter().map(ser).collect(),
        replies: t.replies.iter().map(ser).collect(),
        warnings: t.warnings,
    })
}
