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
    ///
    /// ```rust
    /// use zk_session::{Acl, CreateMode, CreateOptions};
    ///
    /// let options = CreateOptions::new(CreateMode::EphemeralSequential);
    /// assert_eq!(options, CreateOptions::ephemeral_sequential());
    /// assert_eq!(options.acl(), &Acl::open_unsafe()[..]);
    /// assert_eq!(options.ttl_duration(), None);
    /// ```
    pub fn new(mode: CreateMode) -> Self {
        CreateOptions {
            mode,
            acl: Acl::open_unsafe(),
            ttl: None,
        }
    }

    /// A persistent znode.
    ///
    /// The same example serves for the other shorthands of [`new`](Self::new) and for
    /// [`mode`](Self::mode).
    ///
    /// ```rust
    /// use zk_session::{CreateMode, CreateOptions};
    ///
    /// assert_eq!(CreateOptions::persistent().mode(), CreateMode::Persistent);
    /// assert_eq!(CreateOptions::default(), CreateOptions::persistent());
    /// assert!(CreateOptions::ephemeral().mode().is_ephemeral());
    /// assert!(CreateOptions::persistent_sequential().mode().is_sequential());
    /// let mode = CreateOptions::ephemeral_sequential().mode();
    /// assert!(mode.is_ephemeral() && mode.is_sequential());
    /// assert!(CreateOptions::container().mode().is_container());
    /// ```
    pub fn persistent() -> Self {
        Self::new(CreateMode::Persistent)
    }

    /// An ephemeral znode, deleted when the session ends.
    ///
    /// See the example on [`persistent`](Self::persistent).
    pub fn ephemeral() -> Self {
        Self::new(CreateMode::Ephemeral)
    }

    /// A persistent sequential znode.
    ///
    /// See the example on [`persistent`](Self::persistent).
    pub fn persistent_sequential() -> Self {
        Self::new(CreateMode::PersistentSequential)
    }

    /// An ephemeral sequential znode.
    ///
    /// See the example on [`persistent`](Self::persistent).
    pub fn ephemeral_sequential() -> Self {
        Self::new(CreateMode::EphemeralSequential)
    }

    /// A container znode, removed by the server when its last child is gone.
    ///
    /// See the example on [`persistent`](Self::persistent).
    pub fn container() -> Self {
        Self::new(CreateMode::Container)
    }

    /// A persistent znode the server deletes after `ttl` without changes once it has no
    /// children (the server must run with `zookeeper.extendedTypesEnabled=true`).
    ///
    /// The same example serves for [`ttl_sequential`](Self::ttl_sequential) and
    /// [`ttl_duration`](Self::ttl_duration).
    ///
    /// ```rust
    /// use std::time::Duration;
    /// use zk_session::{CreateMode, CreateOptions};
    ///
    /// let lease = CreateOptions::ttl(Duration::from_secs(60));
    /// assert_eq!(lease.mode(), CreateMode::PersistentWithTtl);
    /// assert_eq!(lease.ttl_duration(), Some(Duration::from_secs(60)));
    /// let queued = CreateOptions::ttl_sequential(Duration::from_secs(60));
    /// assert_eq!(queued.mode(), CreateMode::PersistentSequentialWithTtl);
    /// ```
    pub fn ttl(ttl: Duration) -> Self {
        CreateOptions {
            ttl: Some(ttl),
            ..Self::new(CreateMode::PersistentWithTtl)
        }
    }

    /// A persistent sequential znode with a TTL.
    ///
    /// See the example on [`ttl`](Self::ttl).
    pub fn ttl_sequential(ttl: Duration) -> Self {
        CreateOptions {
            ttl: Some(ttl),
            ..Self::new(CreateMode::PersistentSequentialWithTtl)
        }
    }

    /// Replaces the ACL.
    ///
    /// The same example serves for [`acl`](Self::acl).
    ///
    /// ```rust
    /// use zk_session::{Acl, CreateOptions, Id, Perms};
    ///
    /// // Only the creator's identities have all rights; everyone may read.
    /// let mut acl = Acl::creator_all();
    /// acl.push(Acl::new(Perms::READ, Id::anyone()));
    /// let options = CreateOptions::persistent().with_acl(acl);
    /// assert_eq!(options.acl().len(), 2);
    /// assert_eq!(options.acl()[1].id.scheme, "world");
    /// ```
    pub fn with_acl(mut self, acl: Vec<Acl>) -> Self {
        self.acl = acl;
        self
    }

    /// The create mode.
    ///
    /// See the example on [`persistent`](Self::persistent).
    pub fn mode(&self) -> CreateMode {
        self.mode
    }

    /// The ACL.
    ///
    /// See the example on [`with_acl`](Self::with_acl).
    pub fn acl(&self) -> &[Acl] {
        &self.acl
    }

    /// The TTL, for the TTL modes.
    ///
    /// See the example on [`ttl`](Self::ttl).
    pub fn ttl_duration(&self) -> Option<Duration> {
        self.ttl
    }
}
