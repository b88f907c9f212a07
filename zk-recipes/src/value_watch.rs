//! [`ValueWatch`]: a recipe's value as it changes.

use tokio::sync::watch;

use crate::{RecipeError, Result};

/// A recipe's value as it changes, newest first: every long-lived recipe's `status()`, a
/// [`GroupMember`](crate::GroupMember)'s view of the group, a
/// [`SharedCount`](crate::SharedCount)'s value. A slow reader skips to the newest value; none
/// is queued. Clones watch independently.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::SharedCount;
///
/// let count = SharedCount::builder(client, "/app/max-workers").seed(10).start().await?;
/// let mut changes = count.changes();
/// // At once if it already is.
/// let now = changes.wait_for(|c| c.value() >= 10).await?;
/// println!("{} at version {}", now.value(), now.version());
/// // Each newer value, until the count is dropped.
/// while let Ok(c) = changes.changed().await {
///     println!("now {}", c.value());
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ValueWatch<T> {
    rx: watch::Receiver<T>,
}

impl<T: Clone> ValueWatch<T> {
    /// Watches `rx`; its current value counts as seen.
    pub(crate) fn new(mut rx: watch::Receiver<T>) -> Self {
        rx.mark_unchanged();
        ValueWatch { rx }
    }

    /// The newest value.
    pub fn get(&self) -> T {
        self.rx.borrow().clone()
    }

    /// `f` of the newest value, without a clone of it.
    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.rx.borrow())
    }

    /// Waits for a value newer than any this watch has returned (or than the one when it
    /// was made) and returns it; [`RecipeError::Closed`] once the recipe has been dropped
    /// (a recipe's status says how it ended first: [`NodeStatus::Closed`](crate::NodeStatus)
    /// and the like). Cancel-safe.
    pub async fn changed(&mut self) -> Result<T> {
        self.rx.changed().await.map_err(|_| RecipeError::Closed)?;
        Ok(self.rx.borrow_and_update().clone())
    }

    /// Waits until `f` holds for the newest value (at once if it does) and returns that
    /// value; [`RecipeError::Closed`] if the recipe is dropped first. Cancel-safe.
    pub async fn wait_for(&mut self, f: impl FnMut(&T) -> bool) -> Result<T> {
        match self.rx.wait_for(f).await {
            Ok(v) => Ok(v.clone()),
            Err(_) => Err(RecipeError::Closed),
        }
    }
}

/// A recipe's working state beside the public status derived from it, changed together:
/// the status's watchers are woken only when the status becomes another variant, so that a
/// status change is always a change.
#[derive(Debug)]
pub(crate) struct Derived<S, P> {
    state: watch::Sender<S>,
    status: watch::Sender<P>,
    derive: fn(&S) -> P,
}

impl<S, P: Clone> Derived<S, P> {
    pub(crate) fn new(initial: S, derive: fn(&S) -> P) -> Self {
        let status = watch::channel(derive(&initial)).0;
        Derived {
            state: watch::channel(initial).0,
            status,
            derive,
        }
    }

    /// Changes the state with `f` (waking its watchers when `f` says it changed), and the
    /// status with it.
    pub(crate) fn send_if_modified(&self, f: impl FnOnce(&mut S) -> bool) -> bool {
        let changed = self.state.send_if_modified(f);
        let now = (self.derive)(&self.state.borrow());
        self.status.send_if_modified(|s| {
            let new = std::mem::discriminant(s) != std::mem::discriminant(&now);
            if new {
                *s = now;
            }
            new
        });
        changed
    }

    /// Changes the state with `f`, and the status with it.
    pub(crate) fn send_modify(&self, f: impl FnOnce(&mut S)) {
        self.send_if_modified(|s| {
            f(s);
            true
        });
    }

    /// The working state now.
    pub(crate) fn borrow(&self) -> watch::Ref<'_, S> {
        self.state.borrow()
    }

    /// A watch of the working state.
    pub(crate) fn subscribe(&self) -> watch::Receiver<S> {
        self.state.subscribe()
    }

    /// A watch of the status.
    pub(crate) fn status(&self) -> watch::Receiver<P> {
        self.status.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use std::task::{Context, Poll, Poll::Ready, Waker};

    use super::*;

    fn poll_once<F: std::future::Future>(f: F) -> Poll<F::Output> {
        std::pin::pin!(f).poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn changed_returns_each_newer_value_once() {
        let (tx, rx) = watch::channel(1);
        let mut w = ValueWatch::new(rx);
        assert_eq!(w.get(), 1);
        assert!(
            poll_once(w.changed()).is_pending(),
            "the first value counts as seen"
        );
        tx.send_replace(2);
        tx.send_replace(3);
        assert!(
            matches!(poll_once(w.changed()), Ready(Ok(3))),
            "newest first"
        );
        assert!(poll_once(w.changed()).is_pending());
        assert_eq!(w.with(|v| v * 10), 30);
    }

    #[test]
    fn wait_for_returns_at_once_when_it_holds_and_ends_with_the_recipe() {
        let (tx, rx) = watch::channel(5);
        let mut w = ValueWatch::new(rx);
        assert!(matches!(poll_once(w.wait_for(|v| *v == 5)), Ready(Ok(5))));
        assert!(poll_once(w.wait_for(|v| *v == 6)).is_pending());
        drop(tx);
        assert!(matches!(
            poll_once(w.wait_for(|v| *v == 6)),
            Ready(Err(RecipeError::Closed))
        ));
        assert!(matches!(
            poll_once(w.changed()),
            Ready(Err(RecipeError::Closed))
        ));
        assert_eq!(w.get(), 5, "the last value stays readable");
    }

    #[derive(Debug, Clone, PartialEq)]
    enum Phase {
        Low,
        High(u32),
    }

    #[test]
    fn a_derived_status_wakes_its_watchers_only_when_its_variant_changes() {
        let d = Derived::new(1u32, |n| if *n < 10 { Phase::Low } else { Phase::High(*n) });
        let mut w = ValueWatch::new(d.status());
        d.send_modify(|n| *n = 2);
        assert!(poll_once(w.changed()).is_pending(), "still low");
        assert_eq!(*d.borrow(), 2);
        d.send_modify(|n| *n = 12);
        assert!(matches!(poll_once(w.changed()), Ready(Ok(Phase::High(12)))));
        d.send_modify(|n| *n = 13);
        assert!(poll_once(w.changed()).is_pending(), "still high");
        assert!(!d.send_if_modified(|_| false));
        drop(d);
        assert!(matches!(
            poll_once(w.changed()),
            Ready(Err(RecipeError::Closed))
        ));
    }
}
