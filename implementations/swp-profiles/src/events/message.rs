//! Decoding and encoding an SWP-EVENTS payload in either P1 form, and the event record's
//! required fields (§4): `event_id`, `event_type`, `severity`, `ts_unix_ms`, at least one
//! correlation key and `body`, on every published or batched event. Whether the severity
//! belongs to the enumeration depends on configuration and is checked by
//! [`super::Stream`]. Unknown fields, in the record or around it, are skipped (P1 §4,
//! EVENTS-014).

use super::{MSG_BATCH, MSG_ERR, MSG_PUBLISH, MSG_SUBSCRIBE, MSG_UNSUBSCRIBE};
use crate::p1::pb::events::{
    payload::Body, EventRecord, EvtBatch, EvtErr, EvtPublish, EvtSubscribe, EvtUnsubscribe, Payload,
};
use crate::payload::{decode_form, need, parse, Codec, P1Form, PayloadError};
use prost::Message;

const CLAUSE: &str = "swp-events §4";

/// A valid SWP-EVENTS message (prost derives no `Eq` for messages that nest others).
#[derive(Debug, Clone, PartialEq)]
pub enum EventsMessage {
    /// msg_type 1, `EVT_PUBLISH`.
    Publish(EvtPublish),
    /// msg_type 2, `EVT_SUBSCRIBE`.
    Subscribe(EvtSubscribe),
    /// msg_type 3, `EVT_UNSUBSCRIBE`.
    Unsubscribe(EvtUnsubscribe),
    /// msg_type 4, `EVT_BATCH`.
    Batch(EvtBatch),
    /// msg_type 5, `EVT_ERR`.
    Err(EvtErr),
}

impl EventsMessage {
    /// The msg_type of this class.
    pub fn msg_type(&self) -> u64 {
        match self {
            EventsMessage::Publish(_) => MSG_PUBLISH,
            EventsMessage::Subscribe(_) => MSG_SUBSCRIBE,
            EventsMessage::Unsubscribe(_) => MSG_UNSUBSCRIBE,
            EventsMessage::Batch(_) => MSG_BATCH,
            EventsMessage::Err(_) => MSG_ERR,
        }
    }
}

fn bare(msg_type: u64, payload: &[u8]) -> Result<EventsMessage, PayloadError> {
    Ok(match msg_type {
        MSG_PUBLISH => EventsMessage::Publish(parse("EvtPublish", payload)?),
        MSG_SUBSCRIBE => EventsMessage::Subscribe(parse("EvtSubscribe", payload)?),
        MSG_UNSUBSCRIBE => EventsMessage::Unsubscribe(parse("EvtUnsubscribe", payload)?),
        MSG_BATCH => EventsMessage::Batch(parse("EvtBatch", payload)?),
        _ => EventsMessage::Err(parse("EvtErr", payload)?),
    })
}

fn unwrap(w: Payload) -> Option<EventsMessage> {
    Some(match w.body? {
        Body::Publish(x) => EventsMessage::Publish(x),
        Body::Subscribe(x) => EventsMessage::Subscribe(x),
        Body::Unsubscribe(x) => EventsMessage::Unsubscribe(x),
        Body::Batch(x) => EventsMessage::Batch(x),
        Body::Err(x) => EventsMessage::Err(x),
    })
}

const CODEC: Codec<EventsMessage, Payload> = Codec {
    name: "SWP-EVENTS",
    known: "1 EVT_PUBLISH, 2 EVT_SUBSCRIBE, 3 EVT_UNSUBSCRIBE, 4 EVT_BATCH, 5 EVT_ERR",
    max_msg_type: MSG_ERR,
    bare,
    wrapper_name: "swp.p1.swp.events.v1.Payload",
    unwrap,
    msg_type_of: EventsMessage::msg_type,
};

/// The required fields of one event record (§4; EVENTS-002..007, EVENTS-016, EVENTS-017).
pub fn check_record(r: &EventRecord) -> Result<(), PayloadError> {
    const M: &str = "EventRecord";
    need(!r.event_id.is_empty(), M, "event_id", CLAUSE)?;
    need(!r.event_type.is_empty(), M, "event_type", CLAUSE)?;
    need(!r.severity.is_empty(), M, "severity", CLAUSE)?;
    need(r.ts_unix_ms != 0, M, "ts_unix_ms", CLAUSE)?;
    need(
        !(r.msg_id.is_empty() && r.task_id.is_empty() && r.rpc_id.is_empty()),
        M,
        "msg_id, task_id or rpc_id",
        CLAUSE,
    )?;
    need(!r.body.is_empty(), M, "body", CLAUSE)
}

/// The required fields of a decoded message: every event it carries. Subscribe,
/// unsubscribe and error messages have no required fields in the doc.
pub fn check(m: &EventsMessage) -> Result<(), PayloadError> {
    match m {
        EventsMessage::Publish(p) => match &p.event {
            None => Err(PayloadError::MissingField {
                message: "EvtPublish",
                field: "event",
                clause: CLAUSE,
            }),
            Some(r) => check_record(r),
        },
        EventsMessage::Batch(b) => b.events.iter().try_for_each(check_record),
        EventsMessage::Subscribe(_) | EventsMessage::Unsubscribe(_) | EventsMessage::Err(_) => {
            Ok(())
        }
    }
}

/// Decodes and checks one SWP-EVENTS payload of `form` (EVENTS-001, EVENTS-016,
/// EVENTS-019).
pub fn decode(form: P1Form, msg_type: u64, payload: &[u8]) -> Result<EventsMessage, PayloadError> {
    let m = decode_form(&CODEC, form, msg_type, payload)?;
    check(&m)?;
    Ok(m)
}

/// Encodes a message in `form`, deterministically.
pub fn encode(form: P1Form, m: &EventsMessage) -> Vec<u8> {
    let bare = match m {
        EventsMessage::Publish(x) => x.encode_to_vec(),
        EventsMessage::Subscribe(x) => x.encode_to_vec(),
        EventsMessage::Unsubscribe(x) => x.encode_to_vec(),
        EventsMessage::Batch(x) => x.encode_to_vec(),
        EventsMessage::Err(x) => x.encode_to_vec(),
    };
    form.frame(m.msg_type(), bare)
}
