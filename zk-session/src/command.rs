//! What the [`Client`](crate::Client) handle sends the session task.

use std::fmt::Debug;

use bytes::Bytes;
use zk_proto::{Request, WatcherType};

use crate::{
    redact::Redacted,
    session::{Key, WatchId},
    watched_event::WatchKind,
};

/// Who waits for the answers to a command. The async handle sends channels (`Senders`); the
/// driver keeps them and hands the core keys ([`Keys`]) instead, so that the core holds no
/// channel and its answers are values ([`Output`](crate::session::Output)).
pub(crate) trait Callers {
    /// Whoever waits for the reply to a request.
    type Reply: Debug;
    /// Whoever waits for the answer to an auth packet.
    type Auth: Debug;
    /// A one-shot watch.
    type Oneshot: Debug;
    /// A persistent watch.
    type Stream: Debug;
    /// Whoever waits for a close or a server-list change.
    type Done: Debug;
}

/// The core's side: keys of the channels the driver keeps. A request's key is `None` when
/// its caller had given up before the driver took it.
#[derive(Debug)]
pub(crate) enum Keys {}

impl Callers for Keys {
    type Reply = Option<Key>;
    type Auth = Key;
    type Oneshot = ();
    type Stream = ();
    type Done = Key;
}

/// What the client handle asks of the session task.
#[derive(Debug)]
pub(crate) enum Command<C: Callers> {
    /// Boxed: every session's channel allocates a block of 32 commands up front, and the
    /// request's size made that 6 KiB per session, idle or not.
    Request(Box<RequestCmd<C>>),
    /// Boxed like the request, for the same reason: it was the largest of the rest.
    AddAuth(Box<AddAuthCmd<C>>),
    WatchDropped {
        path: String,
        kind: WatchKind,
        id: WatchId,
    },
    Close {
        reply: C::Done,
    },
    /// Replace the server list (not empty). A boxed slice, one word less than a `Vec`, so
    /// that no variant is larger than the watch notice.
    ServerList {
        hosts: Box<[(String, u16)]>,
        reply: C::Done,
    },
}

/// One operation: its request (paths already under the chroot), where its reply goes, and
/// the watch it registers if it succeeds.
#[derive(Debug)]
pub(crate) struct RequestCmd<C: Callers> {
    pub request: Request,
    pub reply: C::Reply,
    pub watch: Option<WatchReg<C>>,
}

/// A credential to add to the session.
#[derive(Debug)]
pub(crate) struct AddAuthCmd<C: Callers> {
    pub scheme: String,
    pub auth: Redacted<Bytes>,
    pub reply: C::Auth,
}

impl<C: Callers> AddAuthCmd<C> {
    /// The scheme, the credential and whoever waits for the answer.
    pub fn into_parts(self) -> (String, Bytes, C::Auth) {
        let AddAuthCmd {
            scheme,
            auth: Redacted(auth),
            reply,
        } = self;
        (scheme, auth, reply)
    }
}

/// A watch to register when the request that sets it succeeds.
/// Each watch has an id the handle gives it, which its drop notice names too.
#[derive(Debug)]
pub(crate) enum WatchReg<C: Callers> {
    /// exists/getData/getChildren: the kind follows from the op and the reply.
    Oneshot {
        path: String,
        id: WatchId,
        tx: C::Oneshot,
    },
    /// addWatch.
    Stream {
        path: String,
        kind: WatchKind,
        id: WatchId,
        tx: C::Stream,
    },
    /// removeWatches: end the local watches of this type when the server removed its own.
    Remove {
        path: String,
        watcher_type: WatcherType,
    },
}

impl<C: Callers> WatchReg<C> {
    /// The path a watch will be registered on, if this registers one.
    pub fn registers(&self) -> Option<&str> {
        match self {
            WatchReg::Oneshot { path, .. } | WatchReg::Stream { path, .. } => Some(path),
            WatchReg::Remove { .. } => None,
        }
    }

    /// The id of the watch this registers, if it registers one.
    pub fn id(&self) -> Option<WatchId> {
        match self {
            WatchReg::Oneshot { id, .. } | WatchReg::Stream { id, .. } => Some(*id),
            WatchReg::Remove { .. } => None,
        }
    }
}
