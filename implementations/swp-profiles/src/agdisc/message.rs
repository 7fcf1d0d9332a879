//! Decoding and encoding an SWP-AGDISC payload in either P1 form, and what each class must
//! carry. Readings (docs/profiles.md, SI-P entries in docs/spec-issues-profiles.md):
//! a GET names an agent; a card (`AGDISC_DOC`) names its agent (the stable identifier, §4),
//! declares its schema revision (§4, §7) and has a non-empty card body, where its endpoint
//! set and capabilities live (the annex keeps them opaque); a not-modified answer names the
//! agent and the validator that still holds. `etag` and `max_age_ms` on a card are optional
//! (validators and explicit freshness are SHOULDs, §5), and so is everything in an error.

use super::{MSG_DOC, MSG_ERR, MSG_GET, MSG_NOT_MODIFIED};
use crate::p1::pb::agdisc::{
    payload::Body, AgdiscDoc, AgdiscErr, AgdiscGet, AgdiscNotModified, Payload,
};
use crate::payload::{decode_form, need, parse, Codec, P1Form, PayloadError};
use prost::Message;

const CARD: &str = "swp-agdisc §4";
const MODEL: &str = "swp-agdisc §2";

/// A valid SWP-AGDISC message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgdiscMessage {
    /// msg_type 1, `AGDISC_GET`.
    Get(AgdiscGet),
    /// msg_type 2, `AGDISC_DOC`.
    Doc(AgdiscDoc),
    /// msg_type 3, `AGDISC_NOT_MODIFIED`.
    NotModified(AgdiscNotModified),
    /// msg_type 4, `AGDISC_ERR`.
    Err(AgdiscErr),
}

impl AgdiscMessage {
    /// The msg_type of this class.
    pub fn msg_type(&self) -> u64 {
        match self {
            AgdiscMessage::Get(_) => MSG_GET,
            AgdiscMessage::Doc(_) => MSG_DOC,
            AgdiscMessage::NotModified(_) => MSG_NOT_MODIFIED,
            AgdiscMessage::Err(_) => MSG_ERR,
        }
    }
}

fn bare(msg_type: u64, payload: &[u8]) -> Result<AgdiscMessage, PayloadError> {
    Ok(match msg_type {
        MSG_GET => AgdiscMessage::Get(parse("AgdiscGet", payload)?),
        MSG_DOC => AgdiscMessage::Doc(parse("AgdiscDoc", payload)?),
        MSG_NOT_MODIFIED => AgdiscMessage::NotModified(parse("AgdiscNotModified", payload)?),
        _ => AgdiscMessage::Err(parse("AgdiscErr", payload)?),
    })
}

fn unwrap(w: Payload) -> Option<AgdiscMessage> {
    Some(match w.body? {
        Body::Get(x) => AgdiscMessage::Get(x),
        Body::Doc(x) => AgdiscMessage::Doc(x),
        Body::NotModified(x) => AgdiscMessage::NotModified(x),
        Body::Err(x) => AgdiscMessage::Err(x),
    })
}

const CODEC: Codec<AgdiscMessage, Payload> = Codec {
    name: "SWP-AGDISC",
    known: "1 AGDISC_GET, 2 AGDISC_DOC, 3 AGDISC_NOT_MODIFIED, 4 AGDISC_ERR",
    max_msg_type: MSG_ERR,
    bare,
    wrapper_name: "swp.p1.swp.agdisc.v1.Payload",
    unwrap,
    msg_type_of: AgdiscMessage::msg_type,
};

/// The stateless rules of a decoded message (AGDISC-002 … AGDISC-005, AGDISC-011).
pub fn check(m: &AgdiscMessage) -> Result<(), PayloadError> {
    match m {
        AgdiscMessage::Get(g) => need(!g.agent_id.is_empty(), "AgdiscGet", "agent_id", MODEL),
        AgdiscMessage::Doc(d) => {
            need(!d.agent_id.is_empty(), "AgdiscDoc", "agent_id", CARD)?;
            need(
                !d.schema_revision.is_empty(),
                "AgdiscDoc",
                "schema_revision",
                CARD,
            )?;
            need(
                !d.card_payload.is_empty(),
                "AgdiscDoc",
                "card_payload",
                CARD,
            )
        }
        AgdiscMessage::NotModified(n) => {
            need(
                !n.agent_id.is_empty(),
                "AgdiscNotModified",
                "agent_id",
                MODEL,
            )?;
            need(!n.etag.is_empty(), "AgdiscNotModified", "etag", MODEL)
        }
        AgdiscMessage::Err(_) => Ok(()),
    }
}

/// Decodes and checks one SWP-AGDISC payload of `form` (AGDISC-001, AGDISC-010).
pub fn decode(form: P1Form, msg_type: u64, payload: &[u8]) -> Result<AgdiscMessage, PayloadError> {
    let m = decode_form(&CODEC, form, msg_type, payload)?;
    check(&m)?;
    Ok(m)
}

/// Encodes a message in `form`, deterministically.
pub fn encode(form: P1Form, m: &AgdiscMessage) -> Vec<u8> {
    let bare = match m {
        AgdiscMessage::Get(x) => x.encode_to_vec(),
        AgdiscMessage::Doc(x) => x.encode_to_vec(),
        AgdiscMessage::NotModified(x) => x.encode_to_vec(),
        AgdiscMessage::Err(x) => x.encode_to_vec(),
    };
    form.frame(m.msg_type(), bare)
}
