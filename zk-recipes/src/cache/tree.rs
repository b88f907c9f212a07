//! The cached tree as a plain value: it takes read results and answers with the events they
//! mean and the reads they call for. No I/O here; the loader feeds it in server order.
//!
//! Change detection is by zxid, not by version: a node deleted and created again has a new
//! czxid even when its version is back where it was (Curator's CuratorCache misses that), and
//! a data change moves the mzxid.

use std::collections::HashSet;

use bytes::Bytes;
use zk_session::Stat;

use super::{
    event::{CacheEvent, CachedNode},
    name_index::NONE,
    store::Store,
};

/// A read the tree wants done.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Want {
    /// getData of the path.
    Data(String),
    /// getChildren of the path.
    Children(String),
}

/// The view: the root znode (if it exists) and what lies below it, down to the depth limit.
/// The znodes live in a [`Store`] by name and parent; full paths are made when asked for.
#[derive(Debug)]
pub(crate) struct Tree {
    root_path: String,
    root: Option<u32>,
    /// Levels below the root that are cached (0: the root alone).
    max_depth: usize,
    keep_data: bool,
    store: Store,
}

fn child_path(parent: &str, name: &str) -> String {
    if parent == "/" {
        format!("/{name}")
    } else {
        format!("{parent}/{name}")
    }
}

impl Tree {
    pub(crate) fn new(root_path: &str, max_depth: usize, keep_data: bool) -> Self {
        Tree {
            root_path: root_path.to_owned(),
            root: None,
            max_depth,
            keep_data,
            store: Store::new(keep_data),
        }
    }

    /// The path's components below the root (empty for the root), or `None` when the path
    /// is not at or under the root, or deeper than the limit.
    fn relative<'p>(&self, path: &'p str) -> Option<Vec<&'p str>> {
        let rest = path.strip_prefix(self.root_path.as_str())?;
        let rest = if self.root_path == "/" {
            rest
        } else if rest.is_empty() {
            ""
        } else {
            rest.strip_prefix('/')?
        };
        let parts: Vec<&str> = if rest.is_empty() {
            Vec::new()
        } else {
            rest.split('/').collect()
        };
        if parts.iter().any(|p| p.is_empty()) || parts.len() > self.max_depth {
            return None;
        }
        Some(parts)
    }

    /// Whether the view covers `path` (at or under the root, within the depth limit).
    pub(crate) fn covers(&self, path: &str) -> bool {
        self.relative(path).is_some()
    }

    fn node(&self, parts: &[&str]) -> Option<u32> {
        let mut n = self.root?;
        for p in parts {
            n = self.store.find(n, p)?;
        }
        Some(n)
    }

    /// A snapshot of node `id`: its data is copied, so that the view holds one buffer of
    /// its own size per znode and no shared handle.
    fn snapshot(&self, id: u32) -> CachedNode {
        let data = self
            .keep_data
            .then(|| Bytes::copy_from_slice(self.store.data(id)));
        CachedNode::new(self.store.stat(id), data)
    }

    /// The cached node at `path`.
    pub(crate) fn get(&self, path: &str) -> Option<CachedNode> {
        let id = self.node(&self.relative(path)?)?;
        Some(self.snapshot(id))
    }

    /// The names of the cached children of `path`, sorted.
    pub(crate) fn children(&self, path: &str) -> Option<Vec<String>> {
        let id = self.node(&self.relative(path)?)?;
        let kids = self.store.children(id);
        Some(
            kids.iter()
                .map(|&c| self.store.name(c).to_owned())
                .collect(),
        )
    }

    /// How many znodes the view holds.
    pub(crate) fn len(&self) -> usize {
        self.store.len()
    }

    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        self.store.heap_bytes()
    }

    /// Every cached path, parents before children: what a resync reads again. The root is
    /// always among them, cached or not.
    pub(crate) fn all_paths(&self) -> Vec<String> {
        let Some(root) = self.root else {
            return vec![self.root_path.clone()];
        };
        self.subtree(root, self.root_path.clone(), false)
            .into_iter()
            .map(|(_, p)| p)
            .collect()
    }

    /// Node `id` and its subtree with their paths, parents first; siblings by name, or in
    /// reverse when `reverse` (whose reversal is then children first, siblings by name).
    fn subtree(&self, id: u32, path: String, reverse: bool) -> Vec<(u32, String)> {
        let mut out = Vec::new();
        // An explicit stack: a deep tree must not exhaust the thread's stack.
        let mut stack = vec![(id, path)];
        while let Some((id, path)) = stack.pop() {
            let mut kids = self.store.children(id);
            if !reverse {
                kids.reverse();
            }
            for c in kids {
                stack.push((c, child_path(&path, self.store.name(c))));
            }
            out.push((id, path));
        }
        out
    }

    /// The result of getData on `path`: `None` when the server said NoNode.
    pub(crate) fn apply_data(
        &mut self,
        path: &str,
        read: Option<(&[u8], Stat)>,
        events: &mut Vec<CacheEvent>,
        wants: &mut Vec<Want>,
    ) {
        let Some(parts) = self.relative(path) else {
            return;
        };
        let Some((data, stat)) = read else {
            self.remove(path, &parts, events);
            return;
        };
        // A node whose parent is not cached is picked up when the parent's children are
        // listed; the loader reads parents first.
        let (parent, old) = match parts.split_last() {
            None => (NONE, self.root),
            Some((name, parent_parts)) => {
                let Some(parent) = self.node(parent_parts) else {
                    return;
                };
                (parent, self.store.find(parent, name))
            }
        };
        let Some(old) = old else {
            return self.insert(path, &parts, parent, (data, stat), events, wants);
        };
        let before = self.store.stat(old);
        if before.czxid != stat.czxid {
            // Created again since we saw it: its old subtree went with it.
            self.remove(path, &parts, events);
            return self.insert(path, &parts, parent, (data, stat), events, wants);
        }
        // Nothing older than what is cached is applied (the same read twice, or a read
        // that raced a newer one).
        if stat.mzxid < before.mzxid || stat.pzxid < before.pzxid {
            return;
        }
        if stat.mzxid > before.mzxid {
            let old_node = self.snapshot(old);
            self.store.update(old, &stat, Some(data));
            events.push(CacheEvent::Changed {
                path: path.to_owned(),
                old: old_node,
                new: self.snapshot(old),
            });
        } else {
            self.store.update(old, &stat, None);
        }
        if parts.len() < self.max_depth && before.cversion != stat.cversion {
            wants.push(Want::Children(path.to_owned()));
        }
    }

    fn insert(
        &mut self,
        path: &str,
        parts: &[&str],
        parent: u32,
        (data, stat): (&[u8], Stat),
        events: &mut Vec<CacheEvent>,
        wants: &mut Vec<Want>,
    ) {
        let name = parts.last().copied().unwrap_or("");
        let Some(id) = self.store.add(parent, name, &stat, data) else {
            return;
        };
        if parent == NONE {
            self.root = Some(id);
        }
        events.push(CacheEvent::Created {
            path: path.to_owned(),
            node: self.snapshot(id),
        });
        // A leaf costs no getChildren: the Stat says it has no children.
        if stat.num_children > 0 && parts.len() < self.max_depth {
            wants.push(Want::Children(path.to_owned()));
        }
    }

    /// Drops `path` and its subtree, children before parents, as the server deletes them.
    fn remove(&mut self, path: &str, parts: &[&str], events: &mut Vec<CacheEvent>) {
        let Some(id) = self.node(parts) else {
            return;
        };
        let mut nodes = self.subtree(id, path.to_owned(), true);
        nodes.reverse();
        for (n, p) in nodes {
            let old = self.snapshot(n);
            self.store.remove(n);
            events.push(CacheEvent::Deleted { path: p, old });
        }
        if Some(id) == self.root {
            self.root = None;
        }
    }

    /// The result of getChildren on `path`: `None` when the server said NoNode. New names
    /// are read; cached children the server no longer lists are gone.
    pub(crate) fn apply_children(
        &mut self,
        path: &str,
        names: Option<Vec<String>>,
        events: &mut Vec<CacheEvent>,
        wants: &mut Vec<Want>,
    ) {
        let Some(parts) = self.relative(path) else {
            return;
        };
        let Some(names) = names else {
            self.remove(path, &parts, events);
            return;
        };
        if parts.len() >= self.max_depth {
            return;
        }
        let Some(id) = self.node(&parts) else {
            return;
        };
        let listed: HashSet<&str> = names.iter().map(String::as_str).collect();
        let gone: Vec<String> = self
            .store
            .children(id)
            .into_iter()
            .map(|c| self.store.name(c))
            .filter(|name| !listed.contains(name))
            .map(str::to_owned)
            .collect();
        for name in &names {
            if self.store.find(id, name).is_none() {
                wants.push(Want::Data(child_path(path, name)));
            }
        }
        for name in gone {
            let p = child_path(path, &name);
            let mut child_parts = parts.clone();
            child_parts.push(&name);
            self.remove(&p, &child_parts, events);
        }
    }
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;
