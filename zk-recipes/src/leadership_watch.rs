//! [`LeadershipWatch`]: whether a leader latch or selector leads, as it changes.

use tokio::sync::watch;

use crate::{leader_latch::engine, leader_selector, RecipeError, Result};

/// Whether a [`LeaderLatch`](crate::LeaderLatch) or
/// [`LeaderSelector`](crate::LeaderSelector) leads, as it changes: from
/// `watch_leadership()`, for `select!` loops that care about the current value rather than
/// each event.
///
/// It reads the recipe's own state, so it agrees with `has_leadership()` at every moment (a
/// term whose end was told is over here too), and it needs no task of its own: it can be
/// made and read outside a runtime. Clones watch independently.
///
/// ```no_run
/// # async fn example(latch: zk_recipes::LeaderLatch) -> zk_recipes::Result<()> {
/// let mut leading = latch.watch_leadership();
/// leading.wait_for(true).await?;
/// println!("leading");
/// // Until the latch ends: each change of leadership, in order.
/// while let Ok(now) = leading.changed().await {
///     println!("leading: {now}");
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct LeadershipWatch {
    source: Source,
    /// What [`changed`](Self::changed) last reported (or the value when made).
    seen: bool,
}

#[derive(Debug, Clone)]
enum Source {
    Latch(watch::Receiver<engine::Status>),
    Selector(watch::Receiver<leader_selector::Status>),
}

impl LeadershipWatch {
    pub(crate) fn of_latch(status: watch::Receiver<engine::Status>) -> Self {
        Self::new(Source::Latch(status))
    }

    pub(crate) fn of_selector(status: watch::Receiver<leader_selector::Status>) -> Self {
        Self::new(Source::Selector(status))
    }

    fn new(source: Source) -> Self {
        let mut w = LeadershipWatch {
            source,
            seen: false,
        };
        w.seen = w.read().0;
        w
    }

    /// Whether the recipe leads now.
    pub fn is_leading(&self) -> bool {
        match &self.source {
            Source::Latch(s) => s.borrow().leader,
            Source::Selector(s) => s.borrow().leading,
        }
    }

    /// Waits until leadership differs from what this watch last reported (when it was made,
    /// or by the last `changed`) and returns it. Fails once the recipe has ended (closed,
    /// or its client ended) with the reason, or [`RecipeError::Closed`] if it is gone.
    pub async fn changed(&mut self) -> Result<bool> {
        let next = !self.seen;
        self.wait_for(next).await.map(|()| next)
    }

    /// Waits until the recipe's leadership is `leading` (at once if it is). Fails as
    /// [`changed`](Self::changed) does, once the recipe has ended without getting there.
    pub async fn wait_for(&mut self, leading: bool) -> Result<()> {
        loop {
            let (now, ended) = self.read();
            if now == leading {
                self.seen = now;
                return Ok(());
            }
            if let Some(e) = ended {
                return Err(e);
            }
            self.next().await?;
        }
    }

    /// The leadership flag and why the recipe ended, marking them seen.
    fn read(&mut self) -> (bool, Option<RecipeError>) {
        match &mut self.source {
            Source::Latch(s) => {
                let s = s.borrow_and_update();
                (s.leader, s.ended.clone())
            }
            Source::Selector(s) => {
                let s = s.borrow_and_update();
                (s.leading, s.ended.clone())
            }
        }
    }

    /// The next change of the recipe's state.
    async fn next(&mut self) -> Result<()> {
        let r = match &mut self.source {
            Source::Latch(s) => s.changed().await,
            Source::Selector(s) => s.changed().await,
        };
        r.map_err(|_| RecipeError::Closed)
    }
}

#[cfg(test)]
mod tests {
    use std::task::Poll::Ready;

    use super::*;

    fn status(leading: bool, ended: Option<RecipeError>) -> leader_selector::Status {
        leader_selector::Status {
            leading,
            ended,
            ..Default::default()
        }
    }

    fn poll_once<F: std::future::Future>(f: F) -> std::task::Poll<F::Output> {
        let waker = std::task::Waker::noop();
        std::pin::pin!(f).poll(&mut std::task::Context::from_waker(waker))
    }

    #[test]
    fn reports_each_change_of_leadership_and_nothing_else() {
        let (tx, rx) = watch::channel(status(false, None));
        let mut w = LeadershipWatch::of_selector(rx);
        assert!(!w.is_leading());
        assert!(poll_once(w.changed()).is_pending());
        // A change of something else is not a change of leadership.
        tx.send_modify(|s| s.queued = true);
        assert!(poll_once(w.changed()).is_pending());
        tx.send_modify(|s| s.leading = true);
        assert!(w.is_leading(), "read from the state itself, no lag");
        assert!(matches!(poll_once(w.changed()), Ready(Ok(true))));
        assert!(poll_once(w.changed()).is_pending());
        tx.send_modify(|s| s.leading = false);
        assert!(matches!(poll_once(w.changed()), Ready(Ok(false))));
    }

    #[test]
    fn wait_for_returns_at_once_when_already_there() {
        let (_tx, rx) = watch::channel(status(true, None));
        let mut w = LeadershipWatch::of_selector(rx);
        assert!(matches!(poll_once(w.wait_for(true)), Ready(Ok(()))));
        assert!(poll_once(w.wait_for(false)).is_pending());
    }

    #[test]
    fn an_ended_recipe_fails_the_wait_with_its_reason() {
        let (tx, rx) = watch::channel(status(false, None));
        let mut w = LeadershipWatch::of_selector(rx);
        tx.send_replace(status(false, Some(RecipeError::Closed)));
        assert!(matches!(
            poll_once(w.wait_for(true)),
            Ready(Err(RecipeError::Closed))
        ));
        // Already not leading: an ended recipe still answers that at once.
        assert!(matches!(poll_once(w.wait_for(false)), Ready(Ok(()))));
        assert!(matches!(
            poll_once(w.changed()),
            Ready(Err(RecipeError::Closed))
        ));
    }

    #[test]
    fn a_recipe_gone_is_closed() {
        let (tx, rx) = watch::channel(status(true, None));
        let mut w = LeadershipWatch::of_selector(rx);
        drop(tx);
        assert!(matches!(
            poll_once(w.wait_for(false)),
            Ready(Err(RecipeError::Closed))
        ));
    }

    #[test]
    fn a_latch_is_watched_by_its_leader_flag() {
        let (tx, rx) = watch::channel(engine::Status::default());
        let mut w = LeadershipWatch::of_latch(rx);
        tx.send_modify(|s| s.leader = true);
        assert!(w.is_leading());
        assert!(matches!(poll_once(w.changed()), Ready(Ok(true))));
    }
}
