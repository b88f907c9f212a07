//! [`ValueWatch`]: a recipe's value as it changes.

use tokio::sync::watch;

use crate::{RecipeError, Result};

/// A recipe's value as it changes, newest first: a [`PersistentNode`](crate::PersistentNode)'s
/// status, a [`GroupMember`](crate::GroupMember)'s view of the group, a
/// [`SharedCount`](crate::SharedCount)'s value. A slow reader skips to the newest value; none
/// is queued. Clones watch independently.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::SharedCount;
///
/// let count = SharedCount::start(client, "/app/max-workers", 10).await?;
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
    /// (a closed [`PersistentNode`](crate::PersistentNode) says
    /// [`NodeStatus::Closed`](crate::node::NodeStatus::Closed) first). Cancel-safe.
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
}
