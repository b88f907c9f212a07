//! The line of sequential nodes under a recipe's path, walked the same way by every recipe:
//! list the children, put the contenders in creation order, decide from our place whether we
//! hold (the lock, the leadership, a lease) or must wait, and if we wait, watch one node
//! ahead of us, so that a change wakes only those it concerns (no herd).
//!
//! What "hold" means is the recipe's [`Rule`]: the mutex and the elections let the first
//! hold ([`Exclusive`]); a read/write lock would let a reader hold when no writer is ahead
//! of it, a semaphore the first `n`. [`look`] turns a listing into a [`Turn`], a plain value
//! tested without a server; [`watch_node`] sets the watch the turn asks for.
//!
//! [`Walk`] is the whole of it, written once: list → look → watch → wait → list again, with
//! the retry pause after a connection loss. A recipe with its own loop (the latch engine,
//! which also follows session states) calls [`Walk::step`], one look and one wait, and
//! decides what to do between steps; the mutex calls [`Walk::until_held`].

use bytes::Bytes;
use zk_session::{Client, Error, ErrorCode, EventType, OneshotWatch, Stat};

use crate::{
    contender::{Contender, ContenderNames},
    plumbing::{
        protected::{child_path, ProtectedNode},
        retry::{retrying, Pauses},
    },
};

/// Where a contender stands under a [`Rule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// It holds.
    Holds,
    /// It waits for the node at this index of the line (ahead of its own) to change.
    Behind(usize),
}

/// Who holds in a line, for one kind of recipe.
///
/// A rule looks only at the nodes ahead of ours (every node created after our listing
/// sorts after us, so a listing stays good for them), and removing a node ahead never turns
/// [`Place::Holds`] into waiting. Then a waiter whose watched node goes may hold without
/// listing again, when [`Turn::WaitFor`] says so.
pub(crate) trait Rule {
    /// The place of the contender at index `ours` of `line` (oldest first).
    fn place(&self, line: &[Contender], ours: usize) -> Place;

    /// Whether a waiter may hold when the one node in its way goes, without listing again:
    /// only where no node can join the line ahead of it later (true unless a recipe says).
    fn trusts_listing(&self) -> bool {
        true
    }
}

/// One holder, first come first served; a waiter watches only the one just ahead of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Exclusive;

impl Rule for Exclusive {
    fn place(&self, _line: &[Contender], ours: usize) -> Place {
        match ours {
            0 => Place::Holds,
            n => Place::Behind(n - 1),
        }
    }
}

/// One holder, no order among waiters: each watches the holder, and competes again when it
/// goes (the unfair mutex).
#[derive(Debug, Clone, Copy)]
pub(crate) struct WatchHolder;

impl Rule for WatchHolder {
    fn place(&self, _line: &[Contender], ours: usize) -> Place {
        match ours {
            0 => Place::Holds,
            _ => Place::Behind(0),
        }
    }
}

/// What one look at the line decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Turn {
    /// We hold.
    Holds,
    /// Wait for the node named `name` to change. When `holds_when_gone`, its deletion alone
    /// makes us hold, with no need to list again.
    WaitFor { name: String, holds_when_gone: bool },
    /// Our node is not in the line (deleted, or gone with its session).
    Gone,
}

/// Where our node `ours` (a name) stands among `children` under `rule`, the contenders
/// recognised and ordered by `names`.
pub(crate) fn look<S: AsRef<str>>(
    names: &ContenderNames,
    children: &[S],
    ours: &str,
    rule: &impl Rule,
) -> Turn {
    let mut line = names.sorted(children);
    let Some(i) = line.iter().position(|c| c.name() == ours) else {
        return Turn::Gone;
    };
    match rule.place(&line, i) {
        Place::Holds => Turn::Holds,
        Place::Behind(w) => {
            let watched = line.remove(w);
            let ours_after = if w < i { i - 1 } else { i };
            Turn::WaitFor {
                name: watched.name().to_owned(),
                holds_when_gone: w < i && rule.place(&line, ours_after) == Place::Holds,
            }
        }
    }
}

/// A data watch on `path`; `None` when the node is gone already. getData, not exists: a
/// node already gone leaves no watch behind.
pub(crate) async fn watch_node(client: &Client, path: &str) -> Result<Option<OneshotWatch>, Error> {
    match data_watch(client, path).await {
        Ok((_, _, w)) => Ok(Some(w)),
        Err(Error::Code(ErrorCode::NoNode)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `get_data_watch` in a task of its own, so that dropping the caller cannot cut the request
/// off between its sending and its reply. zk-session removes a dropped watch from the server
/// only once the request that set it has been answered; a watch dropped before that would
/// stay on the server until the node changes. Here the task always sees the reply, and drops
/// the watch after it if nobody wants it any more.
pub(crate) async fn data_watch(
    client: &Client,
    path: &str,
) -> Result<(Bytes, Stat, OneshotWatch), Error> {
    let (client, path) = (client.clone(), path.to_owned());
    tokio::spawn(async move { client.get_data_watch(&path).await })
        .await
        .unwrap_or(Err(Error::Closed))
}

/// What one [`Walk::step`] came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Moved {
    /// We hold.
    Holds,
    /// Our node is gone: queue again with a new one.
    Gone,
    /// We would have to wait, and were asked not to.
    Busy,
    /// Something changed: list again (after a pause when `after_error`, a connection loss).
    Relist {
        /// The step ended on a retryable error.
        after_error: bool,
    },
}

/// Our node's walk along the line under `dir`: the list → look → watch → retry loop of every
/// recipe that waits in line. It keeps a data watch on our own node once it has had to wait
/// (its deletion under us is then seen at once), which the holder may take over
/// ([`into_own_watch`](Self::into_own_watch)).
///
/// ```text
/// let mut walk = Walk::new(&client, &dir, &names, &rule, &node);
/// match walk.until_held(children, true).await? {            // the mutex
///     Moved::Holds => hold(walk.into_own_watch()),
///     Moved::Gone => create again,
///     ...
/// }
/// match walk.look(&children) {                              // a loop of its own
///     Turn::WaitFor { .. } => {
///         not leader;
///         match guard(inp, walk.wait(turn)).await? { Ok(Moved::Holds) => lead, ... }
///     }
///     ...
/// }
/// ```
pub(crate) struct Walk<'a, R> {
    client: &'a Client,
    dir: &'a str,
    names: &'a ContenderNames,
    rule: &'a R,
    path: String,
    name: String,
    own: Option<OneshotWatch>,
}

impl<'a, R: Rule> Walk<'a, R> {
    /// The walk of `node` (a child of `dir`), contenders recognised by `names`, holding
    /// under `rule`.
    pub(crate) fn new(
        client: &'a Client,
        dir: &'a str,
        names: &'a ContenderNames,
        rule: &'a R,
        node: &ProtectedNode,
    ) -> Self {
        Walk {
            client,
            dir,
            names,
            rule,
            path: node.path.clone(),
            name: node.name.clone(),
            own: None,
        }
    }

    /// The data watch on our node set while waiting, for the holder to keep.
    pub(crate) fn into_own_watch(self) -> Option<OneshotWatch> {
        self.own
    }

    /// Steps until we hold, our node is gone, or (when not `wait`ing) we would have to
    /// wait. `children` is a listing taken after our node's create; the line is listed
    /// again after every change, pausing with the recipes' backoff after a connection loss.
    pub(crate) async fn until_held(
        &mut self,
        mut children: Vec<String>,
        wait: bool,
    ) -> Result<Moved, Error> {
        let mut pauses = Pauses::default();
        loop {
            match self.step(&children, wait).await? {
                Moved::Relist { after_error } => {
                    if after_error {
                        pauses.pause().await;
                    }
                    children = retrying(self.client, || list(self.client, self.dir)).await?;
                }
                done => return Ok(done),
            }
        }
    }

    /// One look at `children` and, when we must wait (and `wait`), one wait for the node
    /// ahead or our own to change: [`look`](Self::look) then [`wait`](Self::wait).
    pub(crate) async fn step(&mut self, children: &[String], wait: bool) -> Result<Moved, Error> {
        match self.look(children) {
            Turn::Gone => Ok(Moved::Gone),
            Turn::Holds => Ok(Moved::Holds),
            Turn::WaitFor { .. } if !wait => Ok(Moved::Busy),
            turn => self.wait(turn).await,
        }
    }

    /// Where our node stands among `children` (a listing taken after our node's create):
    /// for a recipe that acts between the look and the wait (the latch engine announces
    /// that it is not leader before it waits).
    pub(crate) fn look(&self, children: &[String]) -> Turn {
        look(self.names, children, &self.name, self.rule)
    }

    /// Waits as `turn` (from [`look`](Self::look)) asks: for the node ahead or our own to
    /// change. [`Moved::Holds`] at once for a turn that holds, [`Moved::Gone`] for one gone.
    pub(crate) async fn wait(&mut self, turn: Turn) -> Result<Moved, Error> {
        let (ahead, holds_when_gone) = match turn {
            // Our node is gone (the listing comes after our create, on one session).
            Turn::Gone => return Ok(Moved::Gone),
            Turn::Holds => return Ok(Moved::Holds),
            Turn::WaitFor {
                name,
                holds_when_gone,
            } => (
                child_path(self.dir, &name),
                holds_when_gone && self.rule.trusts_listing(),
            ),
        };
        match self.watch_ahead(&ahead, holds_when_gone).await? {
            Ahead::Watching(w) => self.wait_for_change(w, holds_when_gone).await,
            Ahead::Moved(m) => Ok(m),
        }
    }

    /// Sets a data watch on the node ahead, and on our own node unless one is set.
    /// getData, not exists: on a node already gone it leaves no watch behind.
    async fn watch_ahead(&mut self, ahead: &str, holds_when_gone: bool) -> Result<Ahead, Error> {
        let client = self.client;
        let (pred, own_set) = if self.own.is_none() {
            let (p, o) = tokio::join!(data_watch(client, ahead), data_watch(client, &self.path));
            (p, Some(o))
        } else {
            (data_watch(client, ahead).await, None)
        };
        match own_set {
            Some(Ok((_, _, w))) => self.own = Some(w),
            Some(Err(Error::Code(ErrorCode::NoNode))) => return Ok(Ahead::Moved(Moved::Gone)),
            Some(Err(e)) if !e.is_retryable() => return Err(e),
            // Connection lost: the watch ahead failed too; start over below.
            Some(Err(_)) | None => {}
        }
        let error = Moved::Relist { after_error: true };
        Ok(match pred {
            Ok((_, _, w)) if self.own.is_some() => Ahead::Watching(w),
            Ok(_) => Ahead::Moved(error),
            Err(Error::Code(ErrorCode::NoNode)) if holds_when_gone && self.own.is_some() => {
                Ahead::Moved(Moved::Holds)
            }
            Err(Error::Code(ErrorCode::NoNode)) => {
                Ahead::Moved(Moved::Relist { after_error: false })
            }
            Err(e) if e.is_retryable() => Ahead::Moved(error),
            Err(e) => return Err(e),
        })
    }

    /// Waits until our own node (whose watch is set) or the one ahead changes.
    async fn wait_for_change(
        &mut self,
        ahead: OneshotWatch,
        holds_when_gone: bool,
    ) -> Result<Moved, Error> {
        let relist = Moved::Relist { after_error: false };
        let Some(own) = self.own.as_mut() else {
            return Ok(relist);
        };
        tokio::select! {
            // Our own deletion first: if both fired, the one ahead going must not make us
            // hold without a node.
            biased;
            ev = own => {
                self.own = None;
                Ok(match ev? {
                    ev if ev.event_type() == EventType::NodeDeleted => Moved::Gone,
                    _ => relist,
                })
            }
            ev = ahead => Ok(match ev? {
                ev if ev.event_type() == EventType::NodeDeleted && holds_when_gone => Moved::Holds,
                _ => relist,
            }),
        }
    }
}

/// The watch [`Walk::watch_ahead`] set, or what to do instead of waiting.
enum Ahead {
    Watching(OneshotWatch),
    Moved(Moved),
}

/// The children of `dir`; a missing `dir` lists as empty (our node is then gone too).
pub(crate) async fn list(client: &Client, dir: &str) -> Result<Vec<String>, Error> {
    match client.get_children(dir).await {
        Err(Error::Code(ErrorCode::NoNode)) => Ok(Vec::new()),
        other => other,
    }
}

/// Waits until the node at `path` changes or goes (at once when it is gone already): an
/// unfair waiter's watch on the holder.
pub(crate) async fn until_changed(client: &Client, path: &str) -> Result<(), Error> {
    match watch_node(client, path).await? {
        Some(w) => w.await.map(drop),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contender::ContenderKind;

    fn node(seq: u32) -> String {
        format!(
            "_c_0f8e6a3c-1d2b-4c5d-8e9f-a0b1c2d3e4f{}-lock-{seq:010}",
            seq % 10
        )
    }

    fn wait_for(name: String, holds_when_gone: bool) -> Turn {
        Turn::WaitFor {
            name,
            holds_when_gone,
        }
    }

    #[test]
    fn exclusive_the_first_holds_and_each_watches_the_one_ahead() {
        let names = ContenderNames::new();
        // Foreign children and arbitrary listing order change nothing.
        let children = [node(3), "config".into(), node(1), node(2)];
        assert_eq!(look(&names, &children, &node(1), &Exclusive), Turn::Holds);
        assert_eq!(
            look(&names, &children, &node(2), &Exclusive),
            wait_for(node(1), true)
        );
        assert_eq!(
            look(&names, &children, &node(3), &Exclusive),
            wait_for(node(2), false)
        );
        assert_eq!(look(&names, &children, &node(4), &Exclusive), Turn::Gone);
        assert_eq!(look(&names, &children, "config", &Exclusive), Turn::Gone);
    }

    #[test]
    fn watch_holder_everyone_watches_the_first() {
        let names = ContenderNames::new();
        let children = [node(1), node(2), node(3)];
        assert_eq!(look(&names, &children, &node(1), &WatchHolder), Turn::Holds);
        assert_eq!(
            look(&names, &children, &node(2), &WatchHolder),
            wait_for(node(1), true)
        );
        assert_eq!(
            look(&names, &children, &node(3), &WatchHolder),
            wait_for(node(1), false)
        );
    }

    /// A reader holds when no writer is ahead of it, and waits for the last writer ahead:
    /// the rule a read/write lock would give the walker.
    struct Read;

    impl Rule for Read {
        fn place(&self, line: &[Contender], ours: usize) -> Place {
            match line[..ours]
                .iter()
                .rposition(|c| c.kind() == ContenderKind::CuratorWrite)
            {
                Some(w) => Place::Behind(w),
                None => Place::Holds,
            }
        }
    }

    /// The first `n` hold, and each other watches the one `n` places ahead: a semaphore.
    struct Leases(usize);

    impl Rule for Leases {
        fn place(&self, _line: &[Contender], ours: usize) -> Place {
            if ours < self.0 {
                Place::Holds
            } else {
                Place::Behind(ours - self.0)
            }
        }
    }

    #[test]
    fn other_rules_walk_the_same_line() {
        let names = ContenderNames::new();
        let uuid = "0f8e6a3c-1d2b-4c5d-8e9f-a0b1c2d3e4f5";
        let n = |kind: &str, seq: u32| format!("_c_{uuid}-{kind}{seq:010}");
        let children = [
            n("__READ__", 1),
            n("__WRIT__", 2),
            n("__READ__", 3),
            n("__READ__", 4),
        ];
        assert_eq!(look(&names, &children, &children[0], &Read), Turn::Holds);
        // Both readers behind the writer wait for it, and hold when it goes.
        for r in &children[2..] {
            assert_eq!(
                look(&names, &children, r, &Read),
                wait_for(children[1].clone(), true)
            );
        }
        let children = [node(1), node(2), node(3), node(4)];
        assert_eq!(look(&names, &children, &node(2), &Leases(2)), Turn::Holds);
        assert_eq!(
            look(&names, &children, &node(3), &Leases(2)),
            wait_for(node(1), true)
        );
        assert_eq!(
            look(&names, &children, &node(4), &Leases(2)),
            wait_for(node(2), false)
        );
    }
}
