//! The session task's registry of watches: who gets which event, what to re-register on
//! reconnect, and when a server-side watch can be removed.

use std::collections::{HashMap, HashSet, VecDeque};

use zk_proto::{EventType, WatcherType};

use super::{Output, WatchId};
use crate::{chroot::Chroot, watched_event::WatchKind, Error, WatchedEvent};

mod set_watches;

/// Watches by server path (chroot included), each named by its id.
#[derive(Debug, Default)]
pub(crate) struct WatchTable {
    data: HashMap<String, Vec<WatchId>>,
    exist: HashMap<String, Vec<WatchId>>,
    child: HashMap<String, Vec<WatchId>>,
    persistent: HashMap<String, Vec<WatchId>>,
    recursive: HashMap<String, Vec<WatchId>>,
    /// Watch-setting requests in flight per path: a server-side watch is not removed while one
    /// of them may still register a watch there.
    registering: HashMap<String, u32>,
    /// Kinds of watches dropped on a path while a registration was in flight there: checked
    /// again when the last one ends.
    deferred: HashMap<String, Vec<WatchKind>>,
    /// Watches their callers dropped before the request that sets them was answered.
    abandoned: HashSet<WatchId>,
}

/// Tells every one-shot watch in `list` of `ev`; returns how many.
fn deliver_oneshots(
    list: Option<Vec<WatchId>>,
    ev: &WatchedEvent,
    out: &mut VecDeque<Output>,
) -> usize {
    let list = list.unwrap_or_default();
    for &to in &list {
        out.push_back(Output::Watch {
            to,
            result: Ok(ev.clone()),
        });
    }
    list.len()
}

/// Tells every persistent watch in `list` of `ev`; returns how many.
fn deliver_streams(
    list: Option<&Vec<WatchId>>,
    ev: &WatchedEvent,
    out: &mut VecDeque<Output>,
) -> usize {
    let Some(list) = list else { return 0 };
    for &to in list {
        out.push_back(Output::Stream {
            to,
            event: ev.clone(),
        });
    }
    list.len()
}

/// Ends every one-shot watch in `list` with `err`.
fn fail_oneshots(list: Vec<WatchId>, err: &Error, out: &mut VecDeque<Output>) {
    for to in list {
        out.push_back(Output::Watch {
            to,
            result: Err(err.clone()),
        });
    }
}

/// Ends every persistent watch in `list`.
fn end_streams(list: Vec<WatchId>, out: &mut VecDeque<Output>) {
    out.extend(list.into_iter().map(|to| Output::WatchEnded { to }));
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

    /// Whether the caller of watch `id` dropped it while its request was under way (and
    /// forgets it).
    pub fn take_abandoned(&mut self, id: WatchId) -> bool {
        self.abandoned.remove(&id)
    }

    fn map(&mut self, kind: WatchKind) -> &mut HashMap<String, Vec<WatchId>> {
        match kind {
            WatchKind::Data => &mut self.data,
            WatchKind::Exist => &mut self.exist,
            WatchKind::Child => &mut self.child,
            WatchKind::Persistent => &mut self.persistent,
            WatchKind::PersistentRecursive => &mut self.recursive,
        }
    }

    /// Registers watch `id` of `kind` on `path`.
    pub fn add(&mut self, kind: WatchKind, path: String, id: WatchId) {
        self.map(kind).entry(path).or_default().push(id);
    }

    /// Delivers a notification to every watch it concerns, following the server's rules:
    /// data and exist watches fire on created/changed/deleted, child watches on
    /// children-changed and deleted; persistent watches on everything at their path, and
    /// recursive watches on everything but children-changed at or below theirs.
    /// Returns how many watches were told.
    pub fn dispatch(
        &mut self,
        event_type: EventType,
        server_path: &str,
        chroot: &Chroot,
        out: &mut VecDeque<Output>,
    ) -> usize {
        let ev = WatchedEvent::new(event_type, chroot.to_client(server_path));
        let mut n = 0;
        match event_type {
            EventType::NodeCreated | EventType::NodeDataChanged => {
                n += deliver_oneshots(self.data.remove(server_path), &ev, out);
                n += deliver_oneshots(self.exist.remove(server_path), &ev, out);
            }
            EventType::NodeChildrenChanged => {
                n += deliver_oneshots(self.child.remove(server_path), &ev, out);
            }
            EventType::NodeDeleted => {
                n += deliver_oneshots(self.data.remove(server_path), &ev, out);
                n += deliver_oneshots(self.exist.remove(server_path), &ev, out);
                n += deliver_oneshots(self.child.remove(server_path), &ev, out);
            }
            _ => return 0,
        }
        n += deliver_streams(self.persistent.get(server_path), &ev, out);
        if event_type != EventType::NodeChildrenChanged && !self.recursive.is_empty() {
            let mut p = server_path;
            loop {
                n += deliver_streams(self.recursive.get(p), &ev, out);
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
    pub fn fail_all(&mut self, err: &Error, out: &mut VecDeque<Output>) {
        self.fail_oneshots(err, out);
        for (_, list) in self.persistent.drain().chain(self.recursive.drain()) {
            end_streams(list, out);
        }
        self.registering.clear();
        self.deferred.clear();
        self.abandoned.clear();
    }

    /// Ends every one-shot watch with `err`, when its session expired; persistent watches
    /// stay, to be registered on the next session.
    pub fn fail_oneshots(&mut self, err: &Error, out: &mut VecDeque<Output>) {
        for (_, list) in self
            .data
            .drain()
            .chain(self.exist.drain())
            .chain(self.child.drain())
        {
            fail_oneshots(list, err, out);
        }
    }

    /// Ends the local watches that a successful removeWatches of `watcher_type` took away on
    /// the server: one-shot watches resolve with [`Error::WatchRemoved`], streams close.
    pub fn remove_local(
        &mut self,
        path: &str,
        watcher_type: WatcherType,
        out: &mut VecDeque<Output>,
    ) {
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
        fail_oneshots(ended, &Error::WatchRemoved, out);
        if streams {
            let lists = [self.persistent.remove(path), self.recursive.remove(path)];
            end_streams(lists.into_iter().flatten().flatten().collect(), out);
        }
    }

    /// True when a caller still holds a watch of `kind` on `path`.
    pub fn holds(&self, kind: WatchKind, path: &str) -> bool {
        let map = match kind {
            WatchKind::Data => &self.data,
            WatchKind::Exist => &self.exist,
            WatchKind::Child => &self.child,
            WatchKind::Persistent => &self.persistent,
            WatchKind::PersistentRecursive => &self.recursive,
        };
        map.get(path).is_some_and(|l| !l.is_empty())
    }

    /// The connection ended: the server-side watches died with it, so the drops deferred
    /// for them have nothing left to remove. The next connection re-registers only the
    /// watches still held.
    pub fn connection_ended(&mut self) {
        self.deferred.clear();
    }

    /// The caller of watch `id` (of `kind` on `path`) dropped it: it is forgotten, or, while
    /// the request that sets it is under way, remembered as abandoned.
    pub fn forget(&mut self, path: &str, kind: WatchKind, id: WatchId) {
        let map = self.map(kind);
        let mut found = false;
        if let Some(list) = map.get_mut(path) {
            let before = list.len();
            list.retain(|&w| w != id);
            found = list.len() < before;
            if list.is_empty() {
                map.remove(path);
            }
        }
        // exists sets a Data or an Exist watch, whichever the reply says.
        if !found && kind == WatchKind::Data {
            if let Some(list) = self.exist.get_mut(path) {
                let before = list.len();
                list.retain(|&w| w != id);
                found = list.len() < before;
                if list.is_empty() {
                    self.exist.remove(path);
                }
            }
        }
        if !found && self.registering.contains_key(path) {
            self.abandoned.insert(id);
        }
    }

    /// A caller dropped a watch of `kind` on `path` (forgotten already). Returns the
    /// server-side watch type to remove when no caller is left for it. A server-side watch
    /// shared with another kind (3.8 keeps one watch per path and connection) is kept: its
    /// events are dropped here.
    pub fn watch_dropped(&mut self, path: &str, kind: WatchKind) -> Option<WatcherType> {
        if self.registering.contains_key(path) {
            let kinds = self.deferred.entry(path.to_owned()).or_default();
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
            return None;
        }
        let persistent = self.holds(WatchKind::Persistent, path)
            || self.holds(WatchKind::PersistentRecursive, path);
        let data = self.holds(WatchKind::Data, path) || self.holds(WatchKind::Exist, path);
        let child = self.holds(WatchKind::Child, path);
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
    pub fn is_empty(&self) -> bool {
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

    /// The watches told, in order, and what each was told.
    pub(super) fn told(out: &mut VecDeque<Output>) -> Vec<(WatchId, Result<WatchedEvent, Error>)> {
        out.drain(..)
            .map(|o| match o {
                Output::Watch { to, result } => (to, result),
                Output::Stream { to, event } => (to, Ok(event)),
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    fn ids(told: &[(WatchId, Result<WatchedEvent, Error>)]) -> Vec<u64> {
        told.iter().map(|(id, _)| id.0).collect()
    }

    #[test]
    fn data_and_exist_fire_on_change_child_does_not() {
        let mut t = WatchTable::default();
        let mut out = VecDeque::new();
        t.add(WatchKind::Data, "/a".into(), WatchId(1));
        t.add(WatchKind::Exist, "/a".into(), WatchId(2));
        t.add(WatchKind::Child, "/a".into(), WatchId(3));
        let none = Chroot::none();
        assert_eq!(
            t.dispatch(EventType::NodeDataChanged, "/a", &none, &mut out),
            2
        );
        let first = told(&mut out);
        assert_eq!(ids(&first), [1, 2]);
        let ev = first[0].1.as_ref().unwrap();
        assert_eq!(ev.event_type(), EventType::NodeDataChanged);
        // One-shot: a second change tells nobody but the child watch on delete.
        assert_eq!(t.dispatch(EventType::NodeDeleted, "/a", &none, &mut out), 1);
        let second = told(&mut out);
        assert_eq!(ids(&second), [3]);
        let ev = second[0].1.as_ref().unwrap();
        assert_eq!(ev.event_type(), EventType::NodeDeleted);
    }

    #[test]
    fn recursive_watch_sees_descendants_but_not_child_events() {
        let mut t = WatchTable::default();
        let mut out = VecDeque::new();
        t.add(WatchKind::PersistentRecursive, "/app".into(), WatchId(9));
        let chroot = Chroot::new("/app").unwrap();
        assert_eq!(
            t.dispatch(EventType::NodeCreated, "/app/x/y", &chroot, &mut out),
            1
        );
        assert_eq!(
            t.dispatch(EventType::NodeChildrenChanged, "/app/x", &chroot, &mut out),
            0
        );
        assert_eq!(
            t.dispatch(EventType::NodeDeleted, "/other", &chroot, &mut out),
            0
        );
        let told = told(&mut out);
        assert_eq!(ids(&told), [9]);
        assert_eq!(told[0].1.as_ref().unwrap().path(), "/x/y");
    }

    #[test]
    fn root_recursive_watch_sees_everything() {
        let mut t = WatchTable::default();
        let mut out = VecDeque::new();
        t.add(WatchKind::PersistentRecursive, "/".into(), WatchId(4));
        let none = Chroot::none();
        assert_eq!(
            t.dispatch(EventType::NodeDataChanged, "/a", &none, &mut out),
            1
        );
        assert_eq!(told(&mut out)[0].1.as_ref().unwrap().path(), "/a");
    }

    #[test]
    fn every_watcher_on_a_path_is_told() {
        let mut t = WatchTable::default();
        let mut out = VecDeque::new();
        for i in 0..3 {
            t.add(WatchKind::Data, "/p".into(), WatchId(i));
        }
        let none = Chroot::none();
        assert_eq!(
            t.dispatch(EventType::NodeDataChanged, "/p", &none, &mut out),
            3
        );
        let told = told(&mut out);
        assert_eq!(ids(&told), [0, 1, 2]);
        assert!(told.iter().all(|(_, r)| r.is_ok()));
    }

    #[test]
    fn removal_only_when_last_watcher_of_the_kind_is_gone() {
        let mut t = WatchTable::default();
        t.add(WatchKind::Data, "/p".into(), WatchId(1));
        t.add(WatchKind::Exist, "/p".into(), WatchId(2));
        t.forget("/p", WatchKind::Data, WatchId(1));
        assert_eq!(t.watch_dropped("/p", WatchKind::Data), None);
        // exists hands out Data watches that the reply may have made Exist ones.
        t.forget("/p", WatchKind::Data, WatchId(2));
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
        t.forget("/p", WatchKind::Child, WatchId(5));
        assert_eq!(t.watch_dropped("/p", WatchKind::Child), None);
        assert_eq!(t.end_registration("/p"), vec![WatchKind::Child]);
        // The watch dropped in flight is known as abandoned, once.
        assert!(t.take_abandoned(WatchId(5)));
        assert!(!t.take_abandoned(WatchId(5)));
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
    fn fail_all_tells_every_oneshot_and_ends_every_stream() {
        let mut t = WatchTable::default();
        let mut out = VecDeque::new();
        t.add(WatchKind::Child, "/c".into(), WatchId(1));
        t.add(WatchKind::Persistent, "/c".into(), WatchId(2));
        t.fail_all(&Error::session_expired(), &mut out);
        assert!(matches!(
            out.pop_front(),
            Some(Output::Watch {
                to: WatchId(1),
                result: Err(Error::Code(zk_proto::ErrorCode::SessionExpired))
            })
        ));
        assert!(matches!(
            out.pop_front(),
            Some(Output::WatchEnded { to: WatchId(2) })
        ));
        assert!(out.is_empty() && t.is_empty());
    }
}
