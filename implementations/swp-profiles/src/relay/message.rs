//! Decoding and encoding an SWP-RELAY payload in either P1 form, and the one field the doc
//! requires: a non-empty `delivery_id` on every `RELAY_PUBLISH` (§4, §6; proto3 cannot
//! tell an absent bytes field from an empty one, and both are refused). Acknowledgements,
//! NACKs and statuses name a delivery too, but whether the named delivery exists is the
//! machine's question ([`super::Deliveries`]). Unknown fields are skipped (P1 §4).

use super::{MSG_ACK, MSG_ERR, MSG_NACK, MSG_PUBLISH, MSG_STATUS};
use crate::p1::pb::relay::{
    payload::Body, Payload, RelayAck, RelayErr, RelayNack, RelayPublish, RelayStatus,
};
use crate::payload::{decode_form, need, parse, Codec, P1Form, PayloadError};
use prost::Message;

const CLAUSE: &str = "swp-relay §4";

/// A valid SWP-RELAY message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelayMessage {
    /// msg_type 1, `RELAY_PUBLISH`.
    Publish(RelayPublish),
    /// msg_type 2, `RELAY_ACK`.
    Ack(RelayAck),
    /// msg_type 3, `RELAY_NACK`.
    Nack(RelayNack),
    /// msg_type 4, `RELAY_STATUS`.
    Status(RelayStatus),
    /// msg_type 5, `RELAY_ERR`.
    Err(RelayErr),
}

impl RelayMessage {
    /// The msg_type of this class.
    pub fn msg_type(&self) -> u64 {
        match self {
            RelayMessage::Publish(_) => MSG_PUBLISH,
            RelayMessage::Ack(_) => MSG_ACK,
            RelayMessage::Nack(_) => MSG_NACK,
            RelayMessage::Status(_) => MSG_STATUS,
            RelayMessage::Err(_) => MSG_ERR,
        }
    }
}

fn bare(msg_type: u64, payload: &[u8]) -> Result<RelayMessage, PayloadError> {
    Ok(match msg_type {
        MSG_PUBLISH => RelayMessage::Publish(parse("RelayPublish", payload)?),
        MSG_ACK => RelayMessage::Ack(parse("RelayAck", payload)?),
        MSG_NACK => RelayMessage::Nack(parse("RelayNack", payload)?),
        MSG_STATUS => RelayMessage::Status(parse("RelayStatus", payload)?),
        _ => RelayMessage::Err(parse("RelayErr", payload)?),
    })
}

fn unwrap(w: Payload) -> Option<RelayMessage> {
    Some(match w.body? {
        Body::Publish(x) => RelayMessage::Publish(x),
        Body::Ack(x) => RelayMessage::Ack(x),
        Body::Nack(x) => RelayMessage::Nack(x),
        Body::Status(x) => RelayMessage::Status(x),
        Body::Err(x) => RelayMessage::Err(x),
    })
}

const CODEC: Codec<RelayMessage, Payload> = Codec {
    name: "SWP-RELAY",
    known: "1 RELAY_PUBLISH, 2 RELAY_ACK, 3 RELAY_NACK, 4 RELAY_STATUS, 5 RELAY_ERR",
    max_msg_type: MSG_ERR,
    bare,
    wrapper_name: "swp.p1.swp.relay.v1.Payload",
    unwrap,
    msg_type_of: RelayMessage::msg_type,
};

/// The required fields of a decoded message (RELAY-003, RELAY-009, RELAY-014).
pub fn check(m: &RelayMessage) -> Result<(), PayloadError> {
    match m {
        RelayMessage::Publish(p) => need(
            !p.delivery_id.is_empty(),
            "RelayPublish",
            "delivery_id",
            CLAUSE,
        ),
        _ => Ok(()),
    }
}

/// Decodes and checks one SWP-RELAY payload of `form` (RELAY-001, RELAY-009, RELAY-013).
pub fn decode(form: P1Form, msg_type: u64, payload: &[u8]) -> Result<RelayMessage, PayloadError> {
    let m = decode_form(&CODEC, form, msg_type, payload)?;
    check(&m)?;
    Ok(m)
}

/// Encodes a message in `form`, deterministically.
pub fn encode(form: P1Form, m: &RelayMessage) -> Vec<u8> {
    let bare = match m {
        RelayMessage::Publish(x) => x.encode_to_vec(),
        RelayMessage::Ack(x) => x.encode_to_vec(),
        RelayMessage::Nack(x) => x.encode_to_vec(),
        RelayMessage::Status(x) => x.encode_to_vec(),
        RelayMessage::Err(x) => x.encode_to_vec(),
    };
    form.frame(m.msg_type(), bare)
}
