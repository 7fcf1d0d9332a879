//! Both roles of the SWP-* profiles of classes C3 and C4 (RPC 12, EVENTS 13, ARTIFACT 14,
//! STATE 17, OBS 18) on the wire. The harness keeps one `swp_profiles` machine per profile
//! for the vector's connection and feeds it every frame of those profiles it sends and
//! every one a `flow` expectation reads, so what the endpoint *emits* is judged by the
//! profile's rules (a stream item after the terminal outcome, a seq_no that does not
//! increase, a replay that ends differently, a chunk out of place, a state whose id does
//! not fit its blob, a trace context that comes back changed), not only what it accepts.
//!
//! The machines are configured from what the manifest declares in `params` (the replay
//! window, the severity enumeration, the chunk size, the state id scheme, own tracestate
//! keys): a rule that depends on an undeclared parameter is judged leniently, never against
//! the reference's choice.

use super::conv::{Conv, Obs};
use super::judge::Ctx;
use super::StepFailure;
use crate::materialize::FlowItem;
use crate::model::Verdict;
use crate::p1::P1Form;
use crate::placeholders::Params;
use bytes::Bytes;
use swp_profiles::channel::{self, Channel, ChannelError};

/// The scope the harness's own EVENTS publications are judged under: event_ids are unique
/// per producer, and the endpoint is another producer.
const HARNESS: &str = "harness";
/// The scope of what the endpoint publishes.
const ENDPOINT: &str = "endpoint";

/// A `swp_profiles::channel::Config` from the manifest's declarations.
pub fn config_of(params: &Params, form: P1Form) -> channel::Config {
    let num = |k: &str| params.get(k).and_then(serde_json::Value::as_u64);
    let list = |k: &str| -> Option<Vec<String>> {
        params.get(k).and_then(|v| {
            v.as_array().map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
        })
    };
    let mut c = channel::Config {
        form: match form {
            P1Form::Message => swp_profiles::P1Form::Message,
            P1Form::Wrapper => swp_profiles::P1Form::Wrapper,
        },
        ..channel::Config::default()
    };
    if let Some(w) = num("RPC_REPLAY_WINDOW_MS") {
        c.rpc.replay_window_ms = w;
    }
    if let Some(r) = num("EVENTS_ID_RETENTION_MS") {
        c.events.id_retention_ms = r;
    }
    if let Some(s) = list("EVENTS_SEVERITIES") {
        c.events.severities = s;
    }
    // The endpoint's chunks are judged against the chunk size it declares, and not capped:
    // the harness reads at most `max_read_bytes` anyway.
    c.artifact.chunk_size = num("ARTIFACT_CHUNK_BYTES");
    c.artifact.max_chunk_bytes = u64::MAX;
    c.state.scheme = match params.get("STATE_ID_SCHEME").and_then(|v| v.as_str()) {
        Some("sha256") => swp_profiles::state::IdScheme::Sha256,
        Some("tagged") => swp_profiles::state::IdScheme::Tagged,
        // Undeclared: nothing about ids can be judged.
        _ => swp_profiles::state::IdScheme::Opaque,
    };
    if let Some(k) = list("OBS_OWN_TRACESTATE_KEYS") {
        c.obs.own_tracestate_keys = k;
    }
    relay_config(params, num, list, &mut c.relay);
    c
}

/// The tolerance a relay's retry gets either way of its declared time, unless the manifest
/// declares `RELAY_RETRY_TOLERANCE_MS`: the harness's read loop and a loaded machine, not
/// the relay, decide how late a frame is seen.
pub const RELAY_RETRY_TOLERANCE_MS: u64 = 250;

/// SWP-RELAY: the dedupe window, the finite set of dead-letter reasons and the retry
/// schedule the SUT declares (`RELAY_RETRY_DELAYS_MS`, the wait after each attempt, or a
/// constant `RELAY_RETRY_BACKOFF_MS` over `RELAY_MAX_ATTEMPTS`). Without a declared schedule
/// retries are not timed; without a declared set any non-empty reason passes.
fn relay_config(
    params: &Params,
    num: impl Fn(&str) -> Option<u64>,
    list: impl Fn(&str) -> Option<Vec<String>>,
    c: &mut swp_profiles::relay::Config,
) {
    if let Some(w) = num("RELAY_DEDUPE_WINDOW_MS") {
        c.dedupe_window_ms = w;
    }
    if let Some(r) = list("RELAY_DEAD_LETTER_REASONS") {
        c.reasons = r;
    }
    // An explicit schedule, or a constant backoff over the declared number of attempts.
    let delays = params
        .get("RELAY_RETRY_DELAYS_MS")
        .and_then(serde_json::Value::as_array)
        .and_then(|a| {
            a.iter()
                .map(serde_json::Value::as_u64)
                .collect::<Option<Vec<u64>>>()
        })
        .or_else(|| {
            let b = num("RELAY_RETRY_BACKOFF_MS")?;
            let n = num("RELAY_MAX_ATTEMPTS")?;
            // A declared count far beyond any vector's reach is cut, never allocated.
            Some(vec![b; usize::try_from(n.clamp(1, 64) - 1).unwrap_or(0)])
        });
    c.retry = delays.map(|delays_ms| swp_profiles::relay::RetryPolicy {
        delays_ms,
        tolerance_ms: num("RELAY_RETRY_TOLERANCE_MS").unwrap_or(RELAY_RETRY_TOLERANCE_MS),
    });
}

/// The machines of one vector's connection.
pub struct Judge {
    channels: Vec<Channel>,
}

impl Judge {
    /// Machines for every SWP-* profile of C3 and C4.
    pub fn new(config: &channel::Config) -> Self {
        Judge {
            channels: channel::PROFILES
                .iter()
                .filter_map(|p| Channel::new(*p, config))
                .collect(),
        }
    }

    fn feed(
        &mut self,
        now_ms: u64,
        from_harness: bool,
        profile_id: u64,
        msg_type: u64,
        payload: &[u8],
    ) -> Option<Result<(), ChannelError>> {
        let ch = self
            .channels
            .iter_mut()
            .find(|c| c.profile_id() == profile_id)?;
        let scope = match (profile_id, from_harness) {
            (swp_profiles::events::PROFILE_ID, true) => HARNESS,
            (swp_profiles::events::PROFILE_ID, false) => ENDPOINT,
            // A relay's deliveries are keyed by their publisher.
            (swp_profiles::relay::PROFILE_ID, true) => HARNESS,
            (swp_profiles::relay::PROFILE_ID, false) => ENDPOINT,
            // Calls, transfers and trace contexts are one conversation of both peers.
            _ => "",
        };
        Some(ch.feed(now_ms, scope, msg_type, payload).map(|_| ()))
    }

    /// The frames the harness sent: each of a judged profile steps its machine. The
    /// harness misbehaves on purpose in many vectors, so a refusal here is no verdict: the
    /// refused frame simply changes nothing, as the endpoint should also refuse it.
    pub fn sent(&mut self, now_ms: u64, octets: &[u8]) {
        let limits = crate::frames::Limits::unbounded();
        let mut rest = Bytes::copy_from_slice(octets);
        while let Ok(Some((body, tail))) = crate::frames::take_frame(&rest, &limits) {
            if let Ok(e) = crate::frames::e1::decode(&body, &limits) {
                let _ = self.feed(now_ms, true, e.profile_id, e.msg_type, &e.payload);
            }
            rest = tail;
        }
    }

    /// A frame the endpoint sent: the profile's verdict on it, if the profile is judged.
    fn received(
        &mut self,
        now_ms: u64,
        profile_id: u64,
        msg_type: u64,
        payload: &[u8],
    ) -> Option<ChannelError> {
        self.feed(now_ms, false, profile_id, msg_type, payload)
            .and_then(Result::err)
    }
}

/// Whether `profile_id` is one the judge has a machine for.
pub fn judged(profile_id: u64) -> bool {
    channel::PROFILES.contains(&profile_id)
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
                return Err(c.fail(
                    format!(
                        "message {n} of {total} ({which}) breaks its profile: {e} [{}]",
                        e.code().as_str()
                    ),
                    "a message its profile forbids",
                ));
            }
        }
    }
    // Nothing more: a message here is one the endpoint owes nobody (an item after the
    // terminal outcome, a second outcome, a chunk past the range).
    let quiet = conv.after(conv.spec.timing.silence_ms);
    if let Some(o) = conv.next(quiet) {
        let why = match &o {
            Obs::Reply(e) if judged(e.profile_id) => {
                match judge.received(conv.t(), e.profile_id, e.msg_type, &e.payload) {
                    Some(err) => format!(
                        "after the {total} expected message(s), observed {}, which breaks its profile: {err}",
                        o.short()
                    ),
                    None => format!(
                        "after the {total} expected message(s), observed {}",
                        o.short()
                    ),
                }
            }
            _ => format!(
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
    use serde_json::json;

    #[test]
    fn the_manifest_configures_the_machines() {
        let mut p = Params::new();
        p.insert("RPC_REPLAY_WINDOW_MS".into(), json!(1500));
        p.insert("EVENTS_SEVERITIES".into(), json!(["low", "high"]));
        p.insert("ARTIFACT_CHUNK_BYTES".into(), json!(4096));
        p.insert("STATE_ID_SCHEME".into(), json!("sha256"));
        p.insert("OBS_OWN_TRACESTATE_KEYS".into(), json!(["me"]));
        let c = config_of(&p, P1Form::Wrapper);
        assert_eq!(c.form, swp_profiles::P1Form::Wrapper);
        assert_eq!(c.rpc.replay_window_ms, 1500);
        assert_eq!(c.events.severities, ["low", "high"]);
        assert_eq!(c.artifact.chunk_size, Some(4096));
        assert_eq!(c.state.scheme, swp_profiles::state::IdScheme::Sha256);
        assert_eq!(c.obs.own_tracestate_keys, ["me"]);
        assert_eq!(
            c.relay.retry, None,
            "no schedule declared: retries are not timed"
        );
        p.insert("RELAY_DEDUPE_WINDOW_MS".into(), json!(2000));
        p.insert("RELAY_RETRY_DELAYS_MS".into(), json!([300, 600]));
        p.insert("RELAY_DEAD_LETTER_REASONS".into(), json!(["gone"]));
        p.insert("RELAY_RETRY_BACKOFF_MS".into(), json!(100));
        p.insert("RELAY_MAX_ATTEMPTS".into(), json!(3));
        let c = config_of(&p, P1Form::Message);
        assert_eq!(c.relay.dedupe_window_ms, 2000);
        assert_eq!(c.relay.reasons, ["gone"]);
        assert_eq!(
            c.relay.retry,
            Some(swp_profiles::relay::RetryPolicy {
                delays_ms: vec![300, 600],
                tolerance_ms: RELAY_RETRY_TOLERANCE_MS
            }),
            "an explicit schedule wins"
        );
        p.remove("RELAY_RETRY_DELAYS_MS");
        let c = config_of(&p, P1Form::Message);
        assert_eq!(c.relay.retry.map(|r| r.delays_ms), Some(vec![100, 100]));
        // Nothing declared: ids are not judged, chunks by contiguity only.
        let c = config_of(&Params::new(), P1Form::Message);
        assert_eq!(c.state.scheme, swp_profiles::state::IdScheme::Opaque);
        assert_eq!(c.artifact.chunk_size, None);
    }

    #[test]
    fn what_the_endpoint_emits_is_judged_against_what_was_sent() {
        use swp_profiles::p1::pb::rpc::{RpcReq, RpcResp, RpcStreamItem};
        use swp_profiles::rpc::{encode, RpcMessage};
        let form = swp_profiles::P1Form::Message;
        let mut j = Judge::new(&config_of(&Params::new(), P1Form::Message));
        let req = encode(
            form,
            &RpcMessage::Req(RpcReq {
                rpc_id: Bytes::from_static(b"r"),
                method: "m".into(),
                ..RpcReq::default()
            }),
        );
        let env = crate::frames::Envelope {
            version: 1,
            profile_id: 12,
            msg_type: 1,
            msg_id: Bytes::from_static(b"0123456789abcdef"),
            payload: Bytes::from(req),
            ..Default::default()
        };
        j.sent(0, &crate::frames::e1::frame_bytes(&env).unwrap());
        let item = |seq| {
            encode(
                form,
                &RpcMessage::StreamItem(RpcStreamItem {
                    rpc_id: Bytes::from_static(b"r"),
                    seq_no: seq,
                    item: Bytes::from_static(b"i"),
                    is_terminal: false,
                }),
            )
        };
        assert!(j.received(1, 12, 4, &item(2)).is_none());
        assert!(
            j.received(1, 12, 4, &item(2)).is_some(),
            "seq_no must increase"
        );
        let resp = encode(
            form,
            &RpcMessage::Resp(RpcResp {
                rpc_id: Bytes::from_static(b"r"),
                result: Bytes::new(),
            }),
        );
        assert!(j.received(2, 12, 2, &resp).is_none());
        assert!(
            j.received(3, 12, 4, &item(3)).is_some(),
            "nothing after the terminal"
        );
        // An unjudged profile is not judged.
        assert!(j.received(3, 1, 2, b"{}").is_none());
    }

    #[test]
    fn a_relays_retries_are_judged_against_its_declared_schedule() {
        use swp_profiles::p1::pb::relay::{RelayAck, RelayPublish};
        use swp_profiles::relay::{encode, RelayMessage};
        let form = swp_profiles::P1Form::Message;
        let mut p = Params::new();
        p.insert("RELAY_RETRY_BACKOFF_MS".into(), json!(500));
        p.insert("RELAY_MAX_ATTEMPTS".into(), json!(2));
        let mut j = Judge::new(&config_of(&p, P1Form::Message));
        let publish = |id: &'static [u8]| {
            encode(
                form,
                &RelayMessage::Publish(RelayPublish {
                    delivery_id: Bytes::from_static(id),
                    topic: "loop".into(),
                    ..RelayPublish::default()
                }),
            )
        };
        let env = crate::frames::Envelope {
            version: 1,
            profile_id: 19,
            msg_type: 1,
            msg_id: Bytes::from_static(b"0123456789abcdef"),
            payload: Bytes::from(publish(b"d")),
            ..Default::default()
        };
        // The harness's publish is its own; the relay's delivery of the same id is not a
        // duplicate of it.
        j.sent(0, &crate::frames::e1::frame_bytes(&env).unwrap());
        assert!(j.received(10, 19, 1, &publish(b"d")).is_none());
        assert!(
            j.received(200, 19, 1, &publish(b"d")).is_some(),
            "a retry 190 ms after the attempt, the backoff being 500 +/- 250"
        );
        assert!(j.received(520, 19, 1, &publish(b"d")).is_none());
        assert!(
            j.received(1_020, 19, 1, &publish(b"d")).is_some(),
            "a third attempt of two"
        );
        // After the harness's ACK, no retry at all.
        assert!(j.received(0, 19, 1, &publish(b"e")).is_none());
        let ack = encode(
            form,
            &RelayMessage::Ack(RelayAck {
                delivery_id: Bytes::from_static(b"e"),
            }),
        );
        let env = crate::frames::Envelope {
            msg_type: 2,
            payload: Bytes::from(ack),
            ..env
        };
        j.sent(100, &crate::frames::e1::frame_bytes(&env).unwrap());
        assert!(j.received(500, 19, 1, &publish(b"e")).is_some());
    }
}
