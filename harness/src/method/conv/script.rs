//! A scripted peer in memory for the judges' unit tests: what the harness sends is handed
//! to a script, whose answers arrive after delays on a [`VirtualClock`], so every
//! observation path (an answer, a close, silence) runs without sockets and without waiting.

use super::clock::{Clock, VirtualClock};
use crate::connect::wire::{Recv, Wire};
use std::io;
use std::time::{Duration, Instant};

/// What the peer does with the octets of one send: events after delays in ms.
pub type Script = Box<dyn FnMut(&[u8]) -> Vec<(u64, Recv)> + Send>;

/// A peer in memory on a virtual clock.
pub struct ScriptedWire {
    clock: VirtualClock,
    script: Script,
    queue: Vec<(Instant, Recv)>,
    closed: bool,
}

impl ScriptedWire {
    /// A peer answering by `script`, with `opening` already scheduled (events after delays
    /// in ms from now, before anything is sent).
    pub fn new(clock: &VirtualClock, script: Script, opening: Vec<(u64, Recv)>) -> Self {
        let now = clock.now();
        ScriptedWire {
            clock: clock.clone(),
            script,
            queue: opening
                .into_iter()
                .map(|(ms, r)| (now + Duration::from_millis(ms), r))
                .collect(),
            closed: false,
        }
    }
}

/// A line of text as the peer sends it.
pub fn line(s: &str) -> Recv {
    Recv::Data(format!("{s}\n").into_bytes())
}

impl Wire for ScriptedWire {
    fn send(&mut self, b: &[u8]) -> io::Result<()> {
        if self.closed {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"));
        }
        let now = self.clock.now();
        for (ms, r) in (self.script)(b) {
            self.queue.push((now + Duration::from_millis(ms), r));
        }
        Ok(())
    }

    fn half_close(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn recv(&mut self, deadline: Instant) -> Recv {
        self.queue.sort_by_key(|(t, _)| *t);
        match self.queue.first() {
            Some((t, _)) if *t <= deadline => {
                let (t, r) = self.queue.remove(0);
                self.clock.advance_to(t);
                if r == Recv::Eof {
                    self.closed = true;
                }
                r
            }
            _ => {
                self.clock.advance_to(deadline);
                Recv::Timeout
            }
        }
    }

    fn describe(&self) -> String {
        "scripted".into()
    }
}
