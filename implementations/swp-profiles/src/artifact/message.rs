//! Decoding and encoding an SWP-ARTIFACT payload in either P1 form, and what each class
//! must carry (§4; the doc lists no fields, so these are the project's readings, listed in
//! docs/profiles.md): an offer carries the total size and hash metadata the library can
//! verify (ARTIFACT-002, ARTIFACT-003); a GET names its artifact and asks for a non-empty
//! range or a resume, not both; a chunk names its artifact and carries octets; an ACK names
//! its artifact.

use super::hash::HashAlg;
use super::{MSG_ACK, MSG_CHUNK, MSG_ERR, MSG_GET, MSG_OFFER};
use crate::p1::pb::artifact::{payload::Body, ArtAck, ArtChunk, ArtErr, ArtGet, ArtOffer, Payload};
use crate::payload::{decode_form, need, parse, shown, Codec, P1Form, PayloadError};
use prost::Message;

const CLAUSE: &str = "swp-artifact §4";

/// A valid SWP-ARTIFACT message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactMessage {
    /// msg_type 1, `ART_OFFER`.
    Offer(ArtOffer),
    /// msg_type 2, `ART_GET`.
    Get(ArtGet),
    /// msg_type 3, `ART_CHUNK`.
    Chunk(ArtChunk),
    /// msg_type 4, `ART_ACK`.
    Ack(ArtAck),
    /// msg_type 5, `ART_ERR`.
    Err(ArtErr),
}

impl ArtifactMessage {
    /// The msg_type of this class.
    pub fn msg_type(&self) -> u64 {
        match self {
            ArtifactMessage::Offer(_) => MSG_OFFER,
            ArtifactMessage::Get(_) => MSG_GET,
            ArtifactMessage::Chunk(_) => MSG_CHUNK,
            ArtifactMessage::Ack(_) => MSG_ACK,
            ArtifactMessage::Err(_) => MSG_ERR,
        }
    }
}

fn bare(msg_type: u64, payload: &[u8]) -> Result<ArtifactMessage, PayloadError> {
    Ok(match msg_type {
        MSG_OFFER => ArtifactMessage::Offer(parse("ArtOffer", payload)?),
        MSG_GET => ArtifactMessage::Get(parse("ArtGet", payload)?),
        MSG_CHUNK => ArtifactMessage::Chunk(parse("ArtChunk", payload)?),
        MSG_ACK => ArtifactMessage::Ack(parse("ArtAck", payload)?),
        _ => ArtifactMessage::Err(parse("ArtErr", payload)?),
    })
}

fn unwrap(w: Payload) -> Option<ArtifactMessage> {
    Some(match w.body? {
        Body::Offer(x) => ArtifactMessage::Offer(x),
        Body::Get(x) => ArtifactMessage::Get(x),
        Body::Chunk(x) => ArtifactMessage::Chunk(x),
        Body::Ack(x) => ArtifactMessage::Ack(x),
        Body::Err(x) => ArtifactMessage::Err(x),
    })
}

const CODEC: Codec<ArtifactMessage, Payload> = Codec {
    name: "SWP-ARTIFACT",
    known: "1 ART_OFFER, 2 ART_GET, 3 ART_CHUNK, 4 ART_ACK, 5 ART_ERR",
    max_msg_type: MSG_ERR,
    bare,
    wrapper_name: "swp.p1.swp.artifact.v1.Payload",
    unwrap,
    msg_type_of: ArtifactMessage::msg_type,
};

fn invalid(message: &'static str, field: &'static str, why: String) -> PayloadError {
    PayloadError::Invalid {
        message,
        field,
        why,
        clause: CLAUSE,
    }
}

/// The stateless rules of a decoded message.
pub fn check(m: &ArtifactMessage) -> Result<(), PayloadError> {
    match m {
        ArtifactMessage::Offer(o) => {
            need(!o.artifact_id.is_empty(), "ArtOffer", "artifact_id", CLAUSE)?;
            // An empty artifact cannot be offered: total_size 0 is read as absent.
            need(o.total_size != 0, "ArtOffer", "total_size", CLAUSE)?;
            need(!o.hash_alg.is_empty(), "ArtOffer", "hash_alg", CLAUSE)?;
            need(!o.hash.is_empty(), "ArtOffer", "hash", CLAUSE)?;
            let alg = HashAlg::parse(&o.hash_alg).ok_or_else(|| {
                invalid(
                    "ArtOffer",
                    "hash_alg",
                    format!(
                        "{} is not a known hash algorithm (sha-256, sha-384, sha-512)",
                        shown(&o.hash_alg)
                    ),
                )
            })?;
            if o.hash.len() != alg.digest_len() {
                return Err(invalid(
                    "ArtOffer",
                    "hash",
                    format!(
                        "{} octets, a {} digest has {}",
                        o.hash.len(),
                        alg.name(),
                        alg.digest_len()
                    ),
                ));
            }
            Ok(())
        }
        ArtifactMessage::Get(g) => {
            need(!g.artifact_id.is_empty(), "ArtGet", "artifact_id", CLAUSE)?;
            if g.end != 0 && g.end <= g.start {
                return Err(invalid(
                    "ArtGet",
                    "end",
                    format!("range [{}, {}) is empty or inverted", g.start, g.end),
                ));
            }
            if !g.resume_token.is_empty() && (g.start != 0 || g.end != 0) {
                return Err(invalid(
                    "ArtGet",
                    "resume_token",
                    "a resume token and a range are alternatives, not both".into(),
                ));
            }
            Ok(())
        }
        ArtifactMessage::Chunk(c) => {
            need(!c.artifact_id.is_empty(), "ArtChunk", "artifact_id", CLAUSE)?;
            need(!c.data.is_empty(), "ArtChunk", "data", CLAUSE)
        }
        ArtifactMessage::Ack(a) => need(!a.artifact_id.is_empty(), "ArtAck", "artifact_id", CLAUSE),
        ArtifactMessage::Err(_) => Ok(()),
    }
}

/// Decodes and checks one SWP-ARTIFACT payload of `form` (ARTIFACT-001..003, ARTIFACT-007).
pub fn decode(
    form: P1Form,
    msg_type: u64,
    payload: &[u8],
) -> Result<ArtifactMessage, PayloadError> {
    let m = decode_form(&CODEC, form, msg_type, payload)?;
    check(&m)?;
    Ok(m)
}

/// Encodes a message in `form`, deterministically.
pub fn encode(form: P1Form, m: &ArtifactMessage) -> Vec<u8> {
    let bare = match m {
        ArtifactMessage::Offer(x) => x.encode_to_vec(),
        ArtifactMessage::Get(x) => x.encode_to_vec(),
        ArtifactMessage::Chunk(x) => x.encode_to_vec(),
        ArtifactMessage::Ack(x) => x.encode_to_vec(),
        ArtifactMessage::Err(x) => x.encode_to_vec(),
    };
    form.frame(m.msg_type(), bare)
}
