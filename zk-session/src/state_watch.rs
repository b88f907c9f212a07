//! The async client's views of the session state: the latest state ([`StateWatch`]) and every
//! event ([`SessionEvents`]), published by the session task through tokio's channels.

use tokio::sync::{broadcast, watch};

use crate::{Error, SessionEvent, SessionState};

/// The session state as it changes, from [`Client::watch_state`](crate::Client::watch_state):
/// for waiting until the state is one you want. Unlike [`SessionEvents`], it skips the
/// states that came and went while nobody looked, and always has the latest.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_session::Result<()> {
/// use zk_session::SessionState;
///
/// let mut state = client.watch_state();
/// // Wait until a server takes requests, or the client ends.
/// let now = state.wait_for(|s| s.is_connected() || s.is_terminal()).await?;
/// println!("{now:?}");
/// // Then follow every later change.
/// while let Ok(s) = state.changed().await {
///     println!("now {s:?}");
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct StateWatch {
    rx: watch::Receiver<SessionState>,
}

impl StateWatch {
    /// The state now. [`changed`](Self::changed) does not count it as seen.
    ///
    /// See the example on [`get_and_update`](Self::get_and_update).
    pub fn get(&self) -> SessionState {
        *self.rx.borrow()
    }

    /// The state now, marked as seen: [`changed`](Self::changed) waits for a later one.
    ///
    /// ```no_run
    /// # async fn f(client: zk_session::Client) {
    /// let mut state = client.watch_state();
    /// loop {
    ///     let s = state.get_and_update();
    ///     if s.is_connected() {
    ///         break;
    ///     }
    ///     assert_eq!(state.get(), s); // until the next change
    ///     if state.changed().await.is_err() {
    ///         break; // the client is gone
    ///     }
    /// }
    /// # }
    /// ```
    pub fn get_and_update(&mut self) -> SessionState {
        *self.rx.borrow_and_update()
    }

    /// Waits for a state not seen yet and returns it. Fails with [`Error::Closed`] once the
    /// session task and every handle are gone (the last state stays readable with
    /// [`get`](Self::get)).
    ///
    /// See the example on [`StateWatch`].
    pub async fn changed(&mut self) -> Result<SessionState, Error> {
        self.rx.changed().await.map_err(|_| Error::Closed)?;
        Ok(self.get_and_update())
    }

    /// Waits until `want` holds for the state (which may be at once) and returns that
    /// state. Fails with [`Error::Closed`] if the session task and every handle are gone
    /// first.
    ///
    /// See the example on [`StateWatch`].
    pub async fn wait_for(
        &mut self,
        mut want: impl FnMut(SessionState) -> bool,
    ) -> Result<SessionState, Error> {
        let s = self.rx.wait_for(|s| want(*s)).await;
        s.map(|s| *s).map_err(|_| Error::Closed)
    }
}

/// A stream of [`SessionEvent`]s, from [`Client::session_events`](crate::Client::session_events).
///
/// ```no_run
/// # async fn f(client: zk_session::Client) {
/// let mut events = client.session_events();
/// while let Some(ev) = events.next().await {
///     println!("{ev:?}");
/// }
/// # }
/// ```
#[derive(Debug)]
pub struct SessionEvents {
    rx: broadcast::Receiver<SessionEvent>,
}

impl SessionEvents {
    pub(crate) fn new(rx: broadcast::Receiver<SessionEvent>) -> Self {
        SessionEvents { rx }
    }

    /// The next event; `None` once the client is gone and all events were read.
    ///
    /// A reader that falls more than 64 events behind skips the oldest ones.
    ///
    /// See the example on [`SessionEvents`].
    pub async fn next(&mut self) -> Option<SessionEvent> {
        loop {
            match self.rx.recv().await {
                Ok(ev) => return Some(ev),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

/// The session task's side: publishes states and events.
#[derive(Debug)]
pub(crate) struct StatePublisher {
    state: watch::Sender<SessionState>,
    /// Made by the first subscriber: a broadcast channel allocates all its 64 slots up front
    /// (about 3 KiB), which most sessions, idle or not, would never use. The lock is held
    /// while publishing and while subscribing: whoever has seen a state (say `connect`
    /// returning) and subscribes then does not receive the event that announced it.
    events: std::sync::Mutex<Option<broadcast::Sender<SessionEvent>>>,
}

/// Events a slow reader may fall behind by before it skips the oldest.
const EVENTS_BUFFERED: usize = 64;

impl StatePublisher {
    pub fn new() -> Self {
        StatePublisher {
            state: watch::channel(SessionState::Connecting).0,
            events: std::sync::Mutex::new(None),
        }
    }

    pub fn state(&self) -> SessionState {
        *self.state.borrow()
    }

    pub fn watch_state(&self) -> StateWatch {
        StateWatch {
            rx: self.state.subscribe(),
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<SessionEvent> {
        let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        events
            .get_or_insert_with(|| broadcast::channel(EVENTS_BUFFERED).0)
            .subscribe()
    }

    pub fn publish(&self, state: SessionState, event: SessionEvent) {
        let events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        self.state.send_replace(state);
        if let Some(tx) = events.as_ref() {
            let _ = tx.send(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EndReason;

    #[tokio::test]
    async fn a_state_watch_sees_the_latest_state_and_the_end_of_the_publisher() {
        let publisher = StatePublisher::new();
        let mut state = publisher.watch_state();
        assert_eq!(state.get_and_update(), SessionState::Connecting);
        publisher.publish(SessionState::Suspended, SessionEvent::Suspended);
        publisher.publish(SessionState::Lost, SessionEvent::Lost);
        // Only the latest: Suspended came and went unseen.
        assert_eq!(state.get(), SessionState::Lost);
        assert_eq!(state.changed().await.unwrap(), SessionState::Lost);
        let ended = SessionState::Ended(EndReason::Closed);
        let mut waiter = publisher.watch_state();
        publisher.publish(ended, SessionEvent::Ended(EndReason::Closed));
        assert_eq!(waiter.wait_for(|s| s.is_terminal()).await.unwrap(), ended);
        drop(publisher);
        // A change made before the end is still told, then the end.
        assert_eq!(state.changed().await.unwrap(), ended);
        assert!(matches!(state.changed().await, Err(Error::Closed)));
        assert!(matches!(
            waiter.wait_for(|s| s.is_connected()).await,
            Err(Error::Closed)
        ));
        assert_eq!(state.get(), ended);
    }
}
