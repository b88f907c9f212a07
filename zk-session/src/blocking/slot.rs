//! A one-shot reply slot: the I/O thread (or whichever thread applies the core's outputs)
//! fills it once, the caller blocks until then. The caller parks its thread: filling costs
//! one futex wake when the caller is asleep (none when it has not begun waiting), and the
//! wake can be left until the filler has let go of the session's lock
//! ([`SlotTx::fill`]), so that the caller does not wake only to wait for that lock. No
//! channel crate; a slot costs one allocation.

use std::{
    sync::{Arc, Mutex, MutexGuard},
    thread::{self, Thread},
    time::{Duration, Instant},
};

#[derive(Debug)]
enum State<T> {
    /// No value yet; the thread that waits for it, once it waits.
    Waiting(Option<Thread>),
    Full(T),
    /// The value was taken, or the sender went without one.
    Over,
}

/// The filling end, kept in the driver's table of callers.
#[derive(Debug)]
pub(crate) struct SlotTx<T>(Arc<Mutex<State<T>>>);

/// The waiting end, the caller's.
#[derive(Debug)]
pub(crate) struct SlotRx<T>(Arc<Mutex<State<T>>>);

/// A new slot's two ends.
pub(crate) fn slot<T>() -> (SlotTx<T>, SlotRx<T>) {
    let inner = Arc::new(Mutex::new(State::Waiting(None)));
    (SlotTx(inner.clone()), SlotRx(inner))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The wake-up a filled slot owes its caller: [`Wake::wake`] it, or drop it (which wakes
/// too), once no lock the caller will want is held.
#[derive(Debug)]
#[must_use = "the caller sleeps until it is woken"]
pub(crate) struct Wake(Option<Thread>);

impl Wake {
    pub fn wake(self) {
        drop(self)
    }
}

impl Drop for Wake {
    fn drop(&mut self) {
        if let Some(t) = self.0.take() {
            t.unpark();
        }
    }
}

impl<T> SlotTx<T> {
    /// Fills the slot and wakes the caller.
    pub fn send(self, value: T) {
        self.fill(value).wake();
    }

    /// Fills the slot; the caller, if it waits already, wakes when the [`Wake`] is woken.
    pub fn fill(self, value: T) -> Wake {
        let mut s = lock(&self.0);
        match &mut *s {
            State::Waiting(waiter) => {
                let waiter = waiter.take();
                *s = State::Full(value);
                Wake(waiter)
            }
            State::Full(_) | State::Over => Wake(None),
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
        let mut s = lock(&self.0);
        if let State::Waiting(waiter) = &mut *s {
            let waiter = waiter.take();
            *s = State::Over;
            drop(s);
            drop(Wake(waiter));
        }
    }
}

impl<T> SlotRx<T> {
    /// Waits for the value; `None` when the sender went without one.
    pub fn wait(&self) -> Option<T> {
        loop {
            if let Some(v) = self.look() {
                return v;
            }
            // A wake may come early (left from an earlier use of the thread's park): the
            // loop looks again.
            thread::park();
        }
    }

    /// Waits for the value up to `timeout`: `Err(())` when it did not come in time (the slot
    /// may still be filled later), `Ok(None)` when the sender went without one.
    pub fn wait_timeout(&self, timeout: Duration) -> Result<Option<T>, ()> {
        // A timeout too large for the clock waits for ever.
        let Some(until) = Instant::now().checked_add(timeout) else {
            return Ok(self.wait());
        };
        loop {
            if let Some(v) = self.look() {
                return Ok(v);
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(());
            }
            thread::park_timeout(left);
        }
    }

    /// The value if it is there, without waiting: `Err(())` while it is not.
    pub fn try_take(&self) -> Result<Option<T>, ()> {
        let mut s = lock(&self.0);
        if matches!(*s, State::Waiting(_)) {
            return Err(());
        }
        Ok(take(&mut s))
    }

    /// The outcome if there is one; otherwise this thread is the one to wake.
    fn look(&self) -> Option<Option<T>> {
        let mut s = lock(&self.0);
        match &mut *s {
            State::Waiting(waiter) => {
                // Always this thread: a watch's end may wait on one thread, time out, and
                // wait again on another.
                *waiter = Some(thread::current());
                None
            }
            State::Full(_) | State::Over => Some(take(&mut s)),
        }
    }
}

fn take<T>(s: &mut State<T>) -> Option<T> {
    match std::mem::replace(s, State::Over) {
        State::Full(v) => Some(v),
        State::Waiting(_) | State::Over => None,
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
    fn a_caller_asleep_wakes_only_when_the_wake_is_woken() {
        let (tx, rx) = slot();
        let (asleep_tx, asleep) = std::sync::mpsc::channel();
        let caller = std::thread::spawn(move || {
            asleep_tx.send(()).unwrap();
            rx.wait()
        });
        asleep.recv().unwrap();
        // Until the caller is known to wait, the fill may owe it nothing.
        while !matches!(*lock(&tx.0), State::Waiting(Some(_))) {
            std::thread::yield_now();
        }
        let wake = tx.fill(5);
        assert!(
            wake.0.is_some(),
            "the filler owes the waiting caller a wake"
        );
        wake.wake();
        assert_eq!(caller.join().unwrap(), Some(5));

        let (tx, rx) = slot();
        assert!(tx.fill(6).0.is_none(), "nobody waits yet: no wake owed");
        assert_eq!(rx.wait(), Some(6));
    }

    #[test]
    fn a_wait_moved_to_another_thread_is_woken_there() {
        let (tx, rx) = slot::<u8>();
        let rx = std::thread::spawn(move || {
            assert_eq!(rx.wait_timeout(Duration::from_millis(1)), Err(()));
            rx
        })
        .join()
        .unwrap();
        let waiter = std::thread::spawn(move || rx.wait_timeout(Duration::from_secs(60)));
        let b = waiter.thread().id();
        let until = Instant::now() + Duration::from_secs(10);
        let registered = loop {
            if matches!(&*lock(&tx.0), State::Waiting(Some(t)) if t.id() == b) {
                break true;
            }
            if Instant::now() > until {
                break false;
            }
            std::thread::yield_now();
        };
        tx.send(9);
        assert!(registered, "the second thread is the one to wake");
        assert_eq!(waiter.join().unwrap(), Ok(Some(9)));
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
