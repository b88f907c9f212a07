//! Finds a cached znode by its parent and name: an open-addressing hash table of node ids,
//! four bytes a bucket. The keys are not copied into the table: the caller hands a function
//! that reads a node's (parent, name) from the store, so every name is held once.
//!
//! Linear probing, at most three quarters full; removal shifts the following entries back
//! (no tombstones), so a lookup never walks more than the run it hashes into.

use std::hash::{BuildHasher, RandomState};

/// No node: an empty bucket, or the parent of the root.
pub(crate) const NONE: u32 = u32::MAX;

#[derive(Debug, Default)]
pub(crate) struct NameIndex {
    buckets: Vec<u32>,
    len: usize,
    /// Keyed per process: names come from the server, and a fixed hash could be flooded.
    hasher: RandomState,
}

impl NameIndex {
    fn home(&self, parent: u32, name: &[u8]) -> usize {
        // The table's length is a power of two.
        (self.hasher.hash_one((parent, name)) as usize) & (self.buckets.len() - 1)
    }

    fn next(&self, i: usize) -> usize {
        (i + 1) & (self.buckets.len() - 1)
    }

    /// The node named `name` under `parent`.
    pub(crate) fn find<'s>(
        &self,
        parent: u32,
        name: &[u8],
        key: impl Fn(u32) -> (u32, &'s [u8]),
    ) -> Option<u32> {
        if self.buckets.is_empty() {
            return None;
        }
        let mut i = self.home(parent, name);
        loop {
            let id = self.buckets[i];
            if id == NONE {
                return None;
            }
            if key(id) == (parent, name) {
                return Some(id);
            }
            i = self.next(i);
        }
    }

    /// Adds node `id`; no node with its key may be in the index.
    pub(crate) fn insert<'s>(&mut self, id: u32, key: impl Fn(u32) -> (u32, &'s [u8])) {
        if (self.len + 1) * 4 > self.buckets.len() * 3 {
            self.grow(&key);
        }
        self.place(id, &key);
        self.len += 1;
    }

    fn place<'s>(&mut self, id: u32, key: &impl Fn(u32) -> (u32, &'s [u8])) {
        let (parent, name) = key(id);
        let mut i = self.home(parent, name);
        while self.buckets[i] != NONE {
            i = self.next(i);
        }
        self.buckets[i] = id;
    }

    fn grow<'s>(&mut self, key: &impl Fn(u32) -> (u32, &'s [u8])) {
        let size = (self.buckets.len() * 2).max(8);
        let old = std::mem::replace(&mut self.buckets, vec![NONE; size]);
        for id in old.into_iter().filter(|&id| id != NONE) {
            self.place(id, key);
        }
    }

    /// Drops node `id`, whose key must still be readable through `key`.
    pub(crate) fn remove<'s>(&mut self, id: u32, key: impl Fn(u32) -> (u32, &'s [u8])) {
        if self.buckets.is_empty() {
            return;
        }
        let (parent, name) = key(id);
        let mut hole = self.home(parent, name);
        loop {
            match self.buckets[hole] {
                NONE => return,
                b if b == id => break,
                _ => hole = self.next(hole),
            }
        }
        self.len -= 1;
        // Backward shift: an entry after the hole moves into it unless its home lies
        // cyclically in (hole, its place], where the hole does not block its lookup.
        let mut j = hole;
        loop {
            j = self.next(j);
            let moved = self.buckets[j];
            if moved == NONE {
                break;
            }
            let (p, n) = key(moved);
            let home = self.home(p, n);
            let stays = if hole <= j {
                hole < home && home <= j
            } else {
                hole < home || home <= j
            };
            if !stays {
                self.buckets[hole] = moved;
                hole = j;
            }
        }
        self.buckets[hole] = NONE;
    }

    /// Bytes the table holds on the heap.
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<u32>()
    }
}
