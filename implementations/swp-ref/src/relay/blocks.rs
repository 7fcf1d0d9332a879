//! The relay's buffer memory: blocks of one size, shared by every connection through one
//! [`Pool`], and the [`Queue`] of blocks one direction of a connection holds its partial
//! frame in.
//!
//! Why blocks and a pool rather than a buffer per frame: a buffer sized (or grown) for one
//! frame goes back to the allocator when the frame leaves, and the allocator keeps it
//! resident in a per-thread arena. Forty stalled 8 MiB frames refused one after another by
//! the memory budget then still left the process holding about 20 MiB more than the budget
//! allowed, and more with a larger budget (issue 30, defect 6). A block goes back to the
//! pool and is what the next frame is read into, so what the process holds is what its
//! connections hold at once, which the budget bounds.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use swp_core::frame::PREFIX_LEN;

/// The size of a block: the most one read takes in.
pub const BLOCK: usize = 64 * 1024;

/// Blocks no connection holds, kept for the next one.
#[derive(Debug)]
pub struct Pool {
    free: Mutex<Vec<Box<[u8]>>>,
    keep: usize,
}

impl Pool {
    /// A pool keeping up to `keep_octets` of free blocks; beyond that, a returned block is
    /// freed. (What connections hold at once is bounded by the memory budget, so a pool
    /// keeping the budget's worth never frees a block in steady use.)
    pub fn new(keep_octets: usize) -> Arc<Pool> {
        Arc::new(Pool {
            free: Mutex::new(Vec::new()),
            keep: keep_octets.div_ceil(BLOCK),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Box<[u8]>>> {
        // A push or a pop: the list stays consistent under a panic.
        self.free.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn take(&self) -> Box<[u8]> {
        let reused = self.lock().pop();
        reused.unwrap_or_else(|| vec![0u8; BLOCK].into_boxed_slice())
    }

    fn give(&self, block: Box<[u8]>) {
        let mut free = self.lock();
        if free.len() < self.keep {
            free.push(block);
        }
    }

    /// Free blocks held now.
    #[cfg(test)]
    pub fn free_blocks(&self) -> usize {
        self.lock().len()
    }
}

/// The octets one direction of a connection holds, oldest first, in blocks from a pool:
/// the first block is read from `head`, and octet `i` of the queue is at offset
/// `head + i` counting across the blocks. A queue that holds nothing holds no block.
#[derive(Debug)]
pub struct Queue {
    pool: Arc<Pool>,
    blocks: VecDeque<Box<[u8]>>,
    head: usize,
    len: usize,
}

impl Queue {
    /// An empty queue drawing on `pool`.
    pub fn new(pool: Arc<Pool>) -> Self {
        Queue {
            pool,
            blocks: VecDeque::new(),
            head: 0,
            len: 0,
        }
    }

    /// Octets held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the next octets go: the free end of the last block, from a fresh block when it
    /// is full. Never empty. [`Queue::commit`] says how much of it was filled.
    pub fn spare(&mut self) -> &mut [u8] {
        let end = self.head + self.len;
        let (index, offset) = (end / BLOCK, end % BLOCK);
        while self.blocks.len() <= index {
            let block = self.pool.take();
            self.blocks.push_back(block);
        }
        match self.blocks.get_mut(index) {
            Some(block) => block.get_mut(offset..).unwrap_or_default(),
            None => &mut [],
        }
    }

    /// `n` octets of [`Queue::spare`] were filled.
    pub fn commit(&mut self, n: usize) {
        self.len += n;
    }

    /// Appends `data`.
    pub fn extend(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let spare = self.spare();
            let n = spare.len().min(data.len());
            if n == 0 {
                return;
            }
            spare[..n].copy_from_slice(&data[..n]);
            self.commit(n);
            data = &data[n..];
        }
    }

    /// The first [`PREFIX_LEN`] octets, once they are held.
    pub fn prefix(&self) -> Option<[u8; PREFIX_LEN]> {
        if self.len < PREFIX_LEN {
            return None;
        }
        let mut out = [0u8; PREFIX_LEN];
        for (i, o) in out.iter_mut().enumerate() {
            let at = self.head + i;
            *o = *self.blocks.get(at / BLOCK)?.get(at % BLOCK)?;
        }
        Some(out)
    }

    /// Writes the first `n` octets (at most [`Queue::len`]) to `to`, block by block, and
    /// drops them; emptied blocks go back to the pool.
    pub fn write_front(&mut self, n: usize, mut to: impl Write) -> io::Result<()> {
        let mut left = n.min(self.len);
        while left > 0 {
            let Some(block) = self.blocks.front() else {
                break;
            };
            let k = (BLOCK - self.head).min(left);
            let part = block.get(self.head..self.head + k).unwrap_or_default();
            to.write_all(part)?;
            self.head += k;
            self.len -= k;
            left -= k;
            if self.head == BLOCK {
                if let Some(b) = self.blocks.pop_front() {
                    self.pool.give(b);
                }
                self.head = 0;
            }
        }
        if self.len == 0 {
            self.release();
        }
        Ok(())
    }

    /// Gives every block back: nothing is held.
    fn release(&mut self) {
        for b in self.blocks.drain(..) {
            self.pool.give(b);
        }
        self.head = 0;
        self.len = 0;
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octets_come_out_in_order_across_blocks_and_blocks_go_back() {
        let pool = Pool::new(4 * BLOCK);
        let mut q = Queue::new(pool.clone());
        let data: Vec<u8> = (0..(2 * BLOCK + 100)).map(|i| (i % 251) as u8).collect();
        // Some through spare/commit, the rest through extend.
        let first = q.spare();
        first[..10].copy_from_slice(&data[..10]);
        q.commit(10);
        q.extend(&data[10..]);
        assert_eq!(q.len(), data.len());
        assert_eq!(q.prefix(), Some([0, 1, 2, 3]));
        let mut out = Vec::new();
        q.write_front(BLOCK + 3, &mut out).unwrap();
        assert_eq!(out, data[..BLOCK + 3]);
        assert_eq!(
            q.prefix(),
            Some([
                data[BLOCK + 3],
                data[BLOCK + 4],
                data[BLOCK + 5],
                data[BLOCK + 6]
            ])
        );
        q.write_front(usize::MAX, &mut out).unwrap();
        assert_eq!(out, data);
        assert!(q.is_empty());
        assert_eq!(pool.free_blocks(), 3, "every block went back");
        // The next queue reuses them.
        let mut q = Queue::new(pool.clone());
        q.extend(b"abc");
        assert_eq!(pool.free_blocks(), 2);
        assert_eq!(q.prefix(), None);
        drop(q);
        assert_eq!(pool.free_blocks(), 3);
    }

    #[test]
    fn the_pool_keeps_at_most_its_cap() {
        let pool = Pool::new(BLOCK);
        let mut q = Queue::new(pool.clone());
        q.extend(&vec![7u8; 3 * BLOCK]);
        drop(q);
        assert_eq!(pool.free_blocks(), 1);
    }
}
