//! What the [`Client`](crate::Client) handle sends the session task.

use bytes::Bytes;
use tokio::sync::oneshot;
use zk_proto::{Request, Response, WatcherType};

use crate::{
    redact::Redacted,
    session::watch_table::OneshotTx,
    watch::{StreamTx, WatchKind},
    Error,
};

/// What the client handle asks of the session task.
#[derive(Debug)]
pub(crate) enum Command {
    Request(RequestCmd),
    AddAuth {
        scheme: String,
        auth: Redacted<Bytes>,
        reply: AuthWaiter,
    },
    WatchDropped {
        path: String,
        kind: WatchKind,
    },
    Close {
        reply: oneshot::Sender<()>,
    },
}

/// One operation: its request (paths already under the chroot), where its reply goes, and
/// the watch it registers if it succeeds.
#[derive(Debug)]
pub(crate) struct RequestCmd {
    pub request: Request,
    pub reply: ReplyTx,
    pub watch: Option<WatchReg>,
}

/// Where the answer to a request goes.
pub(crate) type ReplyTx = oneshot::Sender<Result<Response, Error>>;

/// Whoever waits for the answer to an auth packet.
pub(crate) type AuthWaiter = oneshot::Sender<Result<(), Error>>;

/// A watch to register when the request that sets it succeeds.
#[derive(Debug)]
pub(crate) enum WatchReg {
    /// exists/getData/getChildren: the kind follows from the op and the reply.
    Oneshot { path: String, tx: OneshotTx },
    /// addWatch.
    Stream {
        path: String,
        kind: WatchKind,
        tx: StreamTx,
    },
    /// removeWatches: end the local watches of this type when the server removed its own.
    Remove {
        path: String,
        watcher_type: WatcherType,
    },
}

impl WatchReg {
    /// The path a watch will be registered on, if this registers one.
    pub fn registers(&self) -> Option<&str> {
        match self {
            WatchReg::Oneshot { path, .. } | WatchReg::Stream { path, .. } => Some(path),
            WatchReg::Remove { .. } => None,
        }
    }
}
