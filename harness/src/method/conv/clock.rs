//! Where a conversation reads the time and waits: the system clock on a real wire, a
//! virtual one in unit tests, so judgement (deadlines, quiet windows, timeouts) can be
//! tested without waiting.

use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Where a method reads the time and waits.
pub trait Clock: Send + Sync {
    /// Now.
    fn now(&self) -> Instant;
    /// Waits until `t`.
    fn sleep_until(&self, t: Instant);
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

/// The one system clock, for conversations that borrow their clock.
pub static SYSTEM: SystemClock = SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep_until(&self, t: Instant) {
        std::thread::sleep(t.saturating_duration_since(Instant::now()));
    }
}

/// Time that moves only when someone waits on it (a scripted peer answering, a sleep):
/// the clock of the unit tests that drive a judge against a peer in memory.
#[derive(Debug, Clone)]
pub struct VirtualClock(Arc<Mutex<Instant>>);

impl Default for VirtualClock {
    fn default() -> Self {
        VirtualClock::new()
    }
}

impl VirtualClock {
    /// A clock standing at the real now.
    pub fn new() -> Self {
        VirtualClock(Arc::new(Mutex::new(Instant::now())))
    }

    /// Moves the clock forward to `t` (never back).
    pub fn advance_to(&self, t: Instant) {
        // A poisoned lock only means a test panicked elsewhere; the instant is still valid.
        let mut now = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if t > *now {
            *now = t;
        }
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Instant {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn sleep_until(&self, t: Instant) {
        self.advance_to(t);
    }
}
