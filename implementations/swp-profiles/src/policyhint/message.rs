//! Decoding and encoding an SWP-POLICYHINT payload in either P1 form, and what each class
//! must carry (swp-policyhint §4, §5): every constraint entry has a key, a value and a mode
//! that is exactly `MUST`, `SHOULD` or `MAY` (scope_ref optional); a violation names the key,
//! the effective scope and a reason code; an acknowledgement has an id. proto3 cannot tell
//! an absent string from an empty one, so "includes" reads as "not empty"
//! (docs/profiles.md, SI-P-POLICYHINT-1).

use super::{MSG_ERR, MSG_HINT_ACK, MSG_HINT_SET, MSG_VIOLATION};
use crate::p1::pb::policyhint::{
    payload::Body, Payload, PolicyErr, PolicyHintAck, PolicyHintSet, PolicyViolation,
};
use crate::payload::{decode_form, need, parse, Codec, P1Form, PayloadError};
use prost::Message;

const CONSTRAINT: &str = "swp-policyhint §4";
const VIOLATION: &str = "swp-policyhint §5";

/// A constraint's mode (§4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Binding: a constraint the receiver cannot satisfy is a violation.
    Must,
    /// Recommended: advisory, never refused or reported for itself.
    Should,
    /// Permitted: advisory.
    May,
}

impl Mode {
    /// The mode a constraint's `mode` field names; `None` for any other text (the three
    /// words are written in capitals, as in the doc).
    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "MUST" => Some(Mode::Must),
            "SHOULD" => Some(Mode::Should),
            "MAY" => Some(Mode::May),
            _ => None,
        }
    }
}

/// A valid SWP-POLICYHINT message.
#[derive(Debug, Clone, PartialEq)]
pub enum PolicyMessage {
    /// msg_type 1, `POLICY_HINT_SET`.
    HintSet(PolicyHintSet),
    /// msg_type 2, `POLICY_HINT_ACK`.
    HintAck(PolicyHintAck),
    /// msg_type 3, `POLICY_VIOLATION`.
    Violation(PolicyViolation),
    /// msg_type 4, `POLICY_ERR`.
    Err(PolicyErr),
}

impl PolicyMessage {
    /// The msg_type of this class.
    pub fn msg_type(&self) -> u64 {
        match self {
            PolicyMessage::HintSet(_) => MSG_HINT_SET,
            PolicyMessage::HintAck(_) => MSG_HINT_ACK,
            PolicyMessage::Violation(_) => MSG_VIOLATION,
            PolicyMessage::Err(_) => MSG_ERR,
        }
    }
}

fn bare(msg_type: u64, payload: &[u8]) -> Result<PolicyMessage, PayloadError> {
    Ok(match msg_type {
        MSG_HINT_SET => PolicyMessage::HintSet(parse("PolicyHintSet", payload)?),
        MSG_HINT_ACK => PolicyMessage::HintAck(parse("PolicyHintAck", payload)?),
        MSG_VIOLATION => PolicyMessage::Violation(parse("PolicyViolation", payload)?),
        _ => PolicyMessage::Err(parse("PolicyErr", payload)?),
    })
}

fn unwrap(w: Payload) -> Option<PolicyMessage> {
    Some(match w.body? {
        Body::HintSet(x) => PolicyMessage::HintSet(x),
        Body::HintAck(x) => PolicyMessage::HintAck(x),
        Body::Violation(x) => PolicyMessage::Violation(x),
        Body::Err(x) => PolicyMessage::Err(x),
    })
}

const CODEC: Codec<PolicyMessage, Payload> = Codec {
    name: "SWP-POLICYHINT",
    known: "1 POLICY_HINT_SET, 2 POLICY_HINT_ACK, 3 POLICY_VIOLATION, 4 POLICY_ERR",
    max_msg_type: MSG_ERR,
    bare,
    wrapper_name: "swp.p1.swp.policyhint.v1.Payload",
    unwrap,
    msg_type_of: PolicyMessage::msg_type,
};

/// The stateless rules of a decoded message.
pub fn check(m: &PolicyMessage) -> Result<(), PayloadError> {
    match m {
        PolicyMessage::HintSet(s) => {
            for c in &s.constraints {
                need(!c.key.is_empty(), "Constraint", "key", CONSTRAINT)?;
                need(!c.value.is_empty(), "Constraint", "value", CONSTRAINT)?;
                need(!c.mode.is_empty(), "Constraint", "mode", CONSTRAINT)?;
                if Mode::parse(&c.mode).is_none() {
                    return Err(PayloadError::Invalid {
                        message: "Constraint",
                        field: "mode",
                        why: format!(
                            "{} is not MUST, SHOULD or MAY",
                            crate::payload::shown(&c.mode)
                        ),
                        clause: CONSTRAINT,
                    });
                }
            }
            Ok(())
        }
        PolicyMessage::HintAck(a) => {
            need(!a.ack_id.is_empty(), "PolicyHintAck", "ack_id", CONSTRAINT)
        }
        PolicyMessage::Violation(v) => {
            need(!v.key.is_empty(), "PolicyViolation", "key", VIOLATION)?;
            need(
                !v.scope_ref.is_empty(),
                "PolicyViolation",
                "scope_ref",
                VIOLATION,
            )?;
            need(
                !v.reason_code.is_empty(),
                "PolicyViolation",
                "reason_code",
                VIOLATION,
            )
        }
        PolicyMessage::Err(_) => Ok(()),
    }
}

/// Decodes and checks one SWP-POLICYHINT payload of `form` (unassigned msg_types refused).
pub fn decode(form: P1Form, msg_type: u64, payload: &[u8]) -> Result<PolicyMessage, PayloadError> {
    let m = decode_form(&CODEC, form, msg_type, payload)?;
    check(&m)?;
    Ok(m)
}

/// Encodes a message in `form`, deterministically.
pub fn encode(form: P1Form, m: &PolicyMessage) -> Vec<u8> {
    let bare = match m {
        PolicyMessage::HintSet(x) => x.encode_to_vec(),
        PolicyMessage::HintAck(x) => x.encode_to_vec(),
        PolicyMessage::Violation(x) => x.encode_to_vec(),
        PolicyMessage::Err(x) => x.encode_to_vec(),
    };
    form.frame(m.msg_type(), bare)
}
