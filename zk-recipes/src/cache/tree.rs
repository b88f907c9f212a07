//! The cached tree as a plain value: it takes read results and answers with the events they
//! mean and the reads they call for. No I/O here; the loader feeds it in server order.
//!
//! Change detection is by zxid, not by version: a node deleted and created again has a new
//! czxid even when its version is back where it was (Curator's CuratorCache misses that), and
//! a data change moves the mzxid.

use std::collections::{BTreeMap, HashSet};

use bytes::Bytes;
use zk_session::Stat;

use super::event::{CacheEvent, CachedNode};

/// A read the tree wants done.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Want {
    /// getData of the path.
    Data(String),
    /// getChildren of the path.
    Children(String),
}

/// One cached znode. Data is held in a buffer of its own size (never a slice of a read
/// buffer, which would keep the whole reply frame alive).
#[derive(Debug)]
struct Node {
    stat: Stat,
    data: Option<Bytes>,
    children: BTreeMap<Box<str>, Node>,
}

impl Node {
    fn snapshot(&self) -> CachedNode {
        CachedNode::new(self.stat, self.data.clone())
    }

    fn count(&self) -> usize {
        1 + self.children.values().map(Node::count).sum::<usize>()
    }
}

/// The view: the root znode (if it exists) and what lies below it, down to the depth limit.
#[derive(Debug)]
pub(crate) struct Tree {
    root_path: String,
    root: Option<Node>,
    /// Levels below the root that are cached (0: the root alone).
    max_depth: usize,
    keep_data: bool,
    len: usize,
}

impl Tree {
    pub(crate) fn new(root_path: &str, max_depth: usize, keep_data: bool) -> Self {
        Tree {
            root_path: root_path.to_owned(),
            root: None,
            max_depth,
            keep_data,
            len: 0,
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

    fn child_path(&self, parent: &str, name: &str) -> String {
        if parent == "/" {
            format!("/{name}")
        } else {
            format!("{parent}/{name}")
        }
    }

    fn node(&self, parts: &[&str]) -> Option<&Node> {
        let mut n = self.root.as_ref()?;
        for p in parts {
            n = n.children.get(*p)?;
        }
        Some(n)
    }

    fn node_mut(&mut self, parts: &[&str]) -> Option<&mut Node> {
        let mut n = self.root.as_mut()?;
        for p in parts {
            n = n.children.get_mut(*p)?;
        }
        Some(n)
    }

    /// The cached node at `path`.
    pub(crate) fn get(&self, path: &str) -> Option<CachedNode> {
        self.node(&self.relative(path)?).map(Node::snapshot)
    }

    /// The names of the cached children of `path`, sorted.
    pub(crate) fn children(&self, path: &str) -> Option<Vec<String>> {
        let n = self.node(&self.relative(path)?)?;
        Some(n.children.keys().map(|k| k.to_string()).collect())
    }

    /// How many znodes the view holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Every cached path, parents before children: what a resync reads again. The root is
    /// always among them, cached or not.
    pub(crate) fn all_paths(&self) -> Vec<String> {
        let mut out = vec![self.root_path.clone()];
        if let Some(root) = &self.root {
            self.collect_paths(root, &self.root_path, &mut out);
        }
        out
    }

    fn collect_paths(&self, node: &Node, path: &str, out: &mut Vec<String>) {
        for (name, child) in &node.children {
            let p = self.child_path(path, name);
            out.push(p.clone());
            self.collect_paths(child, &p, out);
        }
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
        let can_have_children = parts.len() < self.max_depth;
        let data = self.keep_data.then(|| Bytes::copy_from_slice(data));
        let fresh = Node {
            stat,
            data,
            children: BTreeMap::new(),
        };
        // A node whose parent is not cached is picked up when the parent's children are
        // listed; the loader reads parents first.
        if let Some((_, parent_parts)) = parts.split_last() {
            if self.node(parent_parts).is_none() {
                return;
            }
        }
        let old = self.node_mut(&parts);
        match old {
            Some(old) if old.stat.czxid == stat.czxid => {
                // Nothing older than what is cached is applied (the same read twice, or a
                // read that raced a newer one).
                if stat.mzxid < old.stat.mzxid || stat.pzxid < old.stat.pzxid {
                    return;
                }
                let children_moved = old.stat.cversion != stat.cversion;
                if stat.mzxid > old.stat.mzxid {
                    let before = old.snapshot();
                    old.stat = stat;
                    old.data = fresh.data;
                    events.push(CacheEvent::Changed {
                        path: path.to_owned(),
                        old: before,
                        new: old.snapshot(),
                    });
                } else {
                    old.stat = stat;
                }
                if can_have_children && children_moved {
                    wants.push(Want::Children(path.to_owned()));
                }
            }
            Some(_) => {
                // Created again since we saw it: its old subtree went with it.
                self.remove(path, &parts, events);
                self.insert(path, &parts, fresh, events, wants);
            }
            None => self.insert(path, &parts, fresh, events, wants),
        }
    }

    fn insert(
        &mut self,
        path: &str,
        parts: &[&str],
        node: Node,
        events: &mut Vec<CacheEvent>,
        wants: &mut Vec<Want>,
    ) {
        let has_children = node.stat.num_children > 0 && parts.len() < self.max_depth;
        events.push(CacheEvent::Created {
            path: path.to_owned(),
            node: node.snapshot(),
        });
        match parts.split_last() {
            None => self.root = Some(node),
            Some((name, parent_parts)) => {
                let Some(parent) = self.node_mut(parent_parts) else {
                    return;
                };
                parent.children.insert((*name).into(), node);
            }
        }
        self.len += 1;
        // A leaf costs no getChildren: the Stat says it has no children.
        if has_children {
            wants.push(Want::Children(path.to_owned()));
        }
    }

    /// Drops `path` and its subtree, children before parents, as the server deletes them.
    fn remove(&mut self, path: &str, parts: &[&str], events: &mut Vec<CacheEvent>) {
        let removed = match parts.split_last() {
            None => self.root.take(),
            Some((name, parent_parts)) => self
                .node_mut(parent_parts)
                .and_then(|p| p.children.remove(*name)),
        };
        if let Some(node) = removed {
            self.len -= node.count();
            self.report_removed(path, node, events);
        }
    }

    fn report_removed(&self, path: &str, node: Node, events: &mut Vec<CacheEvent>) {
        let Node {
            stat,
            data,
            children,
        } = node;
        for (name, child) in children {
            let p = self.child_path(path, &name);
            self.report_removed(&p, child, events);
        }
        events.push(CacheEvent::Deleted {
            path: path.to_owned(),
            old: CachedNode::new(stat, data),
        });
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
        let Some(node) = self.node(&parts) else {
            return;
        };
        let listed: HashSet<&str> = names.iter().map(String::as_str).collect();
        let gone: Vec<String> = node
            .children
            .keys()
            .filter(|k| !listed.contains(&**k as &str))
            .map(|k| k.to_string())
            .collect();
        for name in &names {
            if !node.children.contains_key(name.as_str()) {
                wants.push(Want::Data(self.child_path(path, name)));
            }
        }
        for name in gone {
            let p = self.child_path(path, &name);
            let mut child_parts = parts.clone();
            child_parts.push(&name);
            self.remove(&p, &child_parts, events);
        }
    }
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;
