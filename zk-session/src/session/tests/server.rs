//! The in-memory server's watches, kept the way a 3.8.0 server keeps them: per connection,
//! one watch per path in the data manager and one in the child manager, each with one mode,
//! so that a one-shot watch replaces a persistent one on its path (ZOOKEEPER-4466).

use std::collections::BTreeMap;

use zk_proto::{
    AddWatchMode, ErrorCode, ErrorResponse, EventType, GetChildrenResponse, GetDataResponse,
    Request, Response, Stat, WatcherType,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Standard,
    Persistent,
    Recursive,
}

#[derive(Debug, Default)]
pub struct ServerWatches {
    pub data: BTreeMap<String, Mode>,
    pub child: BTreeMap<String, Mode>,
    /// Registrations that found the watch already there (SetWatches listing a path twice).
    pub duplicates: usize,
}

fn set_all(map: &mut BTreeMap<String, Mode>, paths: &[String], mode: Mode, dups: &mut usize) {
    for p in paths {
        *dups += usize::from(map.insert(p.clone(), mode).is_some());
    }
}

impl ServerWatches {
    /// Applies `request` to the watches; returns the reply's error code and body.
    pub fn apply(&mut self, request: &Request) -> (i32, Option<Response>) {
        let dups = &mut self.duplicates;
        match request {
            Request::GetData(r) => {
                if r.watch {
                    self.data.insert(r.path.clone(), Mode::Standard);
                }
                let body = GetDataResponse {
                    data: None,
                    stat: Stat::default(),
                };
                (0, Some(Response::GetData(body)))
            }
            Request::GetChildren(r) => {
                if r.watch {
                    self.child.insert(r.path.clone(), Mode::Standard);
                }
                let body = GetChildrenResponse { children: vec![] };
                (0, Some(Response::GetChildren(body)))
            }
            Request::SetWatches(s) => {
                set_all(&mut self.data, &s.data_watches, Mode::Standard, dups);
                set_all(&mut self.data, &s.exist_watches, Mode::Standard, dups);
                set_all(&mut self.child, &s.child_watches, Mode::Standard, dups);
                (0, None)
            }
            Request::SetWatches2(s) => {
                set_all(&mut self.data, &s.data_watches, Mode::Standard, dups);
                set_all(&mut self.data, &s.exist_watches, Mode::Standard, dups);
                set_all(&mut self.child, &s.child_watches, Mode::Standard, dups);
                // The server sets persistent watches last: their mode wins.
                let mut none = 0;
                set_all(
                    &mut self.data,
                    &s.persistent_watches,
                    Mode::Persistent,
                    &mut none,
                );
                set_all(
                    &mut self.child,
                    &s.persistent_watches,
                    Mode::Persistent,
                    &mut none,
                );
                let recursive = &s.persistent_recursive_watches;
                set_all(&mut self.data, recursive, Mode::Recursive, &mut none);
                (0, None)
            }
            Request::AddWatch(a) => {
                let p = a.path.clone();
                match a.mode {
                    AddWatchMode::Persistent => {
                        self.data.insert(p.clone(), Mode::Persistent);
                        self.child.insert(p, Mode::Persistent);
                    }
                    AddWatchMode::PersistentRecursive => {
                        self.data.insert(p, Mode::Recursive);
                    }
                }
                (0, Some(Response::Error(ErrorResponse { err: 0 })))
            }
            Request::RemoveWatches(r) => {
                let (d, c) = match r.watcher_type {
                    WatcherType::Data => (self.data.remove(&r.path).is_some(), false),
                    WatcherType::Children => (false, self.child.remove(&r.path).is_some()),
                    _ => (
                        self.data.remove(&r.path).is_some(),
                        self.child.remove(&r.path).is_some(),
                    ),
                };
                let err = if d || c {
                    0
                } else {
                    ErrorCode::NoWatcher.code()
                };
                (err, None)
            }
            _ => (0, None),
        }
    }

    /// A change to `path`: whether a notification goes out (one-shot watches go with it).
    pub fn fire(&mut self, event_type: EventType, path: &str) -> bool {
        let map = match event_type {
            EventType::NodeChildrenChanged => &mut self.child,
            _ => &mut self.data,
        };
        match map.get(path) {
            Some(Mode::Standard) => {
                map.remove(path);
                true
            }
            Some(_) => true,
            None => false,
        }
    }
}
