//! The reference relay: accepts SWP connections and forwards every frame, byte for byte, to
//! an upstream endpoint and back (MCP mapping §2: relays MAY forward without parsing and MUST
//! preserve payload bytes exactly). Frames are delimited and checked by swp-core so the
//! relay never forwards a broken frame, but the octets forwarded are the octets received:
//! nothing is decoded and re-encoded on the way.
//!
//! Blocking threads, two per connection: a relay's job is copying, and the copy loop is
//! clearest as straight-line code. Both threads share the connection's two sockets (no
//! duplicated descriptors) and its [`Held`] state.
//!
//! Server limits (docs/reference-limits.md): a connection cap with idle-first eviction,
//! idle and frame timeouts on the client side and a write timeout towards it, a memory
//! budget charged with the partial frame buffered each way (per connection and for all
//! together), TCP keepalive, and accept errors that never stop the relay (it backs off and
//! retries). The relay refuses by closing both sides: it originates no frames, so a client
//! can never take something the relay said for something its upstream said.

mod blocks;
mod pump;

use std::io;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use swp_core::Limits;

use crate::limits::{Admit, Budget, Charge, OnEvict, OverBudget, ServerLimits, Slot, Slots};
use blocks::Pool;
use pump::{Pump, Timeouts};

/// The two directions of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    ClientToUpstream = 0,
    UpstreamToClient = 1,
}

/// A connection's sockets: what the pumps read and write, and what an eviction or a
/// refusal shuts down (which ends both pumps' blocking reads at once).
#[derive(Debug)]
struct Sockets {
    client: TcpStream,
    /// Set once the upstream connection is made.
    upstream: OnceLock<TcpStream>,
}

impl Sockets {
    /// Ends the connection both ways, on both sides, at once: a frame being written is cut.
    /// For refusals and failures, where the connection is broken anyway.
    fn close(&self) {
        self.shutdown(Shutdown::Both);
    }

    /// Ends an idle connection for a newcomer: both reads end, so both pumps stop, but a
    /// frame still being written goes out whole first (then each pump sends its FIN), as
    /// `serve` finishes writing before it honours an eviction.
    fn evict(&self) {
        self.shutdown(Shutdown::Read);
    }

    fn shutdown(&self, how: Shutdown) {
        let _ = self.client.shutdown(how);
        if let Some(up) = self.upstream.get() {
            let _ = up.shutdown(how);
        }
    }
}

/// What the two pumps of one connection buffer, charged together against the memory budget
/// (`--conn-memory` bounds the connection, not each direction), and its place in the
/// connection table: idle when no partial frame is buffered either way, since the last
/// octet that arrived.
#[derive(Debug)]
struct Held {
    state: Mutex<HeldState>,
}

#[derive(Debug)]
struct HeldState {
    charge: Charge,
    octets: [usize; 2],
    /// Whether each direction has octets that are not yet on their way out.
    busy: [bool; 2],
    slot: Slot,
    /// When octets last arrived either way.
    last_active: tokio::time::Instant,
}

impl HeldState {
    fn mark(&mut self) {
        let idle = !self.busy[0] && !self.busy[1];
        self.slot.set_idle_since(idle.then_some(self.last_active));
    }
}

impl Held {
    fn lock(&self) -> MutexGuard<'_, HeldState> {
        // Every update is a few assignments: the state stays consistent under a panic.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records that `side` buffers `n` octets. Over a ceiling nothing changes and the
    /// caller drops the connection.
    fn hold(&self, side: Side, n: usize) -> Result<(), OverBudget> {
        let mut s = self.lock();
        let other = s.octets[1 - side as usize];
        s.charge.set(n.saturating_add(other))?;
        s.octets[side as usize] = n;
        s.busy[side as usize] = n > 0;
        s.mark();
        Ok(())
    }

    /// Octets arrived on `side`: busy until they are on their way out, so the connection's
    /// idle time counts from the last octet that arrived either way (eviction takes the
    /// longest idle first).
    fn active(&self, side: Side) {
        let mut s = self.lock();
        s.last_active = tokio::time::Instant::now();
        s.busy[side as usize] = true;
        s.mark();
    }

    /// Everything `side` buffers is whole frames about to be written: idle from here, as
    /// `serve` is idle once it has its replies to write. Said before the write, which can
    /// take a while, so the table is not told late; the charge stays until it is done.
    fn settle(&self, side: Side) {
        let mut s = self.lock();
        s.busy[side as usize] = false;
        s.mark();
    }
}

/// Serves one admitted client: connects upstream and pumps both ways until both directions
/// end. A failure of either pump closes the whole connection.
fn serve_one(
    sockets: Arc<Sockets>,
    held: Held,
    pool: Arc<Pool>,
    upstream: &str,
    (limits, server): (Limits, ServerLimits),
) -> io::Result<()> {
    let up = TcpStream::connect(upstream)?;
    up.set_nodelay(true)?;
    let sockets_up = sockets.clone();
    if sockets.upstream.set(up).is_err() {
        return Ok(());
    }
    crate::limits::accept::configure(&sockets.client, server.tcp_keepalive);
    // A client that stops reading cannot park the upstream direction (and the frame it
    // holds) forever: a write to it must finish within the body timeout, as in `serve`.
    sockets
        .client
        .set_write_timeout(Some(server.body_timeout))?;
    let held = Arc::new(held);
    let held_up = held.clone();
    let pool_up = pool.clone();
    let back = std::thread::Builder::new()
        .name("swp-ref relay up".into())
        .spawn(move || {
            let Some(up) = sockets_up.upstream.get() else {
                return;
            };
            let pump = Pump {
                from: up,
                to: &sockets_up.client,
                side: Side::UpstreamToClient,
                label: "upstream→client",
                limits,
                timeouts: None,
                held: &held_up,
                sockets: &sockets_up,
                pool: pool_up,
            };
            if let Err(e) = pump.run() {
                pump_failed(&sockets_up, "upstream→client", &e);
            }
        });
    let back = match back {
        Ok(t) => t,
        Err(e) => {
            sockets.close();
            return Err(e);
        }
    };
    let Some(up) = sockets.upstream.get() else {
        return Ok(());
    };
    let pump = Pump {
        from: &sockets.client,
        to: up,
        side: Side::ClientToUpstream,
        label: "client→upstream",
        limits,
        timeouts: Some(Timeouts {
            idle: server.idle_timeout,
            body: server.body_timeout,
        }),
        held: &held,
        sockets: &sockets,
        pool,
    };
    if let Err(e) = pump.run() {
        pump_failed(&sockets, "client→upstream", &e);
    }
    let _ = back.join();
    Ok(())
}

/// A pump's transport failed: the other direction cannot go on alone.
fn pump_failed(sockets: &Sockets, label: &str, e: &io::Error) {
    match e.kind() {
        // The peer went away: nothing worth a log line.
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::BrokenPipe
        | io::ErrorKind::NotConnected => {}
        // Only writes to the client have a timeout.
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            eprintln!("swp-ref relay: {label}: the client did not read in time; closing both sides")
        }
        _ => eprintln!("swp-ref relay: {label}: {e}; closing both sides"),
    }
    sockets.close();
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
        crate::serve::write_port_file(p, addr.port())?;
    }
    eprintln!("swp-ref relay: listening on tcp://{addr}, upstream {upstream}");
    let slots = Slots::new(server.max_connections);
    let budget = Budget::new(server.memory_budget, server.conn_memory);
    // Free blocks are kept up to the budget's worth: what connections may hold at once.
    let pool = Pool::new(server.memory_budget);
    let mut backoff = crate::limits::accept::Backoff::default();
    loop {
        let c = match l.accept() {
            Ok((c, _)) => c,
            Err(e) => {
                // Never fatal (issue 19, D2): out of descriptors, say, passes (and frees
                // the longest-idle connection).
                std::thread::sleep(backoff.failed(&e, &slots, "swp-ref relay"));
                continue;
            }
        };
        backoff.reset();
        let sockets = Arc::new(Sockets {
            client: c,
            upstream: OnceLock::new(),
        });
        // An evicted connection's threads wait in `read`: shutting its sockets down is what
        // they notice.
        let on_evict = {
            let s = sockets.clone();
            OnEvict::new(move || s.evict())
        };
        // Over the cap with every connection busy: the newcomer is closed (dropped here),
        // and the connections at work are not disturbed.
        let Admit::Admitted { slot, .. } = slots.admit_with(on_evict) else {
            continue;
        };
        let held = Held {
            state: Mutex::new(HeldState {
                charge: budget.charge(),
                octets: [0, 0],
                busy: [false, false],
                slot,
                last_active: tokio::time::Instant::now(),
            }),
        };
        let up = upstream.to_owned();
        let pool = pool.clone();
        let spawned = std::thread::Builder::new()
            .name("swp-ref relay".into())
            .spawn(move || {
                if let Err(e) = serve_one(sockets, held, pool, &up, (limits, server)) {
                    eprintln!("swp-ref relay: {e}");
                }
            });
        if let Err(e) = spawned {
            // The connection (moved into the closure) is dropped, so closed, with it.
            eprintln!("swp-ref relay: cannot start a connection thread: {e}");
        }
    }
}
