//! The connection table: at most `max` connections at once. A connection over the cap
//! takes the slot of the connection that has been idle the longest (no partial input,
//! nothing pending, nothing being answered), the way nginx reuses keep-alive connections
//! when it runs out; when every slot is busy, the newcomer is refused. Busy connections are
//! never disturbed, and a crowd of idle sockets can never lock fresh clients out.
//!
//! An evicted connection is told through its slot (an async wait, for the tokio servers) and,
//! when it was admitted with one, through a hook run at once (for the relay's blocking
//! threads, which wait in `read` and learn of nothing else).

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
    on_evict: Option<OnEvict>,
}

impl Entry {
    /// Tells the connection to close; called with the table unlocked, since the hook may
    /// make system calls.
    fn evict(self) {
        // A stored permit: the task sees it even if it is not waiting right now.
        self.evict.notify_one();
        if let Some(OnEvict(hook)) = self.on_evict {
            hook();
        }
    }
}

/// What to do, beside waking [`Slot::evicted`], when a connection is evicted: for a
/// connection served by a blocking thread, shutting its sockets down so the thread's
/// `read` returns. Dropped unrun when the connection leaves the table on its own.
pub struct OnEvict(Box<dyn FnOnce() + Send>);

impl OnEvict {
    /// A hook running `f` on eviction.
    pub fn new(f: impl FnOnce() + Send + 'static) -> Self {
        OnEvict(Box::new(f))
    }
}

impl std::fmt::Debug for OnEvict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnEvict")
    }
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
        self.admit_inner(None)
    }

    /// [`Slots::admit`] for a connection that learns of its eviction through `on_evict`
    /// rather than (or beside) [`Slot::evicted`]. When the table is full of busy
    /// connections, `on_evict` is dropped unrun.
    pub fn admit_with(self: &Arc<Self>, on_evict: OnEvict) -> Admit {
        self.admit_inner(Some(on_evict))
    }

    fn admit_inner(self: &Arc<Self>, on_evict: Option<OnEvict>) -> Admit {
        let mut inner = self.lock();
        let evicted = if inner.conns.len() >= self.max {
            match take_oldest_idle(&mut inner) {
                Some(e) => Some(e),
                None => return Admit::Full,
            }
        } else {
            None
        };
        inner.next_id += 1;
        let id = inner.next_id;
        let evict = Arc::new(Notify::new());
        inner.conns.insert(
            id,
            Entry {
                idle_since: Some(Instant::now()),
                evict: evict.clone(),
                on_evict,
            },
        );
        drop(inner);
        let was_evicted = evicted.is_some();
        if let Some(e) = evicted {
            e.evict();
        }
        Admit::Admitted {
            slot: Slot {
                id,
                slots: self.clone(),
                evict,
                idle: true,
            },
            evicted: was_evicted,
        }
    }

    /// Tells the longest-idle connection to close (to free its descriptor when the process
    /// has run out). Returns whether there was one.
    pub fn evict_idle(&self) -> bool {
        let oldest = take_oldest_idle(&mut self.lock());
        oldest.map(Entry::evict).is_some()
    }
}

/// Removes the entry idle the longest, for the caller to wake once the table is unlocked. A
/// linear scan: it only runs when the table is full, and the table is bounded by the
/// descriptor limit.
fn take_oldest_idle(inner: &mut Inner) -> Option<Entry> {
    let oldest = inner
        .conns
        .iter()
        .filter_map(|(id, e)| e.idle_since.map(|t| (t, *id)))
        // Equal instants: the earlier admitted (lower id) goes first.
        .min();
    oldest.and_then(|(_, id)| inner.conns.remove(&id))
}

impl Slot {
    /// Marks the connection idle (evictable) or busy. Cheap when nothing changes.
    pub fn set_idle(&mut self, idle: bool) {
        self.set_idle_since(idle.then(Instant::now));
    }

    /// Marks the connection idle since `since`, or busy with `None`. For a thread that may
    /// report late (a blocking relay thread descheduled between forwarding its last octets
    /// and saying so): the moment of its last activity, not the moment it reports, is what
    /// orders it among the idle. Cheap when nothing changes.
    pub fn set_idle_since(&mut self, since: Option<Instant>) {
        let idle = since.is_some();
        if idle == self.idle {
            return;
        }
        self.idle = idle;
        if let Some(e) = self.slots.lock().conns.get_mut(&self.id) {
            e.idle_since = since;
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

    #[test]
    fn a_hook_runs_on_eviction_only() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let runs = Arc::new(AtomicUsize::new(0));
        let hook = || {
            let runs = runs.clone();
            OnEvict::new(move || {
                runs.fetch_add(1, Ordering::SeqCst);
            })
        };
        let t = Slots::new(1);
        let (a, _) = admitted(t.admit_with(hook()));
        // The newcomer evicts a: a's hook runs, at once.
        let (mut b, evicted) = admitted(t.admit_with(hook()));
        assert!(evicted);
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        drop(a);
        // b busy: the newcomer is refused, and its hook dropped unrun.
        b.set_idle(false);
        assert!(matches!(t.admit_with(hook()), Admit::Full));
        // b leaves on its own: its hook never runs.
        drop(b);
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert!(t.is_empty());
    }
}
