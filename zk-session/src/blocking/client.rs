//! The blocking `Client` handle: what every operation shares (paths under the chroot, the
//! call and its wait, watches), and what the session can tell.

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use zk_proto::{ErrorCode, Request, Response};

use super::{
    session::{Command, Session, Slots},
    slot::{slot, SlotRx},
    watch::{DropNotice, OneshotWatch},
};
use crate::{
    chroot::Chroot,
    command::{RequestCmd, WatchReg},
    ops::{self, Call, Decode},
    ClientBuilder, Error, SessionEvent, SessionId, SessionState,
};

/// A blocking handle on one ZooKeeper session, for code that is not async. Cheap to clone;
/// every clone shares the session, and any thread may call it.
///
/// One I/O thread per session (`zk-session-io`) owns the connection's reads, the heartbeats
/// and the reconnects; a caller writes its own request and blocks until its reply. The
/// session behaves as the async [`Client`](crate::Client)'s does (it is the same session
/// core): it moves to another server with the same session, re-sends auth, re-registers
/// watches, and after an expiry makes a new session on the same handle. Dropping the last
/// handle closes the session (its ephemerals go at once) and ends the thread.
///
/// ```no_run
/// # fn f() -> zk_session::Result<()> {
/// use zk_session::{blocking, CreateOptions, Version};
///
/// let client = blocking::Client::builder("127.0.0.1:2181").connect_blocking()?;
/// client.create("/hello", b"world", CreateOptions::persistent())?;
/// let (data, stat) = client.get_data("/hello")?;
/// assert_eq!(&data[..], b"world");
/// client.delete("/hello", Version::Exact(stat.version))?;
/// client.close()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Client {
    pub(super) handle: Arc<Handle>,
}

/// What the handles share; the last one's drop closes the session.
#[derive(Debug)]
pub(super) struct Handle {
    pub session: Arc<Session>,
    pub chroot: Chroot,
    pub operation_timeout: Option<Duration>,
    pub persistent_watch_buffer: usize,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.session.handles_gone();
    }
}

/// A receiver of session events (`Connected`, `Suspended`, `Lost`, `Expired`,
/// `Reconnected`, `Ended`…), from [`Client::session_events`]; `recv`, `recv_timeout` and
/// iteration are std's.
pub type SessionEvents = std::sync::mpsc::Receiver<SessionEvent>;

impl Client {
    /// A builder for a client of the ensemble in `connect_string`
    /// (`host:port,host:port[/chroot]`); finish it with
    /// [`ClientBuilder::connect_blocking`].
    ///
    /// ```no_run
    /// # fn f() -> zk_session::Result<()> {
    /// use std::time::Duration;
    /// use zk_session::blocking::Client;
    ///
    /// let client = Client::builder("zk1:2181,zk2:2181,zk3:2181/app")
    ///     .session_timeout(Duration::from_secs(10))
    ///     .digest_auth("user", "secret")
    ///     .connect_blocking()?;
    /// # Ok(()) }
    /// ```
    pub fn builder(connect_string: &str) -> ClientBuilder {
        ClientBuilder::new(connect_string)
    }

    /// Sends the operation's request and decodes its reply.
    pub(super) fn run<T>(&self, call: Call<impl Decode<T>>) -> Result<T, Error> {
        (call.decode)(self.call(call.request, None))
    }

    /// Like [`run`](Self::run), with the one-shot watch the operation leaves.
    pub(super) fn run_watched<T>(
        &self,
        call: Call<impl Decode<T>, ops::Oneshot>,
    ) -> Result<(T, OneshotWatch), Error> {
        let (reg, watch) = self.oneshot_watch(call.watch);
        let value = (call.decode)(self.call(call.request, Some(reg)))?;
        Ok((value, watch))
    }

    /// Sends `request` and blocks for its reply, up to the operation timeout.
    pub(super) fn call(
        &self,
        request: Request,
        watch: Option<WatchReg<Slots>>,
    ) -> Result<Response, Error> {
        let (reply, rx) = slot();
        let cmd = RequestCmd {
            request,
            reply,
            watch,
        };
        self.handle.session.submit(Command::Request(Box::new(cmd)));
        self.wait(rx)
    }

    /// Blocks for an answer, up to the operation timeout.
    pub(super) fn wait<T>(&self, rx: SlotRx<Result<T, Error>>) -> Result<T, Error> {
        match self.handle.operation_timeout {
            None => rx.wait().unwrap_or(Err(Error::Closed)),
            Some(t) => match rx.wait_timeout(t) {
                Ok(r) => r.unwrap_or(Err(Error::Closed)),
                Err(()) => Err(Error::Code(ErrorCode::RequestTimeout)),
            },
        }
    }

    /// The handle and registration of a one-shot watch.
    fn oneshot_watch(&self, watch: ops::Oneshot) -> (WatchReg<Slots>, OneshotWatch) {
        let (tx, rx) = slot();
        let session = &self.handle.session;
        let id = session.watch_id();
        let ops::Oneshot { path, kind } = watch;
        let notice = DropNotice {
            session: Some(Arc::downgrade(session)),
            path: path.clone(),
            kind,
            id,
        };
        (
            WatchReg::Oneshot { path, id, tx },
            OneshotWatch::new(rx, notice),
        )
    }

    // ----- the session -----

    /// The session id, once the first connection has made one (`None` before, and while an
    /// expired session is being replaced).
    pub fn session_id(&self) -> Option<SessionId> {
        SessionId::new(self.handle.session.board.read().session_id)
    }

    /// The session's password (with the id, what resumes it elsewhere).
    pub fn session_password(&self) -> Bytes {
        self.handle.session.board.read().passwd.clone()
    }

    /// The session timeout the server granted (zero before the first connection).
    pub fn negotiated_timeout(&self) -> Duration {
        self.handle.session.board.read().negotiated_timeout
    }

    /// The highest zxid the client has seen.
    pub fn last_zxid(&self) -> i64 {
        let z = &self.handle.session.board.last_zxid;
        z.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The server of the current connection, `host:port`.
    pub fn connected_server(&self) -> Option<String> {
        self.handle.session.board.read().server.clone()
    }

    /// The session's state now.
    pub fn state(&self) -> SessionState {
        self.handle.session.board.read().state
    }

    /// True once the session is over for good (closed, expired without a new one, or
    /// refused).
    pub fn has_ended(&self) -> bool {
        self.handle.session.board.read().ended
    }

    /// Every session event from now on, on a std channel.
    ///
    /// ```no_run
    /// # fn f(client: zk_session::blocking::Client) {
    /// use std::time::Duration;
    /// let events = client.session_events();
    /// while let Ok(event) = events.recv_timeout(Duration::from_secs(30)) {
    ///     println!("{event:?}");
    /// }
    /// # }
    /// ```
    pub fn session_events(&self) -> SessionEvents {
        self.handle.session.board.subscribe()
    }

    /// Blocks until the state is one `want` accepts, for at most `timeout`; returns the
    /// state then (accepted or not).
    ///
    /// ```no_run
    /// # fn f(client: zk_session::blocking::Client) {
    /// use std::time::Duration;
    /// let s = client.wait_for_state(|s| s.is_connected(), Duration::from_secs(10));
    /// println!("{s:?}");
    /// # }
    /// ```
    pub fn wait_for_state(
        &self,
        mut want: impl FnMut(SessionState) -> bool,
        timeout: Duration,
    ) -> SessionState {
        let board = &self.handle.session.board;
        board.wait_until(timeout, |p| want(p.state)).state
    }

    /// Closes the session: the server deletes its ephemerals, and every request and watch
    /// still waiting ends with [`Error::Closed`]. Returns once it is closed (or was).
    pub fn close(&self) -> Result<(), Error> {
        let (reply, rx) = slot();
        self.handle.session.submit(Command::Close { reply });
        let _ = rx.wait();
        Ok(())
    }
}
