//! Trivial SWP endpoints over stdio, for checking the judge rather than an implementation:
//! `reject-all` answers every frame it reads with an error frame on that frame's msg_id,
//! `reject-all-slow` does the same 250 ms late, and `accept-all` reads everything and
//! answers nothing. A conformance judge may pass them only on vectors whose every judged
//! step expects what they do alike (the catalog's `shape` mark); `harness/tests/trivial.rs`
//! runs the whole catalog against each and fails on any other pass.
//!
//! Usage: `trivialsut reject-all | reject-all-slow | accept-all`.

use bytes::Bytes;
use std::io::{Read, Write};
use std::time::Duration;
use swp_conform::frames::{e1, Envelope, Limits};

/// Frames above this are not read: the SUT refuses the stream and stops.
const MAX_FRAME: usize = 8 * 1024 * 1024;

/// The one code every refusal carries: a policy that refuses everything.
const CODE: &str = "ERR_SECURITY_POLICY";

/// The error frame refusing the frame with `msg_id`.
fn error_frame(msg_id: Bytes) -> Option<Bytes> {
    let payload = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32600, "message": "refused", "data": {"swp_error": CODE}},
    });
    let env = Envelope {
        version: 1,
        profile_id: 1,
        msg_type: 2,
        msg_id,
        payload: Bytes::from(payload.to_string()),
        ..Envelope::default()
    };
    e1::frame_bytes(&env).ok()
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let (reply, delay) = match mode.as_str() {
        "reject-all" => (true, Duration::ZERO),
        "reject-all-slow" => (true, Duration::from_millis(250)),
        "accept-all" => (false, Duration::ZERO),
        _ => {
            eprintln!("usage: trivialsut reject-all | reject-all-slow | accept-all");
            std::process::exit(2);
        }
    };
    let mut input = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    let mut n = 0u64;
    loop {
        let mut prefix = [0u8; 4];
        if input.read_exact(&mut prefix).is_err() {
            return;
        }
        let len = u32::from_be_bytes(prefix) as usize;
        n += 1;
        // A msg_id of its own where the frame's cannot be read.
        let own = Bytes::from(format!("trivial-{n:08}"));
        if len > MAX_FRAME {
            if reply {
                std::thread::sleep(delay);
                if let Some(f) = error_frame(own) {
                    let _ = out.write_all(&f);
                    let _ = out.flush();
                }
            }
            return;
        }
        let mut body = vec![0u8; len];
        if input.read_exact(&mut body).is_err() {
            return;
        }
        if !reply {
            continue;
        }
        let msg_id = e1::decode(&Bytes::from(body), &Limits::unbounded())
            .map(|e| e.msg_id)
            .ok()
            .filter(|m| !m.is_empty())
            .unwrap_or(own);
        std::thread::sleep(delay);
        if let Some(f) = error_frame(msg_id) {
            if out.write_all(&f).and_then(|()| out.flush()).is_err() {
                return;
            }
        }
    }
}
