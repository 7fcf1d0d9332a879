//! The per-connection task: reads octets into an `endpoint::Connection`, arms its timer,
//! writes what it produces, holds it to the server limits (idle and frame timeouts, the
//! memory budget, eviction), and closes when it says so or when the server stops.

use crate::endpoint::{Connection, Output};
use crate::limits::{Charge, Slot};
use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use swp_core::ErrorCode;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::watch;
use tokio::time::Instant;

/// Read buffer per connection: large enough to take a burst of small frames in one read,
/// small enough not to matter per connection. Frames larger than this arrive over several
/// reads and are reassembled by the core.
const READ_CHUNK: usize = 32 * 1024;

/// How long a closed connection keeps draining the peer's input (see [`linger`]).
const LINGER_TIME: Duration = Duration::from_millis(500);
/// How much of the peer's input a closed connection drains at most.
const LINGER_BYTES: usize = 1 << 20;

/// Milliseconds since the Unix epoch (0 if the clock is before it): the clock that stamps
/// outbound frames and judges inbound freshness.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// How a connection ended.
#[derive(Debug)]
pub enum Ended {
    /// The endpoint closed it (clean end of stream, framing error, close policy, a limit).
    Closed,
    /// The server is stopping.
    Shutdown,
    /// The transport failed.
    Io(io::Error),
}

/// The server limits one connection is held to (docs/reference-limits.md). The stdio
/// connection has none: it is the only one, and its peer owns the process.
#[derive(Debug, Default)]
pub struct Edge {
    /// Its place in the connection table: marked idle or busy, and closed when evicted.
    pub slot: Option<Slot>,
    /// Its charge against the memory budget.
    pub charge: Option<Charge>,
    /// Close after this long without input while nothing is in progress.
    pub idle_timeout: Option<Duration>,
    /// Drop a frame (error frame, then close) that has not fully arrived this long after
    /// its first octet.
    pub body_timeout: Option<Duration>,
}

/// Which limit a deadline enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    Idle,
    Body,
}

/// What the limit timer is armed for: idleness, or the body timeout of one frame (by its
/// number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LimitKey {
    Idle,
    Body(u64),
}

enum Step {
    Read(io::Result<usize>),
    /// Frames already read go on (after a pause for their replies to be written).
    Resume,
    Timer,
    Limit(Limit),
    Evicted,
    Shutdown,
}

/// Serves one connection until it ends. `peer` names it in log lines; `busy_poll` is how
/// long to keep polling for the peer's next octets after each read before sleeping (zero:
/// never); `edge` holds the server limits.
///
/// Why poll at all: on a virtual machine whose idle vCPUs halt, waking a sleeping thread on
/// another vCPU costs tens of microseconds, which dominates a request/response round trip.
/// Polling briefly after a read keeps this vCPU awake for the typical next request. The
/// poll is cooperative: every turn yields to the runtime's other tasks (which also polls
/// the I/O driver without blocking) and to other threads on this CPU, so a busy server
/// and a peer on the same CPU lose nothing to it.
///
/// Once the peer has ended its stream (a FIN, or a TLS close_notify) the connection is
/// never read again: a read at end of stream completes at once, forever, so reading on
/// would starve the timer of delayed replies and spin (issue 19, D1). Only the timers,
/// the eviction and the stop signal are waited on until the replies are out.
pub async fn drive<S>(
    mut stream: S,
    mut conn: Connection,
    peer: &str,
    mut shutdown: watch::Receiver<bool>,
    busy_poll: Duration,
    mut edge: Edge,
) -> Ended
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    if *shutdown.borrow_and_update() {
        return Ended::Shutdown;
    }
    let mut buf = vec![0u8; READ_CHUNK];
    // One timer, re-armed only when the connection's next deadline changes.
    let sleep = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(sleep);
    let mut armed: Option<u64> = None;
    // The limit timer: idle, or the current frame's body timeout.
    let limit_sleep = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(limit_sleep);
    let mut limit_armed: Option<LimitKey> = None;
    let mut poll_until: Option<Instant> = None;
    let mut eof = false;
    // Closed with nothing just written (idle, evicted): no error frame to protect, so no
    // linger, and the descriptor is free at once (evictions free slots under floods).
    let mut quiet = false;
    let mut last_input = Instant::now();
    let mut frame_no = conn.frames_started();
    let mut frame_since = last_input;
    let ended = loop {
        let deadline = conn.next_deadline();
        if deadline != armed {
            if let Some(d) = deadline {
                let wait = Duration::from_millis(d.saturating_sub(now_ms()));
                sleep.as_mut().reset(Instant::now() + wait);
            }
            armed = deadline;
        }
        // The limit timer is re-armed when what it guards changes (a new frame, idle
        // again), not after every read: an idle deadline that has moved on is noticed when
        // the timer fires, and re-armed then. That keeps the timer wheel off the hot path.
        let limit = if conn.partial_input() > 0 {
            edge.body_timeout.map(|_| LimitKey::Body(frame_no))
        } else if !eof && !conn.has_pending() {
            edge.idle_timeout.map(|_| LimitKey::Idle)
        } else {
            None
        };
        if limit != limit_armed {
            match (limit, edge.body_timeout, edge.idle_timeout) {
                (Some(LimitKey::Body(_)), Some(t), _) => {
                    limit_sleep.as_mut().reset(frame_since + t)
                }
                (Some(LimitKey::Idle), _, Some(t)) => limit_sleep.as_mut().reset(last_input + t),
                _ => {}
            }
            limit_armed = limit;
        }
        let step = loop {
            let polling = !eof && poll_until.is_some_and(|t| Instant::now() < t);
            let step = tokio::select! {
                biased;
                _ = shutdown.changed() => Some(Step::Shutdown),
                () = evicted(edge.slot.as_ref()) => Some(Step::Evicted),
                // Frames already read wait for the replies before them to be written
                // (`OUTPUT_ALLOWANCE`): they go first, and nothing more is read meanwhile.
                () = std::future::ready(()), if conn.input_waiting() => Some(Step::Resume),
                r = stream.read(&mut buf), if !eof && !conn.input_waiting() => Some(Step::Read(r)),
                () = &mut sleep, if armed.is_some() => Some(Step::Timer),
                () = &mut limit_sleep, if limit_armed.is_some() => {
                    limit_armed.map(|k| Step::Limit(match k {
                        LimitKey::Idle => Limit::Idle,
                        LimitKey::Body(_) => Limit::Body,
                    }))
                }
                () = tokio::task::yield_now(), if polling => None,
            };
            match step {
                Some(step) => break step,
                // Let a thread sharing this CPU (say, the peer) run before polling again.
                None => std::thread::yield_now(),
            }
        };
        if matches!(step, Step::Read(Ok(n)) if n > 0) && !busy_poll.is_zero() {
            poll_until = Some(Instant::now() + busy_poll);
        }
        match step {
            Step::Shutdown => break Ended::Shutdown,
            Step::Limit(Limit::Idle) => {
                let due = edge.idle_timeout.map(|t| last_input + t);
                if let Some(due) = due.filter(|d| *d > Instant::now()) {
                    // Input came since the timer was armed: wait for the real deadline.
                    limit_sleep.as_mut().reset(due);
                    continue;
                }
                // Idle too long: nothing is in progress, so a plain close loses nothing.
                quiet = true;
                break Ended::Closed;
            }
            // Evicted for a newcomer: idle too, so nothing is lost either.
            Step::Evicted => {
                quiet = true;
                break Ended::Closed;
            }
            Step::Read(Ok(0)) => {
                eof = true;
                conn.on_eof(now_ms());
            }
            Step::Read(Ok(n)) => {
                last_input = Instant::now();
                conn.on_bytes(&buf[..n], now_ms());
            }
            // A TLS peer that closes without close_notify: frames delimit themselves, so
            // this is an end of stream like any other (a cut inside a frame is still caught).
            Step::Read(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
                eof = true;
                conn.on_eof(now_ms());
            }
            Step::Read(Err(e)) => break Ended::Io(e),
            Step::Timer => {
                armed = None;
                conn.on_timer(now_ms());
            }
            Step::Resume => conn.resume(now_ms()),
            Step::Limit(Limit::Body) => {
                let t = edge.body_timeout.unwrap_or_default();
                conn.abort(
                    ErrorCode::InvalidFrame,
                    format!("a frame did not arrive in full within {t:?} of its first octet"),
                    now_ms(),
                );
            }
        }
        if conn.frames_started() != frame_no {
            frame_no = conn.frames_started();
            frame_since = Instant::now();
        }
        if let Some(charge) = &mut edge.charge {
            if let Err(e) = charge.set(conn.held_bytes()) {
                conn.abort(ErrorCode::RateLimitExceeded, e.to_string(), now_ms());
                let _ = charge.set(conn.held_bytes());
            }
        }
        if let Some(slot) = &mut edge.slot {
            slot.set_idle(
                conn.partial_input() == 0 && !conn.has_pending() && !conn.input_waiting(),
            );
        }
        // A peer that stops reading cannot hold the connection (and its replies) forever:
        // the replies must be written within the body timeout. The timer is only
        // registered when a write actually has to wait.
        let flushed = flush_within(
            edge.body_timeout,
            "its replies",
            &mut conn,
            &mut stream,
            peer,
        )
        .await;
        match flushed {
            Ok(false) => {}
            Ok(true) => break Ended::Closed,
            Err(e) => break Ended::Io(e),
        }
    };
    // Best effort: FIN (and TLS close_notify); the peer may already be gone.
    let _ = stream.shutdown().await;
    if matches!(ended, Ended::Closed) && !eof && !quiet {
        linger(&mut stream, &mut buf).await;
    }
    ended
}

/// Ends a connection the endpoint refused before reading anything from it (a client
/// certificate that names no one): writes what `conn` has queued (its error frame), within
/// the body timeout, then closes as [`drive`] does after an error frame, lingering so the
/// frame is not destroyed by a reset.
pub async fn refuse<S>(mut stream: S, mut conn: Connection, peer: &str, edge: Edge) -> Ended
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let flushed = flush_within(
        edge.body_timeout,
        "its refusal",
        &mut conn,
        &mut stream,
        peer,
    )
    .await;
    let _ = stream.shutdown().await;
    match flushed {
        Ok(_) => {
            let mut buf = vec![0u8; READ_CHUNK];
            linger(&mut stream, &mut buf).await;
            Ended::Closed
        }
        Err(e) => Ended::Io(e),
    }
}

/// Completes when `slot` is evicted; never without a slot.
async fn evicted(slot: Option<&Slot>) {
    match slot {
        Some(s) => s.evicted().await,
        None => std::future::pending().await,
    }
}

/// After the endpoint closed on its own (e.g. after an error frame), reads and discards
/// what the peer still sends, for a bounded time and volume. Closing a socket with unread
/// input makes the kernel send a reset, and a reset can destroy the error frame we just
/// wrote before the peer reads it.
async fn linger<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut [u8]) {
    let mut left = LINGER_BYTES;
    let _ = tokio::time::timeout(LINGER_TIME, async {
        while left > 0 {
            match stream.read(buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    })
    .await;
}

/// [`flush_outputs`] within `limit` (the body timeout), if one is set: a peer that does not
/// read `what` is dropped when it passes.
async fn flush_within<S>(
    limit: Option<Duration>,
    what: &str,
    conn: &mut Connection,
    stream: &mut S,
    peer: &str,
) -> io::Result<bool>
where
    S: AsyncWrite + Unpin,
{
    match limit {
        Some(t) => tokio::time::timeout(t, flush_outputs(conn, stream, peer))
            .await
            .unwrap_or_else(|_| {
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("the peer did not read {what} within {t:?}"),
                ))
            }),
        None => flush_outputs(conn, stream, peer).await,
    }
}

/// Writes everything the connection produced with one write call (the connection batches
/// all frames of one input into a single `Send`). Returns whether it asked to close.
async fn flush_outputs<S>(conn: &mut Connection, stream: &mut S, peer: &str) -> io::Result<bool>
where
    S: AsyncWrite + Unpin,
{
    let mut close = false;
    let mut wrote = false;
    while let Some(out) = conn.poll_output() {
        match out {
            Output::Send(bytes) => {
                stream.write_all(&bytes).await?;
                wrote = true;
            }
            Output::Notice(n) => eprintln!("swp-ref: {n} (peer {peer})"),
            Output::Close => close = true,
        }
    }
    if wrote {
        stream.flush().await?;
    }
    Ok(close)
}
