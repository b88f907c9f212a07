//! A one-shot reply slot: the I/O thread (or whichever thread applies the core's outputs)
//! fills it once, the caller blocks until then. A Mutex and a Condvar: no channel crate, and
//! a slot costs one allocation.

use std::{
    sync::{Arc, Condvar, Mutex, MutexGuard},
    time::{Duration, Instant},
};

#[derive(Debug)]
enum State<T> {
    Waiting,
    Full(T),
    /// The value was taken, or the sender went without one.
    Over,
}

#[derive(Debug)]
struct Inner<T> {
    state: Mutex<State<T>>,
    filled: Condvar,
}

/// The filling end, kept in the driver's table of callers.
#[derive(Debug)]
pub(crate) struct SlotTx<T>(Arc<Inner<T>>);

/// The waiting end, the caller's.
#[derive(Debug)]
pub(crate) struct SlotRx<T>(Arc<Inner<T>>);

/// A new slot's two ends.
pub(crate) fn slot<T>() -> (SlotTx<T>, SlotRx<T>) {
    let inner = Arc::new(Inner {
        state: Mutex::new(State::Waiting),
        filled: Condvar::new(),
    });
    (SlotTx(inner.clone()), SlotRx(inner))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T> SlotTx<T> {
    /// Fills the slot and wakes the caller.
    pub fn send(self, value: T) {
        let mut s = lock(&self.0.state);
        if matches!(*s, State::Waiting) {
            *s = State::Full(value);
            self.0.filled.notify_one();
        }
    }

    /// The caller gave up (its end is gone): nobody reads what would be sent.
    pub fn is_closed(&self) -> bool {
        Arc::strong_count(&self.0) == 1
    }
}

impl<T> crate::caller_table::Answer<T> for SlotTx<T> {
    fn answer(self, value: T) {
        self.send(value)
    }

    fn gone(&self) -> bool {
        self.is_closed()
    }
}

impl<T> Drop for SlotTx<T> {
    fn drop(&mut self) {
        let mut s = lock(&self.0.state);
        if matches!(*s, State::Waiting) {
            *s = State::Over;
            self.0.filled.notify_one();
        }
    }
}

impl<T> SlotRx<T> {
    /// Waits for the value; `None` when the sender went without one.
    pub fn wait(&self) -> Option<T> {
        let mut s = lock(&self.0.state);
        while matches!(*s, State::Waiting) {
            s = self.0.filled.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        take(&mut s)
    }

    /// Waits for the value up to `timeout`: `Err(())` when it did not come in time (the slot
    /// may still be filled later), `Ok(None)` when the sender went without one.
    pub fn wait_timeout(&self, timeout: Duration) -> Result<Option<T>, ()> {
        // A timeout too large for the clock waits for ever.
        let Some(until) = Instant::now().checked_add(timeout) else {
            return Ok(self.wait());
        };
        let mut s = lock(&self.0.state);
        while matches!(*s, State::Waiting) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(());
            }
            s = self
                .0
                .filled
                .wait_timeout(s, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        Ok(take(&mut s))
    }

    /// The value if it is there, without waiting: `Err(())` while it is not.
    pub fn try_take(&self) -> Result<Option<T>, ()> {
        let mut s = lock(&self.0.state);
        if matches!(*s, State::Waiting) {
            return Err(());
        }
        Ok(take(&mut s))
    }
}

fn take<T>(s: &mut State<T>) -> Option<T> {
    match std::mem::replace(s, State::Over) {
        State::Full(v) => Some(v),
        State::Waiting | State::Over => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_value_comes_once_and_a_sender_gone_reads_as_none() {
        let (tx, rx) = slot();
        let t = std::thread::spawn(move || tx.send(7));
        assert_eq!(rx.wait(), Some(7));
        t.join().unwrap();
        assert_eq!(rx.try_take(), Ok(None), "taken once");

        let (tx, rx) = slot::<u8>();
        assert_eq!(rx.try_take(), Err(()));
        drop(tx);
        assert_eq!(rx.wait_timeout(Duration::from_secs(5)), Ok(None));
    }

    #[test]
    fn a_timed_wait_gives_up_and_the_sender_sees_the_caller_go() {
        let (tx, rx) = slot::<u8>();
        assert_eq!(rx.wait_timeout(Duration::from_millis(1)), Err(()));
        assert!(!tx.is_closed());
        drop(rx);
        assert!(tx.is_closed());
    }
}
