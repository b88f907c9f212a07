//! The recipes' retry policy for requests that failed retryably (ConnectionLoss and the
//! like): how long to pause, and whether to try again at all. One place, so every recipe
//! backs off alike.

use std::time::Duration;

use zk_session::{Backoff, Client, SessionState};

/// The recipes' backoff: 50 ms doubling to 1 s, with the session's jitter (one formula for
/// reconnects, RetryPolicy and the recipes).
const RETRY_BACKOFF: Backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(1));

/// How long to wait before retry number `n` of an operation that failed retryably, with
/// jitter so that many clients do not retry in step.
pub(crate) fn retry_delay(n: u32) -> Duration {
    RETRY_BACKOFF.delay(n)
}

/// Whether an operation that failed retryably may be tried again: not once the session is
/// over, nor while it is presumed lost (no connection for the whole session timeout), when
/// the session fails every request at once and the caller is owed a prompt answer.
pub(crate) fn may_retry(client: &Client) -> bool {
    let state = client.state();
    state != SessionState::Lost && !state.is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_delays_grow_and_are_capped() {
        for n in 0..40 {
            let d = retry_delay(n);
            assert!(
                d >= Duration::from_millis(25) && d <= Duration::from_secs(1),
                "{d:?}"
            );
        }
        assert!(retry_delay(0) <= Duration::from_millis(50));
    }
}
