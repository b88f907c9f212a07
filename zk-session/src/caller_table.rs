//! The callers a driver keeps waiting, by the keys the core names them by, and the core's
//! outputs applied to them: one table for both drivers (tokio's channels, the blocking
//! client's slots), over what each kind of waiter can do.

use std::collections::HashMap;

use zk_proto::Response;

use crate::{
    command::{self, AddAuthCmd, Command, Keys, RequestCmd, WatchReg},
    session::{self, Key, Output, View, WatchId},
    slab::Slab,
    ConnectError, Error, WatchedEvent,
};

/// A waiter answered once.
pub(crate) trait Answer<T> {
    /// Hands over the answer (nobody may be listening any more).
    fn answer(self, value: T);
    /// The caller gave up: nobody would read the answer.
    fn gone(&self) -> bool;
}

/// A persistent watch's queue.
pub(crate) trait EventSink {
    fn event(&self, event: &WatchedEvent);
}

/// What the handle reads beside the answers: the state and the rest of [`View`].
pub(crate) trait Published {
    fn publish(&self, view: View);
    fn attempt_failed(&self, why: ConnectError);
    fn hopeless(&self, e: Error);
}

impl<T: Published + ?Sized> Published for std::sync::Arc<T> {
    fn publish(&self, view: View) {
        (**self).publish(view)
    }

    fn attempt_failed(&self, why: ConnectError) {
        (**self).attempt_failed(why)
    }

    fn hopeless(&self, e: Error) {
        (**self).hopeless(e)
    }
}

/// Every waiter of the driver's kind `C`, by the keys the core knows.
pub(crate) struct CallerTable<C: command::Callers> {
    replies: Slab<C::Reply>,
    auths: Slab<C::Auth>,
    done: Slab<C::Done>,
    oneshots: HashMap<WatchId, C::Oneshot>,
    streams: HashMap<WatchId, C::Stream>,
}

impl<C: command::Callers> Default for CallerTable<C> {
    fn default() -> Self {
        CallerTable {
            replies: Slab::default(),
            auths: Slab::default(),
            done: Slab::default(),
            oneshots: HashMap::new(),
            streams: HashMap::new(),
        }
    }
}

impl<C: command::Callers> std::fmt::Debug for CallerTable<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallerTable")
            .field("oneshots", &self.oneshots.len())
            .field("streams", &self.streams.len())
            .finish_non_exhaustive()
    }
}

impl<C> CallerTable<C>
where
    C: command::Callers,
    C::Reply: Answer<Result<Response, Error>>,
    C::Auth: Answer<Result<(), Error>>,
    C::Done: Answer<()>,
    C::Oneshot: Answer<Result<WatchedEvent, Error>>,
    C::Stream: EventSink,
{
    /// Keeps the waiters of `cmd` and gives the core the command with their keys.
    pub fn take(&mut self, cmd: Command<C>) -> session::Command {
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

    fn take_request(&mut self, rc: RequestCmd<C>) -> RequestCmd<Keys> {
        let RequestCmd {
            request,
            reply,
            watch,
        } = rc;
        // A caller that gave up already (timed out or cancelled while the command was
        // queued): the core does not send its request.
        let reply = (!reply.gone()).then(|| self.replies.insert(reply));
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

    /// Whether the caller of request `key` gave up; if so its waiter is dropped (the core
    /// drops the request: see
    /// [`SessionCore::prune_waiting`](crate::session::SessionCore::prune_waiting)).
    pub fn take_if_gone(&mut self, key: Key) -> bool {
        let gone = self.replies.get(key).is_none_or(|r| r.gone());
        if gone {
            self.replies.take(key);
        }
        gone
    }

    /// Takes the waiter of request `key`, for a driver that answers it itself.
    #[cfg_attr(not(feature = "blocking"), allow(dead_code))]
    pub fn take_reply(&mut self, key: Key) -> Option<C::Reply> {
        self.replies.take(key)
    }

    /// Applies one output of the core.
    pub fn apply(&mut self, output: Output, published: &impl Published) {
        match output {
            Output::Reply { to, result } => {
                if let Some(tx) = self.replies.take(to) {
                    tx.answer(result);
                }
            }
            Output::Auth { to, result } => {
                if let Some(tx) = self.auths.take(to) {
                    tx.answer(result);
                }
            }
            Output::Watch { to, result } => {
                if let Some(tx) = self.oneshots.remove(&to) {
                    tx.answer(result);
                }
            }
            Output::Stream { to, event } => {
                if let Some(tx) = self.streams.get(&to) {
                    // A reader gone is forgotten when its drop notice comes.
                    tx.event(&event);
                }
            }
            Output::WatchEnded { to } => {
                self.oneshots.remove(&to);
                self.streams.remove(&to);
            }
            Output::Done { to } => {
                if let Some(tx) = self.done.take(to) {
                    tx.answer(());
                }
            }
            Output::Publish(view) => published.publish(view),
            // The driver's own business (its log spans).
            Output::Established { .. } => {}
            Output::AttemptFailed(why) => published.attempt_failed(why),
            Output::Hopeless(e) => published.hopeless(e),
        }
    }

    /// Gives back the room that a burst of requests grew, once none is waiting.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub fn shrink_if_idle(&mut self) {
        self.replies.shrink_if_empty();
    }
}
