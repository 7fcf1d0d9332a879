//! The bounded table the profile machines keep their per-channel memory in ([`Bounded`]):
//! a map that remembers the order in which its keys arrived and forgets the oldest when it
//! is full, so that what a peer can make a machine remember stays capped, in entries and,
//! for a table given a weigher, in the octets its entries hold.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// A map of at most `capacity` entries that forgets the oldest first.
///
/// The order is a queue of *arrivals*: inserting a key the table does not hold queues an
/// arrival at the back; replacing the value of a key it holds keeps the key's place. When
/// more arrivals are queued than the capacity allows, the oldest leaves the queue and its
/// key is forgotten.
///
/// Two ways out, because the machines need both costs:
/// - [`Bounded::take`] is O(1) and leaves the key's arrival queued: it still counts toward
///   the capacity, and when its turn comes it forgets whatever the key then holds (a key
///   taken and inserted again may so be forgotten early; the capacity still holds).
/// - [`Bounded::remove`] and [`Bounded::evict_oldest_where`] drop the arrival too.
///
/// A table made with [`Bounded::weighed`] also keeps the sum of its entries' weights
/// ([`Bounded::bytes`], O(1)), so that an owner can charge what a peer made it remember to
/// a memory account. An entry is weighed when it is inserted; [`Bounded::get_mut`] must not
/// change what the weigher measures (replace the entry with [`Bounded::insert`] instead).
#[derive(Debug, Clone)]
pub struct Bounded<K, V> {
    /// Each value with its weight when inserted.
    map: HashMap<K, (V, usize)>,
    order: VecDeque<K>,
    cap: usize,
    weigh: fn(&K, &V) -> usize,
    bytes: usize,
}

/// The weigher of a table that keeps no account.
fn weightless<K, V>(_: &K, _: &V) -> usize {
    0
}

impl<K: Clone + Eq + Hash, V> Bounded<K, V> {
    /// An empty table of `capacity` entries (a capacity of 0 is raised to 1: the entry just
    /// inserted is always held).
    pub fn new(capacity: usize) -> Self {
        Self::weighed(capacity, weightless)
    }

    /// An empty table of `capacity` entries that sums `weigh` over what it holds.
    pub fn weighed(capacity: usize, weigh: fn(&K, &V) -> usize) -> Self {
        Bounded {
            map: HashMap::new(),
            order: VecDeque::new(),
            cap: capacity.max(1),
            weigh,
            bytes: 0,
        }
    }

    /// The sum of the weights of the entries held (0 for a table made with
    /// [`Bounded::new`]).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Puts `v` under `k`, keeping the account; the value replaced.
    fn put(&mut self, k: K, v: V) -> Option<V> {
        let w = (self.weigh)(&k, &v);
        self.bytes = self.bytes.saturating_add(w);
        let old = self.map.insert(k, (v, w))?;
        self.bytes = self.bytes.saturating_sub(old.1);
        Some(old.0)
    }

    /// Takes `k` out of the map, keeping the account.
    fn out(&mut self, k: &K) -> Option<V> {
        let (v, w) = self.map.remove(k)?;
        self.bytes = self.bytes.saturating_sub(w);
        Some(v)
    }

    /// The capacity.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Whether `k` is held.
    pub fn contains_key(&self, k: &K) -> bool {
        self.map.contains_key(k)
    }

    /// The value of `k`.
    pub fn get(&self, k: &K) -> Option<&V> {
        self.map.get(k).map(|(v, _)| v)
    }

    /// The value of `k`, to change in place (its place in the order stays).
    pub fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        self.map.get_mut(k).map(|(v, _)| v)
    }

    /// Inserts `v` under `k`; returns the value it replaced. A new key arrives at the back,
    /// then the oldest arrivals beyond the capacity are forgotten; a held key keeps its
    /// place.
    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        let old = self.put(k.clone(), v);
        if old.is_none() {
            self.order.push_back(k);
            self.forget_overflow();
        }
        old
    }

    /// Inserts `v` under `k` as the newest entry: like [`Bounded::insert`], except that a
    /// held key moves to the back (O(n) then).
    pub fn insert_newest(&mut self, k: K, v: V) -> Option<V> {
        let old = self.put(k.clone(), v);
        if old.is_some() {
            self.order.retain(|x| *x != k);
        }
        self.order.push_back(k);
        self.forget_overflow();
        old
    }

    /// Takes `k`'s value out in O(1), leaving its arrival queued (see the type's doc).
    pub fn take(&mut self, k: &K) -> Option<V> {
        self.out(k)
    }

    /// Removes `k` with its arrival, in O(n).
    pub fn remove(&mut self, k: &K) -> Option<V> {
        let v = self.out(k)?;
        self.order.retain(|x| x != k);
        Some(v)
    }

    /// The oldest entry held.
    pub fn oldest(&self) -> Option<(&K, &V)> {
        self.order
            .iter()
            .find_map(|k| self.map.get_key_value(k).map(|(k, (v, _))| (k, v)))
    }

    /// Forgets the oldest entry held, and returns it.
    pub fn pop_oldest(&mut self) -> Option<(K, V)> {
        while let Some(k) = self.order.pop_front() {
            if let Some(v) = self.out(&k) {
                return Some((k, v));
            }
        }
        None
    }

    /// Forgets the oldest entry held whose value satisfies `evictable`, with its arrival,
    /// and returns it; `None` when no entry may go.
    pub fn evict_oldest_where(&mut self, mut evictable: impl FnMut(&V) -> bool) -> Option<(K, V)> {
        let map = &self.map;
        let pos = self
            .order
            .iter()
            .position(|k| map.get(k).is_some_and(|(v, _)| evictable(v)))?;
        let k = self.order.remove(pos)?;
        let v = self.out(&k)?;
        Some((k, v))
    }

    /// Forgets the oldest arrivals while more are queued than the capacity allows.
    fn forget_overflow(&mut self) {
        while self.order.len() > self.cap {
            if let Some(old) = self.order.pop_front() {
                self.out(&old);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Bounded;

    fn keys(b: &Bounded<&'static str, u32>) -> Vec<&'static str> {
        let mut c = b.clone();
        std::iter::from_fn(|| c.pop_oldest().map(|(k, _)| k)).collect()
    }

    #[test]
    fn insert_forgets_the_oldest_beyond_the_capacity() {
        let mut b = Bounded::new(2);
        assert_eq!(b.insert("a", 1), None);
        assert_eq!(b.insert("b", 2), None);
        assert_eq!(b.insert("c", 3), None);
        assert_eq!(b.len(), 2);
        assert_eq!(b.get(&"a"), None);
        assert_eq!(keys(&b), ["b", "c"]);
        assert_eq!(b.capacity(), 2);
    }

    #[test]
    fn replacing_keeps_the_place_and_insert_newest_moves_to_the_back() {
        let mut b = Bounded::new(2);
        b.insert("a", 1);
        b.insert("b", 2);
        assert_eq!(b.insert("a", 10), Some(1));
        b.insert("c", 3);
        // "a" was still the oldest arrival.
        assert_eq!(keys(&b), ["b", "c"]);
        assert_eq!(b.insert_newest("b", 20), Some(2));
        assert_eq!(keys(&b), ["c", "b"]);
        b.insert("d", 4);
        assert_eq!(keys(&b), ["b", "d"]);
        assert_eq!(b.get(&"b"), Some(&20));
    }

    #[test]
    fn a_capacity_of_zero_holds_one() {
        let mut b = Bounded::new(0);
        b.insert("a", 1);
        b.insert("b", 2);
        assert_eq!(keys(&b), ["b"]);
        assert_eq!(b.capacity(), 1);
    }

    #[test]
    fn take_leaves_the_arrival_and_remove_does_not() {
        let mut b = Bounded::new(2);
        b.insert("a", 1);
        b.insert("b", 2);
        assert_eq!(b.take(&"a"), Some(1));
        assert_eq!(b.len(), 1);
        // a's arrival still counts: c's pushes it out, and with it nothing.
        b.insert("c", 3);
        assert_eq!(keys(&b), ["b", "c"]);
        // Taken and inserted again: the old arrival forgets the new value in its turn.
        let mut b = Bounded::new(2);
        b.insert("a", 1);
        b.insert("b", 2);
        b.take(&"a");
        b.insert("a", 9);
        assert_eq!(b.get(&"a"), None);
        assert_eq!(keys(&b), ["b"]);
        // Removed: the arrival goes too.
        let mut b = Bounded::new(2);
        b.insert("a", 1);
        b.insert("b", 2);
        assert_eq!(b.remove(&"a"), Some(1));
        assert_eq!(b.remove(&"a"), None);
        b.insert("a", 9);
        assert_eq!(keys(&b), ["b", "a"]);
    }

    #[test]
    fn oldest_and_pop_oldest_skip_what_was_taken() {
        let mut b = Bounded::new(3);
        b.insert("a", 1);
        b.insert("b", 2);
        b.insert("c", 3);
        b.take(&"a");
        assert_eq!(b.oldest(), Some((&"b", &2)));
        assert_eq!(b.pop_oldest(), Some(("b", 2)));
        assert_eq!(b.pop_oldest(), Some(("c", 3)));
        assert_eq!(b.pop_oldest(), None);
        assert!(b.is_empty());
    }

    #[test]
    fn evict_oldest_where_picks_the_oldest_that_may_go() {
        let mut b = Bounded::new(3);
        b.insert("a", 1);
        b.insert("b", 2);
        b.insert("c", 4);
        assert_eq!(b.evict_oldest_where(|v| v % 2 == 0), Some(("b", 2)));
        assert_eq!(b.evict_oldest_where(|v| *v > 10), None);
        assert_eq!(keys(&b), ["a", "c"]);
        // Its arrival left with it: two more fit before "a" is forgotten.
        b.insert("d", 5);
        assert_eq!(keys(&b), ["a", "c", "d"]);
        *b.get_mut(&"a").unwrap() = 7;
        assert!(b.contains_key(&"a"));
        b.insert("e", 6);
        assert_eq!(keys(&b), ["c", "d", "e"]);
    }

    #[test]
    fn a_weighed_table_accounts_every_way_in_and_out() {
        fn w(k: &&'static str, v: &u32) -> usize {
            k.len() + *v as usize
        }
        let mut b = Bounded::weighed(3, w);
        b.insert("a", 10);
        b.insert("bb", 20);
        assert_eq!(b.bytes(), 11 + 22);
        // Replaced: the old weight leaves.
        b.insert("a", 1);
        assert_eq!(b.bytes(), 2 + 22);
        b.insert_newest("a", 3);
        assert_eq!(b.bytes(), 4 + 22);
        b.insert("ccc", 30);
        // Over capacity: the forgotten entry's weight leaves with it.
        b.insert("d", 0);
        assert_eq!(b.len(), 3);
        assert_eq!(b.bytes(), 4 + 33 + 1);
        assert_eq!(b.take(&"a"), Some(3));
        assert_eq!(b.remove(&"d"), Some(0));
        assert_eq!(b.bytes(), 33);
        assert_eq!(b.evict_oldest_where(|_| true), Some(("ccc", 30)));
        assert_eq!(b.bytes(), 0);
        b.insert("e", 5);
        assert_eq!(b.pop_oldest(), Some(("e", 5)));
        assert_eq!((b.bytes(), b.len()), (0, 0));
        // An unweighed table keeps no account.
        let mut u = Bounded::new(2);
        u.insert("a", 100u32);
        assert_eq!(u.bytes(), 0);
    }
}
