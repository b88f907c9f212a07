//! Retrying operations that are safe to repeat, in the manner of Curator's
//! `ExponentialBackoffRetry`.

use std::{future::Future, time::Duration};

use crate::{Backoff, Error};

/// Exponential backoff with jitter, a cap on each sleep and a bounded number of retries.
///
/// Retry `n` (0-based) sleeps pause `n` of a [`Backoff`] from `base` capped at `max_sleep`
/// (10 s unless set): a random duration in `[d/2, d]` with `d = base × 2^n`. Only errors for
/// which [`Error::is_retryable`] holds are retried.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_session::Result<()> {
/// use std::time::Duration;
/// use zk_session::RetryPolicy;
///
/// let policy = RetryPolicy::exponential_backoff(Duration::from_millis(100), 5);
/// let (data, _stat) = policy.run(|| client.get_data("/config")).await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    base: Duration,
    max_sleep: Duration,
    max_retries: u32,
}

impl RetryPolicy {
    /// Retries up to `max_retries` times, starting from `base`, each sleep capped at 10 s.
    ///
    /// The same example serves for [`with_max_sleep`](Self::with_max_sleep) and
    /// [`sleep_for`](Self::sleep_for).
    ///
    /// ```rust
    /// use std::time::Duration;
    /// use zk_session::RetryPolicy;
    ///
    /// let policy = RetryPolicy::exponential_backoff(Duration::from_millis(100), 3)
    ///     .with_max_sleep(Duration::from_millis(300));
    /// let first = policy.sleep_for(0).unwrap(); // 50 to 100 ms
    /// assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
    /// // Retry 2 would sleep 200 to 400 ms; the cap makes it 150 to 300 ms.
    /// let third = policy.sleep_for(2).unwrap();
    /// assert!(third >= Duration::from_millis(150) && third <= Duration::from_millis(300));
    /// assert_eq!(policy.sleep_for(3), None); // three retries, then give up
    /// ```
    pub fn exponential_backoff(base: Duration, max_retries: u32) -> Self {
        RetryPolicy {
            base,
            max_sleep: Duration::from_secs(10),
            max_retries,
        }
    }

    /// Caps each sleep at `max_sleep`.
    ///
    /// See the example on [`exponential_backoff`](Self::exponential_backoff).
    pub fn with_max_sleep(mut self, max_sleep: Duration) -> Self {
        self.max_sleep = max_sleep;
        self
    }

    /// Never retries.
    ///
    /// ```rust
    /// use zk_session::RetryPolicy;
    ///
    /// let policy = RetryPolicy::none();
    /// assert_eq!(policy.sleep_for(0), None); // the first failure is the answer
    /// ```
    pub fn none() -> Self {
        Self::exponential_backoff(Duration::ZERO, 0)
    }

    /// The sleep before retry number `retry` (0-based), or `None` when the tries are used up.
    ///
    /// See the example on [`exponential_backoff`](Self::exponential_backoff).
    pub fn sleep_for(&self, retry: u32) -> Option<Duration> {
        if retry >= self.max_retries {
            return None;
        }
        Some(Backoff::new(self.base, self.max_sleep).delay(retry))
    }

    /// Runs `op` until it succeeds, fails with an error that is not retryable, or the retries
    /// are used up (then the last error is returned).
    ///
    /// See the example on [`RetryPolicy`].
    pub async fn run<T, F, Fut>(&self, mut op: F) -> Result<T, Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let mut retry = 0;
        loop {
            match op().await {
                Err(e) if e.is_retryable() => match self.sleep_for(retry) {
                    Some(d) => {
                        tokio::time::sleep(d).await;
                        retry += 1;
                    }
                    None => return Err(e),
                },
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use zk_proto::ErrorCode;

    use super::*;

    #[test]
    fn sleeps_grow_and_are_capped() {
        let p = RetryPolicy::exponential_backoff(Duration::from_millis(10), 20)
            .with_max_sleep(Duration::from_millis(500));
        for n in 0..20 {
            let d = p.sleep_for(n).unwrap();
            assert!(
                d >= Duration::from_millis(5) && d <= Duration::from_millis(500),
                "{d:?}"
            );
        }
        assert_eq!(p.sleep_for(20), None);
    }

    /// The sleeps are the backoff's: retry n sleeps within [d/2, d], d = base × 2^n.
    #[test]
    fn sleeps_follow_the_backoff() {
        let base = Duration::from_millis(8);
        let p = RetryPolicy::exponential_backoff(base, 10).with_max_sleep(Duration::MAX);
        for n in 0..4u32 {
            let d = base * (1 << n);
            for _ in 0..200 {
                let s = p.sleep_for(n).unwrap();
                assert!(s >= d / 2 && s <= d, "retry {n}: {s:?}");
            }
        }
    }

    #[tokio::test]
    async fn retries_only_retryable_errors_and_gives_up() {
        let p = RetryPolicy::exponential_backoff(Duration::from_millis(1), 3);
        let calls = AtomicU32::new(0);
        let r: Result<(), Error> = p
            .run(|| async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(Error::Code(ErrorCode::ConnectionLoss))
            })
            .await;
        assert!(matches!(r, Err(Error::Code(ErrorCode::ConnectionLoss))));
        assert_eq!(calls.load(Ordering::SeqCst), 4);

        calls.store(0, Ordering::SeqCst);
        let r: Result<(), Error> = p
            .run(|| async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(Error::Code(ErrorCode::NoNode))
            })
            .await;
        assert!(matches!(r, Err(Error::Code(ErrorCode::NoNode))));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
