//! Properties over all the channel's profiles: every valid message round-trips in both P1
//! forms (RPC-001, EVENTS-001, OBS-001, ARTIFACT-001, STATE-001, CRED-001, POLICYHINT-001;
//! P1-015, P1-016, P1-017, P1-018, P1-019, P1-020, P1-021), and decoding arbitrary octets under any msg_type never panics and refuses an
//! unassigned msg_type with ERR_UNSUPPORTED_MSG_TYPE and nothing else.

use crate::FORMS;
use bytes::Bytes;
use proptest::prelude::*;
use swp_core::ErrorCode;
use swp_profiles::artifact::{ArtifactMessage, HashAlg};
use swp_profiles::channel::{self, Message, PROFILES};
use swp_profiles::cred::CredMessage;
use swp_profiles::events::EventsMessage;
use swp_profiles::obs::ObsMessage;
use swp_profiles::p1::pb::{
    artifact as art, cred as cr, events as evt, obs as ob, policyhint as ph, rpc as rp, state as st,
};
use swp_profiles::policyhint::PolicyMessage;
use swp_profiles::rpc::RpcMessage;
use swp_profiles::state::StateMessage;
use swp_profiles::P1Form;

fn id() -> impl Strategy<Value = Bytes> {
    prop::collection::vec(any::<u8>(), 1..12).prop_map(Bytes::from)
}
fn opaque() -> impl Strategy<Value = Bytes> {
    prop::collection::vec(any::<u8>(), 0..12).prop_map(Bytes::from)
}
fn text() -> impl Strategy<Value = String> {
    "[a-z.]{1,12}"
}

fn rpc() -> impl Strategy<Value = Message> {
    prop_oneof![
        (id(), text(), opaque(), "[a-z]{0,4}").prop_map(
            |(rpc_id, method, params, idempotency_key)| {
                RpcMessage::Req(rp::RpcReq {
                    rpc_id,
                    method,
                    params,
                    idempotency_key,
                })
            }
        ),
        (id(), opaque())
            .prop_map(|(rpc_id, result)| RpcMessage::Resp(rp::RpcResp { rpc_id, result })),
        (id(), text(), any::<bool>(), text()).prop_map(
            |(rpc_id, error_code, retryable, error_message)| {
                RpcMessage::Err(rp::RpcErr {
                    rpc_id,
                    error_code,
                    retryable,
                    error_message,
                })
            }
        ),
        (id(), any::<u64>(), id(), any::<bool>()).prop_map(
            |(rpc_id, seq_no, item, is_terminal)| {
                RpcMessage::StreamItem(rp::RpcStreamItem {
                    rpc_id,
                    seq_no,
                    item,
                    is_terminal,
                })
            }
        ),
        (id(), "[a-z ]{0,8}")
            .prop_map(|(rpc_id, reason)| RpcMessage::Cancel(rp::RpcCancel { rpc_id, reason })),
    ]
    .prop_map(Message::Rpc)
}

fn record() -> impl Strategy<Value = evt::EventRecord> {
    (text(), text(), 1u64.., opaque(), opaque(), id(), id()).prop_map(
        |(event_id, event_type, ts_unix_ms, msg_id, task_id, rpc_id, body)| evt::EventRecord {
            event_id,
            event_type,
            severity: "info".into(),
            ts_unix_ms,
            msg_id,
            task_id,
            rpc_id,
            body,
        },
    )
}

fn events() -> impl Strategy<Value = Message> {
    prop_oneof![
        record().prop_map(|r| EventsMessage::Publish(evt::EvtPublish { event: Some(r) })),
        "[a-z]{0,6}".prop_map(|filter| EventsMessage::Subscribe(evt::EvtSubscribe { filter })),
        "[a-z]{0,6}".prop_map(
            |subscription_id| EventsMessage::Unsubscribe(evt::EvtUnsubscribe { subscription_id })
        ),
        prop::collection::vec(record(), 0..4)
            .prop_map(|events| EventsMessage::Batch(evt::EvtBatch { events })),
        ("[a-z]{0,6}", "[a-z]{0,6}")
            .prop_map(|(code, message)| EventsMessage::Err(evt::EvtErr { code, message })),
    ]
    .prop_map(Message::Events)
}

fn traceparent() -> impl Strategy<Value = String> {
    (
        "[0-9a-f]{31}[1-9a-f]",
        "[1-9a-f][0-9a-f]{15}",
        "[0-9a-f]{2}",
    )
        .prop_map(|(t, p, f)| format!("00-{t}-{p}-{f}"))
}

fn obs() -> impl Strategy<Value = Message> {
    prop_oneof![
        (traceparent(), "[a-z=,]{0,12}", opaque(), opaque(), opaque()).prop_map(
            |(traceparent, tracestate, msg_id, task_id, rpc_id)| {
                ObsMessage::Set(ob::ObsSet {
                    traceparent,
                    tracestate,
                    msg_id,
                    task_id,
                    rpc_id,
                })
            }
        ),
        any::<bool>().prop_map(|include_current| ObsMessage::Get(ob::ObsGet { include_current })),
        (prop::option::of((traceparent(), "[a-z=,]{0,12}")), opaque()).prop_map(|(tc, rpc_id)| {
            let (traceparent, tracestate) = tc.unwrap_or_default();
            ObsMessage::Doc(ob::ObsDoc {
                traceparent,
                tracestate,
                rpc_id,
                ..ob::ObsDoc::default()
            })
        }),
        ("[a-z]{0,6}", "[a-z]{0,6}")
            .prop_map(|(code, message)| ObsMessage::Err(ob::ObsErr { code, message })),
    ]
    .prop_map(Message::Obs)
}

fn artifact() -> impl Strategy<Value = Message> {
    prop_oneof![
        (text(), 1u64.., 0usize..3, opaque()).prop_map(|(artifact_id, total_size, a, metadata)| {
            let alg = HashAlg::ALL[a];
            ArtifactMessage::Offer(art::ArtOffer {
                artifact_id,
                total_size,
                hash_alg: alg.name().into(),
                hash: Bytes::from(vec![7; alg.digest_len()]),
                metadata,
            })
        }),
        (text(), 0u64..1000, 0u64..1000, any::<bool>()).prop_map(|(artifact_id, s, len, tok)| {
            ArtifactMessage::Get(if tok {
                art::ArtGet {
                    artifact_id,
                    resume_token: format!("t{s}"),
                    ..art::ArtGet::default()
                }
            } else {
                art::ArtGet {
                    artifact_id,
                    start: s,
                    end: if len == 0 { 0 } else { s + len },
                    resume_token: String::new(),
                }
            })
        }),
        (
            text(),
            any::<u64>(),
            any::<u64>(),
            id(),
            any::<bool>(),
            "[a-z0-9.]{0,8}"
        )
            .prop_map(
                |(artifact_id, chunk_index, offset, data, is_terminal, resume_token)| {
                    ArtifactMessage::Chunk(art::ArtChunk {
                        artifact_id,
                        chunk_index,
                        offset,
                        data,
                        is_terminal,
                        resume_token,
                    })
                }
            ),
        (text(), any::<u64>()).prop_map(|(artifact_id, chunk_index)| ArtifactMessage::Ack(
            art::ArtAck {
                artifact_id,
                chunk_index
            }
        )),
        ("[a-z]{0,6}", "[a-z]{0,6}", any::<bool>()).prop_map(|(code, message, retryable)| {
            ArtifactMessage::Err(art::ArtErr {
                code,
                message,
                retryable,
            })
        }),
    ]
    .prop_map(Message::Artifact)
}

fn state() -> impl Strategy<Value = Message> {
    prop_oneof![
        (id(), opaque(), prop::collection::vec(id(), 0..3), opaque()).prop_map(
            |(state_id, blob, parent_ids, metadata)| {
                StateMessage::Put(st::StatePut {
                    state_id,
                    blob,
                    parent_ids,
                    metadata,
                })
            }
        ),
        id().prop_map(|state_id| StateMessage::Get(st::StateGet { state_id })),
        (id(), opaque(), prop::collection::vec(id(), 0..3)).prop_map(
            |(state_id, delta, parent_ids)| {
                StateMessage::Delta(st::StateDelta {
                    state_id,
                    delta,
                    parent_ids,
                })
            }
        ),
        ("[a-z]{0,6}", "[a-z]{0,6}")
            .prop_map(|(code, message)| StateMessage::Err(st::StateErr { code, message })),
    ]
    .prop_map(Message::State)
}

fn cred() -> impl Strategy<Value = Message> {
    prop_oneof![
        (text(), id(), opaque()).prop_map(|(cred_type, credential, chain_id)| {
            CredMessage::Present(cr::CredPresent {
                cred_type,
                credential,
                chain_id,
            })
        }),
        (id(), id(), 1u64..u64::MAX).prop_map(|(chain_id, delegation, expires_at_unix_ms)| {
            CredMessage::Delegate(cr::CredDelegate {
                chain_id,
                delegation,
                expires_at_unix_ms,
            })
        }),
        (id(), "[a-z]{0,6}").prop_map(|(chain_id, reason)| CredMessage::Revoke(cr::CredRevoke {
            chain_id,
            reason
        })),
        ("[a-z]{0,6}", "[a-z]{0,6}")
            .prop_map(|(code, message)| CredMessage::Err(cr::CredErr { code, message })),
    ]
    .prop_map(Message::Cred)
}

fn policyhint() -> impl Strategy<Value = Message> {
    let constraint = (
        text(),
        text(),
        prop::sample::select(vec!["MUST", "SHOULD", "MAY"]),
        "[a-z/]{0,6}",
    )
        .prop_map(|(key, value, mode, scope_ref)| ph::Constraint {
            key,
            value,
            mode: mode.into(),
            scope_ref,
        });
    prop_oneof![
        prop::collection::vec(constraint, 0..4)
            .prop_map(|constraints| PolicyMessage::HintSet(ph::PolicyHintSet { constraints })),
        text().prop_map(|ack_id| PolicyMessage::HintAck(ph::PolicyHintAck { ack_id })),
        (text(), text(), text()).prop_map(|(key, scope_ref, reason_code)| {
            PolicyMessage::Violation(ph::PolicyViolation {
                key,
                scope_ref,
                reason_code,
            })
        }),
        ("[a-z]{0,6}", "[a-z]{0,6}")
            .prop_map(|(code, message)| PolicyMessage::Err(ph::PolicyErr { code, message })),
    ]
    .prop_map(Message::Policyhint)
}

fn agdisc() -> impl Strategy<Value = Message> {
    use swp_profiles::agdisc::AgdiscMessage;
    use swp_profiles::p1::pb::agdisc as ag;
    let name = || "[a-z]{1,6}";
    prop_oneof![
        (name(), "[a-z]{0,4}").prop_map(|(agent_id, if_none_match)| {
            AgdiscMessage::Get(ag::AgdiscGet {
                agent_id,
                if_none_match,
            })
        }),
        (name(), name(), id(), "[a-z]{0,4}", any::<u64>()).prop_map(
            |(agent_id, schema_revision, card_payload, etag, max_age_ms)| {
                AgdiscMessage::Doc(ag::AgdiscDoc {
                    agent_id,
                    schema_revision,
                    card_payload,
                    etag,
                    max_age_ms,
                })
            }
        ),
        (name(), name()).prop_map(|(agent_id, etag)| {
            AgdiscMessage::NotModified(ag::AgdiscNotModified { agent_id, etag })
        }),
        ("[a-z]{0,6}", "[a-z]{0,6}")
            .prop_map(|(code, message)| AgdiscMessage::Err(ag::AgdiscErr { code, message })),
    ]
    .prop_map(Message::Agdisc)
}

fn tooldisc() -> impl Strategy<Value = Message> {
    use swp_profiles::p1::pb::tooldisc as td;
    use swp_profiles::tooldisc::TooldiscMessage;
    let tool = || {
        (
            "[a-z]{1,6}",
            "[a-z]{1,6}",
            "[0-9]{1,3}",
            "[a-z]{1,6}",
            opaque(),
        )
            .prop_map(|(tool_id, name, version, path, descriptor_payload)| {
                td::ToolDescriptor {
                    tool_id,
                    name,
                    version,
                    schema_ref: format!("https://s.example/{path}"),
                    descriptor_payload,
                }
            })
    };
    prop_oneof![
        (any::<u32>(), "[a-z]{0,4}", "[a-z]{0,4}").prop_map(|(page_size, page_token, filter)| {
            TooldiscMessage::ListReq(td::TooldiscListReq {
                page_size,
                page_token,
                filter,
            })
        }),
        (prop::collection::vec(tool(), 0..3), "[a-z]{0,4}").prop_map(|(tools, next_page_token)| {
            TooldiscMessage::ListResp(td::TooldiscListResp {
                tools,
                next_page_token,
            })
        }),
        ("[a-z]{1,6}", "[0-9]{0,2}").prop_map(|(tool_id, version)| {
            TooldiscMessage::GetReq(td::TooldiscGetReq { tool_id, version })
        }),
        tool().prop_map(|t| TooldiscMessage::GetResp(td::TooldiscGetResp { tool: Some(t) })),
        ("[a-z]{0,6}", "[a-z]{0,6}")
            .prop_map(|(code, message)| TooldiscMessage::Err(td::TooldiscErr { code, message })),
    ]
    .prop_map(Message::Tooldisc)
}

fn any_message() -> impl Strategy<Value = Message> {
    prop_oneof![
        rpc(),
        events(),
        obs(),
        artifact(),
        state(),
        cred(),
        policyhint(),
        agdisc(),
        tooldisc()
    ]
}

fn assigned(profile: u64, t: u64) -> bool {
    (1..=if [10, 15, 16, 17, 18].contains(&profile) {
        4
    } else {
        5
    })
        .contains(&t)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// Every valid message survives encode then decode, in both forms.
    #[test]
    fn round_trip_in_both_forms(m in any_message()) {
        for form in FORMS {
            let b = m.encode(form);
            prop_assert_eq!(channel::decode(m.profile_id(), form, m.msg_type(), &b), Some(Ok(m.clone())));
        }
        // The wrapper is exactly the bare message as field msg_type.
        prop_assert_eq!(m.encode(P1Form::Wrapper), P1Form::Wrapper.frame(m.msg_type(), m.encode(P1Form::Message)));
    }

    /// Arbitrary octets never panic the decoders; the only msg_type refusal is for an
    /// unassigned one.
    #[test]
    fn decode_never_panics(p in 0usize..PROFILES.len(), t in 0u64..9, wrapper in any::<bool>(), bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let profile = PROFILES[p];
        let form = if wrapper { P1Form::Wrapper } else { P1Form::Message };
        match channel::decode(profile, form, t, &bytes) {
            Some(Err(e)) => prop_assert_eq!(e.code() == ErrorCode::UnsupportedMsgType, !assigned(profile, t)),
            Some(Ok(m)) => prop_assert!(assigned(profile, t) && m.msg_type() == t),
            None => prop_assert!(false, "profile {} not served", profile),
        }
    }
}

/// A profile the channel does not serve is refused at construction, not by panicking.
#[test]
fn other_profiles_are_not_served() {
    for p in [0, 1, 2, 20] {
        assert!(channel::decode(p, P1Form::Message, 1, b"").is_none(), "{p}");
        assert!(
            channel::Channel::new(p, &channel::Config::default()).is_none(),
            "{p}"
        );
    }
}
