//! Hostile clients against the SWP-* test agents of the real `swp-ref serve` (issue 30): a
//! peer that sends the input a profile's machine does the most work for, or that fills the
//! state a profile keeps per connection. Each test drives the release or debug binary over
//! TCP on 127.0.0.1, measures the server from `/proc` (CPU ticks, RSS), and checks that a
//! fresh client is still answered promptly.

#[path = "hostile/support.rs"]
#[expect(
    dead_code,
    reason = "the support of tests/hostile.rs, of which these tests use a part"
)]
mod support;

use bytes::Bytes;
use prost::Message;
use std::io::Write;
use std::time::{Duration, Instant};
use support::*;
use swp_core::{e1, Envelope};
use swp_profiles::p1::pb::policyhint::{Constraint, PolicyHintSet};

/// One frame of `profile_id`, carrying a binary P1 payload.
fn profile_frame(profile_id: u64, msg_type: u64, msg_id: &[u8], payload: Vec<u8>) -> Vec<u8> {
    let env = Envelope {
        version: 1,
        profile_id,
        msg_type,
        msg_id: Bytes::copy_from_slice(msg_id),
        payload: Bytes::from(payload),
        ..Envelope::default()
    };
    e1::frame_bytes(&env).unwrap().to_vec()
}

/// How long a fresh client waits for the answer to a ping, from its connect.
fn fresh_ping(port: u16) -> Duration {
    let t0 = Instant::now();
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(DEADLINE)).unwrap();
    c.write_all(&request(b"ping-000000000001", "1", "ping", "{}"))
        .unwrap();
    let r = read_frame(&mut c).unwrap().expect("an answer to the ping");
    assert_eq!(&r.msg_id[..], b"ping-000000000001");
    t0.elapsed()
}

/// A POLICY_HINT_SET of 120k constraints (4.3 MB), each on a scope of its own, so that no
/// two collapse.
fn huge_policy_set() -> Vec<u8> {
    PolicyHintSet {
        constraints: (0..120_000)
            .map(|i| Constraint {
                key: "swp.test.region".into(),
                value: "eu".into(),
                mode: "MUST".into(),
                scope_ref: format!("scope-{i}"),
            })
            .collect(),
    }
    .encode_to_vec()
}

/// A huge POLICY_HINT_SET ([`huge_policy_set`]): the set is refused before any work, costs next to no CPU, and a fresh client
/// is answered within 100 ms while two such sets arrive. Before, the constraints were
/// compared pairwise: 60k took 16 s of CPU, and two sets wedged the server.
#[test]
fn a_huge_policy_hint_set_costs_no_cpu_and_wedges_nothing() {
    let s = Proc::start(
        "policyhint-quadratic",
        &["serve", "--listen", "tcp://127.0.0.1:0"],
        None,
    );
    let payload = huge_policy_set();
    assert!(payload.len() > 2_000_000, "{}", payload.len());
    let mut c = s.connect();
    let cpu0 = s.cpu_ticks();
    for n in 0..2u8 {
        let id = format!("policy-set-00000{n}");
        c.write_all(&profile_frame(16, 1, id.as_bytes(), payload.clone()))
            .unwrap();
        let took = fresh_ping(s.port);
        assert!(
            took < Duration::from_millis(100),
            "a fresh client waited {took:?} while set {n} was handled"
        );
        let r = read_frame(&mut c).unwrap().expect("an answer to the set");
        // Refused as a quota (the cap is the table's: 256 constraints).
        assert!(
            String::from_utf8_lossy(&r.payload).contains("ERR_RATE_LIMIT_EXCEEDED"),
            "{r:?}"
        );
    }
    // Reading, scanning and refusing 2 × 4.3 MB: a release build used 1 tick of 10 ms for
    // both, a debug build 4 (decoding them before the scan took 10 and 35). The bound
    // leaves room for a debug build on a loaded machine and still catches a decode, let
    // alone the pairwise check (1,640 ticks for half of one set).
    let cpu = s.cpu_ticks() - cpu0;
    assert!(cpu <= 25, "the server used {cpu} ticks of CPU for two sets");
}

/// The flag set of issue 30, whose documented ceiling is 16 MiB + 8 × 40 KiB + 8 MiB.
const TIGHT: [&str; 6] = [
    "--max-connections",
    "8",
    "--memory-budget",
    "8MiB",
    "--conn-memory",
    "8MiB",
];
const CEILING_KIB: u64 = 16 * 1024 + 8 * 40 + 8 * 1024;

/// The ceiling the server under test is held to. The documented ceiling is for release
/// builds; cargo's own binary is a debug build when this test is, whose code and
/// unoptimised buffers take more (11.3 MiB at start against 6.3 MiB; 28 MiB after the state
/// flood below, which a release build passes under the documented ceiling). `SWP_REF_BIN`
/// names a release build to hold it to the documented figure.
fn ceiling_kib() -> u64 {
    CEILING_KIB + if debug_build() { 8 * 1024 } else { 0 }
}

/// Whether the server under test is cargo's debug build.
fn debug_build() -> bool {
    cfg!(debug_assertions) && std::env::var_os("SWP_REF_BIN").is_none()
}

/// Messages whose identifier a profile keeps per connection, each with a 1 MiB identifier:
/// before the cap, forty of them made the server hold 175-375 MiB.
fn long_id_messages() -> Vec<(&'static str, u64, u64, Vec<u8>)> {
    use swp_profiles::p1::pb::{artifact, cred, events, relay, rpc};
    let id = || bytes::Bytes::from(vec![b'i'; 1 << 20]);
    let text = || "i".repeat(1 << 20);
    vec![
        (
            "RELAY_PUBLISH delivery_id",
            19,
            1,
            relay::RelayPublish {
                delivery_id: id(),
                topic: "t".into(),
                payload: bytes::Bytes::from_static(b"x"),
                ttl_ms: 60_000,
            }
            .encode_to_vec(),
        ),
        (
            "ART_OFFER artifact_id",
            14,
            1,
            artifact::ArtOffer {
                artifact_id: text(),
                total_size: 1,
                hash_alg: "sha-256".into(),
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (
            "EVT_PUBLISH event_id",
            13,
            1,
            events::EvtPublish {
                event: Some(events::EventRecord {
                    event_id: text(),
                    event_type: "t".into(),
                    ..Default::default()
                }),
            }
            .encode_to_vec(),
        ),
        (
            "CRED_REVOKE chain_id",
            15,
            3,
            cred::CredRevoke {
                chain_id: id(),
                reason: "r".into(),
            }
            .encode_to_vec(),
        ),
        (
            "RPC_REQ rpc_id",
            12,
            1,
            rpc::RpcReq {
                rpc_id: id(),
                method: "swp.test.echo".into(),
                ..Default::default()
            }
            .encode_to_vec(),
        ),
    ]
}

/// Forty messages of each kind with a 1 MiB identifier, from one client under the tight
/// flags: each is refused as a quota, the server stays under the documented ceiling, and a
/// fresh client is answered within 100 ms.
#[test]
fn long_identifiers_are_refused_and_hold_no_memory() {
    let mut args = vec!["serve", "--listen", "tcp://127.0.0.1:0"];
    args.extend(TIGHT);
    let s = Proc::start("profile-long-ids", &args, None);
    let mut c = s.connect();
    for (what, profile, msg_type, payload) in long_id_messages() {
        for n in 0..40u32 {
            let id = format!("long-id-{profile}-{n:06}");
            c.write_all(&profile_frame(
                profile,
                msg_type,
                id.as_bytes(),
                payload.clone(),
            ))
            .unwrap();
            let r = read_frame(&mut c)
                .unwrap()
                .unwrap_or_else(|| panic!("{what}: the connection closed"));
            assert!(
                String::from_utf8_lossy(&r.payload).contains("ERR_RATE_LIMIT_EXCEEDED"),
                "{what}: {r:?}"
            );
        }
        let rss = s.rss_kib();
        assert!(rss < ceiling_kib(), "{what}: RSS {rss} KiB");
        let took = fresh_ping(s.port);
        assert!(took < Duration::from_millis(100), "{what}: {took:?}");
    }
}

/// An idle connection costs what the docs budget (40 KiB), not a copy of every agent's
/// fixtures: each connection made its own 100,000-octet ARTIFACT test blob, 116 KiB per
/// idle connection in all (issue 30, defect 6); shared, it is about 20 KiB.
#[test]
fn an_idle_connection_costs_less_than_its_budget() {
    let s = Proc::start(
        "idle-cost",
        &["serve", "--listen", "tcp://127.0.0.1:0"],
        None,
    );
    // Warm up: the first connection makes what every later one shares.
    fresh_ping(s.port);
    let before = s.rss_kib();
    let idle: Vec<std::net::TcpStream> = (0..400).map(|_| s.connect()).collect();
    // The server holds a connection once it has accepted it and built its agent: a ping on
    // a fresh connection is answered after every earlier accept.
    fresh_ping(s.port);
    wait_until("the idle connections are held", || s.fd_count() >= 400);
    let each = (s.rss_kib().saturating_sub(before)) / 400;
    assert!(each < 40, "an idle connection costs {each} KiB");
    drop(idle);
}

/// Six peers each send 32 KiB of `ART_GET`s of the 100,000-octet test blob (about 800
/// requests, each answered with 26 messages, 2,000 times its size) and never read: the
/// server takes a connection's next request only once the replies before it are written
/// (`endpoint::connection::OUTPUT_ALLOWANCE`), so it holds well under 1 MiB per peer instead of
/// every reply (406 MiB before, issue 30 defect 3), and a fresh client is answered.
#[test]
fn replies_to_a_peer_that_never_reads_are_bounded_by_the_allowance() {
    use swp_profiles::p1::pb::artifact::ArtGet;
    let mut args = vec!["serve", "--listen", "tcp://127.0.0.1:0"];
    args.extend(TIGHT);
    let s = Proc::start("never-reads", &args, None);
    let get = ArtGet {
        artifact_id: "swp.test.blob".into(),
        ..ArtGet::default()
    }
    .encode_to_vec();
    let mut flood = Vec::new();
    let mut n = 0u32;
    while flood.len() < 32 * 1024 {
        let id = format!("art-get-{n:08}");
        flood.extend(profile_frame(14, 2, id.as_bytes(), get.clone()));
        n += 1;
    }
    let peers: Vec<std::net::TcpStream> = (0..6)
        .map(|_| {
            let mut c = s.connect();
            c.write_all(&flood).unwrap();
            c
        })
        .collect();
    // Let the server answer all it will before the peers' windows fill: until its CPU
    // time stops growing (a debug build on a loaded machine takes a while).
    let mut last = s.cpu_ticks();
    let until = Instant::now() + DEADLINE;
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let now = s.cpu_ticks();
        if now == last || Instant::now() > until {
            break;
        }
        last = now;
    }
    let rss = s.rss_kib();
    assert!(
        rss < ceiling_kib(),
        "RSS {rss} KiB with six peers that never read"
    );
    let took = fresh_ping(s.port);
    assert!(took < Duration::from_millis(100), "{took:?}");
    drop(peers);
}

/// Slow calls whose delay comes padded to 2 MiB of spaces: params longer than a number can
/// be are malformed, and a slow call keeps its own few octets, never the frame. Before,
/// 64 such calls made one client hold 446-734 MiB (issue 30, defect 2).
#[test]
fn padded_slow_calls_hold_no_frames() {
    use swp_profiles::p1::pb::rpc::RpcReq;
    let mut args = vec!["serve", "--listen", "tcp://127.0.0.1:0"];
    args.extend(TIGHT);
    let s = Proc::start("padded-slow", &args, None);
    let mut c = s.connect();
    let mut padded = vec![b' '; 2 << 20];
    padded.extend_from_slice(b"5000");
    for n in 0..64u32 {
        let req = RpcReq {
            rpc_id: format!("slow-{n}").into_bytes().into(),
            method: "swp.test.slow".into(),
            params: padded.clone().into(),
            ..RpcReq::default()
        };
        let id = format!("slow-call-{n:06}");
        c.write_all(&profile_frame(12, 1, id.as_bytes(), req.encode_to_vec()))
            .unwrap();
        let r = read_frame(&mut c).unwrap().expect("an answer");
        assert_eq!(
            (r.profile_id, r.msg_type),
            (12, 3),
            "an RPC_ERR for call {n}"
        );
    }
    let rss = s.rss_kib();
    assert!(
        rss < ceiling_kib(),
        "RSS {rss} KiB after 64 padded slow calls"
    );
    // A slow call of a few octets is still taken.
    let req = RpcReq {
        rpc_id: b"slow-short".to_vec().into(),
        method: "swp.test.slow".into(),
        params: b" 10 ".to_vec().into(),
        ..RpcReq::default()
    };
    c.write_all(&profile_frame(
        12,
        1,
        b"slow-call-short0",
        req.encode_to_vec(),
    ))
    .unwrap();
    let r = read_frame(&mut c).unwrap().expect("an answer");
    assert_eq!(
        (r.profile_id, r.msg_type),
        (12, 2),
        "an RPC_RESP: {:?}",
        r.payload
    );
}

/// Sends forty 1 MiB messages of `what` that the server keeps, each followed by a ping (a
/// kept message gets no reply, or one before the ping's): the message number and text of
/// the first error frame, or `None` if there was none or the connection closed first.
fn flood_kept(
    c: &mut std::net::TcpStream,
    what: &str,
    peer: u32,
    message: &dyn Fn(u32, u32) -> (u64, u64, Vec<u8>),
) -> Option<(u32, String)> {
    for n in 0..40u32 {
        let (profile, msg_type, payload) = message(peer, n);
        let id = format!("{what}-{peer}-{n:04}");
        c.write_all(&profile_frame(profile, msg_type, id.as_bytes(), payload))
            .ok()?;
        let ping = format!("ping-{peer}-{n:04}");
        c.write_all(&request(ping.as_bytes(), "1", "ping", "{}"))
            .ok()?;
        loop {
            let r = read_frame(c).ok()??;
            let text = String::from_utf8_lossy(&r.payload);
            if text.contains("ERR_") {
                return Some((n, text.into_owned()));
            }
            if r.msg_id[..] == *ping.as_bytes() {
                break;
            }
        }
    }
    None
}

/// Four peers each flood `what` ([`flood_kept`]): each is refused with
/// `ERR_RATE_LIMIT_EXCEEDED` by the time it has sent 8 MiB (`--conn-memory`), and the server
/// stays under the ceiling.
fn kept_messages_are_charged(what: &str, message: impl Fn(u32, u32) -> (u64, u64, Vec<u8>)) {
    let mut args = vec!["serve", "--listen", "tcp://127.0.0.1:0"];
    args.extend(TIGHT);
    let s = Proc::start(what, &args, None);
    for peer in 0..4u32 {
        let mut c = s.connect();
        let (n, why) = flood_kept(&mut c, what, peer, &message)
            .unwrap_or_else(|| panic!("{what}: the connection is refused before 40 MiB"));
        assert!(why.contains("ERR_RATE_LIMIT_EXCEEDED"), "{what}: {why}");
        assert!(n <= 8, "{what}: refused only after {n} MiB");
    }
    let rss = s.rss_kib();
    assert!(
        rss < ceiling_kib(),
        "{what}: RSS {rss} KiB after four peers"
    );
}

/// A 1 MiB state of `peer`'s `n`th put.
fn state_put(peer: u32, n: u32) -> (u64, u64, Vec<u8>) {
    use swp_profiles::p1::pb::state::StatePut;
    let mut blob = vec![b's'; 1 << 20];
    blob[..8].copy_from_slice(&(u64::from(peer) << 32 | u64::from(n)).to_be_bytes());
    let put = StatePut {
        state_id: swp_profiles::state::IdScheme::Sha256.content_id(&blob),
        blob: blob.into(),
        ..StatePut::default()
    };
    (17, 1, put.encode_to_vec())
}

/// An unsolicited AGDISC card of 1 MiB.
fn agdisc_doc(peer: u32, n: u32) -> (u64, u64, Vec<u8>) {
    use swp_profiles::p1::pb::agdisc::AgdiscDoc;
    let doc = AgdiscDoc {
        agent_id: format!("agent-{peer}-{n}"),
        schema_revision: "1".into(),
        card_payload: vec![b'c'; (1 << 20) - 64].into(),
        etag: format!("\"{peer}-{n}\""),
        max_age_ms: 60_000,
    };
    (10, 2, doc.encode_to_vec())
}

/// An unsolicited TOOLDISC page of one 1 MiB descriptor.
fn tool_page(peer: u32, n: u32) -> (u64, u64, Vec<u8>) {
    use swp_profiles::p1::pb::tooldisc::{ToolDescriptor, TooldiscListResp};
    let page = TooldiscListResp {
        tools: vec![ToolDescriptor {
            tool_id: format!("tool-{peer}-{n}"),
            name: "t".into(),
            version: "1".into(),
            schema_ref: "https://example.test/schema".into(),
            descriptor_payload: vec![b'd'; 1 << 20].into(),
        }],
        next_page_token: String::new(),
    };
    (11, 2, page.encode_to_vec())
}

/// An RPC echo of 1 MiB params under a key of its own: its outcome is kept for replay.
fn keyed_echo(peer: u32, n: u32) -> (u64, u64, Vec<u8>) {
    use swp_profiles::p1::pb::rpc::RpcReq;
    let req = RpcReq {
        rpc_id: format!("rpc-{peer}-{n}").into_bytes().into(),
        method: "swp.test.echo".into(),
        params: vec![b'p'; 1 << 20].into(),
        idempotency_key: format!("key-{peer}-{n}"),
    };
    (12, 1, req.encode_to_vec())
}

/// What the SWP-STATE store keeps is charged to `--conn-memory` with the connection's input,
/// instead of the store's own 64 MiB (four such peers held 291 MiB, issue 30 defect 2).
#[test]
fn stored_states_are_charged_to_the_connection() {
    kept_messages_are_charged("state-charged", state_put);
}

/// Cards a peer sends unasked are kept by the AGDISC judge (1,024 of up to 1 MiB each):
/// charged to the connection, not held beside it (AGDISC unsolicited DOCs held 347 MiB,
/// issue 30 defect 2).
#[test]
fn unsolicited_cards_are_charged_to_the_connection() {
    kept_messages_are_charged("agdisc-charged", agdisc_doc);
}

/// Pages a peer sends unasked are remembered by the TOOLDISC judge, each descriptor up to a
/// frame: charged to the connection (unsolicited pages held 175 MiB, issue 30 defect 2).
#[test]
fn unsolicited_tool_pages_are_charged_to_the_connection() {
    kept_messages_are_charged("tooldisc-charged", tool_page);
}

/// Outcomes kept for idempotent replay are charged (a 16 MiB replay budget per connection
/// otherwise).
#[test]
fn replay_outcomes_are_charged_to_the_connection() {
    kept_messages_are_charged("rpc-replay-charged", keyed_echo);
}

/// Eight clients at once under the tight flags, each on another way into the server's
/// memory or CPU: stored states, unsolicited cards, unsolicited tool pages, replay outcomes
/// (each 1 MiB a message), 1 MiB relay delivery ids, `ART_GET`s never read, a 6 MiB frame
/// stalled halfway, and huge POLICY_HINT_SETs. Together they share the one 8 MiB budget:
/// the server's peak RSS (VmHWM) stays under the ceiling, and a fresh client is answered
/// within 100 ms once they are done.
#[test]
fn eight_clients_on_every_profile_at_once_stay_under_the_ceiling() {
    use swp_profiles::p1::pb::artifact::ArtGet;
    let mut args = vec!["serve", "--listen", "tcp://127.0.0.1:0"];
    args.extend(TIGHT);
    let s = Proc::start("eight-at-once", &args, None);
    type Gen = fn(u32, u32) -> (u64, u64, Vec<u8>);
    let kept: [(&str, Gen); 4] = [
        ("state", state_put),
        ("agdisc", agdisc_doc),
        ("tooldisc", tool_page),
        ("replay", keyed_echo),
    ];
    let (_, relay_profile, relay_type, long_id) = long_id_messages().remove(0);
    let art_get = ArtGet {
        artifact_id: "swp.test.blob".into(),
        ..ArtGet::default()
    }
    .encode_to_vec();
    let stalled = profile_frame(14, 1, b"stalled-000001", vec![b'x'; 6 << 20]);
    let policy = huge_policy_set();
    let linger = Duration::from_secs(2);
    // A server that stops reading a client must not hang the test in its write.
    let connect = || {
        let c = s.connect();
        c.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
        c
    };
    std::thread::scope(|t| {
        for (peer, (what, message)) in kept.into_iter().enumerate() {
            let mut c = connect();
            t.spawn(move || flood_kept(&mut c, what, peer as u32, &message));
        }
        let mut c = connect();
        t.spawn(move || {
            for n in 0..40u32 {
                let id = format!("relay-long-{n:04}");
                let f = profile_frame(relay_profile, relay_type, id.as_bytes(), long_id.clone());
                if c.write_all(&f).is_err() || !matches!(read_frame(&mut c), Ok(Some(_))) {
                    break;
                }
            }
        });
        let mut c = connect();
        t.spawn(move || {
            for n in 0..800u32 {
                let id = format!("art-get-{n:08}");
                if c.write_all(&profile_frame(14, 2, id.as_bytes(), art_get.clone()))
                    .is_err()
                {
                    break;
                }
            }
            std::thread::sleep(linger);
        });
        let mut c = connect();
        t.spawn(move || {
            let _ = c.write_all(&stalled[..stalled.len() / 2]);
            std::thread::sleep(linger);
        });
        let mut c = connect();
        t.spawn(move || {
            for n in 0..4u8 {
                let id = format!("policy-set-00000{n}");
                if c.write_all(&profile_frame(16, 1, id.as_bytes(), policy.clone()))
                    .is_err()
                    || !matches!(read_frame(&mut c), Ok(Some(_)))
                {
                    break;
                }
            }
        });
    });
    let peak = s.hwm_kib();
    // A release build peaked at 22.5-24.2 MiB in four runs (ceiling 24.3 MiB); a debug
    // build's unoptimised copies of eight 1 MiB messages in flight at once took 28.5-36.4 MiB,
    // so a debug build gets twice the usual allowance. The binary before issue 30 peaked at
    // 211 MiB (a debug build), well past either.
    let ceiling = ceiling_kib() + if debug_build() { 8 * 1024 } else { 0 };
    eprintln!("peak RSS {peak} KiB (ceiling {ceiling} KiB)");
    assert!(
        peak < ceiling,
        "peak RSS {peak} KiB with eight hostile clients at once"
    );
    let took = fresh_ping(s.port);
    assert!(took < Duration::from_millis(100), "{took:?}");
}
