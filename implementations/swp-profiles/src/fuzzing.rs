//! The body of the `swp_profiles_c34` fuzz target, here so that the libFuzzer target and a
//! stable-toolchain soak test (`tests/profiles/fuzz_soak.rs`) run the same function. Not an API:
//! it panics, by design, when an invariant breaks.
//!
//! Input: the first octet picks the profile (of [`crate::channel::PROFILES`]) and the P1
//! form; then records `[msg_type, scope, dt, len, len octets]`. A record whose msg_type
//! has its high bit set is *synthesised*: its octets choose the fields of a well-formed
//! message from small alphabets (few ids, keys, artifacts and blobs), so that the machines
//! see duplicates, replays, resumes and parents, not only decode failures. Otherwise the
//! octets are the payload as is.
//!
//! Invariants: no panic; every refusal has one of the five codes a profile may give;
//! `ERR_UNSUPPORTED_MSG_TYPE` exactly for an unassigned msg_type; every accepted message
//! re-encodes in both forms to octets that decode to the same message.

use crate::artifact::chunking::{resume_token, ResumePoint};
use crate::artifact::{self, HashAlg};
use crate::channel::{self, Channel, Config, Message, PROFILES};
use crate::p1::pb;
use crate::payload::P1Form;
use crate::state::IdScheme;
use bytes::Bytes;
use swp_core::ErrorCode;

/// Small caps and windows, so eviction, refusal and expiry happen within one input.
pub fn config(form: P1Form) -> Config {
    let mut c = Config {
        form,
        ..Config::default()
    };
    c.rpc.max_calls = 6;
    c.rpc.max_keys = 3;
    c.rpc.replay_window_ms = 20_000;
    c.rpc.max_replay_bytes = 64;
    c.rpc.gated = vec![crate::rpc::lifecycle::Gate {
        method: "m.admin".into(),
        allowed_scopes: vec!["a".into()],
    }];
    c.events.max_ids = 5;
    c.events.id_retention_ms = 30_000;
    c.events.max_subscriptions = 2;
    c.obs.max_scopes = 2;
    c.obs.max_pending = 2;
    c.obs.max_tracestate_bytes = 40;
    c.obs.own_tracestate_keys = vec!["own".into()];
    c.artifact.chunk_size = Some(4);
    c.artifact.max_artifacts = 2;
    c.artifact.max_tokens = 4;
    c.artifact.max_chunk_bytes = 8;
    c.state.max_states = 6;
    c.state.max_bytes = 64;
    c.state.max_pending = 2;
    c.cred = crate::cred::Config {
        types: vec!["t".into(), crate::cred::SUBJECT_TYPE.into()],
        binding: crate::cred::Binding::Subject,
        max_chain_len: 2,
        max_ttl_ms: 5_000,
        revoke: true,
        max_chains: 2,
    };
    c.policyhint.max_constraints = 3;
    c.agdisc.max_cards = 2;
    c.agdisc.max_pending = 2;
    c.agdisc.max_card_bytes = 8;
    c.tooldisc.max_entries = 3;
    c.tooldisc.max_pending = 2;
    c.tooldisc.max_walk_tools = 3;
    c.relay.max_deliveries = 4;
    c.relay.dedupe_window_ms = 20_000;
    c.relay.reasons = crate::relay::DEAD_LETTER_REASONS.map(String::from).to_vec();
    c.relay.retry = Some(crate::relay::RetryPolicy {
        delays_ms: vec![250, 500],
        tolerance_ms: 250,
    });
    c
}

const ALLOWED: [ErrorCode; 5] = [
    ErrorCode::UnsupportedMsgType,
    ErrorCode::InvalidProfilePayload,
    ErrorCode::SecurityPolicy,
    ErrorCode::RateLimitExceeded,
    ErrorCode::NotFound,
];

fn assigned(profile: u64, msg_type: u64) -> bool {
    let max = match profile {
        crate::obs::PROFILE_ID
        | crate::state::PROFILE_ID
        | crate::cred::PROFILE_ID
        | crate::policyhint::PROFILE_ID
        | crate::agdisc::PROFILE_ID => 4,
        _ => 5,
    };
    (1..=max).contains(&msg_type)
}

/// Octet `i` of `b`, 0 past the end.
fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

/// The content of synthetic artifact `n`: 10 octets.
fn art_data(n: u8) -> Bytes {
    Bytes::from(
        (0..10u8)
            .map(|i| i.wrapping_mul(7).wrapping_add(n))
            .collect::<Vec<_>>(),
    )
}

fn synth(profile: u64, msg_type: u64, b: &[u8]) -> Message {
    let pick = |i: usize, n: u8| at(b, i) % n;
    match profile {
        crate::rpc::PROFILE_ID => {
            use crate::rpc::RpcMessage as M;
            use pb::rpc::*;
            let rpc_id = Bytes::from(vec![b'r', pick(0, 4)]);
            Message::Rpc(match msg_type {
                1 => M::Req(RpcReq {
                    rpc_id,
                    method: ["m.echo", "m.admin", "m.fail"][usize::from(pick(1, 3))].into(),
                    params: Bytes::from(vec![pick(2, 3)]),
                    idempotency_key: ["", "k1", "k2", "k3"][usize::from(pick(3, 4))].into(),
                }),
                2 => M::Resp(RpcResp {
                    rpc_id,
                    result: Bytes::from(vec![pick(2, 3)]),
                }),
                3 => M::Err(RpcErr {
                    rpc_id,
                    error_code: ["cancelled", "idempotency_conflict"][usize::from(pick(1, 2))]
                        .into(),
                    retryable: pick(2, 2) == 1,
                    error_message: "x".into(),
                }),
                4 => M::StreamItem(RpcStreamItem {
                    rpc_id,
                    seq_no: u64::from(pick(2, 6)),
                    item: Bytes::from_static(b"i"),
                    is_terminal: pick(3, 4) == 0,
                }),
                _ => M::Cancel(RpcCancel {
                    rpc_id,
                    reason: String::new(),
                }),
            })
        }
        crate::events::PROFILE_ID => {
            use crate::events::EventsMessage as M;
            use pb::events::*;
            let record = |j: usize| EventRecord {
                event_id: format!("e{}", pick(j, 4)),
                event_type: "t".into(),
                severity: ["info", "warn", "loud"][usize::from(pick(j + 1, 3))].into(),
                ts_unix_ms: 1 + u64::from(pick(j + 2, 2)),
                msg_id: Bytes::from(vec![pick(j + 3, 2)]),
                task_id: Bytes::new(),
                rpc_id: Bytes::new(),
                body: Bytes::from_static(b"b"),
            };
            Message::Events(match msg_type {
                1 => M::Publish(EvtPublish {
                    event: Some(record(0)),
                }),
                2 => M::Subscribe(EvtSubscribe {
                    filter: ["a", "b", "c"][usize::from(pick(0, 3))].into(),
                }),
                3 => M::Unsubscribe(EvtUnsubscribe {
                    subscription_id: ["a", "b", "c"][usize::from(pick(0, 3))].into(),
                }),
                4 => M::Batch(EvtBatch {
                    events: (0..usize::from(pick(0, 4)))
                        .map(|j| record(1 + 4 * j))
                        .collect(),
                }),
                _ => M::Err(EvtErr::default()),
            })
        }
        crate::obs::PROFILE_ID => {
            use crate::obs::ObsMessage as M;
            use pb::obs::*;
            let tp = [
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00",
                "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
                "",
            ][usize::from(pick(0, 4))];
            let ts = ["", "own=1,x=2", "x=2", "own=9, x=2", "x=3"][usize::from(pick(1, 5))];
            let rpc_id = Bytes::from(vec![pick(2, 2)]);
            Message::Obs(match msg_type {
                1 => M::Set(ObsSet {
                    traceparent: tp.into(),
                    tracestate: ts.into(),
                    rpc_id,
                    ..ObsSet::default()
                }),
                2 => M::Get(ObsGet {
                    include_current: pick(0, 2) == 0,
                }),
                3 => M::Doc(ObsDoc {
                    traceparent: tp.into(),
                    tracestate: ts.into(),
                    rpc_id,
                    ..ObsDoc::default()
                }),
                _ => M::Err(ObsErr::default()),
            })
        }
        crate::artifact::PROFILE_ID => {
            use crate::artifact::ArtifactMessage as M;
            use pb::artifact::*;
            let n = pick(0, 2);
            let id = format!("a{n}");
            let data = art_data(n);
            Message::Artifact(match msg_type {
                1 => {
                    let mut o = artifact::source::offer(&id, &data, HashAlg::Sha256, Bytes::new());
                    if pick(1, 4) == 0 {
                        o.hash = Bytes::from(vec![0; 32]);
                    }
                    M::Offer(o)
                }
                2 => {
                    let start = u64::from(pick(1, 12));
                    let token = match pick(3, 4) {
                        0 => resume_token(
                            &id,
                            &ResumePoint {
                                next_index: start / 4,
                                next_offset: start,
                                end: 10,
                            },
                        ),
                        1 => "bogus".into(),
                        _ => String::new(),
                    };
                    M::Get(if token.is_empty() {
                        ArtGet {
                            artifact_id: id,
                            start,
                            end: u64::from(pick(2, 12)),
                            resume_token: token,
                        }
                    } else {
                        ArtGet {
                            artifact_id: id,
                            resume_token: token,
                            ..ArtGet::default()
                        }
                    })
                }
                3 => {
                    let offset = u64::from(pick(1, 11));
                    let len = u64::from(pick(2, 6)).max(1);
                    let from = usize::try_from(offset.min(10)).unwrap_or(10);
                    let to = usize::try_from((offset + len).min(10))
                        .unwrap_or(10)
                        .max(from);
                    let mut chunk = data.slice(from..to).to_vec();
                    if chunk.is_empty() || pick(3, 8) == 0 {
                        chunk.push(0xee);
                    }
                    M::Chunk(ArtChunk {
                        artifact_id: id.clone(),
                        chunk_index: offset / 4 + u64::from(pick(4, 8) == 0),
                        offset,
                        is_terminal: offset + chunk.len() as u64 >= 10 || pick(4, 8) == 1,
                        data: Bytes::from(chunk),
                        resume_token: if pick(5, 2) == 0 {
                            format!("t{}", pick(6, 3))
                        } else {
                            String::new()
                        },
                    })
                }
                4 => M::Ack(ArtAck {
                    artifact_id: id,
                    chunk_index: u64::from(pick(1, 4)),
                }),
                _ => M::Err(ArtErr::default()),
            })
        }
        crate::cred::PROFILE_ID => {
            use crate::cred::CredMessage as M;
            use pb::cred::*;
            let chains: [&[u8]; 3] = [b"", b"c1", b"c2"];
            let chain_id = Bytes::from_static(chains[usize::from(pick(0, 3))]);
            Message::Cred(match msg_type {
                1 => M::Present(CredPresent {
                    cred_type: ["t", crate::cred::SUBJECT_TYPE, "x"][usize::from(pick(1, 3))]
                        .into(),
                    credential: Bytes::from_static(
                        [&b"sub=a"[..], b"sub=b", b"junk"][usize::from(pick(2, 3))],
                    ),
                    chain_id,
                }),
                2 => M::Delegate(CredDelegate {
                    chain_id,
                    delegation: Bytes::from_static(b"d"),
                    // Around the fuzz clock, some past, some beyond the bound.
                    expires_at_unix_ms: u64::from(at(b, 3)) * 500,
                }),
                3 => M::Revoke(CredRevoke {
                    chain_id,
                    reason: String::new(),
                }),
                _ => M::Err(CredErr::default()),
            })
        }
        crate::policyhint::PROFILE_ID => {
            use crate::policyhint::PolicyMessage as M;
            use pb::policyhint::*;
            let word = |i: usize, w: [&str; 3]| w[usize::from(pick(i, 3))].to_owned();
            let constraint = |i: usize| Constraint {
                key: word(i, [crate::policyhint::policy::REFERENCE_KEY, "k.other", ""]),
                value: word(i + 1, ["eu", "mars", ""]),
                mode: word(i + 2, ["MUST", "MAY", "must"]),
                scope_ref: word(i + 3, ["", "s1", "s2"]),
            };
            Message::Policyhint(match msg_type {
                1 => M::HintSet(PolicyHintSet {
                    constraints: (0..usize::from(pick(0, 4)))
                        .map(|j| constraint(1 + 4 * j))
                        .collect(),
                }),
                2 => M::HintAck(PolicyHintAck {
                    ack_id: word(1, ["a", "b", ""]),
                }),
                3 => M::Violation(PolicyViolation {
                    key: word(1, ["k", "", "k2"]),
                    scope_ref: word(2, ["s", "", "s2"]),
                    reason_code: word(3, ["r", "", "unsatisfiable"]),
                }),
                _ => M::Err(PolicyErr::default()),
            })
        }
        crate::tooldisc::PROFILE_ID => {
            use crate::tooldisc::TooldiscMessage as M;
            use pb::tooldisc::*;
            let tool = |i: usize| ToolDescriptor {
                tool_id: ["", "t1", "t2"][usize::from(pick(i, 3))].to_owned(),
                name: ["", "n"][usize::from(pick(i + 1, 2))].to_owned(),
                version: ["", "1", "2"][usize::from(pick(i + 2, 3))].to_owned(),
                schema_ref: ["", "urn:x", "sha256:zz", "https://s/x"][usize::from(pick(i + 3, 4))]
                    .to_owned(),
                descriptor_payload: Bytes::new(),
            };
            let token = ["", "p1", "p2"][usize::from(pick(0, 3))].to_owned();
            Message::Tooldisc(match msg_type {
                1 => M::ListReq(TooldiscListReq {
                    page_size: u32::from(pick(1, 3)),
                    page_token: token,
                    filter: ["", "f"][usize::from(pick(2, 2))].to_owned(),
                }),
                2 => M::ListResp(TooldiscListResp {
                    tools: (0..usize::from(pick(1, 3)))
                        .map(|j| tool(3 + 4 * j))
                        .collect(),
                    next_page_token: token,
                }),
                3 => M::GetReq(TooldiscGetReq {
                    tool_id: ["", "t1", "t2"][usize::from(pick(1, 3))].to_owned(),
                    version: ["", "1", "2"][usize::from(pick(2, 3))].to_owned(),
                }),
                4 => M::GetResp(TooldiscGetResp {
                    tool: (pick(1, 4) != 0).then(|| tool(2)),
                }),
                _ => M::Err(TooldiscErr::default()),
            })
        }
        crate::agdisc::PROFILE_ID => {
            use crate::agdisc::AgdiscMessage as M;
            use pb::agdisc::*;
            let names = ["", "a1", "a2"];
            let agent_id = names[usize::from(pick(0, 3))].to_owned();
            let etag = ["", "e1", "e2"][usize::from(pick(1, 3))].to_owned();
            let cards: [&[u8]; 3] = [b"", b"card", b"other card"];
            Message::Agdisc(match msg_type {
                1 => M::Get(AgdiscGet {
                    agent_id,
                    if_none_match: etag,
                }),
                2 => M::Doc(AgdiscDoc {
                    agent_id,
                    schema_revision: ["", "1", "2"][usize::from(pick(2, 3))].to_owned(),
                    card_payload: Bytes::from_static(cards[usize::from(pick(3, 3))]),
                    etag,
                    max_age_ms: u64::from(pick(4, 4)) * 1_000,
                }),
                3 => M::NotModified(AgdiscNotModified { agent_id, etag }),
                _ => M::Err(AgdiscErr::default()),
            })
        }
        crate::relay::PROFILE_ID => {
            use crate::relay::RelayMessage as M;
            use pb::relay::*;
            let delivery_id = Bytes::from(vec![b'd', pick(0, 3)]);
            Message::Relay(match msg_type {
                1 => M::Publish(RelayPublish {
                    delivery_id,
                    topic: ["t", "u"][usize::from(pick(1, 2))].into(),
                    payload: Bytes::from(vec![pick(2, 3)]),
                    ttl_ms: u64::from(pick(3, 3)) * 1_000,
                }),
                2 => M::Ack(RelayAck { delivery_id }),
                3 => M::Nack(RelayNack {
                    delivery_id,
                    retryable: pick(1, 2) == 0,
                    reason_code: ["", "retry_exhausted", "gremlins"][usize::from(pick(2, 3))]
                        .into(),
                }),
                4 => M::Status(RelayStatus {
                    delivery_id,
                    state: "pending".into(),
                    attempt_count: u32::from(pick(1, 4)),
                }),
                _ => M::Err(RelayErr::default()),
            })
        }
        _ => {
            use crate::state::StateMessage as M;
            use pb::state::*;
            let blobs: [&[u8]; 3] = [b"", b"a", b"bb"];
            let blob = Bytes::from_static(blobs[usize::from(pick(0, 3))]);
            let id_of = |i: usize| IdScheme::Sha256.content_id(blobs[usize::from(pick(i, 3))]);
            let parents = (0..usize::from(pick(2, 3))).map(|j| id_of(3 + j)).collect();
            let state_id = if pick(1, 5) == 0 {
                Bytes::from_static(b"not-a-hash")
            } else {
                id_of(0)
            };
            Message::State(match msg_type {
                1 => M::Put(StatePut {
                    state_id,
                    blob,
                    parent_ids: parents,
                    metadata: Bytes::new(),
                }),
                2 => M::Get(StateGet { state_id }),
                3 => M::Delta(StateDelta {
                    state_id,
                    delta: blob,
                    parent_ids: parents,
                }),
                _ => M::Err(StateErr::default()),
            })
        }
    }
}

/// Runs one input (see the module doc).
pub fn run(data: &[u8]) {
    let Some((&head, mut rest)) = data.split_first() else {
        return;
    };
    let profile = PROFILES[usize::from(head & 0x7f) % PROFILES.len()];
    let form = if head & 0x80 == 0 {
        P1Form::Message
    } else {
        P1Form::Wrapper
    };
    let Some(mut ch) = Channel::new(profile, &config(form)) else {
        return;
    };
    let mut now: u64 = 1_000;
    while let [t, scope, dt, len, tail @ ..] = rest {
        let n = usize::from(*len).min(tail.len());
        let (body, next) = tail.split_at(n);
        rest = next;
        now += u64::from(*dt) * 250;
        let scope = ["", "a", "b"][usize::from(*scope % 3)];
        let msg_type = u64::from(*t & 0x7f) % 8;
        let synthetic;
        let payload: &[u8] = if *t & 0x80 != 0 && assigned(profile, msg_type) {
            synthetic = synth(profile, msg_type, body).encode(form);
            &synthetic
        } else {
            body
        };
        match ch.feed(now, scope, msg_type, payload) {
            Err(e) => {
                let code = e.code();
                assert!(ALLOWED.contains(&code), "{code:?} from {e}");
                assert_eq!(
                    code == ErrorCode::UnsupportedMsgType,
                    !assigned(profile, msg_type),
                    "{e}"
                );
            }
            Ok((m, _)) => {
                assert!(assigned(profile, msg_type));
                for f in [P1Form::Message, P1Form::Wrapper] {
                    let again = channel::decode(profile, f, msg_type, &m.encode(f));
                    assert_eq!(again, Some(Ok(m.clone())), "{f:?} round trip");
                }
            }
        }
    }
}
