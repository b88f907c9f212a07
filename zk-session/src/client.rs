//! The `Client` handle: one `async fn` per ZooKeeper operation.

use crate::{ArgumentError, ProtocolViolation};
use std::{
    sync::{atomic::Ordering, Arc},
    time::Duration,
};

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};
use zk_proto::{
    validate_path, Acl, AddWatchMode, AddWatchRequest, CheckVersionRequest, ClientInfo, CreateMode,
    CreateRequest, CreateTtlRequest, DeleteRequest, ErrorCode, ExistsRequest, GetAclRequest,
    GetAllChildrenNumberRequest, GetChildrenRequest, GetDataRequest, GetEphemeralsRequest, MultiOp,
    MultiRequest, MultiResult, PathKind, ReconfigRequest, RemoveWatchesRequest, Request, Response,
    SetAclRequest, SetDataRequest, Stat, SyncRequest, WatcherType,
};
use zk_proto::{
    Create2Response, CreateResponse, ErrorResponse, GetAclResponse, GetAllChildrenNumberResponse,
    GetChildren2Response, GetChildrenResponse, GetDataResponse, GetEphemeralsResponse,
    MultiResponse, ReplyBody, WhoAmIResponse,
};

use crate::{
    builder::ClientBuilder,
    chroot::Chroot,
    redact::Redacted,
    senders::{Command, RequestCmd, WatchReg},
    shared::Shared,
    state::SessionState,
    state_watch::{SessionEvents, StateWatch},
    watch::{stream_channel, DropNotice},
    watched_event::WatchKind,
    CreateOptions, Error, OneshotWatch, Op, OpResult, PersistentWatch, ReadOp, ReadResult,
    SessionId, Version,
};

/// The znode holding the ensemble's dynamic configuration (never under the chroot).
const CONFIG_NODE: &str = "/zookeeper/config";

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

    fn server_path(&self, path: &str, kind: PathKind) -> Result<String, Error> {
        validate_path(path, kind).map_err(|reason| Error::InvalidPath {
            path: path.to_owned(),
            reason,
        })?;
        // The server appends the sequence to "/app" itself: "/app0000000001" is a sibling of
        // the chroot, outside it (the Java client lets this through).
        if path == "/" && matches!(kind, PathKind::Sequential) && !self.inner.chroot.is_root() {
            return Err(ArgumentError::SequentialAtChroot.into());
        }
        Ok(self.inner.chroot.to_server(path))
    }

    fn client_path(&self, server_path: &str) -> String {
        self.inner.chroot.to_client(server_path)
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

    /// A one-shot watch of `kind`: Data for getData and exists (the session treats a data
    /// and an exist watch alike when one is dropped), Child for getChildren.
    fn oneshot_watch(&self, path: &str, kind: WatchKind) -> (WatchReg, OneshotWatch) {
        let (tx, rx) = oneshot::channel();
        let id = self.inner.shared.watch_id();
        let notice = DropNotice {
            tx: Some(self.inner.tx.downgrade()),
            path: path.to_owned(),
            kind,
            id,
        };
        (
            WatchReg::Oneshot {
                path: path.to_owned(),
                id,
                tx,
            },
            OneshotWatch::new(rx, notice),
        )
    }
}

/// Narrows a reply to the record its request expects; zk-proto's [`ReplyBody`] says which
/// variant holds which record.
fn narrow<R: ReplyBody>(resp: Response) -> Result<R, Error> {
    R::from_response(resp).map_err(|got| {
        Error::ProtocolViolation(ProtocolViolation::WrongReply {
            expected: R::RECORD,
            got: got.record_name(),
        })
    })
}

/// exists: NoNode is an answer, not an error.
fn exists_result(r: Result<Response, Error>) -> Result<Option<Stat>, Error> {
    match r {
        Err(Error::Code(ErrorCode::NoNode)) => Ok(None),
        r => narrow(r?).map(Some),
    }
}

fn data_result(r: Response) -> Result<(Bytes, Stat), Error> {
    narrow::<GetDataResponse>(r).map(|d| (d.data.unwrap_or_default(), d.stat))
}

fn children2_result(r: Response) -> Result<(Vec<String>, Stat), Error> {
    narrow::<GetChildren2Response>(r).map(|c| (c.children, c.stat))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_of_another_record_is_a_protocol_violation_naming_both() {
        match narrow::<Stat>(Response::Empty) {
            Err(Error::ProtocolViolation(ProtocolViolation::WrongReply { expected, got })) => {
                assert_eq!((expected, got), ("Stat", "Empty"))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            exists_result(Err(Error::Code(ErrorCode::NoNode))).unwrap(),
            None
        );
        let stat = Stat {
            version: 3,
            ..Stat::default()
        };
        assert_eq!(exists_result(Ok(Response::Stat(stat))).unwrap(), Some(stat));
    }
}
