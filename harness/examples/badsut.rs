//! A deliberately misbehaving SWP endpoint on stdio, for testing the harness's supervision:
//! `badsut close-on-reject | hang | crash | flood | flood4g`. Built by `cargo test` (examples are).
//!
//! - `close-on-reject`: a correct core that signals every reject by closing with zero bytes
//!   and never sends an error frame (like an independent stack we know), answering `ping`.
//! - `hang`: reads everything, answers nothing, never closes.
//! - `crash`: aborts on the first complete frame.
//! - `flood`: on the first frame, announces an 8 MiB frame and streams octets forever;
//!   `flood4g` announces a 4 GiB frame first.
//! - `flood-frames`: on the first frame, writes small valid frames forever, each on its own
//!   (the flood that once took the harness to 750 MB for one vector through its transcript).
//! - `bad-stream`: as `close-on-reject`, and a request for method `stream` gets two partial
//!   outputs sent as responses (msg_type 2) on fresh msg_ids without the request's
//!   correlation, then a `result` on the request's msg_id even when asked to fail.
//! - `unterminated-stream`: the partials of `bad-stream` and never a terminal response.
//! - `every-other`: as `close-on-reject`, but answers only every other `ping` (a SUT that
//!   loses replies, for the load mode).
//! - `new-code`: as `close-on-reject`, but answers every `ping` with an error frame whose
//!   code (at `/error/data/swp_error`) is new each time and 1,000 characters long (the SUT
//!   that once took the load mode to 701 MB through its count by code).

use std::io::{Read, Write};
use swp_core::{e1, Envelope, Event, Limits, Policy, Receiver};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut rx = Receiver::new(Limits::default(), Policy::default());
    let mut buf = vec![0u8; 65536];
    let mut pings = 0u64;
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) | Err(_) => {
                if mode == "hang" {
                    // Keep the process (and so the connection) alive without answering.
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                }
                if mode == "close-on-reject" && rx.finish().is_some() {
                    return;
                }
                return;
            }
            Ok(n) => n,
        };
        rx.feed(&buf[..n]);
        while let Some(ev) = rx.poll(0, |p| p == 1 || p == 2) {
            match mode.as_str() {
                "crash" => std::process::abort(),
                "flood" | "flood4g" => {
                    // `flood4g` announces a 4 GiB frame; `flood` an 8 MiB one it never ends.
                    let prefix = if mode == "flood4g" {
                        [0xff; 4]
                    } else {
                        [0x00, 0x80, 0x00, 0x00]
                    };
                    let _ = stdout.write_all(&prefix);
                    let chunk = vec![0x5au8; 65536];
                    loop {
                        if stdout.write_all(&chunk).is_err() {
                            return;
                        }
                    }
                }
                "flood-frames" => {
                    // 25-octet frames, each written and flushed alone, so the harness reads
                    // them in as many small pieces as the pipe allows.
                    for n in 0u64.. {
                        let f = Envelope {
                            version: 1,
                            profile_id: 1,
                            msg_type: 3,
                            msg_id: n.to_be_bytes().to_vec().into(),
                            payload: b"{}".to_vec().into(),
                            ..Envelope::default()
                        };
                        let Ok(b) = e1::frame_bytes(&f) else { return };
                        if stdout.write_all(&b).and_then(|()| stdout.flush()).is_err() {
                            return;
                        }
                    }
                }
                "hang" => {}
                _ => match ev {
                    Event::Rejected { .. } => return,
                    Event::Accepted { envelope, .. } => {
                        let req = serde_json::from_slice::<serde_json::Value>(&envelope.payload)
                            .ok()
                            .filter(|_| (envelope.profile_id, envelope.msg_type) == (1, 1));
                        let method = req
                            .as_ref()
                            .and_then(|v| v.get("method"))
                            .and_then(|m| m.as_str());
                        let answer = |payload: serde_json::Value, msg_id: &[u8]| Envelope {
                            version: 1,
                            profile_id: 1,
                            msg_type: 2,
                            msg_id: msg_id.to_vec().into(),
                            payload: serde_json::to_vec(&payload).unwrap_or_default().into(),
                            ..Envelope::default()
                        };
                        if mode == "every-other" && method == Some("ping") {
                            pings += 1;
                            if pings.is_multiple_of(2) {
                                continue;
                            }
                        }
                        let mut out = Vec::new();
                        let id = req.as_ref().and_then(|r| r.get("id")).cloned();
                        match method {
                            Some("ping") if mode == "new-code" => {
                                pings += 1;
                                let code = format!("ERR_NEW_{pings:012}_{}", "X".repeat(980));
                                out.push(answer(
                                    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "made up", "data": {"swp_error": code}}}),
                                    &envelope.msg_id,
                                ));
                            }
                            Some("ping") => out.push(answer(
                                serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}}),
                                &envelope.msg_id,
                            )),
                            Some("stream") if mode.ends_with("stream") => {
                                for n in 0..2u8 {
                                    let partial = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": n}});
                                    out.push(answer(partial, format!("partial-{n:08}").as_bytes()));
                                }
                                if mode == "bad-stream" {
                                    out.push(answer(
                                        serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}}),
                                        &envelope.msg_id,
                                    ));
                                }
                            }
                            _ => {}
                        }
                        for reply in out {
                            if let Ok(f) = e1::frame_bytes(&reply) {
                                let _ = stdout.write_all(&f);
                            }
                        }
                        let _ = stdout.flush();
                    }
                },
            }
        }
    }
}
