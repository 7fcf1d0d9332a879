//! Payloads valid for the profile a frame addresses, built to an exact size. Core, E1 and S1
//! vectors test the envelope, not the profile, so what they carry must be something the
//! addressed profile accepts: otherwise a stack that signals rejects by closing cannot show
//! whether its core or its profile refused the frame, and a correct stack fails.
//!
//! - Profile 1 (MCP mapping): a JSON-RPC request (msg_type 1), response (2) or notification
//!   (3), followed by spaces, which JSON allows after a value (RFC 8259 §2).
//! - Profile 2 (A2A over P1): a Handshake (msg_type 1) whose `agent_id` is padded, in the
//!   SUT's P1 form.

use crate::p1::P1Form;

/// Why no valid payload of that size exists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoPayload {
    /// The harness knows no valid payload for this profile and msg_type.
    #[error("the harness builds valid payloads for profile 1 (msg_types 1-3) and profile 2 (msg_type 1), not for profile {0} msg_type {1}")]
    Unknown(u64, u64),
    /// The size is below the smallest valid payload.
    #[error("a valid payload for profile {profile} msg_type {msg_type} needs at least {min} octets, not {len}")]
    TooShort {
        /// The profile.
        profile: u64,
        /// The msg_type.
        msg_type: u64,
        /// The smallest.
        min: usize,
        /// The size asked for.
        len: usize,
    },
}

/// The JSON-RPC message of profile 1 for `msg_type`, with the frame's ordinal in its id.
fn jsonrpc(msg_type: u64, ordinal: u64) -> Option<String> {
    Some(match msg_type {
        // `ping` is the one request every MCP receiver answers (MCP basic utilities); what
        // it answers does not matter to a core vector, only that the frame is valid.
        1 => format!(r#"{{"jsonrpc":"2.0","id":"v{ordinal}","method":"ping"}}"#),
        2 => format!(r#"{{"jsonrpc":"2.0","id":"v{ordinal}","result":{{}}}}"#),
        3 => r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        _ => return None,
    })
}

/// Octets of the protobuf length prefix of `n`.
fn varint_len(n: usize) -> usize {
    (64 - (n as u64 | 1).leading_zeros() as usize).div_ceil(7)
}

/// A Handshake whose agent_id has `a` octets and, when `cap` is given, one capability of
/// `cap` octets, bare. The capability fills the one-octet gaps where a length prefix grows
/// (an agent_id of 127 octets makes 129 octets, one of 128 makes 131).
fn handshake(a: usize, cap: Option<usize>) -> Vec<u8> {
    let mut id = b"swp-conform".to_vec();
    id.resize(a, b'-');
    let mut out = vec![0x0a];
    prost::encoding::encode_varint(a as u64, &mut out);
    out.extend_from_slice(&id);
    if let Some(c) = cap {
        out.push(0x12);
        prost::encoding::encode_varint(c as u64, &mut out);
        out.resize(out.len() + c, b'x');
    }
    out
}

/// An empty field 15 the schemas do not define (two octets), which a P1 consumer ignores
/// (P1 §4): it fills the gap where the wrapper's own length prefix grows.
const UNKNOWN_EMPTY: [u8; 2] = [0x7a, 0x00];

/// The size of such a Handshake in `form`, with the wrapper's filler when `fill`.
fn handshake_len(a: usize, cap: Option<usize>, form: P1Form, fill: bool) -> usize {
    let bare = 1 + varint_len(a) + a + cap.map_or(0, |c| 1 + varint_len(c) + c);
    match form {
        P1Form::Message => bare,
        P1Form::Wrapper => 1 + varint_len(bare) + bare + if fill { UNKNOWN_EMPTY.len() } else { 0 },
    }
}

/// A valid payload for `profile`/`msg_type` of exactly `len` octets, or the shortest one
/// when `len` is `None`.
pub fn payload(
    profile: u64,
    msg_type: u64,
    form: P1Form,
    ordinal: u64,
    len: Option<usize>,
) -> Result<Vec<u8>, NoPayload> {
    let too_short = |min: usize, len: usize| NoPayload::TooShort {
        profile,
        msg_type,
        min,
        len,
    };
    match (profile, msg_type) {
        (1, _) => {
            let base = jsonrpc(msg_type, ordinal).ok_or(NoPayload::Unknown(profile, msg_type))?;
            let mut out = base.into_bytes();
            let n = len.unwrap_or(out.len());
            if n < out.len() {
                return Err(too_short(out.len(), n));
            }
            out.resize(n, b' ');
            Ok(out)
        }
        (2, 1) => {
            // agent_id is at least the harness's name; search the length that fits exactly
            // (the length prefixes grow at 128, so a few candidates around the estimate).
            let min_a = "swp-conform".len();
            let min = handshake_len(min_a, None, form, false);
            let n = len.unwrap_or(min);
            if n < min {
                return Err(too_short(min, n));
            }
            let est = n.saturating_sub(2);
            let (a, cap, fill) = (est.saturating_sub(16).max(min_a)..=est.max(min_a))
                .rev()
                .flat_map(|a| {
                    // Only a wrapper has a level of its own to carry the filler.
                    let fills: &[bool] = match form {
                        P1Form::Message => &[false],
                        P1Form::Wrapper => &[false, true],
                    };
                    fills
                        .iter()
                        .flat_map(move |&f| [(a, None, f), (a, Some(0), f), (a, Some(1), f)])
                })
                .find(|&(a, c, f)| handshake_len(a, c, form, f) == n)
                .ok_or(too_short(min, n))?;
            let bare = handshake(a, cap);
            Ok(match form {
                P1Form::Message => bare,
                P1Form::Wrapper => {
                    let mut out = vec![0x0a];
                    prost::encoding::encode_varint(bare.len() as u64, &mut out);
                    out.extend_from_slice(&bare);
                    if fill {
                        out.extend_from_slice(&UNKNOWN_EMPTY);
                    }
                    out
                }
            })
        }
        _ => Err(NoPayload::Unknown(profile, msg_type)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonrpc_payloads_are_json_at_every_size() {
        for t in 1..=3 {
            let min = payload(1, t, P1Form::Message, 7, None).unwrap();
            for n in [min.len(), min.len() + 1, min.len() + 500] {
                let p = payload(1, t, P1Form::Message, 7, Some(n)).unwrap();
                assert_eq!(p.len(), n);
                let v: serde_json::Value = serde_json::from_slice(&p).unwrap();
                assert_eq!(v["jsonrpc"], "2.0");
            }
            assert!(payload(1, t, P1Form::Message, 7, Some(min.len() - 1)).is_err());
        }
        assert!(payload(1, 4, P1Form::Message, 7, None).is_err());
    }

    #[test]
    fn handshakes_decode_in_both_forms_at_every_size() {
        use crate::p1::pb::types::a2a::{payload::Body, Handshake, Payload};
        use prost::Message;
        for form in [P1Form::Message, P1Form::Wrapper] {
            let min = payload(2, 1, form, 0, None).unwrap().len();
            for n in (min..min + 300).chain([min + 70_000]) {
                let p = payload(2, 1, form, 0, Some(n)).unwrap();
                assert_eq!(p.len(), n, "{form:?} {n}");
                let h = match form {
                    P1Form::Message => Handshake::decode(&p[..]).unwrap(),
                    P1Form::Wrapper => match Payload::decode(&p[..]).unwrap().body {
                        Some(Body::Handshake(h)) => h,
                        other => panic!("{other:?}"),
                    },
                };
                assert!(h.agent_id.starts_with("swp-conform"));
            }
        }
    }
}
