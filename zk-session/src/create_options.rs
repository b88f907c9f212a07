//! How a znode is created: its mode, ACL and time to live.

use std::time::Duration;

use zk_proto::{Acl, CreateMode};

/// The create mode, ACL and TTL of a create.
///
/// ```
/// use std::time::Duration;
/// use zk_session::{Acl, CreateMode, CreateOptions};
///
/// let eph = CreateOptions::new(CreateMode::EphemeralSequential);
/// let ttl = CreateOptions::ttl(Duration::from_secs(60)).with_acl(Acl::creator_all());
/// assert_eq!(ttl.mode(), CreateMode::PersistentWithTtl);
/// assert!(eph.mode().is_ephemeral());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateOptions {
    mode: CreateMode,
    acl: Vec<Acl>,
    ttl: Option<Duration>,
}

impl Default for CreateOptions {
    fn default() -> Self {
        CreateOptions::new(CreateMode::Persistent)
    }
}

impl CreateOptions {
    /// A create in `mode`, open to everyone (`world:anyone` with all permissions).
    ///
    /// For the TTL modes use [`CreateOptions::ttl`] or [`CreateOptions::ttl_sequential`].
    pub fn new(mode: CreateMode) -> Self {
        CreateOptions {
            mode,
            acl: Acl::open_unsafe(),
            ttl: None,
        }
    }

    /// A persistent znode.
    pub fn persistent() -> Self {
        Self::new(CreateMode::Persistent)
    }

    /// An ephemeral znode, deleted when the session ends.
    pub fn ephemeral() -> Self {
        Self::new(CreateMode::Ephemeral)
    }

    /// A persistent sequential znode.
    pub fn persistent_sequential() -> Self {
        Self::new(CreateMode::PersistentSequential)
    }

    /// An ephemeral sequential znode.
    pub fn ephemeral_sequential() -> Self {
        Self::new(CreateMode::EphemeralSequential)
    }

    /// A container znode, removed by the server when its last child is gone.
    pub fn container() -> Self {
        Self::new(CreateMode::Container)
    }

    /// A persistent znode the server deletes after `ttl` without changes once it has no
    /// children (the server must run with `zookeeper.extendedTypesEnabled=true`).
    pub fn ttl(ttl: Duration) -> Self {
        CreateOptions {
            ttl: Some(ttl),
            ..Self::new(CreateMode::PersistentWithTtl)
        }
    }

    /// A persistent sequential znode with a TTL.
    pub fn ttl_sequential(ttl: Duration) -> Self {
        CreateOptions {
            ttl: Some(ttl),
            ..Self::new(CreateMode::PersistentSequentialWithTtl)
        }
    }

    /// Replaces the ACL.
    pub fn with_acl(mut self, acl: Vec<Acl>) -> Self {
        self.acl = acl;
        self
    }

    /// The create mode.
    pub fn mode(&self) -> CreateMode {
        self.mode
    }

    /// The ACL.
    pub fn acl(&self) -> &[Acl] {
        &self.acl
    }

    /// The TTL, for the TTL modes.
    pub fn ttl_duration(&self) -> Option<Duration> {
        self.ttl
    }
}
