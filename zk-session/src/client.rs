//! The `Client` handle: one `async fn` per ZooKeeper operation.

use std::{
    sync::{atomic::Ordering, Arc},
    time::Duration,
};

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};
use zk_proto::{Acl, AddWatchMode, ClientInfo, ErrorCode, Request, Response, Stat, WatcherType};

use crate::{
    builder::ClientBuilder,
    chroot::Chroot,
    ops::{self, Call, Decode},
    redact::Redacted,
    senders::{Command, RequestCmd, WatchReg},
    shared::Shared,
    state::SessionState,
    state_watch::{SessionEvents, StateWatch},
    watch::{stream_channel, DropNotice},
    CreateOptions, Error, OneshotWatch, Op, OpResult, PersistentWatch, ReadOp, ReadResult,
    SessionId, Version,
};

/// A handle on one ZooKeeper session. Cheap to clone; every clone shares the session.
///
/// The session lives in a background task that owns the connection: it pipelines requests,
/// sends heartbeats, reconnects to other servers with the same session, and re-registers
/// watches. When the last handle is dropped the session is closed, and its ephemerals go
/// with it: if the client is reconnecting then, the task goes on reconnecting only to
/// close the session, until the session would have expired (then the server expires it).
///
/// ```no_run
/// # async fn f() -> zk_session::Result<()> {
/// use zk_session::{Client, CreateOptions, Version};
///
/// let client = Client::builder("127.0.0.1:2181").connect().await?;
/// client.create("/hello", b"world", CreateOptions::persistent()).await?;
/// let (data, stat) = client.get_data("/hello").await?;
/// assert_eq!(&data[..], b"world");
/// client.delete("/hello", Version::Exact(stat.version)).await?;
/// client.close().await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    tx: mpsc::UnboundedSender<Command>,
    shared: Arc<Shared>,
    chroot: Chroot,
    operation_timeout: Option<Duration>,
    persistent_watch_buffer: usize,
}

impl Client {
    /// A builder for a client of the ensemble in `connect_string`
    /// (`host:port,host:port[/chroot]`).
    ///
    /// ```no_run
    /// # async fn example() -> zk_session::Result<()> {
    /// use zk_session::Client;
    ///
    /// // Three servers; every path of this client is relative to the chroot /app.
    /// let client = Client::builder("zk1:2181,zk2:2181,zk3:2181/app").connect().await?;
    /// # Ok(()) }
    /// ```
    pub fn builder(connect_string: &str) -> ClientBuilder {
        ClientBuilder::new(connect_string)
    }

    pub(crate) fn new(
        tx: mpsc::UnboundedSender<Command>,
        shared: Arc<Shared>,
        chroot: Chroot,
        operation_timeout: Option<Duration>,
        persistent_watch_buffer: usize,
    ) -> Self {
        Client {
            inner: Arc::new(Inner {
                tx,
                shared,
                chroot,
                operation_timeout,
                persistent_watch_buffer,
            }),
        }
    }

    // ----- plumbing -----

    /// Sends the operation's request and decodes its reply.
    async fn run<T>(&self, call: Call<impl Decode<T>>) -> Result<T, Error> {
        (call.decode)(self.call(call.request, None).await)
    }

    /// Like [`run`](Self::run), with the one-shot watch the operation leaves.
    async fn run_watched<T>(
        &self,
        call: Call<impl Decode<T>, ops::Oneshot>,
    ) -> Result<(T, OneshotWatch), Error> {
        let (reg, watch) = self.oneshot_watch(call.watch);
        let value = (call.decode)(self.call(call.request, Some(reg)).await)?;
        Ok((value, watch))
    }

    async fn call(&self, request: Request, watch: Option<WatchReg>) -> Result<Response, Error> {
        let (tx, rx) = oneshot::channel();
        self.inner
            .tx
            .send(Command::Request(Box::new(RequestCmd {
                request,
                reply: tx,
                watch,
            })))
            .map_err(|_| Error::Closed)?;
        self.reply(rx).await
    }

    /// Waits for the session task's answer, up to the request timeout.
    async fn reply<T>(&self, rx: oneshot::Receiver<Result<T, Error>>) -> Result<T, Error> {
        match self.inner.operation_timeout {
            None => rx.await.unwrap_or(Err(Error::Closed)),
            Some(t) => match tokio::time::timeout(t, rx).await {
                Ok(r) => r.unwrap_or(Err(Error::Closed)),
                Err(_) => Err(Error::Code(ErrorCode::RequestTimeout)),
            },
        }
    }

    /// The handle and registration of a one-shot watch (the session treats a data and an
    /// exist watch alike when one is dropped).
    fn oneshot_watch(&self, watch: ops::Oneshot) -> (WatchReg, OneshotWatch) {
        let (tx, rx) = oneshot::channel();
        let id = self.inner.shared.watch_id();
        let ops::Oneshot { path, kind } = watch;
        let notice = DropNotice {
            tx: Some(self.inner.tx.downgrade()),
            path: path.clone(),
            kind,
            id,
        };
        (
            WatchReg::Oneshot { path, id, tx },
            OneshotWatch::new(rx, notice),
        )
    }
}

mod acl_ops;
mod children_ops;
mod connect;
mod ensemble_ops;
mod node_ops;
mod server_list_ops;
mod session_ops;
mod transactions;
mod watch_ops;
