//! [`DiscoveryStatus`]: where a [`ServiceDiscovery`](super::ServiceDiscovery) stands, and the
//! task that publishes the client's end as its end.

use std::sync::Arc;

use tokio::sync::watch;
use zk_session::Client;

use crate::{plumbing::liveness::client_over, LostReason};

/// Where a [`ServiceDiscovery`](crate::ServiceDiscovery) stands: its
/// [`status`](crate::ServiceDiscovery::status). A new value is published only when the state
/// changes.
///
/// ```no_run
/// # async fn f(discovery: zk_recipes::ServiceDiscovery) -> zk_recipes::Result<()> {
/// use zk_recipes::DiscoveryStatus;
///
/// let mut status = discovery.status();
/// match status.wait_for(|s| s.has_ended()).await? {
///     DiscoveryStatus::Ended(why) => eprintln!("our instances are gone: {why:?}"),
///     other => eprintln!("discovery stopped: {other:?}"),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiscoveryStatus {
    /// Registering and queries are served; registered instances are kept registered (an
    /// ephemeral one is created again after a session expiry).
    Ready,
    /// Closed (or dropped): the last state. Its instances were unregistered (all but
    /// PERMANENT ones).
    Closed,
    /// The client ended for good, and the discovery with it: the last state. Its ephemeral
    /// instances went with the session.
    Ended(LostReason),
}

impl DiscoveryStatus {
    /// Whether this is a last state ([`Closed`](Self::Closed) or [`Ended`](Self::Ended)).
    pub fn has_ended(&self) -> bool {
        !matches!(self, DiscoveryStatus::Ready)
    }
}

/// Moves `status` to the last state `why`, unless it is in one already.
pub(super) fn end(status: &watch::Sender<DiscoveryStatus>, why: DiscoveryStatus) {
    status.send_if_modified(|s| {
        let open = !s.has_ended();
        if open {
            *s = why;
        }
        open
    });
}

/// The client's end, noticed now: published as the discovery's, and returned.
pub(super) fn ended(
    client: &Client,
    status: &watch::Sender<DiscoveryStatus>,
) -> Option<LostReason> {
    let why = client_over(client).filter(|_| client.has_ended())?;
    end(status, DiscoveryStatus::Ended(why));
    Some(why)
}

/// Publishes the client's end as the discovery's end, when it comes.
pub(super) async fn follow_end(client: Client, status: Arc<watch::Sender<DiscoveryStatus>>) {
    let mut state = client.watch_state();
    while ended(&client, &status).is_none() {
        if state.changed().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_last_state_stays() {
        let status = watch::channel(DiscoveryStatus::Ready).0;
        assert!(!status.borrow().has_ended());
        end(&status, DiscoveryStatus::Ended(LostReason::Expired));
        end(&status, DiscoveryStatus::Closed);
        assert_eq!(
            *status.borrow(),
            DiscoveryStatus::Ended(LostReason::Expired)
        );
        assert!(status.borrow().has_ended());
    }
}
