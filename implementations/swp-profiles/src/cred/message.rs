//! Decoding and encoding an SWP-CRED payload in either P1 form, and what each class must
//! carry. The doc lists no required fields, so these are the project's readings
//! (docs/profiles.md): a credential is tagged by a non-empty `cred_type` and has
//! octets (§4); a delegation names its chain, has octets and includes an expiry (§4:
//! "delegation entries MUST include bounded expiry", so 0, proto3's "absent", is refused);
//! a revocation names its chain.

use super::{MSG_DELEGATE, MSG_ERR, MSG_PRESENT, MSG_REVOKE};
use crate::p1::pb::cred::{payload::Body, CredDelegate, CredErr, CredPresent, CredRevoke, Payload};
use crate::payload::{decode_form, need, parse, Codec, P1Form, PayloadError};
use prost::Message;

const CLAUSE: &str = "swp-cred §4";

/// A valid SWP-CRED message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredMessage {
    /// msg_type 1, `CRED_PRESENT`.
    Present(CredPresent),
    /// msg_type 2, `CRED_DELEGATE`.
    Delegate(CredDelegate),
    /// msg_type 3, `CRED_REVOKE`.
    Revoke(CredRevoke),
    /// msg_type 4, `CRED_ERR`.
    Err(CredErr),
}

impl CredMessage {
    /// The msg_type of this class.
    pub fn msg_type(&self) -> u64 {
        match self {
            CredMessage::Present(_) => MSG_PRESENT,
            CredMessage::Delegate(_) => MSG_DELEGATE,
            CredMessage::Revoke(_) => MSG_REVOKE,
            CredMessage::Err(_) => MSG_ERR,
        }
    }
}

fn bare(msg_type: u64, payload: &[u8]) -> Result<CredMessage, PayloadError> {
    Ok(match msg_type {
        MSG_PRESENT => CredMessage::Present(parse("CredPresent", payload)?),
        MSG_DELEGATE => CredMessage::Delegate(parse("CredDelegate", payload)?),
        MSG_REVOKE => CredMessage::Revoke(parse("CredRevoke", payload)?),
        _ => CredMessage::Err(parse("CredErr", payload)?),
    })
}

fn unwrap(w: Payload) -> Option<CredMessage> {
    Some(match w.body? {
        Body::Present(x) => CredMessage::Present(x),
        Body::Delegate(x) => CredMessage::Delegate(x),
        Body::Revoke(x) => CredMessage::Revoke(x),
        Body::Err(x) => CredMessage::Err(x),
    })
}

const CODEC: Codec<CredMessage, Payload> = Codec {
    name: "SWP-CRED",
    known: "1 CRED_PRESENT, 2 CRED_DELEGATE, 3 CRED_REVOKE, 4 CRED_ERR",
    max_msg_type: MSG_ERR,
    bare,
    wrapper_name: "swp.p1.swp.cred.v1.Payload",
    unwrap,
    msg_type_of: CredMessage::msg_type,
};

/// The stateless rules of a decoded message.
pub fn check(m: &CredMessage) -> Result<(), PayloadError> {
    match m {
        CredMessage::Present(p) => {
            need(!p.cred_type.is_empty(), "CredPresent", "cred_type", CLAUSE)?;
            need(
                !p.credential.is_empty(),
                "CredPresent",
                "credential",
                CLAUSE,
            )
        }
        CredMessage::Delegate(d) => {
            need(!d.chain_id.is_empty(), "CredDelegate", "chain_id", CLAUSE)?;
            need(
                !d.delegation.is_empty(),
                "CredDelegate",
                "delegation",
                CLAUSE,
            )?;
            need(
                d.expires_at_unix_ms != 0,
                "CredDelegate",
                "expires_at_unix_ms",
                CLAUSE,
            )
        }
        CredMessage::Revoke(r) => need(!r.chain_id.is_empty(), "CredRevoke", "chain_id", CLAUSE),
        CredMessage::Err(_) => Ok(()),
    }
}

/// Decodes and checks one SWP-CRED payload of `form` (unassigned msg_types refused, §3).
pub fn decode(form: P1Form, msg_type: u64, payload: &[u8]) -> Result<CredMessage, PayloadError> {
    let m = decode_form(&CODEC, form, msg_type, payload)?;
    check(&m)?;
    Ok(m)
}

/// Encodes a message in `form`, deterministically.
pub fn encode(form: P1Form, m: &CredMessage) -> Vec<u8> {
    let bare = match m {
        CredMessage::Present(x) => x.encode_to_vec(),
        CredMessage::Delegate(x) => x.encode_to_vec(),
        CredMessage::Revoke(x) => x.encode_to_vec(),
        CredMessage::Err(x) => x.encode_to_vec(),
    };
    form.frame(m.msg_type(), bare)
}
