//! Decoding and encoding an SWP-STATE payload in either P1 form, and what each class must
//! carry. The doc lists no required fields, so these are the project's readings
//! (docs/profiles.md): a state id on PUT, GET and DELTA, and no empty parent id. Blob,
//! delta and metadata are opaque and may be empty.

use super::{MSG_DELTA, MSG_ERR, MSG_GET, MSG_PUT};
use crate::p1::pb::state::{payload::Body, Payload, StateDelta, StateErr, StateGet, StatePut};
use crate::payload::{decode_form, need, parse, Codec, P1Form, PayloadError};
use prost::Message;

const CLAUSE: &str = "swp-state §4";

/// A valid SWP-STATE message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateMessage {
    /// msg_type 1, `STATE_PUT`.
    Put(StatePut),
    /// msg_type 2, `STATE_GET`.
    Get(StateGet),
    /// msg_type 3, `STATE_DELTA`.
    Delta(StateDelta),
    /// msg_type 4, `STATE_ERR`.
    Err(StateErr),
}

impl StateMessage {
    /// The msg_type of this class.
    pub fn msg_type(&self) -> u64 {
        match self {
            StateMessage::Put(_) => MSG_PUT,
            StateMessage::Get(_) => MSG_GET,
            StateMessage::Delta(_) => MSG_DELTA,
            StateMessage::Err(_) => MSG_ERR,
        }
    }
}

fn bare(msg_type: u64, payload: &[u8]) -> Result<StateMessage, PayloadError> {
    Ok(match msg_type {
        MSG_PUT => StateMessage::Put(parse("StatePut", payload)?),
        MSG_GET => StateMessage::Get(parse("StateGet", payload)?),
        MSG_DELTA => StateMessage::Delta(parse("StateDelta", payload)?),
        _ => StateMessage::Err(parse("StateErr", payload)?),
    })
}

fn unwrap(w: Payload) -> Option<StateMessage> {
    Some(match w.body? {
        Body::Put(x) => StateMessage::Put(x),
        Body::Get(x) => StateMessage::Get(x),
        Body::Delta(x) => StateMessage::Delta(x),
        Body::Err(x) => StateMessage::Err(x),
    })
}

const CODEC: Codec<StateMessage, Payload> = Codec {
    name: "SWP-STATE",
    known: "1 STATE_PUT, 2 STATE_GET, 3 STATE_DELTA, 4 STATE_ERR",
    max_msg_type: MSG_ERR,
    bare,
    wrapper_name: "swp.p1.swp.state.v1.Payload",
    unwrap,
    msg_type_of: StateMessage::msg_type,
};

/// The stateless rules of a decoded message.
pub fn check(m: &StateMessage) -> Result<(), PayloadError> {
    match m {
        StateMessage::Put(p) => {
            need(!p.state_id.is_empty(), "StatePut", "state_id", CLAUSE)?;
            need(
                p.parent_ids.iter().all(|x| !x.is_empty()),
                "StatePut",
                "parent_ids[]",
                CLAUSE,
            )
        }
        StateMessage::Get(g) => need(!g.state_id.is_empty(), "StateGet", "state_id", CLAUSE),
        StateMessage::Delta(d) => {
            need(!d.state_id.is_empty(), "StateDelta", "state_id", CLAUSE)?;
            need(
                d.parent_ids.iter().all(|x| !x.is_empty()),
                "StateDelta",
                "parent_ids[]",
                CLAUSE,
            )
        }
        StateMessage::Err(_) => Ok(()),
    }
}

/// Decodes and checks one SWP-STATE payload of `form` (STATE-001, STATE-006).
pub fn decode(form: P1Form, msg_type: u64, payload: &[u8]) -> Result<StateMessage, PayloadError> {
    let m = decode_form(&CODEC, form, msg_type, payload)?;
    check(&m)?;
    Ok(m)
}

/// Encodes a message in `form`, deterministically.
pub fn encode(form: P1Form, m: &StateMessage) -> Vec<u8> {
    let bare = match m {
        StateMessage::Put(x) => x.encode_to_vec(),
        StateMessage::Get(x) => x.encode_to_vec(),
        StateMessage::Delta(x) => x.encode_to_vec(),
        StateMessage::Err(x) => x.encode_to_vec(),
    };
    form.frame(m.msg_type(), bare)
}
