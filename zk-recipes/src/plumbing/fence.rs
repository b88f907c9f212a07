//! A multi behind a check of the node that fences it: the shared step of
//! [`InterProcessMutexGuard::fenced_multi`](crate::mutex_guard::InterProcessMutexGuard::fenced_multi) and
//! [`Leadership::fenced_multi`](crate::leader_selector::Leadership::fenced_multi).

use zk_session::{Client, Error, ErrorCode, Op, OpResult, Version};

/// How a fenced multi failed.
pub(crate) enum Refused {
    /// The fencing node's check failed (with this code): the fence is down.
    Fence(ErrorCode),
    /// One of the caller's ops failed, with the index and results as the caller numbers
    /// them, or the request itself failed.
    Op(Error),
}

/// Sends `ops` in one multi after a check that `node` exists, and answers as if the check
/// were not there: its result is left out and a failed op's index counts from the caller's
/// first op.
pub(crate) async fn checked_multi(
    client: &Client,
    node: &str,
    ops: impl IntoIterator<Item = Op>,
) -> Result<Vec<OpResult>, Refused> {
    let check = Op::check(node, Version::Any);
    match client.multi(std::iter::once(check).chain(ops)).await {
        Ok(mut results) => {
            if !results.is_empty() {
                results.remove(0);
            }
            Ok(results)
        }
        Err(Error::Multi { index: 0, code, .. }) => Err(Refused::Fence(code)),
        Err(Error::Multi {
            index,
            code,
            results,
        }) => Err(Refused::Op(Error::Multi {
            index: index - 1,
            code,
            results: results.get(1..).unwrap_or_default().to_vec(),
        })),
        Err(e) => Err(Refused::Op(e)),
    }
}
