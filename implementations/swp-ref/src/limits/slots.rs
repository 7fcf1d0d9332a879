//! The connection table: at most `max` connections at once. A connection over the cap
//! takes the slot of the connection that has been idle the longest (no partial input,
//! nothing pending, nothing being answered), the way nginx reuses keep-alive connections
//! when it runs out; when every slot is busy, the newcomer is refused. Busy connections are
//! never disturbed, and a crowd of idle sockets can never lock fresh clients out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;
use tokio::time::Instant;

/// The table; share it as `Arc<Slots>`.
#[derive(Debug)]
pub struct Slots {
    max: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    next_id: u64,
    conns: HashMap<u64, Entry>,
}

#[derive(Debug)]
struct Entry {
    /// Since when the connection is idle; `None` while it is busy.
    idle_since: Option<Instant>,
    evict: Arc<Notify>,
}

/// What [`Slots::admit`] decided.
#[derive(Debug)]
pub enum Admit {
    /// Admitted. `evicted` says whether an idle connection gave up its slot for it.
    Admitted {
        /// The new connection's slot.
        slot: Slot,
        /// Whether an idle connection was told to close to make room.
        evicted: bool,
    },
    /// Every slot is busy: close the newcomer.
    Full,
}

/// One connection's place in the table; leaves it when dropped.
#[derive(Debug)]
pub struct Slot {
    id: u64,
    slots: Arc<Slots>,
    evict: Arc<Notify>,
    idle: bool,
}

impl Slots {
    /// A table of at most `max` connections (at least one).
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(Slots {
            max: max.max(1),
            inner: Mutex::new(Inner::default()),
        })
    }

    /// The cap.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Connections in the table.
    pub fn len(&self) -> usize {
        self.lock().conns.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The table stays consistent under a panic (every update is one map operation).
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A slot for a new connection (idle from now), evicting the longest-idle connection
    /// when the table is full.
    pub fn admit(self: &Arc<Self>) -> Admit {
        let mut inner = self.lock();
        let evicted = if inner.conns.len() >= self.max {
            if !evict_oldest_idle(&mut inner) {
                return Admit::Full;
            }
            true
        } else {
            false
        };
        inner.next_id += 1;
        let id = inner.next_id;
        let evict = Arc::new(Notify::new());
        inner.conns.insert(
            id,
            Entry {
                idle_since: Some(Instant::now()),
                evict: evict.clone(),
            },
        );
        Admit::Admitted {
            slot: Slot {
                id,
                slots: self.clone(),
                evict,
                idle: true,
            },
            evicted,
        }
    }

    /// Tells the longest-idle connection to close (to free its descriptor when the process
    /// has run out). Returns whether there was one.
    pub fn evict_idle(&self) -> bool {
        evict_oldest_idle(&mut self.lock())
    }
}

/// Removes the entry idle the longest and wakes its task. A linear scan: it only runs when
/// the table is full, and the table is bounded by the descriptor limit.
fn evict_oldest_idle(inner: &mut Inner) -> bool {
    let oldest = inner
        .conns
        .iter()
        .filter_map(|(id, e)| e.idle_since.map(|t| (t, *id)))
        // Equal instants: the earlier admitted (lower id) goes first.
        .min();
    match oldest.and_then(|(_, id)| inner.conns.remove(&id)) {
        Some(e) => {
            // A stored permit: the task sees it even if it is not waiting right now.
            e.evict.notify_one();
            true
        }
        None => false,
    }
}

impl Slot {
    /// Marks the connection idle (evictable) or busy. Cheap when nothing changes.
    pub fn set_idle(&mut self, idle: bool) {
        if idle == self.idle {
            return;
        }
        self.idle = idle;
        if let Some(e) = self.slots.lock().conns.get_mut(&self.id) {
            e.idle_since = idle.then(Instant::now);
        }
    }

    /// Completes when the table asks this connection to close.
    pub async fn evicted(&self) {
        self.evict.notified().await;
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.lock().conns.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admitted(a: Admit) -> (Slot, bool) {
        match a {
            Admit::Admitted { slot, evicted } => (slot, evicted),
            Admit::Full => panic!("refused"),
        }
    }

    #[tokio::test]
    async fn the_longest_idle_connection_makes_room_and_busy_ones_never_do() {
        let t = Slots::new(2);
        // Admitted in this order; equal instants are ordered by admission.
        let (a, _) = admitted(t.admit());
        let (b, _) = admitted(t.admit());
        // Full: the longest idle (a) is evicted for the newcomer.
        let (mut c, evicted) = admitted(t.admit());
        assert!(evicted);
        a.evicted().await;
        assert_eq!(t.len(), 2);
        drop(a);
        assert_eq!(t.len(), 2, "an evicted slot was already released");
        // b and c busy: a newcomer is refused.
        let mut b = b;
        b.set_idle(false);
        c.set_idle(false);
        assert!(matches!(t.admit(), Admit::Full));
        c.set_idle(true);
        let (_d, evicted) = admitted(t.admit());
        assert!(evicted);
        c.evicted().await;
        drop(b);
        drop(c);
        assert_eq!(t.len(), 1);
    }
}
