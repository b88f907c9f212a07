//! A subtree as plain values: each znode's path, data, ACL and kind, parents before children.
//! What `cp`, `diff`, `du`, `tree`, `find` and `grep` read, and what a backup file holds.

use zk_session::{Acl, CreateOptions, Stat};

/// How a znode was created, as far as its Stat tells (sequential is a name, not a kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Persistent,
    /// Deleted by the server once its last child is gone.
    Container,
    /// Deleted after this many milliseconds without changes once childless.
    Ttl(u64),
    /// Owned by a session: cannot be copied.
    Ephemeral,
}

/// The Stat's ephemeralOwner of a container: the lowest i64.
const CONTAINER_OWNER: i64 = i64::MIN;
/// A TTL znode's ephemeralOwner: the top byte all ones, the TTL in the low 40 bits.
const EXTENDED_MASK: u64 = 0xff00_0000_0000_0000;
const TTL_MASK: u64 = 0x0000_00ff_ffff_ffff;

impl Kind {
    /// The kind an ephemeralOwner encodes.
    pub fn from_owner(owner: i64) -> Kind {
        match owner {
            0 => Kind::Persistent,
            CONTAINER_OWNER => Kind::Container,
            o if (o as u64) & EXTENDED_MASK == EXTENDED_MASK => Kind::Ttl(o as u64 & TTL_MASK),
            _ => Kind::Ephemeral,
        }
    }

    /// The create options that make a znode of this kind with `acl` (an ephemeral is made
    /// persistent: callers skip them).
    pub fn create_options(self, acl: Vec<Acl>) -> CreateOptions {
        let options = match self {
            Kind::Container => CreateOptions::container(),
            Kind::Ttl(ms) => CreateOptions::ttl(std::time::Duration::from_millis(ms)),
            Kind::Persistent | Kind::Ephemeral => CreateOptions::persistent(),
        };
        options.with_acl(acl)
    }

    /// The name used in backups and `--json`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Persistent => "persistent",
            Kind::Container => "container",
            Kind::Ttl(_) => "ttl",
            Kind::Ephemeral => "ephemeral",
        }
    }
}

/// One znode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Its absolute path where it was read.
    pub path: String,
    pub data: Vec<u8>,
    /// Empty when the ACLs were not asked for.
    pub acl: Vec<Acl>,
    pub kind: Kind,
    /// The Stat, when read from an ensemble (not from a backup).
    pub stat: Option<Stat>,
}

/// A subtree: its root's path and its znodes in depth-first order, siblings sorted by name.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub root: String,
    pub nodes: Vec<Node>,
}

impl Tree {
    /// Puts the nodes in depth-first order, siblings by name, so that a parent comes before
    /// its children and every reading of one tree lists it alike.
    pub fn sort(&mut self) {
        self.nodes
            .sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
    }

    /// `path` relative to the root: "/" for the root itself, else "/a/b".
    pub fn relative<'a>(&self, path: &'a str) -> &'a str {
        relative(&self.root, path)
    }
}

/// `path` relative to `root`: "/" for the root itself, else "/a/b".
pub fn relative<'a>(root: &str, path: &'a str) -> &'a str {
    if root == "/" {
        return path;
    }
    match path.strip_prefix(root) {
        Some("") => "/",
        Some(rest) => rest,
        None => path,
    }
}

/// `rel` (from [`relative`]) placed under `root`.
pub fn join(root: &str, rel: &str) -> String {
    match (root, rel) {
        (_, "/") => root.to_owned(),
        ("/", _) => rel.to_owned(),
        _ => format!("{root}{rel}"),
    }
}

/// `child` under `parent`.
pub fn child(parent: &str, name: &str) -> String {
    format!("{}/{name}", parent.trim_end_matches('/'))
}

/// ZooKeeper's own subtree, which no copy or comparison of "/" should touch.
pub fn is_system(path: &str) -> bool {
    path == "/zookeeper" || path.starts_with("/zookeeper/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_the_ephemeral_owner() {
        assert_eq!(Kind::from_owner(0), Kind::Persistent);
        assert_eq!(Kind::from_owner(i64::MIN), Kind::Container);
        assert_eq!(Kind::from_owner(0x0100_0002_3456_0000), Kind::Ephemeral);
        assert_eq!(
            Kind::from_owner(0xff00_0000_0000_1388_u64 as i64),
            Kind::Ttl(5000)
        );
        assert_eq!(
            Kind::Ttl(5000).create_options(vec![]).ttl_duration(),
            Some(std::time::Duration::from_secs(5))
        );
    }

    #[test]
    fn paths_relative_and_joined() {
        assert_eq!(relative("/a", "/a"), "/");
        assert_eq!(relative("/a", "/a/b/c"), "/b/c");
        assert_eq!(relative("/", "/a"), "/a");
        assert_eq!(join("/x", "/"), "/x");
        assert_eq!(join("/x", "/b"), "/x/b");
        assert_eq!(join("/", "/b"), "/b");
        assert_eq!(child("/", "a"), "/a");
        assert_eq!(child("/a", "b"), "/a/b");
        assert!(is_system("/zookeeper/quota") && !is_system("/zookeeperx"));
    }

    #[test]
    fn sorted_depth_first() {
        let node = |p: &str| Node {
            path: p.into(),
            data: vec![],
            acl: vec![],
            kind: Kind::Persistent,
            stat: None,
        };
        let mut t = Tree {
            root: "/a".into(),
            nodes: ["/a/b-2", "/a/b", "/a", "/a/b/c"].map(node).to_vec(),
        };
        t.sort();
        let order: Vec<&str> = t.nodes.iter().map(|n| n.path.as_str()).collect();
        assert_eq!(order, ["/a", "/a/b", "/a/b/c", "/a/b-2"]);
    }
}
