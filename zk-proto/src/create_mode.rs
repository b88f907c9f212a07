//! How a znode is created: persistence, sequencing, containers and TTLs.

/// The kind of znode a create request makes (jute field `flags`).
///
/// ```
/// use zk_proto::CreateMode;
/// let m = CreateMode::from_flags(3).unwrap();
/// assert_eq!(m, CreateMode::EphemeralSequential);
/// assert!(m.is_ephemeral() && m.is_sequential());
/// assert_eq!(CreateMode::from_flags(7), None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum CreateMode {
    /// Lives until deleted.
    #[default]
    Persistent,
    /// Deleted when the creating session ends.
    Ephemeral,
    /// Persistent, with a sequence number appended to the name.
    PersistentSequential,
    /// Ephemeral, with a sequence number appended to the name.
    EphemeralSequential,
    /// Deleted by the server once its last child is gone.
    Container,
    /// Deleted by the server when unmodified for the TTL and childless.
    PersistentWithTtl,
    /// Sequential, and deleted like [`CreateMode::PersistentWithTtl`].
    PersistentSequentialWithTtl,
}

impl CreateMode {
    /// Every mode, for tests and tools.
    pub const ALL: &'static [CreateMode] = &[
        CreateMode::Persistent,
        CreateMode::Ephemeral,
        CreateMode::PersistentSequential,
        CreateMode::EphemeralSequential,
        CreateMode::Container,
        CreateMode::PersistentWithTtl,
        CreateMode::PersistentSequentialWithTtl,
    ];

    /// The wire value.
    pub fn flags(self) -> i32 {
        match self {
            CreateMode::Persistent => 0,
            CreateMode::Ephemeral => 1,
            CreateMode::PersistentSequential => 2,
            CreateMode::EphemeralSequential => 3,
            CreateMode::Container => 4,
            CreateMode::PersistentWithTtl => 5,
            CreateMode::PersistentSequentialWithTtl => 6,
        }
    }

    /// The mode for a wire value, or `None` when it is not one.
    pub fn from_flags(flags: i32) -> Option<Self> {
        Self::ALL.iter().copied().find(|m| m.flags() == flags)
    }

    /// Deleted when the session ends.
    pub fn is_ephemeral(self) -> bool {
        matches!(
            self,
            CreateMode::Ephemeral | CreateMode::EphemeralSequential
        )
    }

    /// The server appends a sequence number to the name.
    pub fn is_sequential(self) -> bool {
        matches!(
            self,
            CreateMode::PersistentSequential
                | CreateMode::EphemeralSequential
                | CreateMode::PersistentSequentialWithTtl
        )
    }

    /// A container znode.
    pub fn is_container(self) -> bool {
        self == CreateMode::Container
    }

    /// Needs a TTL (and the createTTL opcode).
    pub fn is_ttl(self) -> bool {
        matches!(
            self,
            CreateMode::PersistentWithTtl | CreateMode::PersistentSequentialWithTtl
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_round_trip_and_match_the_java_values() {
        for (i, &m) in CreateMode::ALL.iter().enumerate() {
            assert_eq!(m.flags(), i as i32);
            assert_eq!(CreateMode::from_flags(m.flags()), Some(m));
        }
        assert_eq!(CreateMode::from_flags(-1), None);
        assert_eq!(CreateMode::from_flags(7), None);
    }

    #[test]
    fn predicates() {
        use CreateMode::*;
        let eph: Vec<_> = CreateMode::ALL
            .iter()
            .filter(|m| m.is_ephemeral())
            .collect();
        assert_eq!(eph, [&Ephemeral, &EphemeralSequential]);
        let seq: Vec<_> = CreateMode::ALL
            .iter()
            .filter(|m| m.is_sequential())
            .collect();
        assert_eq!(
            seq,
            [
                &PersistentSequential,
                &EphemeralSequential,
                &PersistentSequentialWithTtl
            ]
        );
        assert!(Container.is_container() && !Persistent.is_container());
        assert!(PersistentWithTtl.is_ttl() && !Ephemeral.is_ttl());
    }
}
