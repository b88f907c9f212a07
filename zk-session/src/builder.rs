//! Configuring and connecting a [`Client`].

use std::{fmt, sync::Arc, time::Duration};

use bytes::Bytes;
use tokio::sync::mpsc;
use zk_proto::DEFAULT_MAX_FRAME_LEN;

use crate::{
    client::Client,
    connect_string::ConnectString,
    driver, first_connection,
    redact::{self, Auths},
    session::Config,
    shared::Shared,
    state::{EndReason, SessionState},
    transport::Security,
    watch::DEFAULT_PERSISTENT_WATCH_BUFFER,
    ConfigError, Error, SessionId,
};

/// Whether the client may use a server that has lost its quorum, for reads only.
///
/// See the example on [`ClientBuilder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ReadOnly {
    /// Only read-write servers (the default).
    #[default]
    Disallowed,
    /// Read-only servers too, while looking for a read-write one.
    Allowed,
}

/// What the client does when the ensemble expires its session.
///
/// See the example on [`ClientBuilder::on_session_expiry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnExpiry {
    /// Create a new session and carry on with the same handle, as Curator and kazoo do (the
    /// default): the state goes to [`SessionState::Expired`], then to `Connected` with a new
    /// session id.
    #[default]
    NewSession,
    /// End the client: the state goes to `Ended(EndReason::SessionExpired)` and every request
    /// fails with `SessionExpired`; build a new client.
    End,
}

/// Where the client's server list comes from.
///
/// See the example on [`ClientBuilder::server_list`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ServerList {
    /// The connect string, and whatever [`Client::update_server_list`] sets (the default).
    #[default]
    ConnectString,
    /// The connect string to start with, then the ensemble's own configuration
    /// (`/zookeeper/config`, read with a watch on every connection and every change), as
    /// Curator's EnsembleTracker does: when members join or leave (dynamic reconfiguration,
    /// ZooKeeper 3.5+), the list follows and the connection moves as
    /// [`Client::update_server_list`] describes.
    FollowEnsemble,
}

/// Builds a [`Client`]; see [`Client::builder`].
///
/// ```no_run
/// # async fn f() -> zk_session::Result<()> {
/// use std::time::Duration;
/// use zk_session::{Client, ReadOnly};
///
/// let client = Client::builder("10.0.0.1:2181,10.0.0.2:2181,10.0.0.3:2181/app")
///     .session_timeout(Duration::from_secs(10))
///     .operation_timeout(Duration::from_secs(5))
///     .read_only(ReadOnly::Allowed)
///     .digest_auth("user", "secret")
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ClientBuilder {
    connect_string: String,
    session_timeout: Duration,
    connect_attempt_timeout: Option<Duration>,
    first_connection_timeout: Option<Duration>,
    operation_timeout: Option<Duration>,
    read_only: ReadOnly,
    max_frame_len: usize,
    auths: Vec<(String, Bytes)>,
    backoff_base: Duration,
    backoff_max: Duration,
    resume: Option<(i64, Bytes)>,
    persistent_watch_buffer: usize,
    on_expiry: OnExpiry,
    on_refusal: crate::OnRefusal,
    sasl: crate::connection::SaslOption,
    security: Security,
    server_list: ServerList,
}

impl ClientBuilder {
    pub(crate) fn new(connect_string: &str) -> Self {
        ClientBuilder {
            connect_string: connect_string.to_owned(),
            session_timeout: Duration::from_secs(10),
            connect_attempt_timeout: None,
            first_connection_timeout: None,
            operation_timeout: None,
            read_only: ReadOnly::Disallowed,
            max_frame_len: DEFAULT_MAX_FRAME_LEN,
            auths: Vec::new(),
            backoff_base: Duration::from_millis(50),
            backoff_max: Duration::from_secs(1),
            resume: None,
            persistent_watch_buffer: DEFAULT_PERSISTENT_WATCH_BUFFER,
            on_expiry: OnExpiry::NewSession,
            on_refusal: crate::OnRefusal::KeepTrying,
            sasl: None,
            security: Security::Plain,
            server_list: ServerList::ConnectString,
        }
    }

    /// Where the server list comes from (default: [`ServerList::ConnectString`]).
    ///
    /// ```no_run
    /// # async fn example() -> zk_session::Result<()> {
    /// use zk_session::{Client, ServerList};
    ///
    /// // Start from two members; follow the ensemble as it grows, shrinks or moves.
    /// let client = Client::builder("zk1:2181,zk2:2181/app")
    ///     .server_list(ServerList::FollowEnsemble)
    ///     .connect()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn server_list(mut self, source: ServerList) -> Self {
        self.server_list = source;
        self
    }

    /// Authenticates every connection with SASL before anything else is sent (cargo feature
    /// `sasl`). If the server refuses, the client ends in
    /// `SessionState::Ended(EndReason::AuthFailed)` and every request fails with `AuthFailed`.
    ///
    /// ```no_run
    /// # async fn example() -> zk_session::Result<()> {
    /// use zk_session::{Client, SaslConfig};
    ///
    /// let client = Client::builder("127.0.0.1:2181")
    ///     .sasl(SaslConfig::digest_md5("bob", "bobsecret"))
    ///     .connect()
    ///     .await?;
    /// let me = client.who_am_i().await?;
    /// assert!(me.iter().any(|i| i.auth_scheme == "sasl" && i.user == "bob"));
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "sasl")]
    pub fn sasl(mut self, config: crate::SaslConfig) -> Self {
        self.sasl = Some(config);
        self
    }

    /// Attaches to an existing session instead of creating one, given its id and password
    /// (from [`Client::session_id`] and [`Client::session_password`]). The server moves the
    /// session to this connection; if it has expired, the client ends up `Expired`.
    ///
    /// ```no_run
    /// # async fn example(saved_id: i64, saved_password: Vec<u8>) -> zk_session::Result<()> {
    /// use zk_session::{Client, SessionId};
    ///
    /// let saved_id = SessionId::new(saved_id).expect("a saved session is never 0");
    ///
    /// // Saved from session_id() and session_password() by a process that has since restarted;
    /// // its ephemeral znodes live on as long as the session does.
    /// let client = Client::builder("127.0.0.1:2181")
    ///     .resume_session(saved_id, saved_password.into())
    ///     .connect()
    ///     .await?;
    /// assert_eq!(client.session_id(), Some(saved_id));
    /// # Ok(()) }
    /// ```
    pub fn resume_session(mut self, session_id: SessionId, password: Bytes) -> Self {
        self.resume = Some((session_id.get(), password));
        self
    }

    /// What to do when the ensemble expires the session (default: [`OnExpiry::NewSession`]).
    ///
    /// With a new session, the handle carries on: the state stream reports
    /// [`SessionEvent::Expired`](crate::SessionEvent::Expired), then
    /// [`SessionEvent::Connected`](crate::SessionEvent::Connected) with the new session's id
    /// once a server has created it. With [`OnExpiry::End`] an expiry is the end:
    /// [`SessionEvent::Ended`](crate::SessionEvent::Ended) with
    /// [`EndReason::SessionExpired`]. Whatever belonged to the old session is
    /// gone: its ephemeral znodes, its one-shot watches (they end with `SessionExpired`), and
    /// the requests that were waiting for a reconnect (they fail with `SessionExpired`).
    /// Credentials are sent again and persistent watches are registered again on the new
    /// session. A session that expires on its very first connection (one given with
    /// [`resume_session`](Self::resume_session)) is not replaced.
    ///
    /// ```no_run
    /// # async fn example() -> zk_session::Result<()> {
    /// use zk_session::{Client, OnExpiry, SessionEvent};
    ///
    /// let client = Client::builder("127.0.0.1:2181").on_session_expiry(OnExpiry::NewSession).connect().await?;
    /// let mut events = client.session_events();
    /// while let Some(event) = events.next().await {
    ///     match event {
    ///         SessionEvent::Expired => println!("ephemerals gone"),
    ///         SessionEvent::Connected { session_id } => println!("re-create them in {session_id}"),
    ///         _ => {}
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn on_session_expiry(mut self, on_expiry: OnExpiry) -> Self {
        self.on_expiry = on_expiry;
        self
    }

    /// What [`connect`](Self::connect) does when every server refuses the connection
    /// (default: [`OnRefusal::KeepTrying`](crate::OnRefusal::KeepTrying)).
    ///
    /// See the example on [`OnRefusal`](crate::OnRefusal).
    pub fn on_refusal(mut self, on_refusal: crate::OnRefusal) -> Self {
        self.on_refusal = on_refusal;
        self
    }

    /// The session timeout to ask for (default 10 s). The server clamps it to
    /// [2, 20] × its tickTime; [`Client::negotiated_timeout`] tells what it granted.
    ///
    /// The same example serves for the other timeouts, [`max_frame_len`](Self::max_frame_len)
    /// and [`reconnect_backoff`](Self::reconnect_backoff).
    ///
    /// ```no_run
    /// # async fn example() -> zk_session::Result<()> {
    /// use std::time::Duration;
    /// use zk_session::Client;
    ///
    /// let client = Client::builder("zk1:2181,zk2:2181,zk3:2181")
    ///     .session_timeout(Duration::from_secs(30))
    ///     .connect_attempt_timeout(Duration::from_secs(3)) // one server, one try
    ///     .first_connection_timeout(Duration::from_secs(60)) // what connect() waits
    ///     .operation_timeout(Duration::from_secs(10)) // each operation
    ///     .reconnect_backoff(Duration::from_millis(100), Duration::from_secs(5))
    ///     .max_frame_len(4 << 20) // for servers with a larger jute.maxbuffer
    ///     .connect()
    ///     .await?;
    /// println!("the server granted {:?}", client.negotiated_timeout());
    /// # Ok(()) }
    /// ```
    pub fn session_timeout(mut self, timeout: Duration) -> Self {
        self.session_timeout = timeout;
        self
    }

    /// Bounds one connection attempt to one server (TCP connect, TLS, the connect request
    /// and its response, SASL) before the client moves to the next server (default: the
    /// session timeout divided by the number of servers, and by at least 3, with a floor of
    /// 500 ms). Formerly `connect_timeout`.
    ///
    /// The reference client divides by the number of servers only. Against a single server,
    /// one connection that is accepted and never answered (ZooKeeper 3.8.0 leaves a connection
    /// made while it starts up that way) then lasts until the session has expired; here it
    /// costs a third of the session timeout, and the next try can still resume the session.
    ///
    /// See the example on [`session_timeout`](Self::session_timeout).
    pub fn connect_attempt_timeout(mut self, timeout: Duration) -> Self {
        self.connect_attempt_timeout = Some(timeout);
        self
    }

    /// Bounds how long [`connect`](Self::connect) waits for the first connection, over as
    /// many attempts and servers as fit (default: the session timeout); past it, `connect`
    /// fails with [`Error::ConnectTimeout`]. [`build`](Self::build) does not wait. Formerly
    /// `initial_connect_timeout`.
    ///
    /// See the example on [`session_timeout`](Self::session_timeout).
    pub fn first_connection_timeout(mut self, timeout: Duration) -> Self {
        self.first_connection_timeout = Some(timeout);
        self
    }

    /// Bounds each operation (each `async fn` of [`Client`] that talks to the server), from
    /// the call to the reply, including any wait for a reconnect; past it the operation fails
    /// with `RequestTimeout` (default: no limit). Formerly `request_timeout`. Whatever the limit, a request that is waiting
    /// for a reconnect fails with `ConnectionLoss` once the session is presumed lost (no
    /// connection for the negotiated session timeout), and requests made while it is lost fail
    /// at once, until a server takes the session back. A request made before the first
    /// connection waits for it at most the session timeout, then fails with `ConnectionLoss`.
    ///
    /// See the example on [`session_timeout`](Self::session_timeout).
    pub fn operation_timeout(mut self, timeout: Duration) -> Self {
        self.operation_timeout = Some(timeout);
        self
    }

    /// Whether read-only servers may be used.
    ///
    /// See the example on [`ClientBuilder`].
    pub fn read_only(mut self, read_only: ReadOnly) -> Self {
        self.read_only = read_only;
        self
    }

    /// The largest frame accepted from (or sent to) a server (default 0xfffff, the server's
    /// `jute.maxbuffer` default).
    ///
    /// See the example on [`session_timeout`](Self::session_timeout).
    pub fn max_frame_len(mut self, len: usize) -> Self {
        self.max_frame_len = len;
        self
    }

    /// How many bytes of unread events each persistent watch may hold (default 4 MiB; an
    /// event counts the length of its path plus a few dozen bytes, and one event is always
    /// held). Past that, events are dropped and counted, and the watch reports
    /// [`Error::WatchLagged`], so that a slow reader or a flooding server cannot grow memory
    /// without bound. The Java client and kazoo queue without limit.
    ///
    /// ```no_run
    /// # async fn example() -> zk_session::Result<()> {
    /// use zk_session::{AddWatchMode, Client, Error};
    ///
    /// let client = Client::builder("127.0.0.1:2181")
    ///     .persistent_watch_buffer(64 << 10)
    ///     .connect()
    ///     .await?;
    /// let mut watch = client.add_watch("/", AddWatchMode::PersistentRecursive).await?;
    /// if let Some(Err(Error::WatchLagged { missed })) = watch.next().await {
    ///     println!("{missed} events dropped: re-read the tree");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn persistent_watch_buffer(mut self, bytes: usize) -> Self {
        self.persistent_watch_buffer = bytes;
        self
    }

    /// Authenticates every connection with `scheme` and `auth`, before any request.
    ///
    /// The same example serves for [`digest_auth`](Self::digest_auth).
    ///
    /// ```no_run
    /// # async fn example() -> zk_session::Result<()> {
    /// use zk_session::Client;
    ///
    /// let client = Client::builder("127.0.0.1:2181")
    ///     .digest_auth("alice", "secret") // the same as .auth("digest", b"alice:secret")
    ///     .connect()
    ///     .await?;
    /// let me = client.who_am_i().await?;
    /// assert!(me.iter().any(|i| i.auth_scheme == "digest" && i.user == "alice"));
    /// # Ok(()) }
    /// ```
    pub fn auth(mut self, scheme: &str, auth: &[u8]) -> Self {
        self.auths
            .push((scheme.to_owned(), Bytes::copy_from_slice(auth)));
        self
    }

    /// Digest authentication as `user:password`.
    ///
    /// See the example on [`auth`](Self::auth).
    pub fn digest_auth(self, user: &str, password: &str) -> Self {
        self.auth("digest", format!("{user}:{password}").as_bytes())
    }

    /// Connects to every server with TLS (feature `tls`); the connect string then lists the
    /// servers' secure client ports (`secureClientPort`). A failed handshake counts as a
    /// failed connection attempt: the client moves to the next server and backs off as
    /// usual, and [`connect`](Self::connect) reports the handshake error in
    /// [`Error::ConnectTimeout`]'s `last_error`.
    ///
    /// ```no_run
    /// # async fn example() -> zk_session::Result<()> {
    /// use zk_session::{Client, TlsConfig};
    ///
    /// let tls = TlsConfig::builder()
    ///     .ca_file("ca.pem")
    ///     .client_cert_files("client.crt", "client.key")
    ///     .build()?;
    /// let client = Client::builder("zk1:2281,zk2:2281").tls(tls).connect().await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "tls")]
    pub fn tls(mut self, config: crate::TlsConfig) -> Self {
        self.security = Security::Tls(config);
        self
    }

    /// The first and the largest pause between rounds of connection attempts
    /// (default 50 ms growing to 1 s, with jitter).
    ///
    /// See the example on [`session_timeout`](Self::session_timeout).
    pub fn reconnect_backoff(mut self, base: Duration, max: Duration) -> Self {
        self.backoff_base = base;
        self.backoff_max = max;
        self
    }

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
        let (cfg, rest) = self.into_config()?;
        let cs_chroot = cfg.chroot.clone();
        let shared = Arc::new(Shared::new());
        let (tx, rx) = mpsc::unbounded_channel();
        driver::spawn(cfg, shared.clone(), rx);
        let client = Client::new(
            tx,
            shared,
            cs_chroot,
            rest.operation_timeout,
            rest.persistent_watch_buffer,
        );
        if rest.server_list == ServerList::FollowEnsemble {
            client.follow_ensemble_config();
        }
        Ok(client)
    }

    /// Checks the settings and splits them into what the session core takes and what the
    /// handle keeps; both drivers (tokio's and the blocking one) start from here.
    pub(crate) fn into_config(self) -> Result<(Config, HandleOptions), Error> {
        let cs = ConnectString::parse(&self.connect_string)?;
        #[cfg(feature = "sasl")]
        if let Some(sasl) = &self.sasl {
            sasl.check()?;
        }
        // The handshake carries the timeout as an int32 of milliseconds.
        if self.session_timeout < Duration::from_millis(1)
            || self.session_timeout > Duration::from_millis(i32::MAX as u64)
        {
            let timeout = self.session_timeout;
            return Err(ConfigError::SessionTimeout { timeout }.into());
        }
        let rest = HandleOptions {
            operation_timeout: self.operation_timeout,
            persistent_watch_buffer: self.persistent_watch_buffer,
            server_list: self.server_list,
            first_connection_wait: self
                .first_connection_timeout
                .unwrap_or(self.session_timeout),
        };
        let cfg = Config {
            hosts: cs.hosts,
            chroot: cs.chroot,
            session_timeout: self.session_timeout,
            connect_timeout: self.connect_attempt_timeout,
            read_only: self.read_only == ReadOnly::Allowed,
            max_frame_len: self.max_frame_len,
            auths: self.auths,
            backoff_base: self.backoff_base,
            backoff_max: self.backoff_max,
            resume: self.resume,
            new_session_on_expiry: self.on_expiry == OnExpiry::NewSession,
            fail_fast_on_refusal: self.on_refusal == crate::OnRefusal::FailFast,
            sasl: self.sasl,
            security: self.security,
        };
        Ok((cfg, rest))
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
        let wait = self
            .first_connection_timeout
            .unwrap_or(self.session_timeout);
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

/// What a client handle keeps of its builder's settings (the rest goes to the core).
pub(crate) struct HandleOptions {
    pub operation_timeout: Option<Duration>,
    pub persistent_watch_buffer: usize,
    pub server_list: ServerList,
    /// How long `connect` waits for the first connection.
    #[cfg_attr(not(feature = "blocking"), allow(dead_code))]
    pub first_connection_wait: Duration,
}

/// Credentials print as `<redacted>` (see redact.rs).
impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("connect_string", &self.connect_string)
            .field("session_timeout", &self.session_timeout)
            .field("connect_attempt_timeout", &self.connect_attempt_timeout)
            .field("first_connection_timeout", &self.first_connection_timeout)
            .field("operation_timeout", &self.operation_timeout)
            .field("read_only", &self.read_only)
            .field("max_frame_len", &self.max_frame_len)
            .field("auths", &Auths(&self.auths))
            .field("backoff_base", &self.backoff_base)
            .field("backoff_max", &self.backoff_max)
            .field("resume", &redact::resume(&self.resume))
            .field("persistent_watch_buffer", &self.persistent_watch_buffer)
            .field("on_expiry", &self.on_expiry)
            .field("on_refusal", &self.on_refusal)
            .field("sasl", &self.sasl)
            .field("security", &self.security)
            .field("server_list", &self.server_list)
            .finish_non_exhaustive()
    }
}
