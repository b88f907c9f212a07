//! The session task's registry of watches: who gets which event, what to re-register on
//! reconnect, and when a server-side watch can be removed.

use std::collections::HashMap;

use tokio::sync::oneshot;
use zk_proto::{EventType, WatcherType};

use crate::{
    chroot::Chroot,
    watch::{StreamTx, WatchKind},
    Error, WatchedEvent,
};

mod set_watches;

pub(crate) type OneshotTx = oneshot::Sender<Result<WatchedEvent, Error>>;

/// Watches by server path (chroot included).
#[derive(Debug, Default)]
pub(crate) struct WatchTable {
    data: HashMap<String, Vec<OneshotTx>>,
    exist: HashMap<String, Vec<OneshotTx>>,
    child: HashMap<String, Vec<OneshotTx>>,
    persistent: HashMap<String, Vec<StreamTx>>,
    recursive: HashMap<String, Vec<StreamTx>>,
    /// Watch-setting requests in flight per path: a server-side watch is not removed while one
    /// of them may still register a watch there.
    registering: HashMap<String, u32>,
    /// Kinds of watches dropped on a path while a registration was in flight there: checked
    /// again when the last one ends.
    deferred: HashMap<String, Vec<WatchKind>>,
}

fn deliver_oneshots(list: Option<Vec<OneshotTx>>, ev: &WatchedEvent) -> usize {
    let mut n = 0;
    for tx in list.into_iter().flatten() {
        if tx.send(Ok(ev.clone())).is_ok() {
            n += 1;
        }
    }
    n
}

fn deliver_streams(list: Option<&mut Vec<StreamTx>>, ev: &WatchedEvent) -> usize {
    let Some(list) = list else { return 0 };
    list.retain(|tx| tx.send(ev));
    list.len()
}

impl WatchTable {
    /// A request that may register a watch on `path` was sent.
    pub fn begin_registration(&mut self, path: &str) {
        *self.registering.entry(path.to_owned()).or_default() += 1;
    }

    /// That request was answered or failed. When it was the last one on `path`, returns the
    /// kinds of watches dropped there meanwhile, for the caller to pass to
    /// [`watch_dropped`](Self::watch_dropped) once it has registered what the reply set.
    #[must_use = "a deferred drop may need a removeWatches"]
    pub fn end_registration(&mut self, path: &str) -> Vec<WatchKind> {
        if let Some(n) = self.registering.get_mut(path) {
            *n -= 1;
            if *n == 0 {
                self.registering.remove(path);
                return self.deferred.remove(path).unwrap_or_default();
            }
        }
        Vec::new()
    }

    /// Registers a one-shot watch of `kind` (Data, Exist or Child).
    pub fn add_oneshot(&mut self, kind: WatchKind, path: String, tx: OneshotTx) {
        let map = match kind {
            WatchKind::Data => &mut self.data,
            WatchKind::Exist => &mut self.exist,
            WatchKind::Child => &mut self.child,
            WatchKind::Persistent | WatchKind::PersistentRecursive => {
                unreachable!("persistent watches are streams")
            }
        };
        map.entry(path).or_default().push(tx);
    }

    /// Registers a persistent or persistent-recursive watch.
    pub fn add_stream(&mut self, kind: WatchKind, path: String, tx: StreamTx) {
        let map = match kind {
            WatchKind::Persistent => &mut self.persistent,
            WatchKind::PersistentRecursive => &mut self.recursive,
            _ => unreachable!("one-shot watches are not streams"),
        };
        map.entry(path).or_default().push(tx);
    }

    /// Delivers a notification to every watch it concerns, following the server's rules:
    /// data and exist watches fire on created/changed/deleted, child watches on
    /// children-changed and deleted; persistent watches on everything at their path, and
    /// recursive watches on everything but children-changed at or below theirs.
    /// Returns how many watches were told.
    pub fn dispatch(&mut self, event_type: EventType, server_path: &str, chroot: &Chroot) -> usize {
        let ev = WatchedEvent::new(event_type, chroot.to_client(server_path));
        let mut n = 0;
        match event_type {
            EventType::NodeCreated | EventType::NodeDataChanged => {
                n += deliver_oneshots(self.data.remove(server_path), &ev);
                n += deliver_oneshots(self.exist.remove(server_path), &ev);
            }
            EventType::NodeChildrenChanged => {
                n += deliver_oneshots(self.child.remove(server_path), &ev);
            }
            EventType::NodeDeleted => {
                n += deliver_oneshots(self.data.remove(server_path), &ev);
                n += deliver_oneshots(self.exist.remove(server_path), &ev);
                n += deliver_oneshots(self.child.remove(server_path), &ev);
            }
            _ => return 0,
        }
        n += deliver_streams(self.persistent.get_mut(server_path), &ev);
        if event_type != EventType::NodeChildrenChanged && !self.recursive.is_empty() {
            let mut p = server_path;
            loop {
                n += deliver_streams(self.recursive.get_mut(p), &ev);
                if p == "/" {
                    break;
                }
                p = match p.rfind('/') {
                    Some(0) => "/",
                    Some(i) => &p[..i],
                    None => break,
                };
            }
        }
        n
    }

    /// Ends every watch with `err` (one-shot) or by closing its stream, when the session ends.
    pub fn fail_all(&mut self, err: &Error) {
        self.fail_oneshots(err);
        self.persistent.clear();
        self.recursive.clear();
        self.registering.clear();
        self.deferred.clear();
    }

    /// Ends every one-shot watch with `err`, when its session expired; persistent watches
    /// stay, to be registered on the next session.
    pub fn fail_oneshots(&mut self, err: &Error) {
        for (_, list) in self
            .data
            .drain()
            .chain(self.exist.drain())
            .chain(self.child.drain())
        {
            for tx in list {
                let _ = tx.send(Err(err.clone()));
            }
        }
    }

    /// Ends the local watches that a successful removeWatches of `watcher_type` took away on
    /// the server: one-shot watches resolve with [`Error::WatchRemoved`], streams close.
    pub fn remove_local(&mut self, path: &str, watcher_type: WatcherType) {
        let (data, child, streams) = match watcher_type {
            WatcherType::Data => (true, false, false),
            WatcherType::Children => (false, true, false),
            _ => (true, true, true),
        };
        let mut ended = Vec::new();
        if data {
            ended.extend(self.data.remove(path).into_iter().flatten());
            ended.extend(self.exist.remove(path).into_iter().flatten());
        }
        if child {
            ended.extend(self.child.remove(path).into_iter().flatten());
        }
        if streams {
            self.persistent.remove(path);
            self.recursive.remove(path);
        }
        for tx in ended {
            let _ = tx.send(Err(Error::WatchRemoved));
        }
    }

    fn prune(&mut self) {
        for map in [&mut self.data, &mut self.exist, &mut self.child] {
            map.retain(|_, l| {
                l.retain(|tx| !tx.is_closed());
                !l.is_empty()
            });
        }
        for map in [&mut self.persistent, &mut self.recursive] {
            map.retain(|_, l| {
                l.retain(|tx| !tx.is_closed());
                !l.is_empty()
            });
        }
    }

    /// True when a caller still holds a watch of `kind` on `path`.
    pub fn holds(&self, kind: WatchKind, path: &str) -> bool {
        self.has(kind, path)
    }

    /// The connection ended: the server-side watches died with it, so the drops deferred
    /// for them have nothing left to remove. The next connection re-registers only the
    /// watches still held.
    pub fn connection_ended(&mut self) {
        self.deferred.clear();
    }

    fn has(&self, kind: WatchKind, path: &str) -> bool {
        let live = |l: Option<&Vec<OneshotTx>>| l.is_some_and(|l| l.iter().any(|t| !t.is_closed()));
        let live_s =
            |l: Option<&Vec<StreamTx>>| l.is_some_and(|l| l.iter().any(|t| !t.is_closed()));
        match kind {
            WatchKind::Data => live(self.data.get(path)),
            WatchKind::Exist => live(self.exist.get(path)),
            WatchKind::Child => live(self.child.get(path)),
            WatchKind::Persistent => live_s(self.persistent.get(path)),
            WatchKind::PersistentRecursive => live_s(self.recursive.get(path)),
        }
    }

    /// A caller dropped a watch of `kind` on `path`. Returns the server-side watch type to
    /// remove when no caller is left for it. A server-side watch shared with another kind
    /// (3.8 keeps one watch per path and connection) is kept: its events are dropped here.
    pub fn watch_dropped(&mut self, path: &str, kind: WatchKind) -> Option<WatcherType> {
        self.prune();
        if self.registering.contains_key(path) {
            let kinds = self.deferred.entry(path.to_owned()).or_default();
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
            return None;
        }
        let persistent =
            self.has(WatchKind::Persistent, path) || self.has(WatchKind::PersistentRecursive, path);
        let data = self.has(WatchKind::Data, path) || self.has(WatchKind::Exist, path);
        let child = self.has(WatchKind::Child, path);
        match kind {
            WatchKind::Data | WatchKind::Exist if !data && !persistent => Some(WatcherType::Data),
            WatchKind::Child if !child && !persistent => Some(WatcherType::Children),
            // The server's watch on the path is in persistent mode whatever one-shots share
            // it: it goes, and the caller sets the one-shots left again.
            WatchKind::Persistent | WatchKind::PersistentRecursive if !persistent => {
                Some(WatcherType::Any)
            }
            _ => None,
        }
    }

    /// True when no watch is registered.
    #[cfg(test)]
    pub fn is_empty(&mut self) -> bool {
        self.prune();
        self.data.is_empty()
            && self.exist.is_empty()
            && self.child.is_empty()
            && self.persistent.is_empty()
            && self.recursive.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::{stream_channel, DEFAULT_PERSISTENT_WATCH_BUFFER};

    pub(super) fn oneshot_pair() -> (OneshotTx, oneshot::Receiver<Result<WatchedEvent, Error>>) {
        oneshot::channel()
    }

    #[test]
    fn data_and_exist_fire_on_change_child_does_not() {
        let mut t = WatchTable::default();
        let (d, mut drx) = oneshot_pair();
        let (e, mut erx) = oneshot_pair();
        let (c, mut crx) = oneshot_pair();
        t.add_oneshot(WatchKind::Data, "/a".into(), d);
        t.add_oneshot(WatchKind::Exist, "/a".into(), e);
        t.add_oneshot(WatchKind::Child, "/a".into(), c);
        assert_eq!(
            t.dispatch(EventType::NodeDataChanged, "/a", &Chroot::none()),
            2
        );
        assert_eq!(
            drx.try_recv().unwrap().unwrap().event_type(),
            EventType::NodeDataChanged
        );
        assert!(erx.try_recv().unwrap().is_ok());
        assert!(crx.try_recv().is_err());
        // One-shot: a second change tells nobody but the child watch on delete.
        assert_eq!(t.dispatch(EventType::NodeDeleted, "/a", &Chroot::none()), 1);
        assert_eq!(
            crx.try_recv().unwrap().unwrap().event_type(),
            EventType::NodeDeleted
        );
    }

    #[test]
    fn recursive_watch_sees_descendants_but_not_child_events() {
        let mut t = WatchTable::default();
        let (tx, mut rx) = stream_channel(DEFAULT_PERSISTENT_WATCH_BUFFER);
        t.add_stream(WatchKind::PersistentRecursive, "/app".into(), tx);
        let chroot = Chroot::new("/app").unwrap();
        assert_eq!(t.dispatch(EventType::NodeCreated, "/app/x/y", &chroot), 1);
        assert_eq!(
            t.dispatch(EventType::NodeChildrenChanged, "/app/x", &chroot),
            0
        );
        assert_eq!(t.dispatch(EventType::NodeDeleted, "/other", &chroot), 0);
        let ev = rx.try_recv().unwrap().unwrap();
        assert_eq!(ev.path(), "/x/y");
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn root_recursive_watch_sees_everything() {
        let mut t = WatchTable::default();
        let (tx, mut rx) = stream_channel(DEFAULT_PERSISTENT_WATCH_BUFFER);
        t.add_stream(WatchKind::PersistentRecursive, "/".into(), tx);
        assert_eq!(
            t.dispatch(EventType::NodeDataChanged, "/a", &Chroot::none()),
            1
        );
        assert_eq!(rx.try_recv().unwrap().unwrap().path(), "/a");
    }

    #[test]
    fn every_watcher_on_a_path_is_told() {
        let mut t = WatchTable::default();
        let rxs: Vec<_> = (0..3)
            .map(|_| {
                let (tx, rx) = oneshot_pair();
                t.add_oneshot(WatchKind::Data, "/p".into(), tx);
                rx
            })
            .collect();
        assert_eq!(
            t.dispatch(EventType::NodeDataChanged, "/p", &Chroot::none()),
            3
        );
        for mut rx in rxs {
            assert!(rx.try_recv().unwrap().is_ok());
        }
    }

    #[test]
    fn removal_only_when_last_watcher_of_the_kind_is_gone() {
        let mut t = WatchTable::default();
        let (a, arx) = oneshot_pair();
        let (b, brx) = oneshot_pair();
        t.add_oneshot(WatchKind::Data, "/p".into(), a);
        t.add_oneshot(WatchKind::Exist, "/p".into(), b);
        drop(arx);
        assert_eq!(t.watch_dropped("/p", WatchKind::Data), None);
        drop(brx);
        assert_eq!(
            t.watch_dropped("/p", WatchKind::Exist),
            Some(WatcherType::Data)
        );
        assert!(t.is_empty());
    }

    #[test]
    fn no_removal_while_a_registration_is_in_flight() {
        let mut t = WatchTable::default();
        t.begin_registration("/p");
        assert_eq!(t.watch_dropped("/p", WatchKind::Child), None);
        assert_eq!(t.end_registration("/p"), vec![WatchKind::Child]);
        assert_eq!(
            t.watch_dropped("/p", WatchKind::Child),
            Some(WatcherType::Children)
        );
        // Two in flight: the deferred drop comes back with the last one only.
        t.begin_registration("/q");
        t.begin_registration("/q");
        assert_eq!(t.watch_dropped("/q", WatchKind::Data), None);
        assert_eq!(t.watch_dropped("/q", WatchKind::Data), None);
        assert_eq!(t.end_registration("/q"), vec![]);
        assert_eq!(t.end_registration("/q"), vec![WatchKind::Data]);
        assert_eq!(t.end_registration("/q"), vec![]);
    }

    #[test]
    fn fail_all_tells_every_oneshot() {
        let mut t = WatchTable::default();
        let (tx, mut rx) = oneshot_pair();
        t.add_oneshot(WatchKind::Child, "/c".into(), tx);
        t.fail_all(&Error::session_expired());
        assert!(matches!(
            rx.try_recv().unwrap(),
            Err(Error::Code(zk_proto::ErrorCode::SessionExpired))
        ));
    }
}
