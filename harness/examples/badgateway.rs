//! A deliberately broken MCP gateway, to prove the `gateway` vectors catch what they claim
//! to: it runs the reference gateway (`swp-ref mcp-gateway`, stdio) and mutates what passes
//! through, one deviation per mode:
//!
//! - `fallback`: every error response becomes INTERNAL_ERROR (-32603, "Internal error"): the
//!   silent fallback seed 003 forbids.
//! - `lenient-id`: numeric request ids are accepted (turned into strings on the way in and
//!   back into numbers on the way out), as a gateway without the envelope schema would.
//! - `as-is`: nothing mutated; with a manifest declaring another envelope policy than the
//!   one it runs (a seed-003 gateway declaring `mcp`), the deviation is the policy itself.
//!
//! The gateway runs under the envelope policy ENVELOPE (`seed-003` by default).
//!
//! Usage: `badgateway MODE SWP_REF [ENVELOPE]`.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(mode), Some(swp_ref)) = (args.next(), args.next()) else {
        eprintln!("usage: badgateway fallback|lenient-id|as-is SWP_REF [mcp|seed-003]");
        std::process::exit(2);
    };
    let envelope = args.next().unwrap_or_else(|| "seed-003".to_owned());
    let mut child = match Command::new(&swp_ref)
        .args([
            "mcp-gateway",
            "--envelope",
            &envelope,
            "--listen",
            "stdio",
            "--upstream-cmd",
            &swp_ref,
            "serve",
            "--listen",
            "stdio",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("badgateway: cannot start {swp_ref}: {e}");
            std::process::exit(2);
        }
    };
    let (Some(mut to_gw), Some(from_gw)) = (child.stdin.take(), child.stdout.take()) else {
        std::process::exit(2);
    };
    // Ids this process turned from numbers into strings, to turn back.
    let stringified: Arc<Mutex<Vec<String>>> = Arc::default();
    let back = stringified.clone();
    let out_mode = mode.clone();
    let pump = std::thread::spawn(move || {
        let mut out = std::io::stdout().lock();
        for line in BufReader::new(from_gw).lines() {
            let Ok(line) = line else { return };
            let mut v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            if out_mode == "fallback" && v.get("error").is_some() {
                v["error"] = json!({"code": -32603, "message": "Internal error",
                                    "data": {"canonical": "INTERNAL_ERROR"}});
            }
            if out_mode == "lenient-id" {
                if let Some(id) = v.get("id").and_then(Value::as_str).map(str::to_owned) {
                    let mut ids = back.lock().unwrap_or_else(|p| p.into_inner());
                    if let Some(i) = ids.iter().position(|x| *x == id) {
                        ids.remove(i);
                        if let Ok(n) = id.parse::<i64>() {
                            v["id"] = json!(n);
                        }
                    }
                }
            }
            let _ = writeln!(out, "{v}");
            let _ = out.flush();
        }
    });
    for line in std::io::stdin().lock().lines() {
        let Ok(mut line) = line else { break };
        if mode == "lenient-id" {
            if let Ok(mut v) = serde_json::from_str::<Value>(&line) {
                if let Some(n) = v.get("id").and_then(Value::as_i64) {
                    v["id"] = json!(n.to_string());
                    stringified
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(n.to_string());
                    line = v.to_string();
                }
            }
        }
        if writeln!(to_gw, "{line}")
            .and_then(|()| to_gw.flush())
            .is_err()
        {
            break;
        }
    }
    drop(to_gw);
    let _ = pump.join();
    let _ = child.wait();
}
