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
    /// Boxed: every session's channel allocates a block of 32 commands up front, and the
    /// request's size made that 6 KiB per session, idle or not.
    Request(Box<RequestCmd>),
    /// Boxed like the request, for the same reason: it was the largest of the rest.
    AddAuth(Box<AddAuthCmd>),
    WatchDropped {
        path: String,
        kind: WatchKind,
    },
    Close {
        reply: oneshot::Sender<()>,
    },
    /// Replace the server list (not empty). A boxed slice, one word less than a `Vec`, so
    /// that no variant is larger than the watch notice.
    ServerList {
        hosts: Box<[(String, u16)]>,
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

/// A credential to add to the session.
#[derive(Debug)]
pub(crate) struct AddAuthCmd {
    pub scheme: String,
    pub auth: Redacted<Bytes>,
    pub reply: AuthWaiter,
}

impl AddAuthCmd {
    /// The scheme, the credential and whoever waits for the answer.
    pub fn into_parts(self) -> (String, Bytes, AuthWaiter) {
        let AddAuthCmd {
            scheme,
            auth: Redacted(auth),
            reply,
        } = self;
        (scheme, auth, reply)
    }
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
