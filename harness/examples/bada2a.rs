//! Broken A2A agents, to prove the `a2a` vectors catch what they claim to: a proxy on
//! stdio in front of the reference endpoint (`swp-ref serve --listen stdio`) that changes
//! one behaviour per mode, the way a faulty agent would behave:
//!
//! - `accept-post-terminal`: an Event for a task whose Result the agent already sent is
//!   accepted (its reject is swallowed) — breaks A2A-007/A2A-019.
//! - `accept-conflicting-task`: a Task reusing a task_id with other content is accepted —
//!   breaks A2A-011.
//! - `reject-unknown-fields`: a payload carrying protobuf fields the schema does not define
//!   is rejected with ERR_INVALID_PROFILE_PAYLOAD instead of being decoded — breaks P1-006.
//!
//! Usage: `bada2a MODE SWP_REF`.

use bytes::Bytes;
use prost::Message;
use std::collections::HashSet;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use swp_core::frame::FrameDecoder;
use swp_core::{e1, Envelope, Limits};
use swp_profiles::p1::pb::a2a::{Event, Result as A2aResult, Task};

#[derive(Default)]
struct Shared {
    /// task_ids whose Result the agent sent.
    closed: HashSet<Vec<u8>>,
    /// task_ids of Tasks the client sent.
    tasks: HashSet<Vec<u8>>,
    /// msg_ids whose error frames are swallowed.
    swallow: HashSet<Vec<u8>>,
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

fn has_unknown_fields(env: &Envelope) -> bool {
    let reencoded = match env.msg_type {
        2 => Task::decode(&env.payload[..]).map(|m| m.encode_to_vec()),
        3 => Event::decode(&env.payload[..]).map(|m| m.encode_to_vec()),
        4 => A2aResult::decode(&env.payload[..]).map(|m| m.encode_to_vec()),
        _ => return false,
    };
    reencoded.is_ok_and(|b| b.len() != env.payload.len())
}

fn error_frame(msg_id: Bytes) -> Vec<u8> {
    let payload = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"invalid profile payload","data":{"swp_error":"ERR_INVALID_PROFILE_PAYLOAD"}}}"#;
    let env = Envelope {
        version: 1,
        profile_id: 1,
        msg_type: 2,
        msg_id,
        payload: Bytes::from_static(payload),
        ..Default::default()
    };
    e1::frame_bytes(&env)
        .map(|b| b.to_vec())
        .unwrap_or_default()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(mode), Some(swp_ref)) = (args.next(), args.next()) else {
        eprintln!("usage: bada2a accept-post-terminal|accept-conflicting-task|reject-unknown-fields SWP_REF");
        std::process::exit(2);
    };
    let Ok(mut child) = Command::new(&swp_ref)
        .args(["serve", "--listen", "stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    else {
        eprintln!("bada2a: cannot start {swp_ref}");
        std::process::exit(2);
    };
    let (Some(mut to_sut), Some(mut from_sut)) = (child.stdin.take(), child.stdout.take()) else {
        std::process::exit(2);
    };
    let shared: Arc<Mutex<Shared>> = Arc::default();
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let limits = Limits::default();

    // SUT → client: learn closed tasks, swallow the chosen error frames.
    let (sh, o) = (shared.clone(), out.clone());
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
                if env.profile_id == 2 && env.msg_type == 4 {
                    if let Ok(r) = A2aResult::decode(&env.payload[..]) {
                        s.closed.insert(r.task_id.to_vec());
                    }
                }
                if env.profile_id == 1 && s.swallow.remove(&env.msg_id[..]) {
                    continue;
                }
                drop(s);
                let b = e1::frame_bytes(&env)
                    .map(|b| b.to_vec())
                    .unwrap_or_default();
                let mut w = o.lock().unwrap_or_else(|p| p.into_inner());
                let _ = w.write_all(&b).and_then(|()| w.flush());
            }
        }
    });

    // Client → SUT: decide per frame.
    let mut dec = FrameDecoder::new(limits);
    let mut chunk = vec![0u8; 65536];
    let mut stdin = std::io::stdin().lock();
    loop {
        let n = match stdin.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        dec.feed(&chunk[..n]);
        for env in frames(&mut dec, &limits) {
            let mut s = shared.lock().unwrap_or_else(|p| p.into_inner());
            if env.profile_id == 2 {
                match mode.as_str() {
                    "accept-post-terminal" if env.msg_type == 3 => {
                        if let Ok(e) = Event::decode(&env.payload[..]) {
                            if s.closed.contains(&e.task_id[..]) {
                                s.swallow.insert(env.msg_id.to_vec());
                            }
                        }
                    }
                    "accept-conflicting-task" if env.msg_type == 2 => {
                        if let Ok(t) = Task::decode(&env.payload[..]) {
                            if !s.tasks.insert(t.task_id.to_vec()) {
                                s.swallow.insert(env.msg_id.to_vec());
                            }
                        }
                    }
                    "reject-unknown-fields" if has_unknown_fields(&env) => {
                        let mut w = out.lock().unwrap_or_else(|p| p.into_inner());
                        let _ = w
                            .write_all(&error_frame(env.msg_id.clone()))
                            .and_then(|()| w.flush());
                        continue;
                    }
                    _ => {}
                }
            }
            drop(s);
            let b = e1::frame_bytes(&env)
                .map(|b| b.to_vec())
                .unwrap_or_default();
            if to_sut.write_all(&b).and_then(|()| to_sut.flush()).is_err() {
                break;
            }
        }
    }
    drop(to_sut);
    let _ = pump.join();
    let _ = child.wait();
}
