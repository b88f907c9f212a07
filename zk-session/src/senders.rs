//! The async handle's side of a command: the tokio channels its callers wait on, which the
//! driver swaps for keys before the core sees the command.

use tokio::sync::oneshot;
use zk_proto::Response;

use crate::{command::Callers, watch::StreamTx, Error, WatchedEvent};

/// A command as the handle sends it.
pub(crate) type Command = crate::command::Command<Senders>;
/// A request as the handle sends it.
pub(crate) type RequestCmd = crate::command::RequestCmd<Senders>;
/// A watch registration as the handle sends it.
pub(crate) type WatchReg = crate::command::WatchReg<Senders>;

/// The handle's side: the channels themselves.
#[derive(Debug)]
pub(crate) enum Senders {}

impl Callers for Senders {
    type Reply = ReplyTx;
    type Auth = AuthWaiter;
    type Oneshot = OneshotTx;
    type Stream = StreamTx;
    type Done = oneshot::Sender<()>;
}

/// Where the answer to a request goes.
pub(crate) type ReplyTx = oneshot::Sender<Result<Response, Error>>;

/// Whoever waits for the answer to an auth packet.
pub(crate) type AuthWaiter = oneshot::Sender<Result<(), Error>>;

/// Where a one-shot watch's event goes.
pub(crate) type OneshotTx = oneshot::Sender<Result<WatchedEvent, Error>>;
