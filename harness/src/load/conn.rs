//! One load connection at the edge: a blocking wire (the harness's own TCP, TLS or stdio
//! wire) on a thread of its own. It keeps K requests in flight while the window is open,
//! cuts what comes back into frames with the harness's codec, lets the [`Book`] account for
//! them, reconnects after a failure while the window is open, and drains at the end.

use super::book::{Book, Matcher};
use crate::connect::wire::{Recv, Wire};
use crate::frames::{e1, Envelope, FrameDecoder, Limits};
use crate::method::conv::clock::Clock;
use crate::support::cancel::Cancel;
use bytes::Bytes;
use std::time::{Duration, Instant};

/// How long one read waits before the loop looks at the clock again (timeouts, the end of
/// the window, a cancel).
const TICK: Duration = Duration::from_millis(50);

/// How often the in-flight table is scanned for requests past the reply timeout.
const EXPIRE_EVERY: Duration = Duration::from_millis(100);

/// The wait before reconnecting after a failure, so a dead endpoint is not hammered.
const RECONNECT_BACKOFF: Duration = Duration::from_millis(200);

/// The probe, ready to stamp with fresh msg_ids. The manifest's frame is materialised again
/// every second so a `ts_unix_ms` defaulting to "now" stays fresh on long runs.
pub struct Template {
    build: Build,
    env: Envelope,
    built: Instant,
}

/// Materialises the probe envelope (shared by the connections).
pub type Build = std::sync::Arc<dyn Fn() -> Result<Envelope, String> + Send + Sync>;

/// How often the probe is rebuilt.
const REBUILD_EVERY: Duration = Duration::from_secs(1);

impl Template {
    /// A template from a builder of the probe envelope (called at `now` and once a second
    /// after).
    pub fn new(build: Build, now: Instant) -> Result<Self, String> {
        let env = build()?;
        Ok(Template {
            build,
            env,
            built: now,
        })
    }

    /// The probe's frame under `msg_id`.
    pub fn frame(&mut self, msg_id: Bytes, now: Instant, out: &mut Vec<u8>) {
        if now.saturating_duration_since(self.built) >= REBUILD_EVERY {
            // A builder that worked once keeps working (same spec, another clock reading);
            // should it not, the previous envelope is still a valid request.
            if let Ok(e) = (self.build)() {
                self.env = e;
            }
            self.built = now;
        }
        let mut e = self.env.clone();
        e.msg_id = msg_id;
        // The probe decoded within the endpoint's frame bound, and ids are 16 octets like
        // the ones it was built with, so the frame always fits.
        if let Ok(f) = e1::frame_bytes(&e) {
            out.extend_from_slice(&f);
        }
    }
}

/// Opens a connection to the endpoint (again): the wire, or why not.
pub type Connect<'a> = &'a (dyn Fn() -> Result<Box<dyn Wire>, String> + Sync);

/// When the run's phases end.
#[derive(Debug, Clone, Copy)]
pub struct Phases {
    /// Requests are sent until then.
    pub window_end: Instant,
    /// Replies are awaited until then.
    pub drain_end: Instant,
}

/// What one connection needs besides its book.
pub struct Drive<'a> {
    /// Reads frames.
    pub matcher: &'a Matcher,
    /// The endpoint's frame bound, for reading its frames.
    pub reply_limits: Limits,
    /// Phase ends.
    pub phases: Phases,
    /// Interrupts the run.
    pub cancel: &'a Cancel,
    /// Where the time comes from (the system clock; a virtual one in tests).
    pub clock: &'a dyn Clock,
    /// Reconnects; `None` where a new connection is not possible (stdio: the process).
    pub reconnect: Option<Connect<'a>>,
}

/// Drives one connection (starting with `wire`, or connecting first when it is `None`)
/// until the drain ends, everything is answered after the window, or the run is cancelled.
pub fn run(mut wire: Option<Box<dyn Wire>>, book: &mut Book, tmpl: &mut Template, d: &Drive<'_>) {
    let mut last_expire = d.clock.now();
    let mut out = Vec::new();
    'connection: loop {
        // Ctrl-C kills the endpoint: stop, do not reconnect to it.
        if d.cancel.is_cancelled() {
            break;
        }
        let mut w = match wire.take() {
            Some(w) => w,
            None => {
                let now = d.clock.now();
                let Some(connect) = d.reconnect.filter(|_| now < d.phases.window_end) else {
                    break 'connection;
                };
                match connect() {
                    Ok(w) => {
                        book.opened();
                        w
                    }
                    Err(why) => {
                        book.closed(&why);
                        d.clock.sleep_until(d.clock.now() + RECONNECT_BACKOFF);
                        continue 'connection;
                    }
                }
            }
        };
        let mut frames = FrameDecoder::new(d.reply_limits);
        loop {
            let now = d.clock.now();
            if d.cancel.is_cancelled() {
                break 'connection;
            }
            if now.saturating_duration_since(last_expire) >= EXPIRE_EVERY {
                book.expire(now);
                last_expire = now;
            }
            if now < d.phases.window_end {
                // Fill the window in one write.
                out.clear();
                while let Some(id) = book.issue(now) {
                    tmpl.frame(id, now, &mut out);
                }
                if !out.is_empty() {
                    if let Err(e) = w.send(&out) {
                        book.closed(&format!("send: {e}"));
                        let now = d.clock.now();
                        d.clock.sleep_until(
                            now + RECONNECT_BACKOFF
                                .min(d.phases.window_end.saturating_duration_since(now)),
                        );
                        continue 'connection;
                    }
                }
            } else if book.in_flight() == 0 || now >= d.phases.drain_end {
                break 'connection;
            }
            let until = if now < d.phases.window_end {
                d.phases.window_end
            } else {
                d.phases.drain_end
            };
            match w.recv((now + TICK).min(until)) {
                Recv::Data(bytes) => {
                    frames.feed(&bytes);
                    let at = d.clock.now();
                    loop {
                        match frames.next_body() {
                            Ok(Some(body)) => match e1::decode(&body, &d.reply_limits) {
                                Ok(env) => {
                                    let seen = d.matcher.classify(&env);
                                    book.on_frame(&env.msg_id, seen, at);
                                }
                                Err(e) => {
                                    book.undecodable();
                                    book.closed(&format!("a frame that does not decode: {e}"));
                                    continue 'connection;
                                }
                            },
                            Ok(None) => break,
                            Err(e) => {
                                book.undecodable();
                                book.closed(&format!("output that is not framing: {e}"));
                                continue 'connection;
                            }
                        }
                    }
                }
                Recv::Timeout => {}
                Recv::Eof => {
                    book.closed("the endpoint closed the connection");
                    continue 'connection;
                }
                Recv::Broken(why) => {
                    book.closed(&format!("the connection broke: {why}"));
                    continue 'connection;
                }
            }
        }
    }
    book.finish();
}
