//! One vector's timeline: its clock, its start and hard deadline, the run's cancel handle
//! and the observation log (the transcript, bounded by [`super::transcript`]) with the one
//! clip policy every method uses.
//! A wait goes through [`Timeline::slice`] so a cancelled run stops waiting within
//! [`CANCEL_POLL`], whatever the deadline.

use super::clock::Clock;
use super::transcript::{Recorded, Transcript};
use crate::report::result::{Dir, TranscriptEntry};
use crate::support::cancel::Cancel;
use crate::support::transcript::clip_text;
use std::time::{Duration, Instant};

/// The longest a wait goes on without looking at the cancel handle.
pub const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Why a vector that a cancel cut short has no verdict of its own: its `drive` ends it as a
/// harness error with this reason, which the plan loop turns into `interrupted`.
pub const INTERRUPTED: &str =
    "the run was interrupted while this vector ran; it stopped waiting for the SUT";

/// How entries enter the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clip {
    /// Characters of an entry kept (`None`: the entry as the method made it).
    pub chars: Option<usize>,
    /// Entries carry their time since the start; without, every `t_ms` is 0 (reports whose
    /// transcripts must not differ between runs, where the order tells the story).
    pub stamped: bool,
}

impl Clip {
    /// Entries whole, with their times.
    pub const WHOLE: Clip = Clip {
        chars: None,
        stamped: true,
    };
}

/// One vector's time, cancel handle and transcript.
pub struct Timeline<'a> {
    /// Time.
    pub clock: &'a dyn Clock,
    /// When the vector started.
    pub start: Instant,
    /// The vector's hard limit.
    pub hard_deadline: Instant,
    /// Both directions and the harness's notes, as they happen, bounded.
    pub transcript: Transcript,
    cancel: Cancel,
    clip: Clip,
}

impl<'a> Timeline<'a> {
    /// A timeline starting now on `clock`, ending `vector_ms` later, stopped early by
    /// `cancel`.
    pub fn new(clock: &'a dyn Clock, vector_ms: u64, cancel: Cancel, clip: Clip) -> Self {
        let start = clock.now();
        Timeline::starting(clock, start, vector_ms, cancel, clip)
    }

    /// A timeline that started at `start` (a server's start-up counts toward the vector).
    pub fn starting(
        clock: &'a dyn Clock,
        start: Instant,
        vector_ms: u64,
        cancel: Cancel,
        clip: Clip,
    ) -> Self {
        Timeline {
            clock,
            start,
            hard_deadline: start + Duration::from_millis(vector_ms),
            transcript: Transcript::default(),
            cancel,
            clip,
        }
    }

    /// Now.
    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    /// Milliseconds since the vector started.
    pub fn t(&self) -> u64 {
        u64::try_from(self.now().saturating_duration_since(self.start).as_millis())
            .unwrap_or(u64::MAX)
    }

    /// `ms` from now.
    pub fn after(&self, ms: u64) -> Instant {
        self.now() + Duration::from_millis(ms)
    }

    /// `ms` from now, within the vector's hard limit.
    pub fn deadline(&self, ms: u64) -> Instant {
        self.within(self.after(ms))
    }

    /// `t`, within the vector's hard limit.
    pub fn within(&self, t: Instant) -> Instant {
        t.min(self.hard_deadline)
    }

    /// Whether the run was asked to stop.
    pub fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The bound of the next single wait toward `deadline`: no further than
    /// [`CANCEL_POLL`] away, so the caller looks at the cancel handle again soon. A wait
    /// that times out before `deadline` is not the deadline's timeout.
    pub fn slice(&self, deadline: Instant) -> Instant {
        deadline.min(self.now() + CANCEL_POLL)
    }

    /// Waits until `t` unless the run is cancelled first; whether `t` was reached.
    pub fn sleep_until(&self, t: Instant) -> bool {
        loop {
            if self.cancelled() {
                return false;
            }
            if self.now() >= t {
                return true;
            }
            self.clock.sleep_until(self.slice(t));
        }
    }

    /// `s` as the transcript keeps it.
    pub fn clip(&self, s: &str) -> String {
        match self.clip.chars {
            Some(n) => clip_text(s, n),
            None => s.to_owned(),
        }
    }

    /// Adds a transcript entry.
    pub fn log(&mut self, dir: Dir, data: impl Into<String>) {
        let data = data.into();
        let data = match self.clip.chars {
            Some(n) => clip_text(&data, n),
            None => data,
        };
        let t_ms = if self.clip.stamped { self.t() } else { 0 };
        self.transcript.push(TranscriptEntry { t_ms, dir, data });
    }

    /// Adds a note to the transcript.
    pub fn note(&mut self, s: impl Into<String>) {
        self.log(Dir::Note, s);
    }

    /// The transcript so far, leaving it empty.
    pub fn take_transcript(&mut self) -> Recorded {
        self.transcript.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::conv::clock::VirtualClock;

    #[test]
    fn a_cancelled_run_stops_sleeping_at_once() {
        let clock = VirtualClock::new();
        let cancel = Cancel::new();
        let tl = Timeline::new(&clock, 10_000, cancel.clone(), Clip::WHOLE);
        cancel.cancel();
        assert!(!tl.sleep_until(tl.after(5_000)));
        assert_eq!(tl.t(), 0);
    }

    #[test]
    fn a_sleep_reaches_its_time_in_slices() {
        let clock = VirtualClock::new();
        let tl = Timeline::new(&clock, 10_000, Cancel::new(), Clip::WHOLE);
        assert!(tl.sleep_until(tl.after(1_000)));
        assert_eq!(tl.t(), 1_000);
        assert_eq!(tl.deadline(20_000), tl.hard_deadline);
    }

    #[test]
    fn the_clip_policy_cuts_and_unstamps() {
        let clock = VirtualClock::new();
        let clip = Clip {
            chars: Some(4),
            stamped: false,
        };
        let mut tl = Timeline::new(&clock, 10_000, Cancel::new(), clip);
        clock.advance_to(tl.after(7));
        tl.note("abcdefgh");
        let t = tl.take_transcript().entries;
        assert_eq!(t[0].t_ms, 0);
        assert_eq!(t[0].data, clip_text("abcdefgh", 4));
    }
}
