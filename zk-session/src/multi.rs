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
    ///
    /// The other constructors are shown in the example on [`Op`].
    ///
    /// ```rust
    /// use zk_session::{CreateOptions, Op};
    ///
    /// let op = Op::create("/app/jobs/job-", b"payload", CreateOptions::persistent_sequential());
    /// match &op {
    ///     Op::Create { path, data, options } => {
    ///         assert_eq!(path, "/app/jobs/job-");
    ///         assert_eq!(&data[..], b"payload");
    ///         assert!(options.mode().is_sequential());
    ///     }
    ///     _ => unreachable!(),
    /// }
    /// ```
    pub fn create(path: impl Into<String>, data: &[u8], options: CreateOptions) -> Op {
        Op::Create {
            path: path.into(),
            data: Bytes::copy_from_slice(data),
            options,
        }
    }

    /// A delete.
    ///
    /// See the example on [`Op`].
    pub fn delete(path: impl Into<String>, version: Version) -> Op {
        Op::Delete {
            path: path.into(),
            version,
        }
    }

    /// A setData.
    ///
    /// See the example on [`Op`].
    pub fn set_data(path: impl Into<String>, data: &[u8], version: Version) -> Op {
        Op::SetData {
            path: path.into(),
            data: Bytes::copy_from_slice(data),
            version,
        }
    }

    /// A version check.
    ///
    /// See the example on [`Op`].
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
///
/// ```no_run
/// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
/// use zk_session::{CreateOptions, Op, OpResult, Version};
///
/// let ops = [
///     Op::create("/app/queue/item-", b"work", CreateOptions::persistent_sequential()),
///     Op::delete("/app/queue/claimed", Version::Any),
/// ];
/// for result in client.multi(ops).await? {
///     match result {
///         OpResult::Create { path, .. } => println!("created {path}"),
///         other => println!("{other:?}"),
///     }
/// }
/// # Ok(()) }
/// ```
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
///
/// See the example on [`Client::multi_read`](crate::Client::multi_read).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadOp {
    /// Read a znode's data and Stat.
    GetData(String),
    /// List a znode's children.
    GetChildren(String),
}

/// The result of one read; each read succeeds or fails on its own.
///
/// ```no_run
/// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
/// use zk_session::{ReadOp, ReadResult};
///
/// let reads = [ReadOp::GetData("/app/a".into()), ReadOp::GetChildren("/app/b".into())];
/// for result in client.multi_read(reads).await? {
///     match result {
///         ReadResult::Data(Ok((data, _stat))) => println!("{} bytes", data.len()),
///         ReadResult::Children(Ok(names)) => println!("children {names:?}"),
///         ReadResult::Data(Err(code)) | ReadResult::Children(Err(code)) => {
///             println!("this read failed ({code}); the others ran all the same")
///         }
///         _ => {}
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadResult {
    /// The data and Stat, or the error code.
    Data(Result<(Bytes, Stat), ErrorCode>),
    /// The children, or the error code.
    Children(Result<Vec<String>, ErrorCode>),
}
