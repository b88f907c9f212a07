//! Connection states and the stream of their changes.

use tokio::sync::{broadcast, watch};

use crate::{Error, SessionId};

/// Where the session stands now.
///
/// Only [`Ended`](Self::Ended) is final; [`Expired`](Self::Expired) means the ensemble
/// expired the session and the client is creating a new one.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) {
/// use zk_session::{EndReason, SessionState};
///
/// match client.state() {
///     SessionState::Connected => println!("session {:?}", client.session_id()),
///     SessionState::Expired => println!("ephemerals gone; a new session is on its way"),
///     SessionState::Ended(EndReason::SessionExpired) => println!("expired: build a new client"),
///     SessionState::Ended(why) => println!("over: {why:?}"),
///     other => println!("{other:?}"),
/// }
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SessionState {
    /// Looking for a server for the first time (or, after an expiry, for the new session).
    Connecting,
    /// Connected to a server that serves reads and writes.
    Connected,
    /// Connected to a server that has lost its quorum: reads only.
    ConnectedReadOnly,
    /// The connection is gone; the session may still be alive on the ensemble.
    Suspended,
    /// No connection for the whole negotiated session timeout: the session is presumed
    /// expired, though the client keeps trying in case the ensemble still holds it.
    Lost,
    /// The ensemble declared the session expired, and the client is creating a new session
    /// (the default, [`OnExpiry::NewSession`](crate::OnExpiry::NewSession)): `Connected`
    /// follows, with a new [`SessionId`](crate::SessionId). Not final. With
    /// [`OnExpiry::End`](crate::OnExpiry::End) an expiry is
    /// `Ended(EndReason::SessionExpired)` instead.
    Expired,
    /// Over for good: every request fails. Build a new client.
    Ended(EndReason),
}

/// Why a client ended; see [`SessionState::Ended`] and [`SessionEvent::Ended`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EndReason {
    /// The client was closed ([`Client::close`](crate::Client::close), or every handle
    /// dropped).
    Closed,
    /// The ensemble expired the session and no new session follows:
    /// [`OnExpiry::End`](crate::OnExpiry::End), or a session given to
    /// [`resume_session`](crate::ClientBuilder::resume_session) that had already expired.
    /// Requests fail with `SessionExpired`.
    SessionExpired,
    /// The server refused the client's credentials. Requests fail with `AuthFailed`.
    AuthFailed,
}

impl SessionState {
    /// True when requests can be sent now.
    ///
    /// The same example serves for [`is_terminal`](Self::is_terminal).
    ///
    /// ```rust
    /// use zk_session::{EndReason, SessionState};
    ///
    /// assert!(SessionState::Connected.is_connected());
    /// assert!(SessionState::ConnectedReadOnly.is_connected());
    /// assert!(!SessionState::Suspended.is_connected() && !SessionState::Suspended.is_terminal());
    /// // Lost is not the end: the ensemble may still hold the session.
    /// assert!(!SessionState::Lost.is_terminal());
    /// // Nor is an expiry that a new session follows.
    /// assert!(!SessionState::Expired.is_terminal());
    /// assert!(SessionState::Ended(EndReason::SessionExpired).is_terminal());
    /// assert!(SessionState::Ended(EndReason::Closed).is_terminal());
    /// ```
    pub fn is_connected(self) -> bool {
        matches!(
            self,
            SessionState::Connected | SessionState::ConnectedReadOnly
        )
    }

    /// True when the client can never serve again: the state is [`Ended`](Self::Ended).
    ///
    /// See the example on [`is_connected`](Self::is_connected).
    pub fn is_terminal(self) -> bool {
        matches!(self, SessionState::Ended(_))
    }
}

/// A change of connection state, in the manner of Curator's `ConnectionState`.
///
/// ```no_run
/// # async fn example(client: zk_session::Client) {
/// use zk_session::SessionEvent;
///
/// let mut events = client.session_events();
/// while let Some(event) = events.next().await {
///     match event {
///         SessionEvent::Connected { session_id } => println!("session {session_id}"),
///         SessionEvent::Suspended => println!("pause: the session may be expiring"),
///         SessionEvent::Reconnected => println!("resume: same session, watches kept"),
///         SessionEvent::Expired => println!("ephemerals gone: re-create them once connected"),
///         SessionEvent::Ended(why) => {
///             println!("over: {why:?}");
///             break;
///         }
///         _ => {}
///     }
/// }
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SessionEvent {
    /// The first connection of a session: the client's first, or the first of the new
    /// session after an expiry. `session_id` is the session's id, new when it differs from
    /// the one before.
    Connected {
        /// The session's id.
        session_id: SessionId,
    },
    /// Connected to a read-only server (the same session or a new one, whose id this is).
    ConnectedReadOnly {
        /// The session's id.
        session_id: SessionId,
    },
    /// The connection was lost; the session may live (Curator's SUSPENDED).
    Suspended,
    /// Connected again with the same session (Curator's RECONNECTED).
    Reconnected,
    /// No connection for the negotiated timeout: presume the session gone (Curator's LOST).
    Lost,
    /// The ensemble expired the session and the client creates a new one: a
    /// [`Connected`](Self::Connected) with the new session's id follows (see
    /// [`ClientBuilder::on_session_expiry`](crate::ClientBuilder::on_session_expiry)).
    Expired,
    /// The client ended for good (the last event).
    Ended(EndReason),
}

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
