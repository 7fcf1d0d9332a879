//! The bounded state and small helpers the profile files share: tables and queues that stop
//! growing at [`MAX_ENTRIES`] (and say so), per-side values, content digests, and how an id
//! appears in a violation's detail.

use super::verdict::Side;
use sha2::{Digest as _, Sha256};
use std::collections::{BTreeMap, VecDeque};

/// Most entries any one per-connection table holds (open calls, event ids, chains...).
pub const MAX_ENTRIES: usize = 4096;
/// Longest id (task_id, rpc_id, event_id, delivery_id...) the judge remembers; messages with
/// longer ids are judged by their own fields only.
pub const MAX_ID_BYTES: usize = 1024;

/// A SHA-256 over length-prefixed parts: content compared without keeping the content.
pub(crate) type Digest = [u8; 32];

/// The digest of `parts`, each length-prefixed so that no two part lists collide by framing.
pub(crate) fn digest(parts: &[&[u8]]) -> Digest {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().into()
}

/// Whether an id is short enough to remember.
pub(crate) fn trackable(id: &[u8]) -> bool {
    id.len() <= MAX_ID_BYTES
}

/// An id for a violation's detail: quoted text when printable, hex otherwise, cut at 48 octets.
pub(crate) fn show(b: &[u8]) -> String {
    const MAX: usize = 48;
    let cut = b.get(..MAX).unwrap_or(b);
    let mut s = match std::str::from_utf8(cut) {
        Ok(t) if !t.chars().any(char::is_control) => format!("{t:?}"),
        _ => format!("hex:{}", hex::encode(cut)),
    };
    if b.len() > MAX {
        s.push('…');
    }
    s
}

/// Whether `s` is non-empty and all lower-case hex digits.
pub(crate) fn lower_hex(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// A map with at most [`MAX_ENTRIES`] entries. An insert past the bound is dropped and
/// remembered as an overflow, after which the rules that look entries up judge leniently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table<K: Ord, V> {
    map: BTreeMap<K, V>,
    cap: usize,
    overflowed: bool,
}

impl<K: Ord, V> Default for Table<K, V> {
    fn default() -> Self {
        Table::with_cap(MAX_ENTRIES)
    }
}

impl<K: Ord, V> Table<K, V> {
    /// An empty table holding at most `cap` entries.
    pub(crate) fn with_cap(cap: usize) -> Self {
        Table {
            map: BTreeMap::new(),
            cap,
            overflowed: false,
        }
    }

    pub(crate) fn get(&self, k: &K) -> Option<&V> {
        self.map.get(k)
    }

    pub(crate) fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        self.map.get_mut(k)
    }

    pub(crate) fn contains(&self, k: &K) -> bool {
        self.map.contains_key(k)
    }

    /// Inserts or replaces; a new key past the bound is dropped (and the overflow noted).
    pub(crate) fn insert(&mut self, k: K, v: V) {
        if self.map.len() >= self.cap && !self.map.contains_key(&k) {
            self.overflowed = true;
            return;
        }
        self.map.insert(k, v);
    }

    pub(crate) fn remove(&mut self, k: &K) -> Option<V> {
        self.map.remove(k)
    }

    /// Whether an entry was ever dropped for want of room.
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    pub(crate) fn is_full(&self) -> bool {
        self.map.len() >= self.cap
    }

    pub(crate) fn retain(&mut self, f: impl FnMut(&K, &mut V) -> bool) {
        self.map.retain(f);
    }

    /// The entries from `from` on, in key order.
    pub(crate) fn range_from(&self, from: K) -> impl Iterator<Item = (&K, &V)> {
        self.map.range(from..)
    }
}

/// A FIFO with at most [`MAX_ENTRIES`] items (pending requests); a push past the bound is
/// dropped and remembered, after which rules that match answers to requests judge leniently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Queue<T> {
    items: VecDeque<T>,
    overflowed: bool,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            items: VecDeque::new(),
            overflowed: false,
        }
    }
}

impl<T> Queue<T> {
    pub(crate) fn push(&mut self, t: T) {
        if self.items.len() >= MAX_ENTRIES {
            self.overflowed = true;
        } else {
            self.items.push_back(t);
        }
    }

    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Notes that an item could not be kept (an id too long to remember): answers that
    /// cannot be matched are then judged leniently, as after an overflow.
    pub(crate) fn mark_lost(&mut self) {
        self.overflowed = true;
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The position of the first item matching `f`.
    pub(crate) fn position(&self, f: impl FnMut(&T) -> bool) -> Option<usize> {
        self.items.iter().position(f)
    }

    pub(crate) fn remove(&mut self, at: usize) -> Option<T> {
        self.items.remove(at)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }

    pub(crate) fn front(&self) -> Option<&T> {
        self.items.front()
    }

    pub(crate) fn pop_front(&mut self) -> Option<T> {
        self.items.pop_front()
    }

    pub(crate) fn clear(&mut self) {
        self.items.clear();
    }
}

/// One value per side.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct PerSide<T>([T; 2]);

impl<T> PerSide<T> {
    pub(crate) fn get(&self, side: Side) -> &T {
        let [h, e] = &self.0;
        match side.index() {
            0 => h,
            _ => e,
        }
    }

    pub(crate) fn get_mut(&mut self, side: Side) -> &mut T {
        let [h, e] = &mut self.0;
        match side.index() {
            0 => h,
            _ => e,
        }
    }
}
