//! The spare server: one process started ahead of need, while a vector runs, so that the
//! next vector needing a new process (a `fresh` one, or any after a crash) finds it already
//! listening instead of waiting for its start-up. The method uses it only for servers on a
//! port the harness chooses (`${PORT}`): a port file is one path shared by every process,
//! and a stdio server's start-up time is part of what a vector grants and judges.

use crate::connect::process::Supervised;
use std::path::PathBuf;

/// A started server nobody has connected to yet.
pub(super) struct Spare {
    pub proc: Supervised,
    /// The port it was told to listen on.
    pub port: u16,
    /// Its stderr.
    pub log: PathBuf,
}

/// The spare waiting, and how many were started (their logs are numbered).
#[derive(Default)]
pub(super) struct Spares {
    waiting: Option<Spare>,
    started: u32,
}

impl Spares {
    /// The spare, if one is still alive (a spare that exited is dropped, and the vector
    /// starts its own server, which reports the failure as its own).
    pub(super) fn take(&mut self) -> Option<Spare> {
        self.waiting
            .take()
            .and_then(|mut s| s.proc.exited().is_none().then_some(s))
    }

    /// Starts a spare with `spawn` (given the log's name) unless one is waiting. A failure
    /// to start is left to the vector that would have used it: it starts a server of its
    /// own and reports what happens.
    pub(super) fn warm(&mut self, spawn: impl FnOnce(&str) -> Option<Spare>) {
        if self.waiting.is_some() {
            return;
        }
        self.started += 1;
        self.waiting = spawn(&format!("spare-{}", self.started));
    }
}
