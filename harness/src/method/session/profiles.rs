//! What the endpoint emits for the P1 profiles (A2A and the SWP-* profiles 10-19), judged
//! on the wire by the harness's own profile rules ([`crate::rules`], written from the
//! profile texts, never the reference's library). The harness keeps one
//! [`rules::Connection`] per vector connection and feeds it every P1 frame it sends and
//! every one a `flow` expectation reads, so a message is judged against everything before it
//! (a stream item after the terminal outcome, a seq_no that does not increase, a replay that
//! ends differently, a chunk out of place, a state whose id does not fit its blob, a trace
//! context that comes back changed), not only for its shape.
//!
//! The rules take their parameters from what the manifest declares in `params`
//! (`rules::Config::from_params`): a rule that depends on an undeclared parameter is judged
//! leniently, never against the reference's choice.

use super::conv::Conv;
use super::judge::Ctx;
use super::obs::Obs;
use super::work::StepFailure;
use crate::p1::P1Form;
use crate::plan::materialize::FlowItem;
use crate::plan::placeholders::Params;
use crate::report::result::Verdict;
use crate::rules::{self, Side, Violation};
use bytes::Bytes;

/// The rules of one vector's connection, with the payload form they are read in.
pub struct Judge {
    rules: rules::Connection,
    form: P1Form,
}

impl Judge {
    /// Rules configured from the manifest's `params`, for a SUT speaking P1 in `form`, on a
    /// connection opened at `unix_ms` (the wall clock credential expiries are judged by).
    pub fn new(params: &Params, form: P1Form, unix_ms: Option<u64>) -> Self {
        Judge {
            rules: rules::Connection::new(&rules::Config::from_params(params))
                .with_unix_ms_at_open(unix_ms),
            form,
        }
    }

    /// One message `side` sent, in the SUT's P1 form: the rules' verdict on it. A payload
    /// whose form does not unwrap is judged as sent, so the decode rule names the problem.
    fn observe(
        &mut self,
        now_ms: u64,
        side: Side,
        profile_id: u64,
        msg_type: u64,
        payload: &[u8],
    ) -> Result<(), Violation> {
        if !crate::p1::pb::is_p1(profile_id) {
            return Ok(());
        }
        let bare = self
            .form
            .unwrap(profile_id, msg_type, payload)
            .unwrap_or_else(|_| payload.to_vec());
        self.rules
            .observe(now_ms, side, profile_id, msg_type, &bare)
    }

    /// The frames the harness sent: each P1 frame moves the rules' state. The harness
    /// misbehaves on purpose in many vectors, so a refusal here is no verdict: the refused
    /// frame changes nothing, as the endpoint should also refuse it.
    pub fn sent(&mut self, now_ms: u64, octets: &[u8]) {
        let limits = crate::frames::Limits::unbounded();
        let mut rest = Bytes::copy_from_slice(octets);
        while let Ok(Some((body, tail))) = crate::frames::take_frame(&rest, &limits) {
            if let Ok(e) = crate::frames::e1::decode(&body, &limits) {
                let _ = self.observe(now_ms, Side::Harness, e.profile_id, e.msg_type, &e.payload);
            }
            rest = tail;
        }
    }

    /// A frame the endpoint sent: the rule it breaks, if any.
    fn received(
        &mut self,
        now_ms: u64,
        profile_id: u64,
        msg_type: u64,
        payload: &[u8],
    ) -> Option<Violation> {
        self.observe(now_ms, Side::Endpoint, profile_id, msg_type, payload)
            .err()
    }
}

/// Whether `profile_id` is one the rules judge.
pub fn judged(profile_id: u64) -> bool {
    crate::p1::pb::is_p1(profile_id)
}

/// `flow`: the endpoint sends exactly these messages next, each judged by its profile's
/// machine, then nothing for the quiet window (`silence_ms`).
pub fn flow(
    conv: &mut Conv<'_>,
    judge: &mut Judge,
    items: &[FlowItem],
    form: P1Form,
    c: &Ctx<'_>,
) -> Result<String, Box<StepFailure>> {
    let step_ms = conv.spec.timing.step_ms;
    let total: u64 = items.iter().map(|f| f.count).sum();
    let mut n = 0u64;
    for item in items {
        let name = crate::p1::parts(&item.spec).map_or("?", |(x, _, _)| x);
        for k in 0..item.count {
            n += 1;
            let which = if item.count > 1 {
                format!("{name} {} of {}", k + 1, item.count)
            } else {
                name.to_owned()
            };
            let deadline = conv.step_deadline();
            let env = match conv.next(deadline) {
                Some(Obs::Reply(e)) => e,
                Some(other) => {
                    return Err(c.fail(
                        format!(
                            "message {n} of {total}: expected {which}, observed {}",
                            other.short()
                        ),
                        other.short(),
                    ))
                }
                None => {
                    return Err(StepFailure::new(
                        Verdict::Timeout,
                        format!(
                        "{}message {n} of {total}: expected {which}, nothing within {step_ms} ms",
                        c.label
                    ),
                        c.expected,
                        "silence",
                    ))
                }
            };
            if (env.profile_id, env.msg_type) != (item.profile_id, item.msg_type) {
                return Err(c.fail(
                    format!(
                        "message {n} of {total}: expected {which} (profile_id={} msg_type={}), observed profile_id={} msg_type={}",
                        item.profile_id, item.msg_type, env.profile_id, env.msg_type
                    ),
                    "another message",
                ));
            }
            form.unwrap(env.profile_id, env.msg_type, &env.payload)
                .and_then(|b| crate::p1::check(&item.spec, &b))
                .map_err(|e| c.fail(format!("message {n} of {total} ({which}): {e}"), "reply"))?;
            if let Some(e) = judge.received(conv.t(), env.profile_id, env.msg_type, &env.payload) {
                let mut f = c.fail(
                    format!("message {n} of {total} ({which}) breaks its profile: {e}"),
                    "a message its profile forbids",
                );
                f.broke = vec![e.requirement.to_owned()];
                return Err(f);
            }
        }
    }
    // Nothing more: a message here is one the endpoint owes nobody (an item after the
    // terminal outcome, a second outcome, a chunk past the range).
    let quiet = conv.after(conv.spec.timing.silence_ms);
    if let Some(o) = conv.next(quiet) {
        let broken = match &o {
            Obs::Reply(e) if judged(e.profile_id) => {
                judge.received(conv.t(), e.profile_id, e.msg_type, &e.payload)
            }
            _ => None,
        };
        // A message beyond the expected ones fails the step at its requirements; one that
        // also breaks a rule is that rule's to grade as well.
        let why = match &broken {
            Some(err) => format!(
                "after the {total} expected message(s), observed {}, which breaks its profile: {err}",
                o.short()
            ),
            None => format!(
                "after the {total} expected message(s), observed {}",
                o.short()
            ),
        };
        return Err(c.fail(why, o.short()));
    }
    Ok(format!("{total} message(s), then nothing more"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::p1::pb::types::rpc::{RpcReq, RpcResp, RpcStreamItem};
    use prost::Message;

    fn frame(profile_id: u64, msg_type: u64, payload: Vec<u8>) -> Vec<u8> {
        let env = crate::frames::Envelope {
            version: 1,
            profile_id,
            msg_type,
            msg_id: Bytes::from_static(b"0123456789abcdef"),
            payload: Bytes::from(payload),
            ..Default::default()
        };
        crate::frames::e1::frame_bytes(&env).unwrap().to_vec()
    }

    #[test]
    fn what_the_endpoint_emits_is_judged_against_what_was_sent() {
        let mut j = Judge::new(&Params::new(), P1Form::Message, None);
        let req = RpcReq {
            rpc_id: Bytes::from_static(b"r"),
            method: "m".into(),
            ..RpcReq::default()
        };
        j.sent(0, &frame(12, 1, req.encode_to_vec()));
        let item = |seq| {
            RpcStreamItem {
                rpc_id: Bytes::from_static(b"r"),
                seq_no: seq,
                item: Bytes::from_static(b"i"),
                is_terminal: false,
            }
            .encode_to_vec()
        };
        assert!(j.received(1, 12, 4, &item(2)).is_none());
        let v = j
            .received(1, 12, 4, &item(2))
            .expect("seq_no must increase");
        assert!(v.requirement.starts_with("RPC-"), "{v}");
        let resp = RpcResp {
            rpc_id: Bytes::from_static(b"r"),
            result: Bytes::new(),
        }
        .encode_to_vec();
        assert!(j.received(2, 12, 2, &resp).is_none());
        assert!(
            j.received(3, 12, 4, &item(3)).is_some(),
            "nothing after the terminal"
        );
        // A profile that is not P1 is not judged.
        assert!(j.received(3, 1, 2, b"{}").is_none());
    }

    #[test]
    fn the_wrapper_form_is_read_as_declared() {
        let mut j = Judge::new(&Params::new(), P1Form::Wrapper, None);
        let req = RpcReq {
            rpc_id: Bytes::from_static(b"w"),
            method: "m".into(),
            ..RpcReq::default()
        }
        .encode_to_vec();
        let wrapped = P1Form::Wrapper.wrap("rpc.RpcReq", req).unwrap();
        j.sent(0, &frame(12, 1, wrapped));
        let resp = RpcResp {
            rpc_id: Bytes::from_static(b"w"),
            result: Bytes::new(),
        }
        .encode_to_vec();
        let resp = P1Form::Wrapper.wrap("rpc.RpcResp", resp).unwrap();
        assert!(j.received(1, 12, 2, &resp).is_none());
        // The same outcome again is the one outcome repeated (SI-P-RPC-2); another is not.
        assert!(j.received(2, 12, 2, &resp).is_none());
        let other = RpcResp {
            rpc_id: Bytes::from_static(b"w"),
            result: Bytes::from_static(b"x"),
        }
        .encode_to_vec();
        let other = P1Form::Wrapper.wrap("rpc.RpcResp", other).unwrap();
        assert!(
            j.received(3, 12, 2, &other).is_some(),
            "a second outcome for the call"
        );
    }
}
