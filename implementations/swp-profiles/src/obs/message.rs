//! Decoding and encoding an SWP-OBS payload in either P1 form, and the trace context rules
//! that need no state (§4): a traceparent, when present, is a valid W3C traceparent
//! (OBS-002, OBS-006); context is present when either trace field is set, and then the
//! traceparent is required; `OBS_SET` exists to carry context, so it always needs one.

use super::trace::parse_traceparent;
use super::{MSG_DOC, MSG_ERR, MSG_GET, MSG_SET};
use crate::p1::pb::obs::{payload::Body, ObsDoc, ObsErr, ObsGet, ObsSet, Payload};
use crate::payload::{decode_form, need, parse, Codec, P1Form, PayloadError};
use prost::Message;

const CLAUSE: &str = "swp-obs §4";

/// A valid SWP-OBS message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObsMessage {
    /// msg_type 1, `OBS_SET`.
    Set(ObsSet),
    /// msg_type 2, `OBS_GET`.
    Get(ObsGet),
    /// msg_type 3, `OBS_DOC`.
    Doc(ObsDoc),
    /// msg_type 4, `OBS_ERR`.
    Err(ObsErr),
}

impl ObsMessage {
    /// The msg_type of this class.
    pub fn msg_type(&self) -> u64 {
        match self {
            ObsMessage::Set(_) => MSG_SET,
            ObsMessage::Get(_) => MSG_GET,
            ObsMessage::Doc(_) => MSG_DOC,
            ObsMessage::Err(_) => MSG_ERR,
        }
    }
}

fn bare(msg_type: u64, payload: &[u8]) -> Result<ObsMessage, PayloadError> {
    Ok(match msg_type {
        MSG_SET => ObsMessage::Set(parse("ObsSet", payload)?),
        MSG_GET => ObsMessage::Get(parse("ObsGet", payload)?),
        MSG_DOC => ObsMessage::Doc(parse("ObsDoc", payload)?),
        _ => ObsMessage::Err(parse("ObsErr", payload)?),
    })
}

fn unwrap(w: Payload) -> Option<ObsMessage> {
    Some(match w.body? {
        Body::Set(x) => ObsMessage::Set(x),
        Body::Get(x) => ObsMessage::Get(x),
        Body::Doc(x) => ObsMessage::Doc(x),
        Body::Err(x) => ObsMessage::Err(x),
    })
}

const CODEC: Codec<ObsMessage, Payload> = Codec {
    name: "SWP-OBS",
    known: "1 OBS_SET, 2 OBS_GET, 3 OBS_DOC, 4 OBS_ERR",
    max_msg_type: MSG_ERR,
    bare,
    wrapper_name: "swp.p1.swp.obs.v1.Payload",
    unwrap,
    msg_type_of: ObsMessage::msg_type,
};

fn context(message: &'static str, traceparent: &str, tracestate: &str) -> Result<(), PayloadError> {
    need(
        !traceparent.is_empty() || tracestate.is_empty(),
        message,
        "traceparent",
        CLAUSE,
    )?;
    if traceparent.is_empty() {
        return Ok(());
    }
    parse_traceparent(traceparent)
        .map(|_| ())
        .map_err(|e| PayloadError::Invalid {
            message,
            field: "traceparent",
            why: e.to_string(),
            clause: CLAUSE,
        })
}

/// The stateless rules of a decoded message.
pub fn check(m: &ObsMessage) -> Result<(), PayloadError> {
    match m {
        ObsMessage::Set(s) => {
            need(!s.traceparent.is_empty(), "ObsSet", "traceparent", CLAUSE)?;
            context("ObsSet", &s.traceparent, &s.tracestate)
        }
        ObsMessage::Doc(d) => context("ObsDoc", &d.traceparent, &d.tracestate),
        ObsMessage::Get(_) | ObsMessage::Err(_) => Ok(()),
    }
}

/// Decodes and checks one SWP-OBS payload of `form` (OBS-001, OBS-002, OBS-006, OBS-008).
pub fn decode(form: P1Form, msg_type: u64, payload: &[u8]) -> Result<ObsMessage, PayloadError> {
    let m = decode_form(&CODEC, form, msg_type, payload)?;
    check(&m)?;
    Ok(m)
}

/// Encodes a message in `form`, deterministically.
pub fn encode(form: P1Form, m: &ObsMessage) -> Vec<u8> {
    let bare = match m {
        ObsMessage::Set(x) => x.encode_to_vec(),
        ObsMessage::Get(x) => x.encode_to_vec(),
        ObsMessage::Doc(x) => x.encode_to_vec(),
        ObsMessage::Err(x) => x.encode_to_vec(),
    };
    form.frame(m.msg_type(), bare)
}
