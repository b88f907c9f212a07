//! Where a cache keeps its znodes, lean: one fixed-size slot per znode in chunks of slots,
//! addressed by a `u32` id, with no per-znode path. A slot holds the Stat (its ephemeral
//! owner aside), the links to its parent and siblings, and one allocation of its own size
//! with the znode's name followed by its data (copied out of the reply: a slice would keep
//! the whole multiRead reply alive). Children are found by name through [`NameIndex`].
//!
//! Memory per znode: the slot (88 bytes), its name and data, about 4-11 bytes of index, and
//! at most one chunk of unused slots for the whole store.

use std::collections::HashMap;

use zk_session::Stat;

use super::name_index::{NameIndex, NONE};

/// Slots per chunk: the store grows a chunk at a time, so unused room stays under one chunk
/// (a `Vec` that doubles could hold almost as many unused slots as used ones).
const CHUNK: usize = 1024;

/// A znode's slot. The Stat is kept field by field, without the ephemeral owner (most
/// znodes have none: those that do keep it in [`Store::owners`]) and without the data length
/// (the data's own, or kept beside the name in a stats-only store).
#[derive(Debug)]
pub(crate) struct Slot {
    czxid: i64,
    mzxid: i64,
    pzxid: i64,
    ctime: i64,
    mtime: i64,
    version: i32,
    cversion: i32,
    aversion: i32,
    num_children: i32,
    parent: u32,
    first_child: u32,
    /// The next sibling, or the next free slot while the slot is free.
    next: u32,
    prev: u32,
    /// The name's length (LEB128), the name, then the data or, in a stats-only store, the
    /// data's length (4 bytes, big-endian).
    bytes: Box<[u8]>,
}

impl Slot {
    /// The name, and what follows it.
    fn split(&self) -> (&[u8], &[u8]) {
        let mut len = 0usize;
        for (i, b) in self.bytes.iter().enumerate() {
            len |= usize::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                let rest = self.bytes.get(i + 1..).unwrap_or_default();
                return rest.split_at(len.min(rest.len()));
            }
        }
        (&[], &[])
    }

    fn name(&self) -> &[u8] {
        self.split().0
    }

    fn set_stat(&mut self, s: &Stat) {
        self.czxid = s.czxid;
        self.mzxid = s.mzxid;
        self.pzxid = s.pzxid;
        self.ctime = s.ctime;
        self.mtime = s.mtime;
        self.version = s.version;
        self.cversion = s.cversion;
        self.aversion = s.aversion;
        self.num_children = s.num_children;
    }
}

/// The bytes of a slot: the name's length, the name, then `tail`.
fn name_and(name: &[u8], tail: &[u8]) -> Box<[u8]> {
    let mut v = Vec::with_capacity(name.len() + tail.len() + 2);
    let mut len = name.len();
    while len >= 0x80 {
        v.push((len & 0x7f) as u8 | 0x80);
        len >>= 7;
    }
    v.push(len as u8);
    v.extend_from_slice(name);
    v.extend_from_slice(tail);
    v.into_boxed_slice()
}

/// The znodes of one cache.
#[derive(Debug)]
pub(crate) struct Store {
    /// Whether the data is kept, or only its length.
    keep_data: bool,
    chunks: Vec<Vec<Slot>>,
    /// Head of the list of free slots (through `next`).
    free: Option<u32>,
    len: usize,
    index: NameIndex,
    /// Ephemeral owners, by node id, of the znodes that have one.
    owners: HashMap<u32, i64>,
}

fn slot(chunks: &[Vec<Slot>], id: u32) -> &Slot {
    &chunks[id as usize / CHUNK][id as usize % CHUNK]
}

fn key(chunks: &[Vec<Slot>], id: u32) -> (u32, &[u8]) {
    let s = slot(chunks, id);
    (s.parent, s.name())
}

impl Store {
    pub(crate) fn new(keep_data: bool) -> Self {
        Store {
            keep_data,
            chunks: Vec::new(),
            free: None,
            len: 0,
            index: NameIndex::default(),
            owners: HashMap::new(),
        }
    }

    /// What follows the name in a slot: the data, or its length.
    fn tail<'d>(&self, stat: &Stat, data: &'d [u8], len: &'d mut [u8; 4]) -> &'d [u8] {
        if self.keep_data {
            data
        } else {
            *len = stat.data_length.to_be_bytes();
            len
        }
    }

    fn slot(&self, id: u32) -> &Slot {
        slot(&self.chunks, id)
    }

    fn slot_mut(&mut self, id: u32) -> &mut Slot {
        &mut self.chunks[id as usize / CHUNK][id as usize % CHUNK]
    }

    /// How many znodes the store holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The child `name` of `parent`.
    pub(crate) fn find(&self, parent: u32, name: &str) -> Option<u32> {
        let chunks = &self.chunks;
        self.index
            .find(parent, name.as_bytes(), |id| key(chunks, id))
    }

    /// Adds a znode under `parent` ([`NONE`] for the root, which is not indexed by name),
    /// with its data (ignored by a stats-only store). `None` if the store is full (four
    /// billion znodes).
    pub(crate) fn add(&mut self, parent: u32, name: &str, stat: &Stat, data: &[u8]) -> Option<u32> {
        let mut len = [0; 4];
        let mut s = Slot {
            czxid: 0,
            mzxid: 0,
            pzxid: 0,
            ctime: 0,
            mtime: 0,
            version: 0,
            cversion: 0,
            aversion: 0,
            num_children: 0,
            parent,
            first_child: NONE,
            next: NONE,
            prev: NONE,
            bytes: name_and(name.as_bytes(), self.tail(stat, data, &mut len)),
        };
        s.set_stat(stat);
        let id = self.alloc(s)?;
        if parent != NONE {
            let head = self.slot(parent).first_child;
            if head != NONE {
                self.slot_mut(head).prev = id;
            }
            self.slot_mut(id).next = head;
            self.slot_mut(parent).first_child = id;
            let chunks = &self.chunks;
            self.index.insert(id, |id| key(chunks, id));
        }
        self.set_owner(id, stat.ephemeral_owner);
        self.len += 1;
        Some(id)
    }

    fn alloc(&mut self, s: Slot) -> Option<u32> {
        if let Some(id) = self.free {
            let slot = self.slot_mut(id);
            let next = slot.next;
            *slot = s;
            self.free = (next != NONE).then_some(next);
            return Some(id);
        }
        let full = self.chunks.last().is_none_or(|c| c.len() == CHUNK);
        if full {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        let id = (self.chunks.len() - 1) * CHUNK + self.chunks.last().map_or(0, Vec::len);
        // NONE is never an id.
        let id = u32::try_from(id).ok().filter(|&id| id != NONE)?;
        self.chunks.last_mut()?.push(s);
        Some(id)
    }

    fn set_owner(&mut self, id: u32, owner: i64) {
        if owner == 0 {
            self.owners.remove(&id);
        } else {
            self.owners.insert(id, owner);
        }
    }

    /// Drops znode `id`, which must have no children left.
    pub(crate) fn remove(&mut self, id: u32) {
        let (parent, prev, next) = {
            let s = self.slot(id);
            (s.parent, s.prev, s.next)
        };
        if parent != NONE {
            let chunks = &self.chunks;
            self.index.remove(id, |id| key(chunks, id));
            if prev == NONE {
                self.slot_mut(parent).first_child = next;
            } else {
                self.slot_mut(prev).next = next;
            }
            if next != NONE {
                self.slot_mut(next).prev = prev;
            }
        }
        self.owners.remove(&id);
        let free = self.free.unwrap_or(NONE);
        let s = self.slot_mut(id);
        s.bytes = Box::default();
        s.parent = NONE;
        s.first_child = NONE;
        s.prev = NONE;
        s.next = free;
        self.free = Some(id);
        self.len -= 1;
    }

    /// The znode's Stat.
    pub(crate) fn stat(&self, id: u32) -> Stat {
        let s = self.slot(id);
        let data_length = if self.keep_data {
            i32::try_from(s.split().1.len()).unwrap_or(i32::MAX)
        } else {
            s.split().1.try_into().map_or(0, i32::from_be_bytes)
        };
        Stat {
            czxid: s.czxid,
            mzxid: s.mzxid,
            ctime: s.ctime,
            mtime: s.mtime,
            version: s.version,
            cversion: s.cversion,
            aversion: s.aversion,
            ephemeral_owner: self.owners.get(&id).copied().unwrap_or(0),
            data_length,
            num_children: s.num_children,
            pzxid: s.pzxid,
        }
    }

    /// A new Stat for znode `id`, and new data unless `data` is `None` (the data is the
    /// same: the mzxid did not move).
    pub(crate) fn update(&mut self, id: u32, stat: &Stat, data: Option<&[u8]>) {
        if let Some(data) = data {
            let mut len = [0; 4];
            let bytes = name_and(self.slot(id).name(), self.tail(stat, data, &mut len));
            self.slot_mut(id).bytes = bytes;
        }
        self.slot_mut(id).set_stat(stat);
        self.set_owner(id, stat.ephemeral_owner);
    }

    /// The data held for znode `id` (empty in a stats-only store).
    pub(crate) fn data(&self, id: u32) -> &[u8] {
        if self.keep_data {
            self.slot(id).split().1
        } else {
            &[]
        }
    }

    /// The znode's name (empty for the root).
    pub(crate) fn name(&self, id: u32) -> &str {
        // Written from a `str`: always UTF-8.
        std::str::from_utf8(self.slot(id).name()).unwrap_or_default()
    }

    /// The znode's children, sorted by name.
    pub(crate) fn children(&self, id: u32) -> Vec<u32> {
        // Sorted by the names read once each: comparing through the slots would read two
        // slots and two allocations per comparison.
        let mut named = Vec::new();
        let mut c = self.slot(id).first_child;
        while c != NONE {
            let s = self.slot(c);
            named.push((s.name(), c));
            c = s.next;
        }
        named.sort_unstable();
        named.into_iter().map(|(_, c)| c).collect()
    }

    /// Bytes the store holds on the heap, by its own count (the allocator may round up).
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        let slots = self.chunks.iter().map(Vec::capacity).sum::<usize>();
        let bytes: usize = self.chunks.iter().flatten().map(|s| s.bytes.len()).sum();
        let owners = self.owners.capacity() * (std::mem::size_of::<(u32, i64)>() + 1);
        slots * std::mem::size_of::<Slot>()
            + self.chunks.capacity() * std::mem::size_of::<Vec<Slot>>()
            + bytes
            + self.index.heap_bytes()
            + owners
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
