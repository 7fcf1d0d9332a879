//! Testees that get the testee protocol wrong in the ways vendors do, to prove the harness
//! names the mistake instead of failing every vector with a bare length or timeout:
//! `badtestee log-on-stdout | ndjson | refuse-hello | protocol-2`.
//!
//! - `log-on-stdout`: prints a start-up banner on stdout before any message.
//! - `ndjson`: answers each request with newline-delimited JSON (no length prefix).
//! - `refuse-hello`: answers `hello` with an `error` reply, as a testee of another
//!   protocol version must.
//! - `protocol-2`: answers `hello` claiming protocol 2.

use std::io::{BufRead, Write};
use swp_testee_proto::{read_message, write_message};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    match mode.as_str() {
        "log-on-stdout" => {
            let _ = writeln!(out, "acme testee 3.1 starting");
            let _ = out.flush();
            while let Ok(Some(_)) = read_message(&mut input) {}
        }
        "ndjson" => {
            let mut line = String::new();
            // The harness sends no newline, so answer whatever arrives first.
            let _ = input.fill_buf().map(|b| b.len());
            let _ = writeln!(out, "{{\"id\":1,\"ok\":{{}}}}");
            let _ = out.flush();
            let _ = input.read_line(&mut line);
        }
        "refuse-hello" | "protocol-2" => {
            while let Ok(Some(m)) = read_message(&mut input) {
                let id = serde_json::from_slice::<serde_json::Value>(&m)
                    .ok()
                    .and_then(|v| v.get("id").and_then(|i| i.as_u64()))
                    .unwrap_or(0);
                let reply = if mode == "refuse-hello" {
                    serde_json::json!({"id": id, "error": "acme speaks testee protocol 2; upgrade the harness"})
                } else {
                    serde_json::json!({"id": id, "ok": {"name": "acme", "version": "3.1", "protocol": 2, "supports": ["hello", "decode"]}})
                };
                if write_message(&mut out, reply.to_string().as_bytes()).is_err() {
                    return;
                }
            }
        }
        _ => {
            eprintln!("usage: badtestee log-on-stdout|ndjson|refuse-hello|protocol-2");
            std::process::exit(2);
        }
    }
}
