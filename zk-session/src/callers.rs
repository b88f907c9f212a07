//! The driver's side of the callers: the channels of everyone waiting for the session, kept
//! by key while the core names them, and the outputs of the core applied to them and to the
//! handle's [`Shared`] state.

use std::collections::HashMap;

pub(crate) use crate::slab::Slab;

use crate::{
    command::{AddAuthCmd, AuthWaiter, Command, OneshotTx, ReplyTx, RequestCmd, Senders, WatchReg},
    session::{self, Key, Output, WatchId},
    shared::Shared,
    watch::StreamTx,
};

/// Every channel a caller waits on, by the key the core knows it by.
#[derive(Debug, Default)]
pub(crate) struct Callers {
    replies: Slab<ReplyTx>,
    auths: Slab<AuthWaiter>,
    done: Slab<tokio::sync::oneshot::Sender<()>>,
    oneshots: HashMap<WatchId, OneshotTx>,
    streams: HashMap<WatchId, StreamTx>,
}

impl Callers {
    /// Keeps the channels of `cmd` and gives the core the command with their keys.
    pub fn take(&mut self, cmd: Command<Senders>) -> session::Command {
        match cmd {
            Command::Request(rc) => Command::Request(Box::new(self.take_request(*rc))),
            Command::AddAuth(a) => {
                let AddAuthCmd {
                    scheme,
                    auth,
                    reply,
                } = *a;
                Command::AddAuth(Box::new(AddAuthCmd {
                    scheme,
                    auth,
                    reply: self.auths.insert(reply),
                }))
            }
            Command::WatchDropped { path, kind, id } => {
                // Nobody listens any more: whatever the core still says of it goes nowhere.
                self.oneshots.remove(&id);
                self.streams.remove(&id);
                Command::WatchDropped { path, kind, id }
            }
            Command::Close { reply } => Command::Close {
                reply: self.done.insert(reply),
            },
            Command::ServerList { hosts, reply } => Command::ServerList {
                hosts,
                reply: self.done.insert(reply),
            },
        }
    }

    fn take_request(&mut self, rc: RequestCmd<Senders>) -> session::RequestCmd {
        let RequestCmd {
            request,
            reply,
            watch,
        } = rc;
        // A caller that gave up already (timed out or cancelled while the command was
        // queued): the core does not send its request.
        let reply = (!reply.is_closed()).then(|| self.replies.insert(reply));
        let watch = watch.map(|w| match w {
            WatchReg::Oneshot { path, id, tx } => {
                self.oneshots.insert(id, tx);
                WatchReg::Oneshot { path, id, tx: () }
            }
            WatchReg::Stream { path, kind, id, tx } => {
                self.streams.insert(id, tx);
                WatchReg::Stream {
                    path,
                    kind,
                    id,
                    tx: (),
                }
            }
            WatchReg::Remove { path, watcher_type } => WatchReg::Remove { path, watcher_type },
        });
        RequestCmd {
            request,
            reply,
            watch,
        }
    }

    /// Whether the caller of request `key` gave up; if so its channel is dropped (the core
    /// drops the request: see
    /// [`SessionCore::prune_waiting`](crate::session::SessionCore::prune_waiting)).
    pub fn take_if_gone(&mut self, key: Key) -> bool {
        let gone = self.replies.get(key).is_none_or(|r| r.is_closed());
        if gone {
            self.replies.take(key);
        }
        gone
    }

    /// Applies one output of the core.
    pub fn apply(&mut self, output: Output, shared: &Shared) {
        match output {
            Output::Reply { to, result } => {
                if let Some(tx) = self.replies.take(to) {
                    let _ = tx.send(result);
                }
            }
            Output::Auth { to, result } => {
                if let Some(tx) = self.auths.take(to) {
                    let _ = tx.send(result);
                }
            }
            Output::Watch { to, result } => {
                if let Some(tx) = self.oneshots.remove(&to) {
                    let _ = tx.send(result);
                }
            }
            Output::Stream { to, event } => {
                if let Some(tx) = self.streams.get(&to) {
                    // A reader gone is forgotten when its drop notice comes.
                    let _ = tx.send(&event);
                }
            }
            Output::WatchEnded { to } => {
                self.oneshots.remove(&to);
                self.streams.remove(&to);
            }
            Output::Done { to } => {
                if let Some(tx) = self.done.take(to) {
                    let _ = tx.send(());
                }
            }
            Output::Publish(view) => shared.publish(view),
            // The driver's own business (its log spans).
            Output::Established { .. } => {}
            Output::AttemptFailed(why) => shared.attempt_failed(why),
            Output::Hopeless(e) => {
                shared.hopeless.send_replace(Some(e));
            }
        }
    }

    /// Gives back the room that a burst of requests grew, once none is waiting.
    pub fn shrink_if_idle(&mut self) {
        self.replies.shrink_if_empty();
    }
}
