//! Decoding and encoding an SWP-RPC payload in either P1 form, and the required fields of
//! each message class (§4): `rpc_id` everywhere, `method` on a request, `error_code` and
//! `error_message` on an error, `item` on a stream item.

use super::{MSG_CANCEL, MSG_ERR, MSG_REQ, MSG_RESP, MSG_STREAM_ITEM};
use crate::p1::pb::rpc::{
    payload::Body, Payload, RpcCancel, RpcErr, RpcReq, RpcResp, RpcStreamItem,
};
use crate::payload::{decode_form, need, parse, Codec, P1Form, PayloadError};
use bytes::Bytes;
use prost::Message;

const CLAUSE: &str = "swp-rpc §4";

/// A valid SWP-RPC message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RpcMessage {
    /// msg_type 1, `RPC_REQ`.
    Req(RpcReq),
    /// msg_type 2, `RPC_RESP`.
    Resp(RpcResp),
    /// msg_type 3, `RPC_ERR`.
    Err(RpcErr),
    /// msg_type 4, `RPC_STREAM_ITEM`.
    StreamItem(RpcStreamItem),
    /// msg_type 5, `RPC_CANCEL`.
    Cancel(RpcCancel),
}

impl RpcMessage {
    /// The msg_type of this class.
    pub fn msg_type(&self) -> u64 {
        match self {
            RpcMessage::Req(_) => MSG_REQ,
            RpcMessage::Resp(_) => MSG_RESP,
            RpcMessage::Err(_) => MSG_ERR,
            RpcMessage::StreamItem(_) => MSG_STREAM_ITEM,
            RpcMessage::Cancel(_) => MSG_CANCEL,
        }
    }

    /// The call this message belongs to.
    pub fn rpc_id(&self) -> &Bytes {
        match self {
            RpcMessage::Req(x) => &x.rpc_id,
            RpcMessage::Resp(x) => &x.rpc_id,
            RpcMessage::Err(x) => &x.rpc_id,
            RpcMessage::StreamItem(x) => &x.rpc_id,
            RpcMessage::Cancel(x) => &x.rpc_id,
        }
    }
}

fn bare(msg_type: u64, payload: &[u8]) -> Result<RpcMessage, PayloadError> {
    Ok(match msg_type {
        MSG_REQ => RpcMessage::Req(parse("RpcReq", payload)?),
        MSG_RESP => RpcMessage::Resp(parse("RpcResp", payload)?),
        MSG_ERR => RpcMessage::Err(parse("RpcErr", payload)?),
        MSG_STREAM_ITEM => RpcMessage::StreamItem(parse("RpcStreamItem", payload)?),
        // decode_form admits only assigned msg_types, so this is MSG_CANCEL.
        _ => RpcMessage::Cancel(parse("RpcCancel", payload)?),
    })
}

fn unwrap(w: Payload) -> Option<RpcMessage> {
    Some(match w.body? {
        Body::Req(x) => RpcMessage::Req(x),
        Body::Resp(x) => RpcMessage::Resp(x),
        Body::Err(x) => RpcMessage::Err(x),
        Body::StreamItem(x) => RpcMessage::StreamItem(x),
        Body::Cancel(x) => RpcMessage::Cancel(x),
    })
}

const CODEC: Codec<RpcMessage, Payload> = Codec {
    name: "SWP-RPC",
    known: "1 RPC_REQ, 2 RPC_RESP, 3 RPC_ERR, 4 RPC_STREAM_ITEM, 5 RPC_CANCEL",
    max_msg_type: MSG_CANCEL,
    bare,
    wrapper_name: "swp.p1.swp.rpc.v1.Payload",
    unwrap,
    msg_type_of: RpcMessage::msg_type,
};

/// The required fields of a decoded message (§4).
pub fn check(m: &RpcMessage) -> Result<(), PayloadError> {
    need(!m.rpc_id().is_empty(), class_name(m), "rpc_id", CLAUSE)?;
    match m {
        RpcMessage::Req(r) => need(!r.method.is_empty(), "RpcReq", "method", CLAUSE),
        RpcMessage::Err(e) => {
            need(!e.error_code.is_empty(), "RpcErr", "error_code", CLAUSE)?;
            // `retryable` is required too (§4, §7), but a proto3 bool is always set: false
            // and absent are the same octets, so there is nothing to check.
            need(
                !e.error_message.is_empty(),
                "RpcErr",
                "error_message",
                CLAUSE,
            )
        }
        // seq_no and is_terminal are numbers and flags: 0 and false are values, not absence.
        RpcMessage::StreamItem(s) => need(!s.item.is_empty(), "RpcStreamItem", "item", CLAUSE),
        // result (opaque, may be empty) and reason (optional) have nothing to check.
        RpcMessage::Resp(_) | RpcMessage::Cancel(_) => Ok(()),
    }
}

fn class_name(m: &RpcMessage) -> &'static str {
    match m {
        RpcMessage::Req(_) => "RpcReq",
        RpcMessage::Resp(_) => "RpcResp",
        RpcMessage::Err(_) => "RpcErr",
        RpcMessage::StreamItem(_) => "RpcStreamItem",
        RpcMessage::Cancel(_) => "RpcCancel",
    }
}

/// Decodes and checks one SWP-RPC payload of `form` (RPC-001, RPC-013, RPC-014, RPC-016).
pub fn decode(form: P1Form, msg_type: u64, payload: &[u8]) -> Result<RpcMessage, PayloadError> {
    let m = decode_form(&CODEC, form, msg_type, payload)?;
    check(&m)?;
    Ok(m)
}

/// Encodes a message in `form`, deterministically (prost writes fields in number order).
pub fn encode(form: P1Form, m: &RpcMessage) -> Vec<u8> {
    let bare = match m {
        RpcMessage::Req(x) => x.encode_to_vec(),
        RpcMessage::Resp(x) => x.encode_to_vec(),
        RpcMessage::Err(x) => x.encode_to_vec(),
        RpcMessage::StreamItem(x) => x.encode_to_vec(),
        RpcMessage::Cancel(x) => x.encode_to_vec(),
    };
    form.frame(m.msg_type(), bare)
}
