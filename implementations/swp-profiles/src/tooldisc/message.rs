//! Decoding and encoding an SWP-TOOLDISC payload in either P1 form, and what each class must
//! carry. Every descriptor, listed or fetched, needs a `tool_id`, a `name`, a `version` and
//! a valid `schema_ref` (§4, §6); a GET names a tool, and a GET answer carries one. Listing
//! requests and errors have no required fields. Readings in docs/spec-issues-profiles.md.

use super::{MSG_ERR, MSG_GET_REQ, MSG_GET_RESP, MSG_LIST_REQ, MSG_LIST_RESP};
use crate::p1::pb::tooldisc::{
    payload::Body, Payload, ToolDescriptor, TooldiscErr, TooldiscGetReq, TooldiscGetResp,
    TooldiscListReq, TooldiscListResp,
};
use crate::payload::{decode_form, need, parse, shown, Codec, P1Form, PayloadError};
use prost::Message;

const DESCRIPTOR: &str = "swp-tooldisc §4";

/// A valid SWP-TOOLDISC message.
#[derive(Debug, Clone, PartialEq)]
pub enum TooldiscMessage {
    /// msg_type 1, `TOOLDISC_LIST_REQ`.
    ListReq(TooldiscListReq),
    /// msg_type 2, `TOOLDISC_LIST_RESP`.
    ListResp(TooldiscListResp),
    /// msg_type 3, `TOOLDISC_GET_REQ`.
    GetReq(TooldiscGetReq),
    /// msg_type 4, `TOOLDISC_GET_RESP`.
    GetResp(TooldiscGetResp),
    /// msg_type 5, `TOOLDISC_ERR`.
    Err(TooldiscErr),
}

impl TooldiscMessage {
    /// The msg_type of this class.
    pub fn msg_type(&self) -> u64 {
        match self {
            TooldiscMessage::ListReq(_) => MSG_LIST_REQ,
            TooldiscMessage::ListResp(_) => MSG_LIST_RESP,
            TooldiscMessage::GetReq(_) => MSG_GET_REQ,
            TooldiscMessage::GetResp(_) => MSG_GET_RESP,
            TooldiscMessage::Err(_) => MSG_ERR,
        }
    }
}

fn bare(msg_type: u64, payload: &[u8]) -> Result<TooldiscMessage, PayloadError> {
    Ok(match msg_type {
        MSG_LIST_REQ => TooldiscMessage::ListReq(parse("TooldiscListReq", payload)?),
        MSG_LIST_RESP => TooldiscMessage::ListResp(parse("TooldiscListResp", payload)?),
        MSG_GET_REQ => TooldiscMessage::GetReq(parse("TooldiscGetReq", payload)?),
        MSG_GET_RESP => TooldiscMessage::GetResp(parse("TooldiscGetResp", payload)?),
        _ => TooldiscMessage::Err(parse("TooldiscErr", payload)?),
    })
}

fn unwrap(w: Payload) -> Option<TooldiscMessage> {
    Some(match w.body? {
        Body::ListReq(x) => TooldiscMessage::ListReq(x),
        Body::ListResp(x) => TooldiscMessage::ListResp(x),
        Body::GetReq(x) => TooldiscMessage::GetReq(x),
        Body::GetResp(x) => TooldiscMessage::GetResp(x),
        Body::Err(x) => TooldiscMessage::Err(x),
    })
}

const CODEC: Codec<TooldiscMessage, Payload> = Codec {
    name: "SWP-TOOLDISC",
    known: "1 TOOLDISC_LIST_REQ, 2 TOOLDISC_LIST_RESP, 3 TOOLDISC_GET_REQ, 4 TOOLDISC_GET_RESP, 5 TOOLDISC_ERR",
    max_msg_type: MSG_ERR,
    bare,
    wrapper_name: "swp.p1.swp.tooldisc.v1.Payload",
    unwrap,
    msg_type_of: TooldiscMessage::msg_type,
};

/// Whether `r` is a schema reference in one of the two forms §4 allows: a content hash,
/// `sha256:`, `sha384:` or `sha512:` followed by exactly that digest's length in lower-case
/// hex; or an absolute URI, an RFC 3986 scheme, `:`, and a non-empty rest with no white
/// space or control characters. A bare name or a relative path resolves against nothing.
pub fn schema_ref_valid(r: &str) -> bool {
    let Some((scheme, rest)) = r.split_once(':') else {
        return false;
    };
    let hex_len = match scheme {
        "sha256" => Some(64),
        "sha384" => Some(96),
        "sha512" => Some(128),
        _ => None,
    };
    if let Some(n) = hex_len {
        return rest.len() == n && rest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    }
    let mut s = scheme.bytes();
    s.next().is_some_and(|b| b.is_ascii_alphabetic())
        && s.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        && !rest.is_empty()
        && !rest.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// The rules of one descriptor (TOOLDISC-002 … TOOLDISC-005, TOOLDISC-007, TOOLDISC-010,
/// TOOLDISC-011).
pub fn check_descriptor(d: &ToolDescriptor) -> Result<(), PayloadError> {
    need(
        !d.tool_id.is_empty(),
        "ToolDescriptor",
        "tool_id",
        DESCRIPTOR,
    )?;
    need(!d.name.is_empty(), "ToolDescriptor", "name", DESCRIPTOR)?;
    need(
        !d.version.is_empty(),
        "ToolDescriptor",
        "version",
        DESCRIPTOR,
    )?;
    need(
        !d.schema_ref.is_empty(),
        "ToolDescriptor",
        "schema_ref",
        DESCRIPTOR,
    )?;
    if !schema_ref_valid(&d.schema_ref) {
        return Err(PayloadError::Invalid {
            message: "ToolDescriptor",
            field: "schema_ref",
            why: format!(
                "{} is not a URI or a content hash (sha256:, sha384:, sha512: and hex)",
                shown(&d.schema_ref)
            ),
            clause: DESCRIPTOR,
        });
    }
    Ok(())
}

/// The stateless rules of a decoded message.
pub fn check(m: &TooldiscMessage) -> Result<(), PayloadError> {
    match m {
        TooldiscMessage::ListResp(r) => r.tools.iter().try_for_each(check_descriptor),
        TooldiscMessage::GetReq(g) => need(
            !g.tool_id.is_empty(),
            "TooldiscGetReq",
            "tool_id",
            "swp-tooldisc §5",
        ),
        TooldiscMessage::GetResp(r) => match &r.tool {
            Some(d) => check_descriptor(d),
            None => need(false, "TooldiscGetResp", "tool", "swp-tooldisc §5"),
        },
        TooldiscMessage::ListReq(_) | TooldiscMessage::Err(_) => Ok(()),
    }
}

/// Decodes and checks one SWP-TOOLDISC payload of `form` (TOOLDISC-001, TOOLDISC-012).
pub fn decode(
    form: P1Form,
    msg_type: u64,
    payload: &[u8],
) -> Result<TooldiscMessage, PayloadError> {
    let m = decode_form(&CODEC, form, msg_type, payload)?;
    check(&m)?;
    Ok(m)
}

/// Encodes a message in `form`, deterministically.
pub fn encode(form: P1Form, m: &TooldiscMessage) -> Vec<u8> {
    let bare = match m {
        TooldiscMessage::ListReq(x) => x.encode_to_vec(),
        TooldiscMessage::ListResp(x) => x.encode_to_vec(),
        TooldiscMessage::GetReq(x) => x.encode_to_vec(),
        TooldiscMessage::GetResp(x) => x.encode_to_vec(),
        TooldiscMessage::Err(x) => x.encode_to_vec(),
    };
    form.frame(m.msg_type(), bare)
}
