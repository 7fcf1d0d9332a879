//! The reference relay: accepts SWP connections and forwards every frame, byte for byte, to
//! an upstream endpoint and back (MCP mapping §2: relays MAY forward without parsing and MUST
//! preserve payload bytes exactly). Frames are delimited and checked by swp-core so the
//! relay never forwards a broken frame, but the octets forwarded are the octets received:
//! nothing is decoded and re-encoded on the way.
//!
//! Blocking threads, two per connection: a relay's job is copying, and the copy loop is
//! clearest as straight-line code.

use bytes::BytesMut;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use swp_core::frame::{split, Split, PREFIX_LEN};
use swp_core::Limits;

/// Copies whole frames from `from` to `to` until end of stream or a framing error.
/// Returns the number of frames forwarded.
fn pump(mut from: TcpStream, mut to: TcpStream, limits: Limits, label: &str) -> io::Result<u64> {
    let mut buf = BytesMut::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut frames = 0u64;
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
        let n = from.read(&mut chunk)?;
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

fn serve_one(client: TcpStream, upstream: &str, limits: Limits) -> io::Result<()> {
    let up = TcpStream::connect(upstream)?;
    up.set_nodelay(true)?;
    client.set_nodelay(true)?;
    let (c2, u2) = (client.try_clone()?, up.try_clone()?);
    let t = std::thread::spawn(move || pump(u2, c2, limits, "upstream→client"));
    let r = pump(client, up, limits, "client→upstream");
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
    for conn in l.incoming() {
        let c = conn?;
        let up = upstream.to_owned();
        std::thread::spawn(move || {
            if let Err(e) = serve_one(c, &up, limits) {
                eprintln!("swp-ref relay: {e}");
            }
        });
    }
    Ok(())
}
