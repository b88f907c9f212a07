//! Connection states and the stream of their changes.

use crate::SessionId;

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
