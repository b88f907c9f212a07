//! The recipes' retry policy for requests that failed retryably (ConnectionLoss and the
//! like): how long to pause, and whether to try again at all. One place, so every recipe
//! backs off alike; the pause is zk-session's one backoff computation.

use std::{future::Future, time::Duration};

use zk_session::{Backoff, Client, Error, ErrorCode, RetryPolicy};

use super::liveness::client_over;

/// 50 ms doubling to 1 s, with the session's jitter so that many clients do not retry in step.
const BACKOFF: Backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(1));

/// How long to wait before retry number `n` of an operation that failed retryably.
pub(crate) fn retry_delay(n: u32) -> Duration {
    BACKOFF.delay(n)
}

/// The pauses between the tries of one operation, each longer than the last up to the
/// cap: the one backoff of the recipes. A loop that cannot be [`retry_while`] (it waits on
/// other things between tries, or goes on for the recipe's life) keeps one of these and
/// [`reset`](Self::reset)s it after a success.
#[derive(Debug, Default)]
pub(crate) struct Pauses {
    tries: u32,
}

impl Pauses {
    /// The next pause, counting it as taken.
    pub(crate) fn next_delay(&mut self) -> Duration {
        let d = retry_delay(self.tries);
        self.tries = self.tries.saturating_add(1);
        d
    }

    /// Sleeps the next pause.
    pub(crate) async fn pause(&mut self) {
        tokio::time::sleep(self.next_delay()).await;
    }

    /// Starts over from the shortest pause: the operation succeeded.
    pub(crate) fn reset(&mut self) {
        self.tries = 0;
    }
}

/// Whether an operation that failed retryably may be tried again: not once the client is
/// over, nor while the session is presumed lost (no connection for the whole session
/// timeout), when the session fails every request at once and the caller is owed a prompt
/// answer.
pub(crate) fn may_retry(client: &Client) -> bool {
    client_over(client).is_none()
}

/// Whether a read of a recipe whose nodes outlive sessions (the counters) that failed with
/// `e` may be repeated: retryably, or because the session expired while the client goes on
/// with a new one (a read changes nothing, and the next session reads the same tree).
pub(crate) fn may_repeat_read(client: &Client, e: &Error) -> bool {
    (e.is_retryable() || e.code() == Some(ErrorCode::SessionExpired)) && may_retry(client)
}

/// Runs `op` until it answers other than retryably, or [`may_retry`] says to stop, pausing
/// between tries. For requests that may be repeated as they are (idempotent, or whose
/// repetition's NodeExists or NoNode the caller takes as done).
pub(crate) async fn retrying<T, F, Fut>(client: &Client, op: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    retry_while(op, |e: &Error| e.is_retryable() && may_retry(client)).await
}

/// Runs `op` until it fails with an error `again` does not want retried, or succeeds,
/// pausing [`Pauses`] between tries: the one retry loop of the recipes.
pub(crate) async fn retry_while<T, E, F, Fut>(
    mut op: F,
    mut again: impl FnMut(&E) -> bool,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut pauses = Pauses::default();
    loop {
        match op().await {
            Err(e) if again(&e) => pauses.pause().await,
            other => return other,
        }
    }
}

/// Runs `op` until it answers `Ok`, pausing between tries as the caller's `policy` says
/// (an optimistic update raced by another writer): the number of tries and the last
/// answer, `Err` when the policy gave up. A failure of `op` itself ends the tries.
pub(crate) async fn retry_under<T, R, E, F, Fut>(
    policy: &RetryPolicy,
    mut op: F,
) -> Result<(u32, Result<T, R>), E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Result<T, R>, E>>,
{
    let mut tries = 0;
    // A schedule counts the time spent too (RetryPolicy::until_elapsed gives up on it).
    let mut schedule = policy.schedule();
    loop {
        tries += 1;
        match op().await? {
            Ok(v) => return Ok((tries, Ok(v))),
            Err(r) => match schedule.next_sleep() {
                Some(d) => tokio::time::sleep(d).await,
                None => return Ok((tries, Err(r))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_delays_grow_and_are_capped() {
        for n in 0..40 {
            let d = retry_delay(n);
            assert!(d <= Duration::from_secs(1), "{d:?}");
        }
        assert!(retry_delay(0) <= Duration::from_millis(50));
        assert!(BACKOFF.ceiling(30) == Duration::from_secs(1));
    }

    #[tokio::test]
    async fn a_policy_bounds_the_tries_and_a_failure_ends_them() {
        let policy = RetryPolicy::exponential_backoff(Duration::from_millis(1), 2);
        let mut calls = 0;
        let r: Result<(u32, Result<(), u32>), ()> = retry_under(&policy, || {
            calls += 1;
            std::future::ready(Ok(Err(calls)))
        })
        .await;
        assert_eq!(r, Ok((3, Err(3))), "one try and two retries");
        let mut calls = 0;
        let r: Result<(u32, Result<u32, ()>), ()> = retry_under(&policy, || {
            calls += 1;
            std::future::ready(if calls == 2 { Ok(Ok(7)) } else { Ok(Err(())) })
        })
        .await;
        assert_eq!(r, Ok((2, Ok(7))));
        let r: Result<(u32, Result<(), ()>), &str> =
            retry_under(&policy, || std::future::ready(Err("refused"))).await;
        assert_eq!(r, Err("refused"));
    }

    #[test]
    fn pauses_grow_until_reset() {
        let mut p = Pauses::default();
        for _ in 0..10 {
            p.next_delay();
        }
        assert_eq!(p.tries, 10);
        assert!(p.next_delay() <= Duration::from_secs(1));
        p.reset();
        assert!(p.next_delay() <= Duration::from_millis(50));
    }
}
