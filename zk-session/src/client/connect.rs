//! Starting the async client's session: [`ClientBuilder::build`] and
//! [`ClientBuilder::connect`].

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::{
    builder::HandleOptions,
    driver, first_connection,
    shared::Shared,
    state::{EndReason, SessionState},
    Client, ClientBuilder, Error, ServerList,
};

impl ClientBuilder {
    /// Starts the session task without waiting for a connection. Requests made before the
    /// first connection wait for it, each for at most the session timeout: then they fail with
    /// `ConnectionLoss` (as the Java client fails queued requests when its connection attempt
    /// fails), while the client goes on trying.
    ///
    /// The session runs as a task on the current tokio runtime: outside one, `build` fails
    /// with [`Error::NoRuntime`] (it never panics).
    ///
    /// Fails at once, with [`Error::Config`], when the connect string cannot be parsed:
    /// `host[:port]` entries separated by commas (port 2181 when left out, IPv6 hosts in
    /// brackets), then an optional chroot path; or when the session timeout does not fit the
    /// handshake's int32 of milliseconds.
    ///
    /// ```rust
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> zk_session::Result<()> {
    /// use std::time::Duration;
    /// use zk_session::{Client, Error, SessionState};
    ///
    /// let client = Client::builder("zk1,zk2:2182,[::1]:2183/app").build()?;
    /// assert_eq!(client.state(), SessionState::Connecting); // nothing has happened yet
    ///
    /// assert!(matches!(Client::builder("zk1:port").build(), Err(Error::Config(_))));
    /// assert!(matches!(Client::builder("/app").build(), Err(Error::Config(_))));
    /// let forever = Client::builder("zk1").session_timeout(Duration::MAX).build();
    /// assert!(matches!(forever, Err(Error::Config(_))));
    /// # Ok(()) }
    /// ```
    ///
    /// ```rust
    /// use zk_session::{Client, Error};
    ///
    /// // No runtime here: an error rather than a panic.
    /// assert!(matches!(Client::builder("zk1").build(), Err(Error::NoRuntime)));
    /// ```
    pub fn build(self) -> Result<Client, Error> {
        // tokio::spawn would panic outside a runtime.
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(Error::NoRuntime);
        }
        let (cfg, opts) = self.into_config()?;
        #[cfg(all(feature = "blocking-tls", not(feature = "tls")))]
        if matches!(cfg.security, crate::security::Security::Tls(_)) {
            let why = crate::transport::async_tls_missing();
            return Err(crate::ConfigError::tls("TLS", why).into());
        }
        let HandleOptions {
            operation_timeout,
            persistent_watch_buffer,
            server_list,
            ..
        } = opts;
        let chroot = cfg.chroot.clone();
        let shared = Arc::new(Shared::new());
        let (tx, rx) = mpsc::unbounded_channel();
        driver::spawn(cfg, shared.clone(), rx);
        let client = Client::new(
            tx,
            shared,
            chroot,
            operation_timeout,
            persistent_watch_buffer,
        );
        if server_list == ServerList::FollowEnsemble {
            client.follow_ensemble_config();
        }
        Ok(client)
    }

    /// Starts the session and waits until it is connected.
    ///
    /// Dropping the future before it completes stops the session: a session the server
    /// already made for it (the connect request went out) is closed as soon as its
    /// handshake is over, rather than left on the server until it expires.
    ///
    /// ```no_run
    /// # async fn example() -> zk_session::Result<()> {
    /// use std::time::Duration;
    /// use zk_session::{Client, ConnectError, Error};
    ///
    /// let connecting = Client::builder("127.0.0.1:2181")
    ///     .first_connection_timeout(Duration::from_secs(5))
    ///     .connect();
    /// match connecting.await {
    ///     Ok(client) => println!("session {:?}", client.session_id()),
    ///     // The io error stays reachable: `kind` here, `source()` for the error itself.
    ///     Err(Error::ConnectTimeout {
    ///         last_error: Some(ConnectError::Io { server, kind, .. }),
    ///         ..
    ///     }) => eprintln!("{server}: {kind}"),
    ///     Err(Error::ConnectTimeout { last_error, .. }) => eprintln!("no server: {last_error:?}"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn connect(self) -> Result<Client, Error> {
        let wait = self.first_connection_wait();
        let client = self.build()?;
        let mut state = client.watch_state();
        let mut hopeless = client.hopeless();
        let reached = tokio::time::timeout(wait, async {
            loop {
                let s = state.get_and_update();
                if s != SessionState::Connecting {
                    return Ok(s);
                }
                if let Some(e) = hopeless.borrow_and_update().clone() {
                    return Err(e);
                }
                tokio::select! {
                    changed = state.changed() => if changed.is_err() {
                        return Ok(SessionState::Ended(EndReason::Closed));
                    },
                    // The sender lives as long as the client.
                    _ = hopeless.changed() => {}
                }
            }
        })
        .await;
        let reached = match reached {
            // Dropping the client ends the session and its attempts.
            Ok(Err(e)) => return Err(e),
            Ok(Ok(s)) => Ok(s),
            Err(elapsed) => Err(elapsed),
        };
        first_connection::outcome(reached.ok(), wait, || client.last_connect_error())?;
        Ok(client)
    }
}
