//! Values by small integer keys, for the callers a driver keeps waiting (both drivers).

use crate::session::Key;

/// Values by small integer keys, reused once taken: a key costs no allocation once the table
/// has grown to the number of callers waiting at once.
#[derive(Debug)]
pub(crate) struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    pub fn insert(&mut self, value: T) -> Key {
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = Some(value);
                Key(i)
            }
            None => {
                // More than u32::MAX callers at once cannot fit in memory anyway.
                let i = u32::try_from(self.items.len()).unwrap_or(u32::MAX);
                self.items.push(Some(value));
                Key(i)
            }
        }
    }

    pub fn take(&mut self, key: Key) -> Option<T> {
        let value = self.items.get_mut(key.0 as usize)?.take();
        if value.is_some() {
            self.free.push(key.0);
        }
        value
    }

    pub fn get(&self, key: Key) -> Option<&T> {
        self.items.get(key.0 as usize)?.as_ref()
    }

    /// Gives back the room of a table that emptied after a burst.
    pub fn shrink_if_empty(&mut self) {
        if self.free.len() == self.items.len() && self.items.capacity() > 64 {
            *self = Slab::default();
        }
    }
}
