//! Per-message cost of P1 decoding plus the state step, for each SWP-* profile of classes
//! C3 and C4, through `channel::Channel::feed` (what the codec testee calls; an endpoint
//! calls the same decode and step). Every machine runs at its default caps in a steady
//! state: new ids each iteration, so the tables are full and forget their oldest closed
//! entries as a long-lived channel would. Figures: docs/performance.md.
//!
//! ```sh
//! cargo bench -p swp-profiles --bench profiles -- --warm-up-time 1 --measurement-time 3
//! ```

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use prost::Message;
use swp_profiles::artifact::{self, source, HashAlg};
use swp_profiles::channel::{Channel, Config};
use swp_profiles::p1::pb::{artifact as art, events as evt, obs as ob, rpc as rp, state as st};
use swp_profiles::state::IdScheme;
use swp_profiles::P1Form;

fn channel(profile: u64, form: P1Form, tweak: impl FnOnce(&mut Config)) -> Channel {
    let mut c = Config {
        form,
        ..Config::default()
    };
    tweak(&mut c);
    Channel::new(profile, &c).expect("a served profile")
}

/// Call `n`: an `RPC_REQ` (16-octet rpc_id, 64-octet params, a key of its own when `key`)
/// and its `RPC_RESP`, framed in `form`.
fn rpc_pair(n: u64, form: P1Form, key: bool) -> (Vec<u8>, Vec<u8>) {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&n.to_le_bytes());
    let rpc_id = Bytes::copy_from_slice(&id);
    let req = rp::RpcReq {
        rpc_id: rpc_id.clone(),
        method: "org.example.echo".into(),
        params: Bytes::from_static(&[7; 64]),
        idempotency_key: if key {
            format!("key-{n}")
        } else {
            String::new()
        },
    };
    let resp = rp::RpcResp {
        rpc_id,
        result: Bytes::from_static(&[7; 64]),
    };
    (
        form.frame(1, req.encode_to_vec()),
        form.frame(2, resp.encode_to_vec()),
    )
}

/// RPC: a request (16-octet rpc_id, 64-octet params) and its response, 2 messages. The
/// payloads come from a pool of 16,384 calls, four times the call table: an rpc_id comes
/// back only after it was forgotten, and a key only after its window (1 s, one ms per call).
fn rpc(c: &mut Criterion) {
    const POOL: u64 = 16_384;
    let mut g = c.benchmark_group("rpc");
    // Every message must be accepted: a refusal would time the error path instead.
    let mut refused: u64 = 0;
    g.throughput(Throughput::Elements(2));
    for (name, form, key) in [
        ("req_resp", P1Form::Message, false),
        ("req_resp_wrapper", P1Form::Wrapper, false),
        ("req_resp_idempotency_key", P1Form::Message, true),
    ] {
        let pool: Vec<(Vec<u8>, Vec<u8>)> = (0..POOL).map(|n| rpc_pair(n, form, key)).collect();
        let mut ch = channel(12, form, |c| c.rpc.replay_window_ms = 1_000);
        let mut now: u64 = 0;
        g.bench_function(name, |b| {
            b.iter(|| {
                now += 1;
                let (q, r) = &pool[(now % POOL) as usize];
                refused += u64::from(ch.feed(now, "", 1, q).is_err());
                refused += u64::from(ch.feed(now, "", 2, r).is_err())
            })
        });
    }
    g.finish();
    assert_eq!(refused, 0, "a benchmarked message was refused");
}

/// RPC with a call table all but full of open calls (4,095 requests never answered, as a
/// peer holding slow calls open leaves it): each new call must find a closed one to forget.
/// Scanning the table for it cost 79 µs per request (issue 30, defect 6).
fn rpc_open_calls(c: &mut Criterion) {
    const POOL: u64 = 16_384;
    let mut g = c.benchmark_group("rpc");
    let mut refused: u64 = 0;
    g.throughput(Throughput::Elements(2));
    let call = |n: u64| rpc_pair(n, P1Form::Message, false);
    let mut ch = channel(12, P1Form::Message, |_| {});
    let open = swp_profiles::rpc::Config::default().max_calls as u64 - 1;
    for n in 0..open {
        refused += u64::from(ch.feed(0, "", 1, &call(POOL + n).0).is_err());
    }
    let pool: Vec<(Vec<u8>, Vec<u8>)> = (0..POOL).map(call).collect();
    let mut now: u64 = 0;
    g.bench_function("req_resp_beside_open_calls", |b| {
        b.iter(|| {
            now += 1;
            let (q, r) = &pool[(now % POOL) as usize];
            refused += u64::from(ch.feed(now, "", 1, q).is_err());
            refused += u64::from(ch.feed(now, "", 2, r).is_err())
        })
    });
    g.finish();
    assert_eq!(refused, 0, "a benchmarked message was refused");
}

/// EVENTS: 8,192 published events (about 130 octets each), a new event_id each time.
fn events(c: &mut Criterion) {
    let mut g = c.benchmark_group("events");
    // Every message must be accepted: a refusal would time the error path instead.
    let mut refused: u64 = 0;
    let payloads: Vec<Vec<u8>> = (0..8192u32)
        .map(|i| {
            evt::EvtPublish {
                event: Some(evt::EventRecord {
                    event_id: format!("evt-{i:08}"),
                    event_type: "org.example.tick".into(),
                    severity: "info".into(),
                    ts_unix_ms: 1_700_000_000_000 + u64::from(i),
                    msg_id: Bytes::new(),
                    task_id: Bytes::new(),
                    rpc_id: Bytes::from_static(b"rpc-0001"),
                    body: Bytes::from_static(&[b'x'; 64]),
                }),
            }
            .encode_to_vec()
        })
        .collect();
    g.throughput(Throughput::Elements(payloads.len() as u64));
    // Each pass re-publishes the same ids on a fresh channel, so every event is new; the
    // channel (with its 4,096-id table) is full after the first half, and forgets the
    // oldest id for each new one.
    g.bench_function("publish", |b| {
        b.iter_batched_ref(
            || channel(13, P1Form::Message, |_| {}),
            |ch| {
                for p in &payloads {
                    refused += u64::from(ch.feed(0, "", 1, p).is_err());
                }
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
    assert_eq!(refused, 0, "a benchmarked message was refused");
}

/// OBS: set, get, doc: 3 messages.
fn obs(c: &mut Criterion) {
    let mut g = c.benchmark_group("obs");
    // Every message must be accepted: a refusal would time the error path instead.
    let mut refused: u64 = 0;
    g.throughput(Throughput::Elements(3));
    let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let ts = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";
    let set = ob::ObsSet {
        traceparent: tp.into(),
        tracestate: ts.into(),
        rpc_id: Bytes::from_static(b"rpc-0001"),
        ..ob::ObsSet::default()
    }
    .encode_to_vec();
    let get = ob::ObsGet {
        include_current: true,
    }
    .encode_to_vec();
    let doc = ob::ObsDoc {
        traceparent: tp.into(),
        tracestate: ts.into(),
        rpc_id: Bytes::from_static(b"rpc-0001"),
        ..ob::ObsDoc::default()
    }
    .encode_to_vec();
    let mut ch = channel(18, P1Form::Message, |_| {});
    g.bench_function("set_get_doc", |b| {
        b.iter(|| {
            refused += u64::from(ch.feed(0, "", 1, &set).is_err());
            refused += u64::from(ch.feed(0, "", 2, &get).is_err());
            refused += u64::from(ch.feed(0, "", 3, &doc).is_err())
        })
    });
    g.finish();
    assert_eq!(refused, 0, "a benchmarked message was refused");
}

/// ARTIFACT: one chunk, hashed into the running digest, for two chunk sizes; the offer and
/// GET that start each transfer are included once per artifact.
fn artifact(c: &mut Criterion) {
    let mut g = c.benchmark_group("artifact");
    // Every message must be accepted: a refusal would time the error path instead.
    let mut refused: u64 = 0;
    for size in [256u64, 4096] {
        let data = Bytes::from((0..64 * size).map(|i| (i * 31) as u8).collect::<Vec<_>>());
        let offer = source::offer("a", &data, HashAlg::Sha256, Bytes::new()).encode_to_vec();
        let get = art::ArtGet {
            artifact_id: "a".into(),
            ..art::ArtGet::default()
        };
        let chunks: Vec<Vec<u8>> = source::serve("a", &data, size, &get)
            .expect("a valid range")
            .iter()
            .map(Message::encode_to_vec)
            .collect();
        let get = get.encode_to_vec();
        g.throughput(Throughput::Elements(chunks.len() as u64));
        g.bench_function(format!("chunks_{size}B"), |b| {
            b.iter_batched_ref(
                || {
                    channel(artifact::PROFILE_ID, P1Form::Message, |c| {
                        c.artifact.chunk_size = Some(size)
                    })
                },
                |ch| {
                    refused += u64::from(ch.feed(0, "", 1, &offer).is_err());
                    refused += u64::from(ch.feed(0, "", 2, &get).is_err());
                    for p in &chunks {
                        refused += u64::from(ch.feed(0, "", 3, p).is_err());
                    }
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
    assert_eq!(refused, 0, "a benchmarked message was refused");
}

/// STATE: 100 PUTs of 1 KiB blobs, each the child of the one before (id hashed and
/// checked, parent looked up), then 100 GETs.
fn state(c: &mut Criterion) {
    let mut g = c.benchmark_group("state");
    // Every message must be accepted: a refusal would time the error path instead.
    let mut refused: u64 = 0;
    let blobs: Vec<Bytes> = (0..100u8).map(|i| Bytes::from(vec![i; 1024])).collect();
    let ids: Vec<Bytes> = blobs
        .iter()
        .map(|b| IdScheme::Sha256.content_id(b))
        .collect();
    let puts: Vec<Vec<u8>> = blobs
        .iter()
        .enumerate()
        .map(|(i, blob)| {
            st::StatePut {
                state_id: ids[i].clone(),
                blob: blob.clone(),
                parent_ids: i
                    .checked_sub(1)
                    .map(|p| ids[p].clone())
                    .into_iter()
                    .collect(),
                metadata: Bytes::new(),
            }
            .encode_to_vec()
        })
        .collect();
    let gets: Vec<Vec<u8>> = ids
        .iter()
        .map(|id| {
            st::StateGet {
                state_id: id.clone(),
            }
            .encode_to_vec()
        })
        .collect();
    g.throughput(Throughput::Elements(100));
    g.bench_function("put_1KiB", |b| {
        b.iter_batched_ref(
            || channel(17, P1Form::Message, |_| {}),
            |ch| {
                for p in &puts {
                    refused += u64::from(ch.feed(0, "", 1, p).is_err());
                }
            },
            BatchSize::PerIteration,
        )
    });
    let mut full = channel(17, P1Form::Message, |_| {});
    for p in &puts {
        full.feed(0, "", 1, p).expect("a valid chain");
    }
    g.bench_function("get_found", |b| {
        b.iter(|| {
            for p in &gets {
                refused += u64::from(full.feed(0, "", 2, p).is_err());
            }
        })
    });
    g.finish();
    assert_eq!(refused, 0, "a benchmarked message was refused");
}

/// RELAY: a delivery (16-octet delivery_id, 64-octet payload) published by the relay and
/// acknowledged by the consumer, 2 messages, on a fresh channel per pass of 8,192 deliveries:
/// the 4,096-delivery table is full after the first half and forgets its oldest settled
/// delivery for each new one.
fn relay(c: &mut Criterion) {
    use swp_profiles::p1::pb::relay as rl;
    let mut g = c.benchmark_group("relay");
    // Every message must be accepted: a refusal would time the error path instead.
    let mut refused: u64 = 0;
    let pairs: Vec<(Vec<u8>, Vec<u8>)> = (0..8192u32)
        .map(|i| {
            let delivery_id = Bytes::from(format!("delivery-{i:07}"));
            (
                rl::RelayPublish {
                    delivery_id: delivery_id.clone(),
                    topic: "org.example.orders".into(),
                    payload: Bytes::from_static(&[b'x'; 64]),
                    ttl_ms: 60_000,
                }
                .encode_to_vec(),
                rl::RelayAck { delivery_id }.encode_to_vec(),
            )
        })
        .collect();
    g.throughput(Throughput::Elements(2 * pairs.len() as u64));
    g.bench_function("publish_ack", |b| {
        b.iter_batched_ref(
            || channel(19, P1Form::Message, |_| {}),
            |ch| {
                for (p, a) in &pairs {
                    refused += u64::from(ch.feed(0, "relay", 1, p).is_err());
                    refused += u64::from(ch.feed(0, "consumer", 2, a).is_err());
                }
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
    assert_eq!(refused, 0, "a benchmarked message was refused");
}

/// CRED: on a fresh channel, 64 chains each opened by a `sub=<identity>` credential bound
/// to the channel's identity and extended by the maximum of 4 delegations (type, binding,
/// expiry and length checked): 320 messages.
fn cred(c: &mut Criterion) {
    use swp_profiles::p1::pb::cred as cr;
    const ME: &str = "spiffe://swp-conform.test/harness-client";
    let mut g = c.benchmark_group("cred");
    // Every message must be accepted: a refusal would time the error path instead.
    let mut refused: u64 = 0;
    let mut msgs: Vec<(u64, Vec<u8>)> = Vec::new();
    for i in 0..64u32 {
        let chain_id = Bytes::from(format!("chain-{i:04}").into_bytes());
        msgs.push((
            1,
            cr::CredPresent {
                cred_type: swp_profiles::cred::SUBJECT_TYPE.into(),
                credential: Bytes::from(format!("sub={ME}").into_bytes()),
                chain_id: chain_id.clone(),
            }
            .encode_to_vec(),
        ));
        for d in 0..4u32 {
            msgs.push((
                2,
                cr::CredDelegate {
                    chain_id: chain_id.clone(),
                    delegation: Bytes::from(vec![d as u8; 64]),
                    expires_at_unix_ms: 1_000 + 600_000,
                }
                .encode_to_vec(),
            ));
        }
    }
    g.throughput(Throughput::Elements(msgs.len() as u64));
    g.bench_function("present_delegate", |b| {
        b.iter_batched_ref(
            || channel(15, P1Form::Message, |_| {}),
            |ch| {
                for (t, p) in &msgs {
                    refused += u64::from(ch.feed(1_000, ME, *t, p).is_err());
                }
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
    assert_eq!(refused, 0, "a benchmarked message was refused");
}

/// POLICYHINT: a set of 4 constraints (keys known, two scopes, one conflict resolved) on a
/// channel that already holds them: each set replaces the constraints in effect.
fn policyhint(c: &mut Criterion) {
    use swp_profiles::p1::pb::policyhint as ph;
    let mut g = c.benchmark_group("policyhint");
    let mut refused: u64 = 0;
    let constraint = |key: &str, value: &str, mode: &str, scope: &str| ph::Constraint {
        key: key.into(),
        value: value.into(),
        mode: mode.into(),
        scope_ref: scope.into(),
    };
    let set = ph::PolicyHintSet {
        constraints: vec![
            constraint("swp.test.region", "mars", "MUST", ""),
            constraint("swp.test.region", "eu", "MUST", ""),
            constraint("swp.test.region", "eu", "SHOULD", "tenant-7"),
            constraint("swp.test.other", "1", "MAY", "tenant-7"),
        ],
    }
    .encode_to_vec();
    let mut ch = channel(16, P1Form::Message, |c| {
        c.policyhint = swp_profiles::policyhint::Config::lenient();
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("hint_set_4", |b| {
        b.iter(|| refused += u64::from(ch.feed(0, "", 1, &set).is_err()))
    });
    g.finish();
    assert_eq!(refused, 0, "a benchmarked message was refused");
}

criterion_group!(
    benches,
    rpc,
    rpc_open_calls,
    events,
    obs,
    artifact,
    state,
    relay,
    cred,
    policyhint
);
criterion_main!(benches);
