//! The reference relay: accepts SWP connections and forwards every frame, byte for byte, to
//! an upstream endpoint and back (MCP mapping §2: relays MAY forward without parsing and MUST
//! preserve payload bytes exactly). Frames are delimited and checked by swp-core so the
//! relay never forwards a broken frame, but the octets forwarded are the octets received:
//! nothing is decoded and re-encoded on the way.
//!
//! Blocking threads, two per connection: a relay's job is copying, and the copy loop is
//! clearest as straight-line code.
//!
//! Server limits (docs/reference-limits.md): a connection cap (a newcomer over it is
//! closed), idle and frame timeouts on the client side, TCP keepalive, and accept errors
//! that never stop the relay (it backs off and retries).

use bytes::BytesMut;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use swp_core::frame::{split, Split, PREFIX_LEN};
use swp_core::Limits;

use crate::limits::ServerLimits;

/// The client-side timeouts of one pump; `None` for the upstream side, which is trusted.
#[derive(Debug, Clone, Copy)]
struct Timeouts {
    idle: Option<Duration>,
    body: Duration,
}

/// Copies whole frames from `from` to `to` until end of stream, a framing error or (with
/// `timeouts`) a stall. Returns the number of frames forwarded.
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    limits: Limits,
    label: &str,
    timeouts: Option<Timeouts>,
) -> io::Result<u64> {
    let mut buf = BytesMut::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut frames = 0u64;
    // Reads wake up at least this often to check the timeouts.
    if let Some(t) = timeouts {
        let tick = t.idle.map_or(t.body, |i| i.min(t.body));
        from.set_read_timeout(Some(tick.max(Duration::from_millis(10))))?;
    }
    let mut last_read = Instant::now();
    let mut frame_since = last_read;
    loop {
        // Forward every complete frame already buffered.
        loop {
            match split(&buf, &limits) {
                Ok(Split::Frame { body_len }) => {
                    // The received octets themselves, never a re-encoding.
                    let frame = buf.split_to(PREFIX_LEN + body_len);
                    to.write_all(&frame)?;
                    frames += 1;
                }
                Ok(Split::NeedMore { .. }) => break,
                Err(e) => {
                    eprintln!("swp-ref relay: {label}: {e}; closing both sides");
                    let _ = to.shutdown(Shutdown::Both);
                    let _ = from.shutdown(Shutdown::Both);
                    return Ok(frames);
                }
            }
        }
        let n = match from.read(&mut chunk) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                let Some(t) = timeouts else { return Err(e) };
                let stalled = if buf.is_empty() {
                    t.idle.is_some_and(|i| last_read.elapsed() >= i)
                } else {
                    frame_since.elapsed() >= t.body
                };
                if stalled {
                    eprintln!("swp-ref relay: {label}: idle or frame timeout; closing both sides");
                    let _ = to.shutdown(Shutdown::Both);
                    let _ = from.shutdown(Shutdown::Both);
                    return Ok(frames);
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            frame_since = Instant::now();
        }
        last_read = Instant::now();
        if n == 0 {
            if !buf.is_empty() {
                eprintln!("swp-ref relay: {label}: stream ended inside a frame");
            }
            let _ = to.shutdown(Shutdown::Write);
            return Ok(frames);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn serve_one(
    client: TcpStream,
    upstream: &str,
    limits: Limits,
    server: ServerLimits,
) -> io::Result<()> {
    let up = TcpStream::connect(upstream)?;
    up.set_nodelay(true)?;
    crate::limits::accept::configure(&client, server.tcp_keepalive);
    let (c2, u2) = (client.try_clone()?, up.try_clone()?);
    let t = std::thread::spawn(move || pump(u2, c2, limits, "upstream→client", None));
    let timeouts = Timeouts {
        idle: server.idle_timeout,
        body: server.body_timeout,
    };
    let r = pump(client, up, limits, "client→upstream", Some(timeouts));
    let _ = t.join();
    r.map(|_| ())
}

/// Listens on `listen` (loopback only: the relay speaks plaintext) and relays each
/// connection to `upstream`.
pub fn run(
    listen: &str,
    upstream: &str,
    port_file: Option<&Path>,
    limits: Limits,
    server: ServerLimits,
) -> io::Result<()> {
    let l = TcpListener::bind(listen)?;
    let addr = l.local_addr()?;
    if !addr.ip().is_loopback() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "refusing plaintext on a non-loopback address (S1)",
        ));
    }
    if let Some(p) = port_file {
        let tmp = p.with_extension("tmp");
        std::fs::write(&tmp, format!("{}\n", addr.port()))?;
        std::fs::rename(&tmp, p)?;
    }
    eprintln!("swp-ref relay: listening on tcp://{addr}, upstream {upstream}");
    let open = Arc::new(AtomicUsize::new(0));
    let slots = crate::limits::Slots::new(server.max_connections);
    let mut backoff = crate::limits::accept::Backoff::default();
    loop {
        let c = match l.accept() {
            Ok((c, _)) => c,
            Err(e) => {
                // Never fatal (issue 19, D2): out of descriptors, say, passes.
                std::thread::sleep(backoff.failed(&e, &slots, "swp-ref relay"));
                continue;
            }
        };
        backoff.reset();
        // Over the cap: the newcomer is closed; the connections at work go on.
        if open.fetch_add(1, Ordering::AcqRel) >= server.max_connections {
            open.fetch_sub(1, Ordering::AcqRel);
            continue;
        }
        let up = upstream.to_owned();
        let open = open.clone();
        std::thread::spawn(move || {
            if let Err(e) = serve_one(c, &up, limits, server) {
                eprintln!("swp-ref relay: {e}");
            }
            open.fetch_sub(1, Ordering::AcqRel);
        });
    }
}
