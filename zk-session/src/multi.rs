//! Multi transactions (`multi`, all or nothing) and batched reads (`multi_read`).

use bytes::Bytes;
use zk_proto::{ErrorCode, Stat};

use crate::{CreateOptions, Version};

/// One write of a [`Client::multi`](crate::Client::multi) transaction.
///
/// ```
/// use zk_session::{CreateOptions, Op, Version};
/// let ops = vec![
///     Op::check("/config", Version::Exact(3)),
///     Op::set_data("/config", b"v4", Version::Exact(3)),
///     Op::create("/config/history-", b"v3", CreateOptions::persistent_sequential()),
///     Op::delete("/config/old", Version::Any),
/// ];
/// assert_eq!(ops.len(), 4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Op {
    /// Create a znode.
    Create {
        /// Where (relative to the chroot).
        path: String,
        /// The new znode's data.
        data: Bytes,
        /// Mode, ACL and TTL.
        options: CreateOptions,
    },
    /// Delete a znode.
    Delete {
        /// Which znode.
        path: String,
        /// The version it must have.
        version: Version,
    },
    /// Replace a znode's data.
    SetData {
        /// Which znode.
        path: String,
        /// The new data.
        data: Bytes,
        /// The version it must have.
        version: Version,
    },
    /// Fail the transaction unless the znode has this version.
    Check {
        /// Which znode.
        path: String,
        /// The version it must have.
        version: Version,
    },
}

impl Op {
    /// A create.
    pub fn create(path: impl Into<String>, data: &[u8], options: CreateOptions) -> Op {
        Op::Create {
            path: path.into(),
            data: Bytes::copy_from_slice(data),
            options,
        }
    }

    /// A delete.
    pub fn delete(path: impl Into<String>, version: Version) -> Op {
        Op::Delete {
            path: path.into(),
            version,
        }
    }

    /// A setData.
    pub fn set_data(path: impl Into<String>, data: &[u8], version: Version) -> Op {
        Op::SetData {
            path: path.into(),
            data: Bytes::copy_from_slice(data),
            version,
        }
    }

    /// A version check.
    pub fn check(path: impl Into<String>, version: Version) -> Op {
        Op::Check {
            path: path.into(),
            version,
        }
    }

    pub(crate) fn path(&self) -> &str {
        match self {
            Op::Create { path, .. }
            | Op::Delete { path, .. }
            | Op::SetData { path, .. }
            | Op::Check { path, .. } => path,
        }
    }
}

/// The result of one op of a successful transaction, in the order of the ops.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpResult {
    /// The created znode's path (relative to the chroot) and its Stat.
    Create {
        /// The created znode's path (with its sequence number, if sequential).
        path: String,
        /// Its Stat, when the server sends one (ZooKeeper 3.8.0 does not, inside a multi).
        stat: Option<Stat>,
    },
    /// The znode was deleted.
    Delete,
    /// The znode's new Stat.
    SetData(Stat),
    /// The check passed.
    Check,
}

/// One read of a [`Client::multi_read`](crate::Client::multi_read) batch.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadOp {
    /// Read a znode's data and Stat.
    GetData(String),
    /// List a znode's children.
    GetChildren(String),
}

/// The result of one read; each read succeeds or fails on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadResult {
    /// The data and Stat, or the error code.
    Data(Result<(Bytes, Stat), ErrorCode>),
    /// The children, or the error code.
    Children(Result<Vec<String>, ErrorCode>),
}
