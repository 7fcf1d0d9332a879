//! One direction of a relay connection: reads octets, forwards each frame whole once it has
//! arrived (the received octets, never a re-encoding), and holds the direction to the
//! server limits (client-side idle and frame timeouts, the memory budget through its
//! connection's [`Held`] state).

use super::blocks::{Pool, Queue};
use super::{Held, Side, Sockets};
use std::io::{self, Read};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};
use swp_core::frame::{split, Split, PREFIX_LEN};
use swp_core::Limits;

/// What one read takes in while no frame is in progress: enough for a burst of small
/// frames. It lives on the stack, so a connection waiting for its next frame holds no block.
const IDLE_READ: usize = 8 * 1024;

/// The client-side timeouts of one pump; `None` for the upstream side, which is trusted.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timeouts {
    pub idle: Option<Duration>,
    pub body: Duration,
}

/// One direction of a connection.
pub(super) struct Pump<'a> {
    pub from: &'a TcpStream,
    pub to: &'a TcpStream,
    pub side: Side,
    pub label: &'static str,
    pub limits: Limits,
    pub timeouts: Option<Timeouts>,
    pub held: &'a Held,
    pub sockets: &'a Sockets,
    pub pool: Arc<Pool>,
}

/// What the frames at the front of a queue came to.
enum Front {
    /// Every whole frame was forwarded; the rest waits for more octets.
    Waiting,
    /// A frame prefix `swp-core` refuses (zero, or over MAX_FRAME_BYTES).
    Broken(swp_core::CoreError),
}

impl Pump<'_> {
    /// Ends the connection on both sides after a refusal or a failure: the other pump's
    /// blocking read returns, so both threads end.
    fn abandon(&self, why: impl std::fmt::Display) {
        eprintln!("swp-ref relay: {}: {why}; closing both sides", self.label);
        self.sockets.close();
    }

    /// Forwards every whole frame at the front of `q`; returns how many.
    fn forward(&self, q: &mut Queue, frames: &mut u64) -> io::Result<Front> {
        while let Some(prefix) = q.prefix() {
            // Four octets hold no body, so `split` only judges the prefix (and the total).
            let total = match split(&prefix, &self.limits) {
                Ok(Split::NeedMore { need: Some(total) }) => total,
                Ok(Split::Frame { body_len }) => PREFIX_LEN + body_len,
                Ok(Split::NeedMore { need: None }) => return Ok(Front::Waiting),
                Err(e) => return Ok(Front::Broken(e)),
            };
            if q.len() < total {
                return Ok(Front::Waiting);
            }
            if q.len() == total {
                self.held.settle(self.side);
            }
            q.write_front(total, self.to)?;
            *frames += 1;
        }
        Ok(Front::Waiting)
    }

    /// Copies whole frames from `from` to `to` until end of stream, a framing error, a
    /// refusal by the memory budget or (with `timeouts`) a stall. Returns the number of
    /// frames forwarded.
    pub(super) fn run(self) -> io::Result<u64> {
        let mut q = Queue::new(self.pool.clone());
        let mut small = [0u8; IDLE_READ];
        let mut frames = 0u64;
        // Reads wake up at least this often to check the timeouts.
        if let Some(t) = self.timeouts {
            let tick = t.idle.map_or(t.body, |i| i.min(t.body));
            self.from
                .set_read_timeout(Some(tick.max(Duration::from_millis(10))))?;
        }
        let mut last_read = Instant::now();
        let mut frame_since = last_read;
        loop {
            if let Front::Broken(e) = self.forward(&mut q, &mut frames)? {
                self.abandon(e);
                return Ok(frames);
            }
            // What stays buffered is charged after each read, as in `serve`: frames that
            // arrive whole within one read are forwarded and never charged, and a partial
            // frame that would pass a ceiling ends its connection, not the others.
            if let Err(e) = self.held.hold(self.side, q.len()) {
                self.abandon(e);
                return Ok(frames);
            }
            let idle = q.is_empty();
            // A frame in progress is read straight into its blocks, a block at a time.
            let read = if idle {
                (&*self.from).read(&mut small)
            } else {
                (&*self.from).read(q.spare())
            };
            let n = match read {
                Ok(n) => n,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    let Some(t) = self.timeouts else {
                        return Err(e);
                    };
                    let stalled = if idle {
                        t.idle.is_some_and(|i| last_read.elapsed() >= i)
                    } else {
                        frame_since.elapsed() >= t.body
                    };
                    if stalled {
                        self.abandon("idle or frame timeout");
                        return Ok(frames);
                    }
                    continue;
                }
                Err(e) => return Err(e),
            };
            if idle {
                frame_since = Instant::now();
            }
            last_read = Instant::now();
            if n == 0 {
                if !idle {
                    eprintln!("swp-ref relay: {}: stream ended inside a frame", self.label);
                }
                let _ = self.to.shutdown(Shutdown::Write);
                return Ok(frames);
            }
            self.held.active(self.side);
            if idle {
                q.extend(small.get(..n).unwrap_or_default());
            } else {
                q.commit(n);
            }
        }
    }
}
