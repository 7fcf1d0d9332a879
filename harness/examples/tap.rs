//! A recording proxy on stdio: `tap TRACE_DIR PROGRAM [ARGS...]` starts PROGRAM (an SWP
//! endpoint speaking on its stdio, e.g. `swp-ref serve --listen stdio`), relays every octet
//! both ways unchanged, and appends what it relays to a trace file of its own in TRACE_DIR,
//! one line per read: `<microseconds since start> <c|s> <hex>` (`c` from the client to
//! PROGRAM, `s` from PROGRAM to the client). `tests/rules_differential.rs` replays the traces
//! through two profile judges.
//!
//! Octets are recorded as read, not as frames, so a frame the harness breaks on purpose is
//! recorded as sent and the reader decides what it is. Each line is written with one
//! `write_all` to an unbuffered file because the harness kills the whole process group at the
//! end of a vector: nothing may wait in a buffer.

use std::fs::File;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Appends one record; a trace that cannot be written is not worth stopping the relay for
/// (the test then sees a short trace and says so).
fn record(trace: &Mutex<File>, start: Instant, dir: char, octets: &[u8]) {
    let us = start.elapsed().as_micros();
    let line = format!("{us} {dir} {}\n", hex::encode(octets));
    let mut f = trace.lock().unwrap_or_else(|p| p.into_inner());
    let _ = f.write_all(line.as_bytes());
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    let (Some(dir), Some(program)) = (args.next(), args.next()) else {
        eprintln!("usage: tap TRACE_DIR PROGRAM [ARGS...]");
        std::process::exit(2);
    };
    let rest: Vec<_> = args.collect();
    // One file per connection: the start time first, so a directory listing sorts the
    // traces in the order the connections opened; the pid keeps two taps apart.
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let path = std::path::Path::new(&dir).join(format!("{nanos:020}-{}.trace", std::process::id()));
    let trace = match File::create(&path) {
        Ok(f) => Arc::new(Mutex::new(f)),
        Err(e) => {
            eprintln!("tap: cannot create {}: {e}", path.display());
            std::process::exit(2);
        }
    };
    let Ok(mut child) = Command::new(&program)
        .args(&rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    else {
        eprintln!("tap: cannot start {}", program.to_string_lossy());
        std::process::exit(2);
    };
    let (Some(mut to_sut), Some(mut from_sut)) = (child.stdin.take(), child.stdout.take()) else {
        std::process::exit(2);
    };
    let start = Instant::now();

    // PROGRAM → client.
    let t = trace.clone();
    let pump = std::thread::spawn(move || {
        let mut buf = vec![0u8; 65536];
        let mut out = std::io::stdout();
        loop {
            let n = match from_sut.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            // Recorded before it is relayed, so the client cannot answer it before the
            // trace holds it.
            record(&t, start, 's', &buf[..n]);
            if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
                return;
            }
        }
    });

    // Client → PROGRAM.
    let mut buf = vec![0u8; 65536];
    let mut stdin = std::io::stdin().lock();
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        record(&trace, start, 'c', &buf[..n]);
        if to_sut
            .write_all(&buf[..n])
            .and_then(|()| to_sut.flush())
            .is_err()
        {
            break;
        }
    }
    // The client hung up: so does PROGRAM, once it has said what it had to say.
    drop(to_sut);
    let _ = pump.join();
    let _ = child.wait();
}
