//! Retrying operations that are safe to repeat, with Curator's retry policies:
//! `ExponentialBackoffRetry`, `BoundedExponentialBackoffRetry`, `RetryNTimes`,
//! `RetryOneTime` and `RetryUntilElapsed`.

#[cfg(feature = "tokio")]
use std::future::Future;
use std::time::Duration;

// tokio's clock where there is tokio, so that a paused test clock moves the schedule too.
#[cfg(not(feature = "tokio"))]
use std::time::Instant;
#[cfg(feature = "tokio")]
use tokio::time::Instant;

use crate::Backoff;
#[cfg(feature = "tokio")]
use crate::Error;

/// How often and how long to wait before retrying an operation; Curator's policies as
/// constructors. Only errors for which [`Error::is_retryable`] holds are retried.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_session::Result<()> {
/// use std::time::Duration;
/// use zk_session::RetryPolicy;
///
/// let policy = RetryPolicy::exponential_backoff(Duration::from_millis(100), 5);
/// let (data, _stat) = policy.run(|| client.get_data("/config")).await?;
/// // Curator's RetryNTimes(3, 500).
/// let fixed = RetryPolicy::n_times(3, Duration::from_millis(500));
/// let (data, _stat) = fixed.run(|| client.get_data("/config")).await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    kind: Kind,
    /// No sleep is longer than this.
    max_sleep: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Retry `n` sleeps a [`Backoff`] pause from `base`, at most `max_retries` times.
    Exponential { base: Duration, max_retries: u32 },
    /// The same sleep before each retry, at most `max_retries` times.
    Fixed { sleep: Duration, max_retries: u32 },
    /// The same sleep before each retry, while less than `max_elapsed` has passed since the
    /// first try.
    UntilElapsed {
        sleep: Duration,
        max_elapsed: Duration,
    },
}

/// Sleeps are capped at this unless set otherwise.
const DEFAULT_MAX_SLEEP: Duration = Duration::from_secs(10);

impl RetryPolicy {
    /// Curator's `ExponentialBackoffRetry`: retries up to `max_retries` times, retry `n`
    /// (0-based) sleeping a random duration in `[d/2, d]` with `d = base × 2^n`, each sleep
    /// capped at 10 s ([`with_max_sleep`](Self::with_max_sleep) changes the cap).
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
            kind: Kind::Exponential { base, max_retries },
            max_sleep: DEFAULT_MAX_SLEEP,
        }
    }

    /// Curator's `BoundedExponentialBackoffRetry(base, maxSleep, maxRetries)`: the
    /// [`exponential_backoff`](Self::exponential_backoff) with each sleep capped at
    /// `max_sleep`.
    ///
    /// ```rust
    /// use std::time::Duration;
    /// use zk_session::RetryPolicy;
    ///
    /// let p = RetryPolicy::bounded_exponential_backoff(
    ///     Duration::from_millis(100),
    ///     Duration::from_millis(250),
    ///     10,
    /// );
    /// assert!(p.sleep_for(9).unwrap() <= Duration::from_millis(250));
    /// assert_eq!(p.sleep_for(10), None);
    /// ```
    pub fn bounded_exponential_backoff(
        base: Duration,
        max_sleep: Duration,
        max_retries: u32,
    ) -> Self {
        Self::exponential_backoff(base, max_retries).with_max_sleep(max_sleep)
    }

    /// Curator's `RetryNTimes(n, sleep)`: up to `n` retries, `sleep` before each.
    ///
    /// ```rust
    /// use std::time::Duration;
    /// use zk_session::RetryPolicy;
    ///
    /// let p = RetryPolicy::n_times(2, Duration::from_millis(500));
    /// assert_eq!(p.sleep_for(0), Some(Duration::from_millis(500)));
    /// assert_eq!(p.sleep_for(1), Some(Duration::from_millis(500)));
    /// assert_eq!(p.sleep_for(2), None);
    /// ```
    pub fn n_times(n: u32, sleep: Duration) -> Self {
        RetryPolicy {
            kind: Kind::Fixed {
                sleep,
                max_retries: n,
            },
            max_sleep: Duration::MAX,
        }
    }

    /// Curator's `RetryOneTime(sleep)`: one retry, after `sleep`.
    ///
    /// ```rust
    /// use std::time::Duration;
    /// use zk_session::RetryPolicy;
    ///
    /// let p = RetryPolicy::one_time(Duration::from_millis(100));
    /// assert_eq!(p.sleep_for(0), Some(Duration::from_millis(100)));
    /// assert_eq!(p.sleep_for(1), None);
    /// ```
    pub fn one_time(sleep: Duration) -> Self {
        Self::n_times(1, sleep)
    }

    /// Curator's `RetryUntilElapsed(maxElapsed, sleep)`: retries, `sleep` before each, as
    /// long as less than `max_elapsed` has passed since the first try (counted by
    /// [`run`](Self::run) and [`schedule`](Self::schedule); [`sleep_before`](Self::sleep_before)
    /// takes it as an argument).
    ///
    /// ```rust
    /// use std::time::Duration;
    /// use zk_session::RetryPolicy;
    ///
    /// let p = RetryPolicy::until_elapsed(Duration::from_secs(2), Duration::from_millis(500));
    /// let s = Duration::from_millis(500);
    /// assert_eq!(p.sleep_before(0, Duration::ZERO), Some(s));
    /// assert_eq!(p.sleep_before(9, Duration::from_millis(1999)), Some(s));
    /// assert_eq!(p.sleep_before(3, Duration::from_secs(2)), None);
    /// ```
    pub fn until_elapsed(max_elapsed: Duration, sleep: Duration) -> Self {
        RetryPolicy {
            kind: Kind::UntilElapsed { sleep, max_elapsed },
            max_sleep: Duration::MAX,
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
        Self::n_times(0, Duration::ZERO)
    }

    /// The sleep before retry number `retry` (0-based), or `None` when the tries are used up.
    /// For [`until_elapsed`](Self::until_elapsed), which needs the time since the first try,
    /// use [`sleep_before`](Self::sleep_before) or [`schedule`](Self::schedule): here no
    /// time counts as passed.
    ///
    /// See the example on [`exponential_backoff`](Self::exponential_backoff).
    pub fn sleep_for(&self, retry: u32) -> Option<Duration> {
        self.sleep_before(retry, Duration::ZERO)
    }

    /// The sleep before retry number `retry` (0-based) when `elapsed` has passed since the
    /// first try, or `None` when the policy gives up.
    ///
    /// See the example on [`until_elapsed`](Self::until_elapsed).
    pub fn sleep_before(&self, retry: u32, elapsed: Duration) -> Option<Duration> {
        let sleep = match self.kind {
            Kind::Exponential { base, max_retries } => {
                (retry < max_retries).then(|| Backoff::new(base, self.max_sleep).delay(retry))
            }
            Kind::Fixed { sleep, max_retries } => (retry < max_retries).then_some(sleep),
            Kind::UntilElapsed { sleep, max_elapsed } => (elapsed < max_elapsed).then_some(sleep),
        }?;
        Some(sleep.min(self.max_sleep))
    }

    /// The sleeps of one operation's retries, counting retries and time from now: for a
    /// retry loop of one's own.
    ///
    /// ```rust
    /// use std::time::Duration;
    /// use zk_session::RetryPolicy;
    ///
    /// let mut retries = RetryPolicy::one_time(Duration::from_millis(10)).schedule();
    /// assert_eq!(retries.next_sleep(), Some(Duration::from_millis(10)));
    /// assert_eq!(retries.next_sleep(), None);
    /// ```
    pub fn schedule(&self) -> RetrySchedule {
        RetrySchedule {
            policy: *self,
            retries: 0,
            started: Instant::now(),
        }
    }

    /// Runs `op` until it succeeds, fails with an error that is not retryable, or the policy
    /// gives up (then the last error is returned).
    ///
    /// See the example on [`RetryPolicy`].
    #[cfg(feature = "tokio")]
    pub async fn run<T, F, Fut>(&self, mut op: F) -> Result<T, Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let mut schedule = self.schedule();
        loop {
            match op().await {
                Err(e) if e.is_retryable() => match schedule.next_sleep() {
                    Some(d) => tokio::time::sleep(d).await,
                    None => return Err(e),
                },
                other => return other,
            }
        }
    }
}

/// The retries of one operation under a [`RetryPolicy`]: how many so far and since when.
///
/// See the example on [`RetryPolicy::schedule`].
#[derive(Debug, Clone)]
pub struct RetrySchedule {
    policy: RetryPolicy,
    retries: u32,
    started: Instant,
}

impl RetrySchedule {
    /// The sleep before the next retry (counting it), or `None` when the policy gives up.
    ///
    /// See the example on [`RetryPolicy::schedule`].
    pub fn next_sleep(&mut self) -> Option<Duration> {
        let sleep = self
            .policy
            .sleep_before(self.retries, self.started.elapsed())?;
        self.retries = self.retries.saturating_add(1);
        Some(sleep)
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

    #[test]
    fn fixed_policies_sleep_the_same_and_count_their_retries() {
        let s = Duration::from_millis(500);
        let three = RetryPolicy::n_times(3, s);
        assert_eq!(
            (0..5).map(|n| three.sleep_for(n)).collect::<Vec<_>>(),
            [Some(s), Some(s), Some(s), None, None]
        );
        let once = RetryPolicy::one_time(s);
        assert_eq!((once.sleep_for(0), once.sleep_for(1)), (Some(s), None));
        assert_eq!(RetryPolicy::none().sleep_for(0), None);
        // A cap applies to them too.
        let capped = three.with_max_sleep(Duration::from_millis(100));
        assert_eq!(capped.sleep_for(2), Some(Duration::from_millis(100)));
    }

    #[test]
    fn until_elapsed_retries_by_time_not_by_count() {
        let s = Duration::from_millis(100);
        let p = RetryPolicy::until_elapsed(Duration::from_secs(1), s);
        assert_eq!(
            p.sleep_before(1_000_000, Duration::from_millis(999)),
            Some(s)
        );
        assert_eq!(p.sleep_before(0, Duration::from_secs(1)), None);
        assert_eq!(p.sleep_before(0, Duration::from_secs(5)), None);
    }

    #[test]
    fn bounded_exponential_backoff_is_capped_at_its_max_sleep() {
        let cap = Duration::from_millis(40);
        let p = RetryPolicy::bounded_exponential_backoff(Duration::from_millis(10), cap, 29);
        for n in 0..29 {
            assert!(p.sleep_for(n).unwrap() <= cap);
        }
        assert_eq!(p.sleep_for(29), None);
        assert_eq!(
            p,
            RetryPolicy::exponential_backoff(Duration::from_millis(10), 29).with_max_sleep(cap)
        );
    }

    #[test]
    fn a_schedule_counts_its_retries_and_its_time() {
        let s = Duration::from_millis(300);
        let mut counted = RetryPolicy::n_times(2, s).schedule();
        assert_eq!(counted.next_sleep(), Some(s));
        assert_eq!(counted.next_sleep(), Some(s));
        assert_eq!(counted.next_sleep(), None);
        // No time at all: spent before the first retry; an hour: not spent by a few.
        let mut spent = RetryPolicy::until_elapsed(Duration::ZERO, s).schedule();
        assert_eq!(spent.next_sleep(), None);
        let mut long = RetryPolicy::until_elapsed(Duration::from_secs(3600), s).schedule();
        assert!((0..100).all(|_| long.next_sleep() == Some(s)));
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
