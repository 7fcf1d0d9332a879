//! The memory budget for octets a server buffers on behalf of its peers (partial frames,
//! HTTP bodies, WebSocket messages, delayed replies): a per-connection ceiling and one
//! global ceiling shared by every connection, so a crowd of peers that each stall a large
//! frame cannot make the process hold more than the operator allowed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The global budget; connections draw on it through [`Charge`]s.
#[derive(Debug)]
pub struct Budget {
    used: AtomicUsize,
    total: usize,
    per_connection: usize,
}

/// A charge would exceed a ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OverBudget {
    /// One connection would hold more than its own ceiling.
    #[error("the connection would buffer {want} octets, over its budget of {max}")]
    Connection {
        /// What it would hold.
        want: usize,
        /// Its ceiling.
        max: usize,
    },
    /// All connections together would hold more than the global budget.
    #[error("the server's memory budget of {total} octets for buffered input is spent")]
    Global {
        /// The global ceiling.
        total: usize,
    },
}

impl Budget {
    /// A budget of `total` octets overall and `per_connection` octets for any one connection.
    pub fn new(total: usize, per_connection: usize) -> Arc<Self> {
        Arc::new(Budget {
            used: AtomicUsize::new(0),
            total,
            per_connection,
        })
    }

    /// Octets currently charged, across all connections.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// A fresh, empty charge for one connection.
    pub fn charge(self: &Arc<Self>) -> Charge {
        Charge {
            budget: self.clone(),
            held: 0,
        }
    }
}

/// What one connection holds against the budget; released when dropped.
#[derive(Debug)]
pub struct Charge {
    budget: Arc<Budget>,
    held: usize,
}

impl Charge {
    /// Octets this connection holds now.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Sets what this connection holds to `n` octets. On error nothing changes: the caller
    /// is expected to drop what it buffered (and the connection).
    pub fn set(&mut self, n: usize) -> Result<(), OverBudget> {
        if n == self.held {
            // The common case (nothing buffered before or after): no shared write.
            return Ok(());
        }
        if n > self.budget.per_connection {
            return Err(OverBudget::Connection {
                want: n,
                max: self.budget.per_connection,
            });
        }
        if n > self.held {
            let delta = n - self.held;
            let total = self.budget.total;
            // Checked and added in one step, so two connections can never both squeeze
            // under the ceiling with the same last octets.
            self.budget
                .used
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                    u.checked_add(delta).filter(|&x| x <= total)
                })
                .map_err(|_| OverBudget::Global { total })?;
        } else {
            self.budget.used.fetch_sub(self.held - n, Ordering::AcqRel);
        }
        self.held = n;
        Ok(())
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.held, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_are_bounded_per_connection_and_overall_and_released_on_drop() {
        let b = Budget::new(100, 60);
        let mut a = b.charge();
        let mut c = b.charge();
        assert_eq!(a.set(61), Err(OverBudget::Connection { want: 61, max: 60 }));
        a.set(60).unwrap();
        c.set(40).unwrap();
        assert_eq!(b.used(), 100);
        assert_eq!(c.set(41), Err(OverBudget::Global { total: 100 }));
        assert_eq!(c.held(), 40);
        a.set(10).unwrap();
        c.set(90 - 30).unwrap();
        assert_eq!(b.used(), 70);
        drop(a);
        assert_eq!(b.used(), 60);
        drop(c);
        assert_eq!(b.used(), 0);
    }
}
