//! A relay that breaks byte preservation the way a careless gateway does: it parses each
//! profile-1 payload as JSON and forwards it re-serialised (compact), everything else intact.
//! `badrelay PORT_FILE UPSTREAM`; for testing that the harness catches it.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use swp_core::{e1, Limits};

fn pump(mut from: TcpStream, mut to: TcpStream) {
    let limits = Limits::default();
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 65536];
    loop {
        while let Ok(Some((body, rest))) =
            swp_core::frame::take_frame(&bytes::Bytes::from(buf.clone()), &limits)
        {
            let out = match e1::decode(&body, &limits) {
                Ok(mut env) => {
                    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&env.payload) {
                        env.payload = serde_json::to_vec(&v).unwrap_or_default().into();
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
            std::thread::spawn(move || pump(u2, c2));
            std::thread::spawn(move || pump(c, u));
        }
    }
}
