//! The session behind a handle: what it can tell (id, password, timeout, zxid, server,
//! state) and closing it.

use super::*;

impl Client {
    /// The session id: `None` before the first connection, and between an expiry and the
    /// new session. [`SessionEvent::Connected`](crate::SessionEvent::Connected) tells when it
    /// changes (see [`SessionId`](crate::SessionId)).
    ///
    /// The same example serves for [`session_password`](Self::session_password),
    /// [`negotiated_timeout`](Self::negotiated_timeout), [`last_zxid`](Self::last_zxid) and
    /// [`connected_server`](Self::connected_server).
    ///
    /// ```no_run
    /// # fn example(client: zk_session::Client) {
    /// println!(
    ///     "session {:?} on {:?}: timeout {:?}, last zxid {:#x}",
    ///     client.session_id(),
    ///     client.connected_server(),
    ///     client.negotiated_timeout(),
    ///     client.last_zxid(),
    /// );
    /// // With the id, enough for ClientBuilder::resume_session in another process.
    /// let password = client.session_password();
    /// # }
    /// ```
    pub fn session_id(&self) -> Option<SessionId> {
        SessionId::new(self.inner.shared.session_id.load(Ordering::Acquire))
    }

    /// The session password, with [`session_id`](Self::session_id) enough to take the session
    /// over from another connection.
    ///
    /// See the example on [`session_id`](Self::session_id).
    pub fn session_password(&self) -> Bytes {
        self.inner
            .shared
            .passwd
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The session timeout the server granted (zero before the first connection).
    ///
    /// See the example on [`session_id`](Self::session_id).
    pub fn negotiated_timeout(&self) -> Duration {
        Duration::from_millis(
            self.inner
                .shared
                .negotiated_timeout_ms
                .load(Ordering::Acquire),
        )
    }

    /// The highest zxid seen in a reply.
    ///
    /// See the example on [`session_id`](Self::session_id).
    pub fn last_zxid(&self) -> i64 {
        self.inner.shared.last_zxid.load(Ordering::Relaxed)
    }

    /// Tells when every server failed for a reason retrying will not fix.
    pub(crate) fn hopeless(&self) -> tokio::sync::watch::Receiver<Option<crate::Error>> {
        self.inner.shared.hopeless.subscribe()
    }

    pub(crate) fn last_connect_error(&self) -> Option<crate::ConnectError> {
        self.inner
            .shared
            .last_connect_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The server (`host:port`) this session is connected to now, if any.
    ///
    /// See the example on [`session_id`](Self::session_id).
    pub fn connected_server(&self) -> Option<String> {
        self.inner
            .shared
            .server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The current connection state.
    ///
    /// ```no_run
    /// # fn example(client: zk_session::Client) {
    /// use zk_session::SessionState;
    ///
    /// match client.state() {
    ///     SessionState::Connected => println!("connected"),
    ///     s if s.is_terminal() => println!("{s:?}: this client is done; build a new one"),
    ///     s => println!("{s:?}: writes wait for a read-write server"),
    /// }
    /// # }
    /// ```
    pub fn state(&self) -> SessionState {
        self.inner.shared.publisher.state()
    }

    /// True once this client can serve no more requests: it was closed, authentication
    /// failed, or its session expired and no new session follows. Set just before the state
    /// becomes [`SessionState::Ended`], which says why.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) {
    /// use zk_session::SessionState;
    ///
    /// match client.state() {
    ///     SessionState::Expired => println!("the session expired; a new one is on its way"),
    ///     SessionState::Ended(why) => println!("this client is over: {why:?}"),
    ///     _ if client.has_ended() => println!("over; the state is about to say why"),
    ///     _ => {}
    /// }
    /// # }
    /// ```
    pub fn has_ended(&self) -> bool {
        self.inner.shared.ended.load(Ordering::Acquire)
    }

    /// A stream of connection state changes from now on.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) {
    /// let mut events = client.session_events();
    /// tokio::spawn(async move {
    ///     while let Some(event) = events.next().await {
    ///         eprintln!("ZooKeeper session: {event:?}");
    ///     }
    /// });
    /// # }
    /// ```
    pub fn session_events(&self) -> SessionEvents {
        SessionEvents::new(self.inner.shared.publisher.subscribe())
    }

    /// The state as it changes, for waiting on a particular state.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) {
    /// let mut state = client.watch_state();
    /// // Wait until a server takes requests again (an error only if the client is gone).
    /// let _ = state.wait_for(|s| s.is_connected() || s.is_terminal()).await;
    /// # }
    /// ```
    pub fn watch_state(&self) -> StateWatch {
        self.inner.shared.publisher.watch_state()
    }

    /// Closes the session: its ephemeral znodes go, its watches end, every later request fails
    /// with [`Error::Closed`].
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{CreateOptions, Error};
    ///
    /// client.create("/app/alive", b"", CreateOptions::ephemeral()).await?;
    /// client.close().await?; // the ephemeral znode goes with the session
    /// assert!(matches!(client.exists("/app/alive").await, Err(Error::Closed)));
    /// # Ok(()) }
    /// ```
    pub async fn close(&self) -> Result<(), Error> {
        let (tx, rx) = oneshot::channel();
        if self.inner.tx.send(Command::Close { reply: tx }).is_err() {
            return Ok(());
        }
        let _ = rx.await;
        Ok(())
    }
}
