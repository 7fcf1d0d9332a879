//! Broken SWP-* endpoints, to prove the rpc, events, obs, artifact and state vectors catch
//! what they claim to: a proxy on stdio in front of the reference endpoint (`swp-ref serve
//! --listen stdio`, with a 1 s RPC replay window) that breaks one requirement per mode, as a
//! faulty implementation would. Two modes per profile, one breaking what the endpoint emits
//! and one breaking what it accepts, where the profile has both:
//!
//! | mode | what breaks | requirement |
//! |---|---|---|
//! | `rpc-item-after-terminal` | a streamed call gets one more stream item after its response | RPC-002 |
//! | `rpc-ignore-idempotency` | the idempotency key is dropped on the way in, so replays run again and conflicts are served | RPC-008, RPC-009, CORE-019 |
//! | `events-batch-reorder` | the events of every batch the endpoint sends come in reverse order | EVENTS-013 |
//! | `events-accept-incomplete` | a published event missing a required field is swallowed, not rejected | EVENTS-016 |
//! | `obs-accept-invalid-traceparent` | an OBS_SET with an invalid traceparent is swallowed, not rejected | OBS-006 |
//! | `obs-mutate-tracestate` | the tracestate of every OBS_DOC comes back with its entries reversed | OBS-003, OBS-007 |
//! | `artifact-reorder-chunks` | the second and third chunk of every transfer swap places | ARTIFACT-008 |
//! | `artifact-accept-corrupt` | the reject of a transfer whose octets miss the offered hash is swallowed | ARTIFACT-010 |
//! | `artifact-resume-late` | a GET by resume token resumes one chunk past the point the token names | ARTIFACT-005, ARTIFACT-011 |
//! | `state-alter-answer` | a stored blob comes back from STATE_GET with one octet changed | STATE-005 |
//! | `state-accept-missing-parent` | the reject of a state naming a parent not held is swallowed | STATE-003 |
//! | `cred-accept-expired` | the reject of a delegation that expired, or extends an expired chain, is swallowed | CRED-006 |
//! | `cred-unbounded-chain` | the reject of a delegation past the maximum chain length is swallowed | CRED-002, CRED-005 |
//! | `cred-ignore-revoke` | CRED_REVOKE is dropped on the way in, so a revoked chain stays usable | CRED-010 |
//! | `policyhint-every-mode-must` | every constraint's mode becomes MUST on the way in, so advice binds | POLICYHINT-007 |
//! | `policyhint-first-wins` | the constraints of every set are reversed on the way in, so the earlier of two disagreeing ones wins against the declared rule | POLICYHINT-006, POLICYHINT-007 |
//! | `agdisc-alter-card` | the card octets of every AGDISC_DOC come back with one octet changed | AGDISC-006, AGDISC-012 |
//! | `agdisc-accept-no-revision` | the reject of a card without a schema revision is swallowed | AGDISC-011 |
//! | `agdisc-not-modified-any` | a GET with any validator is answered not-modified | AGDISC-007 |
//! | `tooldisc-drop-page-token` | every listing page comes without its next_page_token, so the listing stops after one page | TOOLDISC-008 |
//! | `tooldisc-accept-bad-schema-ref` | the reject of a descriptor whose schema reference is invalid is swallowed | TOOLDISC-011 |
//! | `tooldisc-ignore-version` | a GET's version selector is dropped on the way in, so the default version answers | TOOLDISC-009, TOOLDISC-013 |
//! | `relay-ignore-dedupe` | a RELAY_PUBLISH repeating a delivery_id reaches the relay under a fresh one, so duplicates are delivered | RELAY-005, CORE-020 |
//! | `relay-accept-missing-id` | a RELAY_PUBLISH without a delivery_id is swallowed, not rejected | RELAY-009 |
//! | `relay-dead-letter-unknown-reason` | every dead letter carries a reason outside the declared set | RELAY-008 |
//!
//! Two modes are not broken. `cred-err-replies` refuses SWP-CRED frames with a `CRED_ERR`
//! carrying the canonical code instead of an error frame (what a manifest declares with
//! `reject_signal.profile_errors`). `relay-ack-publisher` sends the publisher a RELAY_ACK for each
//! delivery_id before its first delivery, the other reading of swp-relay §5 (SI-P19-2),
//! which every relay vector must pass unless the manifest declares `RELAY_PUBLISHER_ACK: 0`.
//!
//! `none` relays unchanged. Usage: `badswp MODE SWP_REF`. Payloads are the bare P1 message
//! (the manifest declares `p1_payload: message`).

use bytes::Bytes;
use prost::Message;
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use swp_core::frame::FrameDecoder;
use swp_core::{e1, Envelope, Limits};
use swp_profiles::p1::pb::{
    agdisc, artifact, cred, events, obs, policyhint, relay, rpc, state, tooldisc,
};

#[derive(Default)]
struct Shared {
    /// msg_ids of client frames whose error frame is swallowed when its text has the
    /// marker.
    swallow: HashMap<Vec<u8>, &'static str>,
    /// rpc_ids that got stream items from the endpoint.
    streamed: HashSet<Vec<u8>>,
    /// The chunk held back to swap with the next one, per artifact.
    held: Option<Envelope>,
    /// Chunks relayed per transfer (reset by each offer).
    chunks_seen: u64,
    /// delivery_ids published so far, and how often.
    published: HashMap<Vec<u8>, u32>,
    /// delivery_ids the relay's publisher was sent a RELAY_ACK for (`relay-ack-publisher`).
    publisher_acked: HashSet<Vec<u8>>,
    /// msg_ids of the client's SWP-CRED frames (`cred-err-replies`).
    cred_frames: HashSet<Vec<u8>>,
}

fn frames(dec: &mut FrameDecoder, limits: &Limits) -> Vec<Envelope> {
    let mut out = Vec::new();
    while let Ok(Some(body)) = dec.next_body() {
        if let Ok(env) = e1::decode(&body, limits) {
            out.push(env);
        }
    }
    out
}

fn bytes_of(env: &Envelope) -> Vec<u8> {
    e1::frame_bytes(env).map(|b| b.to_vec()).unwrap_or_default()
}

fn with_payload(env: &Envelope, payload: Vec<u8>) -> Envelope {
    Envelope {
        payload: Bytes::from(payload),
        ..env.clone()
    }
}

/// What the endpoint sends, changed per mode; `None` drops it (held back).
fn outbound(mode: &str, env: Envelope, s: &mut Shared) -> Vec<Envelope> {
    match (mode, env.profile_id, env.msg_type) {
        ("rpc-item-after-terminal", 12, 4) => {
            if let Ok(i) = rpc::RpcStreamItem::decode(&env.payload[..]) {
                s.streamed.insert(i.rpc_id.to_vec());
            }
            vec![env]
        }
        ("rpc-item-after-terminal", 12, 2) => {
            let Ok(r) = rpc::RpcResp::decode(&env.payload[..]) else {
                return vec![env];
            };
            if !s.streamed.remove(&r.rpc_id[..]) {
                return vec![env];
            }
            let late = rpc::RpcStreamItem {
                rpc_id: r.rpc_id.clone(),
                seq_no: 1_000,
                item: Bytes::from_static(b"late"),
                is_terminal: false,
            };
            let mut extra = with_payload(&env, late.encode_to_vec());
            extra.msg_type = 4;
            extra.msg_id = Bytes::from_static(b"badswp-late-0001");
            vec![env, extra]
        }
        ("events-batch-reorder", 13, 4) => match events::EvtBatch::decode(&env.payload[..]) {
            Ok(mut b) => {
                b.events.reverse();
                vec![with_payload(&env, b.encode_to_vec())]
            }
            Err(_) => vec![env],
        },
        ("obs-mutate-tracestate", 18, 3) => match obs::ObsDoc::decode(&env.payload[..]) {
            Ok(mut d) if d.tracestate.contains(',') => {
                let mut parts: Vec<&str> = d.tracestate.split(',').collect();
                parts.reverse();
                d.tracestate = parts.join(",");
                vec![with_payload(&env, d.encode_to_vec())]
            }
            _ => vec![env],
        },
        ("artifact-reorder-chunks", 14, 1) => {
            s.chunks_seen = 0;
            vec![env]
        }
        ("artifact-reorder-chunks", 14, 3) => {
            s.chunks_seen += 1;
            match s.chunks_seen {
                // The second chunk waits for the third, which goes first.
                2 => {
                    let is_last =
                        artifact::ArtChunk::decode(&env.payload[..]).is_ok_and(|c| c.is_terminal);
                    if is_last {
                        vec![env]
                    } else {
                        s.held = Some(env);
                        Vec::new()
                    }
                }
                3 => {
                    let mut out = vec![env];
                    out.extend(s.held.take());
                    out
                }
                _ => vec![env],
            }
        }
        ("state-alter-answer", 17, 1) => match state::StatePut::decode(&env.payload[..]) {
            Ok(mut p) if !p.blob.is_empty() => {
                let mut b = p.blob.to_vec();
                b[0] ^= 0x01;
                p.blob = Bytes::from(b);
                vec![with_payload(&env, p.encode_to_vec())]
            }
            _ => vec![env],
        },
        ("cred-err-replies", 1, 2) if s.cred_frames.remove(&env.msg_id[..]) => {
            let v: serde_json::Value = serde_json::from_slice(&env.payload).unwrap_or_default();
            let code = v
                .pointer("/error/data/swp_error")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let e = cred::CredErr {
                code,
                message: "refused".into(),
            };
            vec![Envelope {
                profile_id: 15,
                msg_type: 4,
                ..with_payload(&env, e.encode_to_vec())
            }]
        }
        ("relay-ack-publisher", 19, 1) => match relay::RelayPublish::decode(&env.payload[..]) {
            Ok(p) if s.publisher_acked.insert(p.delivery_id.to_vec()) => {
                let ack = relay::RelayAck {
                    delivery_id: p.delivery_id.clone(),
                };
                let mut msg_id = b"badswp-ack-".to_vec();
                msg_id.extend_from_slice(&p.delivery_id);
                let ack = Envelope {
                    msg_id: Bytes::from(msg_id),
                    msg_type: 2,
                    ..with_payload(&env, ack.encode_to_vec())
                };
                vec![ack, env]
            }
            _ => vec![env],
        },
        ("agdisc-alter-card", 10, 2) => match agdisc::AgdiscDoc::decode(&env.payload[..]) {
            Ok(mut d) if !d.card_payload.is_empty() => {
                let mut b = d.card_payload.to_vec();
                b[0] ^= 0x01;
                d.card_payload = Bytes::from(b);
                vec![with_payload(&env, d.encode_to_vec())]
            }
            _ => vec![env],
        },
        ("tooldisc-drop-page-token", 11, 2) => {
            match tooldisc::TooldiscListResp::decode(&env.payload[..]) {
                Ok(mut p) if !p.next_page_token.is_empty() => {
                    p.next_page_token.clear();
                    vec![with_payload(&env, p.encode_to_vec())]
                }
                _ => vec![env],
            }
        }
        ("relay-dead-letter-unknown-reason", 19, 3) => {
            match relay::RelayNack::decode(&env.payload[..]) {
                Ok(mut n) if !n.retryable => {
                    n.reason_code = "gremlins".into();
                    vec![with_payload(&env, n.encode_to_vec())]
                }
                _ => vec![env],
            }
        }
        _ => vec![env],
    }
}

/// What the client sends, changed per mode: `None` swallows it (as if accepted).
fn inbound(mode: &str, env: Envelope, s: &mut Shared) -> Option<Envelope> {
    match (mode, env.profile_id, env.msg_type) {
        ("rpc-ignore-idempotency", 12, 1) => match rpc::RpcReq::decode(&env.payload[..]) {
            Ok(mut r) if !r.idempotency_key.is_empty() => {
                r.idempotency_key.clear();
                Some(with_payload(&env, r.encode_to_vec()))
            }
            _ => Some(env),
        },
        ("events-accept-incomplete", 13, 1) => {
            let incomplete =
                swp_profiles::events::decode(swp_profiles::P1Form::Message, 1, &env.payload)
                    .is_err();
            (!incomplete).then_some(env)
        }
        ("obs-accept-invalid-traceparent", 18, 1) => {
            let invalid = obs::ObsSet::decode(&env.payload[..]).is_ok_and(|x| {
                swp_profiles::obs::trace::parse_traceparent(&x.traceparent).is_err()
            });
            (!invalid).then_some(env)
        }
        ("artifact-resume-late", 14, 2) => {
            use swp_profiles::artifact::chunking::{parse_resume_token, resume_token};
            let Ok(mut g) = artifact::ArtGet::decode(&env.payload[..]) else {
                return Some(env);
            };
            let Some(mut p) = parse_resume_token(&g.artifact_id, &g.resume_token) else {
                return Some(env);
            };
            // The reference's chunks are 4,096 octets; one chunk on, if any is left.
            if p.next_offset + 4096 < p.end {
                p.next_index += 1;
                p.next_offset += 4096;
                g.resume_token = resume_token(&g.artifact_id, &p);
            }
            Some(with_payload(&env, g.encode_to_vec()))
        }
        ("artifact-accept-corrupt", 14, 3) => {
            s.swallow.insert(env.msg_id.to_vec(), "offered hash");
            Some(env)
        }
        ("agdisc-accept-no-revision", 10, 2) => {
            s.swallow.insert(env.msg_id.to_vec(), "schema_revision");
            Some(env)
        }
        ("agdisc-not-modified-any", 10, 1) => match agdisc::AgdiscGet::decode(&env.payload[..]) {
            // Any validator is taken for the card's own, so the answer is always
            // not-modified (the reference's etag, docs/profiles.md).
            Ok(mut g) if !g.if_none_match.is_empty() => {
                g.if_none_match = "\"d9b5a602b830d011\"".into();
                Some(with_payload(&env, g.encode_to_vec()))
            }
            _ => Some(env),
        },
        ("tooldisc-accept-bad-schema-ref", 11, 2 | 4) => {
            s.swallow.insert(env.msg_id.to_vec(), "content hash");
            Some(env)
        }
        ("tooldisc-ignore-version", 11, 3) => {
            match tooldisc::TooldiscGetReq::decode(&env.payload[..]) {
                Ok(mut g) if !g.version.is_empty() => {
                    g.version.clear();
                    Some(with_payload(&env, g.encode_to_vec()))
                }
                _ => Some(env),
            }
        }
        ("state-accept-missing-parent", 17, 1 | 3) => {
            s.swallow.insert(env.msg_id.to_vec(), "does not exist");
            Some(env)
        }
        ("cred-accept-expired", 15, 2) => {
            s.swallow.insert(env.msg_id.to_vec(), "expired at");
            Some(env)
        }
        ("cred-unbounded-chain", 15, 2) => {
            s.swallow.insert(env.msg_id.to_vec(), "maximum of");
            Some(env)
        }
        ("cred-ignore-revoke", 15, 3) => None,
        ("policyhint-every-mode-must", 16, 1) => {
            match policyhint::PolicyHintSet::decode(&env.payload[..]) {
                Ok(mut h) => {
                    for c in &mut h.constraints {
                        if c.mode == "SHOULD" || c.mode == "MAY" {
                            c.mode = "MUST".into();
                        }
                    }
                    Some(with_payload(&env, h.encode_to_vec()))
                }
                Err(_) => Some(env),
            }
        }
        ("policyhint-first-wins", 16, 1) => {
            match policyhint::PolicyHintSet::decode(&env.payload[..]) {
                Ok(mut h) => {
                    h.constraints.reverse();
                    Some(with_payload(&env, h.encode_to_vec()))
                }
                Err(_) => Some(env),
            }
        }
        ("relay-ignore-dedupe", 19, 1) => match relay::RelayPublish::decode(&env.payload[..]) {
            Ok(mut p) if !p.delivery_id.is_empty() => {
                let n = s.published.entry(p.delivery_id.to_vec()).or_insert(0);
                *n += 1;
                if *n == 1 {
                    return Some(env);
                }
                let mut id = p.delivery_id.to_vec();
                id.extend_from_slice(format!("#{n}").as_bytes());
                p.delivery_id = Bytes::from(id);
                Some(with_payload(&env, p.encode_to_vec()))
            }
            _ => Some(env),
        },
        ("cred-err-replies", 15, _) => {
            s.cred_frames.insert(env.msg_id.to_vec());
            Some(env)
        }
        ("relay-accept-missing-id", 19, 1) => {
            let missing = relay::RelayPublish::decode(&env.payload[..])
                .is_ok_and(|p| p.delivery_id.is_empty());
            (!missing).then_some(env)
        }
        _ => Some(env),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(mode), Some(swp_ref)) = (args.next(), args.next()) else {
        eprintln!("usage: badswp MODE SWP_REF (modes: see the module documentation)");
        std::process::exit(2);
    };
    let Ok(mut child) = Command::new(&swp_ref)
        .args([
            "serve",
            "--listen",
            "stdio",
            "--rpc-replay-window-ms",
            "1000",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    else {
        eprintln!("badswp: cannot start {swp_ref}");
        std::process::exit(2);
    };
    let (Some(mut to_sut), Some(mut from_sut)) = (child.stdin.take(), child.stdout.take()) else {
        std::process::exit(2);
    };
    let shared: Arc<Mutex<Shared>> = Arc::default();
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let limits = Limits::default();
    let mode = Arc::new(mode);

    // SUT → client.
    let (sh, o, m) = (shared.clone(), out.clone(), mode.clone());
    let pump = std::thread::spawn(move || {
        let mut dec = FrameDecoder::new(limits);
        let mut chunk = vec![0u8; 65536];
        loop {
            let n = match from_sut.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            dec.feed(&chunk[..n]);
            for env in frames(&mut dec, &limits) {
                let mut s = sh.lock().unwrap_or_else(|p| p.into_inner());
                if env.profile_id == 1 {
                    if let Some(marker) = s.swallow.remove(&env.msg_id[..]) {
                        if String::from_utf8_lossy(&env.payload).contains(marker) {
                            continue;
                        }
                    }
                }
                let sent = outbound(&m, env, &mut s);
                drop(s);
                let mut w = o.lock().unwrap_or_else(|p| p.into_inner());
                for e in sent {
                    let _ = w.write_all(&bytes_of(&e));
                }
                let _ = w.flush();
            }
        }
    });

    // Client → SUT.
    let mut dec = FrameDecoder::new(limits);
    let mut chunk = vec![0u8; 65536];
    let mut stdin = std::io::stdin().lock();
    'read: loop {
        let n = match stdin.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        dec.feed(&chunk[..n]);
        for env in frames(&mut dec, &limits) {
            let mut s = shared.lock().unwrap_or_else(|p| p.into_inner());
            let fwd = inbound(&mode, env, &mut s);
            drop(s);
            if let Some(e) = fwd {
                if to_sut
                    .write_all(&bytes_of(&e))
                    .and_then(|()| to_sut.flush())
                    .is_err()
                {
                    break 'read;
                }
            }
        }
    }
    drop(to_sut);
    let _ = pump.join();
    let _ = child.wait();
}
