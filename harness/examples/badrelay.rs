//! Relays for testing the harness's intermediary vectors, chosen by `BADRELAY_MODE`:
//! - `reserialise` (default): breaks byte preservation the way a careless gateway does: it
//!   parses each profile-1 payload as JSON and forwards it re-serialised (compact),
//!   everything else intact;
//! - `reissue`: a conformant relay that is not the reference: it re-issues every msg_id it
//!   sends upstream and re-stamps the timestamp, and maps answers back to the client's
//!   msg_id;
//! - `lose-id`: as `reissue`, but answers reach the client on the relay's own msg_id.
//!
//! `badrelay PORT_FILE UPSTREAM`.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use swp_core::{e1, Limits};

/// Upstream msg_id → the client's msg_id, shared by both directions of one connection.
type Ids = Arc<Mutex<HashMap<Vec<u8>, bytes::Bytes>>>;

fn pump(mut from: TcpStream, mut to: TcpStream, mode: &str, upstream_bound: bool, ids: Ids) {
    let limits = Limits::default();
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 65536];
    let mut next = 0u64;
    loop {
        while let Ok(Some((body, rest))) =
            swp_core::frame::take_frame(&bytes::Bytes::from(buf.clone()), &limits)
        {
            let out = match e1::decode(&body, &limits) {
                Ok(mut env) => {
                    match mode {
                        "reissue" | "lose-id" if upstream_bound => {
                            next += 1;
                            let own = format!("relay-id-{next:07}");
                            if let Ok(mut m) = ids.lock() {
                                m.insert(own.clone().into_bytes(), env.msg_id.clone());
                            }
                            env.msg_id = own.into_bytes().into();
                            env.ts_unix_ms = env.ts_unix_ms.wrapping_add(1);
                        }
                        "reissue" => {
                            let back = ids
                                .lock()
                                .ok()
                                .and_then(|m| m.get(&env.msg_id[..]).cloned());
                            if let Some(id) = back {
                                env.msg_id = id;
                            }
                        }
                        "lose-id" => {}
                        _ => {
                            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&env.payload)
                            {
                                env.payload = serde_json::to_vec(&v).unwrap_or_default().into();
                            }
                        }
                    }
                    e1::frame_bytes(&env)
                        .map(|b| b.to_vec())
                        .unwrap_or_default()
                }
                Err(_) => return,
            };
            if to.write_all(&out).is_err() {
                return;
            }
            buf = rest.to_vec();
        }
        match from.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(port_file), Some(upstream)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: badrelay PORT_FILE UPSTREAM");
        std::process::exit(2);
    };
    let mode = std::env::var("BADRELAY_MODE").unwrap_or_else(|_| "reserialise".into());
    let Ok(l) = TcpListener::bind("127.0.0.1:0") else {
        std::process::exit(1)
    };
    let port = l.local_addr().map(|a| a.port()).unwrap_or(0);
    let _ = std::fs::write(port_file, format!("{port}\n"));
    for c in l.incoming().flatten() {
        let Ok(u) = TcpStream::connect(upstream) else {
            continue;
        };
        let (c2, u2) = (c.try_clone(), u.try_clone());
        if let (Ok(c2), Ok(u2)) = (c2, u2) {
            let ids = Ids::default();
            let (m1, m2, i2) = (mode.clone(), mode.clone(), ids.clone());
            std::thread::spawn(move || pump(u2, c2, &m1, false, ids));
            std::thread::spawn(move || pump(c, u, &m2, true, i2));
        }
    }
}
