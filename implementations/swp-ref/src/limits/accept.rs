//! Accepting connections without ever giving up: every accept error (running out of
//! descriptors above all) is logged, answered by freeing an idle connection when
//! descriptors ran out, and retried after an exponential back-off, as Go's net/http and
//! nginx do. Also the socket options every accepted connection gets.

use super::slots::Slots;
use std::io;
use std::time::Duration;

/// First back-off after an accept error.
const BACKOFF_MIN: Duration = Duration::from_millis(5);
/// Longest back-off.
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// The back-off state of one accept loop.
#[derive(Debug, Default)]
pub struct Backoff {
    next: Option<Duration>,
    failures: u64,
}

impl Backoff {
    /// A successful accept: the next failure starts from the shortest pause again.
    pub fn reset(&mut self) {
        self.next = None;
    }

    /// An accept failed: frees an idle connection when the process ran out of descriptors,
    /// logs (the first failure of a run, then one in 64), and says how long to pause.
    ///
    /// When an idle connection was told to close, its descriptor is free in a moment, so
    /// the pause stays at the shortest; it only grows while nothing can be freed.
    pub fn failed(&mut self, e: &io::Error, slots: &Slots, who: &str) -> Duration {
        let freed = out_of_descriptors(e) && slots.evict_idle();
        let pause = match self.next {
            _ if freed => BACKOFF_MIN,
            None => BACKOFF_MIN,
            Some(d) => (d * 2).min(BACKOFF_MAX),
        };
        if self.next.is_none() || self.failures & 63 == 0 {
            eprintln!("{who}: accept failed: {e}; retrying in {pause:?}");
        }
        self.failures += 1;
        self.next = Some(pause);
        pause
    }
}

/// EMFILE or ENFILE: the process or the system has no descriptor left.
pub fn out_of_descriptors(e: &io::Error) -> bool {
    // The raw values are the same on every Unix this runs on (Linux, the BSDs, macOS).
    const ENFILE: i32 = 23;
    const EMFILE: i32 = 24;
    matches!(e.raw_os_error(), Some(ENFILE | EMFILE))
}

/// Sets what every accepted connection gets: no Nagle delay (replies are small and
/// latency-bound) and, unless `keepalive` is zero, TCP keepalive probes after that much
/// silence, so a peer that vanished without a FIN or RST is noticed.
pub fn configure<S: std::os::fd::AsFd>(sock: &S, keepalive: Duration) {
    let s = socket2::SockRef::from(sock);
    let _ = s.set_tcp_nodelay(true);
    if !keepalive.is_zero() {
        let params = socket2::TcpKeepalive::new()
            .with_time(keepalive)
            .with_interval(
                keepalive
                    .min(Duration::from_secs(10))
                    .max(Duration::from_secs(1)),
            );
        let _ = s.set_tcp_keepalive(&params);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_a_ceiling_and_resets() {
        // An empty table: nothing to free, so the pause grows.
        let slots = Slots::new(1);
        let e = io::Error::from_raw_os_error(24);
        assert!(out_of_descriptors(&e));
        let mut b = Backoff::default();
        let pauses: Vec<_> = (0..10).map(|_| b.failed(&e, &slots, "t")).collect();
        assert_eq!(pauses[0], BACKOFF_MIN);
        assert_eq!(pauses[1], BACKOFF_MIN * 2);
        assert_eq!(*pauses.last().unwrap(), BACKOFF_MAX);
        b.reset();
        assert_eq!(b.failed(&e, &slots, "t"), BACKOFF_MIN);
        assert!(!out_of_descriptors(&io::Error::other("x")));
        // With an idle connection to free, it stays short.
        let _idle = slots.admit();
        assert_eq!(b.failed(&e, &slots, "t"), BACKOFF_MIN);
    }
}
