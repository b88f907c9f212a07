//! The request records, one per jute record, fields in jute order: plain data declared
//! field by field, apart from [`Request`](super::Request), which ties them to opcodes.

use bytes::Bytes;

use crate::{
    acl::Acl,
    field::jute_record,
    watch::{AddWatchMode, WatcherType},
    CreateMode,
};

jute_record! {
    /// Creates a znode (opcodes create, create2 and createContainer).
    pub struct CreateRequest {
        /// The znode, or for sequential modes the prefix of its name.
        pub path: String = "path",
        /// The initial data; `None` is stored as null and reads back as null.
        pub data: Option<Bytes> = "data",
        /// The ACL; the server refuses an empty one.
        pub acl: Vec<Acl> = "acl",
        /// The kind of znode (jute field `flags`).
        pub mode: CreateMode = "flags",
    }
}

jute_record! {
    /// Creates a znode with a time-to-live (opcode createTTL).
    pub struct CreateTtlRequest {
        /// The znode, or for sequential modes the prefix of its name.
        pub path: String = "path",
        /// The initial data.
        pub data: Option<Bytes> = "data",
        /// The ACL.
        pub acl: Vec<Acl> = "acl",
        /// A TTL mode (jute field `flags`).
        pub mode: CreateMode = "flags",
        /// Milliseconds without modification (and without children) before deletion.
        pub ttl: i64 = "ttl",
    }
}

jute_record! {
    /// Deletes a znode.
    pub struct DeleteRequest {
        /// The znode.
        pub path: String = "path",
        /// The expected data version, -1 for any.
        pub version: i32 = "version",
    }
}

jute_record! {
    /// Reads a znode's `Stat`.
    pub struct ExistsRequest {
        /// The znode.
        pub path: String = "path",
        /// Leave a data watch (set even when the znode does not exist).
        pub watch: bool = "watch",
    }
}

jute_record! {
    /// Reads a znode's data and `Stat`.
    pub struct GetDataRequest {
        /// The znode.
        pub path: String = "path",
        /// Leave a data watch.
        pub watch: bool = "watch",
    }
}

jute_record! {
    /// Replaces a znode's data.
    pub struct SetDataRequest {
        /// The znode.
        pub path: String = "path",
        /// The new data.
        pub data: Option<Bytes> = "data",
        /// The expected data version, -1 for any.
        pub version: i32 = "version",
    }
}

jute_record! {
    /// Reads a znode's ACL.
    pub struct GetAclRequest {
        /// The znode.
        pub path: String = "path",
    }
}

jute_record! {
    /// Replaces a znode's ACL.
    pub struct SetAclRequest {
        /// The znode.
        pub path: String = "path",
        /// The new ACL.
        pub acl: Vec<Acl> = "acl",
        /// The expected ACL version, -1 for any.
        pub version: i32 = "version",
    }
}

jute_record! {
    /// Lists a znode's children (opcodes getChildren and getChildren2).
    pub struct GetChildrenRequest {
        /// The znode.
        pub path: String = "path",
        /// Leave a child watch.
        pub watch: bool = "watch",
    }
}

jute_record! {
    /// Waits until the connected server has caught up with the leader.
    pub struct SyncRequest {
        /// The znode (the server only echoes it).
        pub path: String = "path",
    }
}

jute_record! {
    /// Checks a znode's data version inside a multi.
    pub struct CheckVersionRequest {
        /// The znode.
        pub path: String = "path",
        /// The expected data version.
        pub version: i32 = "version",
    }
}

jute_record! {
    /// Changes the ensemble membership, incrementally or as a whole (`None` = not given).
    pub struct ReconfigRequest {
        /// Comma-separated server specs to add.
        pub joining_servers: Option<String> = "joiningServers",
        /// Comma-separated server ids to remove.
        pub leaving_servers: Option<String> = "leavingServers",
        /// The complete new membership (non-incremental reconfig).
        pub new_members: Option<String> = "newMembers",
        /// The config version expected, -1 for any.
        pub cur_config_id: i64 = "curConfigId",
    }
}

jute_record! {
    /// Asks about or removes watches (opcodes checkWatches and removeWatches).
    pub struct RemoveWatchesRequest {
        /// The znode.
        pub path: String = "path",
        /// Which watches (jute field `type`).
        pub watcher_type: WatcherType = "type",
    }
}

jute_record! {
    manual_debug
    /// Adds an authentication identity to the session (xid -4). `Debug` hides the
    /// credentials.
    pub struct AuthPacket {
        /// Always 0.
        pub auth_type: i32 = "type",
        /// The auth scheme, e.g. `digest`.
        pub scheme: String = "scheme",
        /// The scheme-specific credentials, e.g. `user:password`.
        pub auth: Option<Bytes> = "auth",
    }
}

impl std::fmt::Debug for AuthPacket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthPacket")
            .field("auth_type", &self.auth_type)
            .field("scheme", &self.scheme)
            .field("auth", &crate::redact::optional(&self.auth))
            .finish()
    }
}

jute_record! {
    /// Re-registers watches after a reconnect; the server fires those whose znode changed
    /// after `relative_zxid`.
    pub struct SetWatches {
        /// The last zxid the client saw.
        pub relative_zxid: i64 = "relativeZxid",
        /// Paths with data watches.
        pub data_watches: Vec<String> = "dataWatches",
        /// Paths with exists watches.
        pub exist_watches: Vec<String> = "existWatches",
        /// Paths with child watches.
        pub child_watches: Vec<String> = "childWatches",
    }
}

jute_record! {
    /// [`SetWatches`] plus persistent watches.
    pub struct SetWatches2 {
        /// The last zxid the client saw.
        pub relative_zxid: i64 = "relativeZxid",
        /// Paths with data watches.
        pub data_watches: Vec<String> = "dataWatches",
        /// Paths with exists watches.
        pub exist_watches: Vec<String> = "existWatches",
        /// Paths with child watches.
        pub child_watches: Vec<String> = "childWatches",
        /// Paths with persistent watches.
        pub persistent_watches: Vec<String> = "persistentWatches",
        /// Paths with persistent recursive watches.
        pub persistent_recursive_watches: Vec<String> = "persistentRecursiveWatches",
    }
}

jute_record! {
    /// A SASL token for the server.
    pub struct GetSaslRequest {
        /// The token.
        pub token: Option<Bytes> = "token",
    }
}

jute_record! {
    /// Lists the session's ephemeral znodes under a prefix.
    pub struct GetEphemeralsRequest {
        /// The path prefix (`/` for all).
        pub prefix_path: String = "prefixPath",
    }
}

jute_record! {
    /// Counts all descendants of a znode.
    pub struct GetAllChildrenNumberRequest {
        /// The znode.
        pub path: String = "path",
    }
}

jute_record! {
    /// Adds a persistent watch.
    pub struct AddWatchRequest {
        /// The znode.
        pub path: String = "path",
        /// Persistent or persistent recursive.
        pub mode: AddWatchMode = "mode",
    }
}
