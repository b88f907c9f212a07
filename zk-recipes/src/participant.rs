//! What the latch and the selector share: the participants of an election, read from its
//! znodes the way Curator reads them.

use zk_session::{Client, Error, ErrorCode, Version};

use crate::{contender::ContenderNames, plumbing::protected::child_path, Result};

/// One participant of an election, as seen in the election's znodes.
///
/// ```no_run
/// # async fn f(latch: zk_recipes::LeaderLatch) -> zk_recipes::Result<()> {
/// for p in latch.participants().await? {
///     println!("{} {}", p.id, if p.is_leader { "(leader)" } else { "" });
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Participant {
    /// The participant id: the data of its node, as Curator stores it.
    pub id: String,
    /// The full path of its node.
    pub path: String,
    /// Whether it is first in line, i.e. the leader.
    pub is_leader: bool,
    /// The session that owns its node.
    pub session_id: i64,
}

/// The participants under `dir`, in line order; the first is the leader. Contenders are
/// recognised and ordered as [`ContenderNames`](crate::ContenderNames) describes, so other children
/// are left out. Nodes that vanish while being read are left out too, and the leader mark
/// goes to the first one read, as Curator's `getParticipants` does.
pub(crate) async fn list_participants(client: &Client, dir: &str) -> Result<Vec<Participant>> {
    let children = match client.get_children(dir).await {
        Ok(c) => c,
        Err(Error::Code(ErrorCode::NoNode)) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut out: Vec<Participant> = Vec::new();
    for c in ContenderNames::new().sorted(&children) {
        let path = child_path(dir, c.name());
        let (data, stat) = match client.get_data(&path).await {
            Ok(r) => r,
            Err(Error::Code(ErrorCode::NoNode)) => continue,
            Err(e) => return Err(e.into()),
        };
        out.push(Participant {
            id: String::from_utf8_lossy(&data).into_owned(),
            path,
            is_leader: out.is_empty(),
            session_id: stat.ephemeral_owner,
        });
    }
    Ok(out)
}

/// Deletes `path`; gone already is success.
pub(crate) async fn delete_quietly(client: &Client, path: &str) -> Result<()> {
    match client.delete(path, Version::Any).await {
        Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// A participant id for when the caller gives none: host name, process id and a counter, so
/// that `participants()` says where each one runs and no two in a process look alike.
pub(crate) fn default_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned());
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{host}:{}:{n}", std::process::id())
}
