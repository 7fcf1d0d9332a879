//! The run's cancel handle: how an interruption (Ctrl-C, a test) reaches the plan loop and
//! the methods, without a process-wide flag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Asks a run to stop after the vector in flight. Cloned into whatever may interrupt the run
/// (the CLI's signal handler, a test) and handed to the plan loop and to every method.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A handle nobody has cancelled yet.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Stops the run after the vector in flight.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether the run was asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}
