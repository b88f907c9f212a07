//! Keeping persistent watches alive when the same session sets a one-shot watch on their
//! path (ZOOKEEPER-4466).
//!
//! A 3.8.0 server keeps one watch per path and connection, with one mode: a one-shot watch
//! set on the path of a persistent watch turns it into a one-shot, and once that fires the
//! persistent watch is gone on the server while the client still holds it. So whenever a
//! one-shot watch is registered on a path that has a persistent watch, the persistent watch
//! is added again right behind it. The server then holds the persistent mode, and the
//! one-shot is served from its events here (a persistent watch sees every event a one-shot
//! one would). An event that fires the server's one-shot before the addWatch arrives reaches
//! both local watches, and the addWatch sets the persistent watch again: nothing is missed.
//! Servers with the upstream fix treat the second addWatch as a no-op.
//!
//! A child watch and a persistent-recursive watch do not clash (a recursive watch takes no
//! child events, and re-adding it over a child watch would silence the child watch), so a
//! child one-shot only brings back a plain persistent watch.
//!
//! The other way round, when the last persistent watch on a path is dropped while one-shots
//! remain there, the server's watch (in persistent mode) is removed and the one-shots are set
//! again with a SetWatches, so that the server holds no more than they need.

use zk_proto::{xid, AddWatchMode, AddWatchRequest, Request, SetWatches};

use super::SessionCore;
use crate::watched_event::WatchKind;

impl SessionCore {
    /// A one-shot watch of `oneshot` kind was just set on `path` on the server (whether or
    /// not its caller still wants it).
    pub(super) fn oneshot_registered(&mut self, oneshot: WatchKind, path: &str) {
        for kind in [WatchKind::Persistent, WatchKind::PersistentRecursive] {
            let clash = kind == WatchKind::Persistent || oneshot != WatchKind::Child;
            if !clash || !self.watches.holds(kind, path) {
                continue;
            }
            let mode = match kind {
                WatchKind::PersistentRecursive => AddWatchMode::PersistentRecursive,
                _ => AddWatchMode::Persistent,
            };
            self.send_internal(Request::AddWatch(AddWatchRequest {
                path: path.to_owned(),
                mode,
            }));
        }
    }

    /// The persistent watch on `path` was removed on the server: sets the one-shot watches
    /// still held there again.
    pub(super) fn set_oneshots_again(&mut self, path: &str) {
        let held = |kind| {
            if self.watches.holds(kind, path) {
                vec![path.to_owned()]
            } else {
                Vec::new()
            }
        };
        let req = SetWatches {
            relative_zxid: self.last_zxid,
            data_watches: held(WatchKind::Data),
            exist_watches: held(WatchKind::Exist),
            child_watches: held(WatchKind::Child),
        };
        if req.data_watches.is_empty()
            && req.exist_watches.is_empty()
            && req.child_watches.is_empty()
        {
            return;
        }
        let req = Request::SetWatches(req);
        let _ = self
            .codec
            .encode_with(&mut self.wbuf, |b| req.encode(xid::SET_WATCHES, b));
    }
}
