//! A queue transaction whose outcome survives a lost reply. A put or a plain take is a
//! multi that also creates an EPHEMERAL marker `{dir}/_m_<uuid>` (a name no consumer takes,
//! Curator's included: they take only `queue-`/`qn-` names). When the reply is lost, the
//! marker says whether the transaction was applied, so a put is never doubled and a take
//! never loses or doubles its item — where Curator can do either.

use zk_session::{Client, CreateOptions, Error, ErrorCode, Op, OpResult, Version};

use crate::plumbing::{
    liveness::raw_session_id,
    protected::{child_path, new_protected_id},
    retry::{may_retry, Pauses},
};

/// Runs `ops` atomically with a marker under `dir`; the results of `ops` when the reply
/// came, `None` when it was lost but the marker shows the transaction was applied.
pub(crate) async fn apply(
    client: &Client,
    dir: &str,
    mut ops: Vec<Op>,
) -> Result<Option<Vec<OpResult>>, Error> {
    let marker = child_path(dir, &format!("_m_{}", new_protected_id()));
    ops.push(Op::create(marker.clone(), b"", CreateOptions::ephemeral()));
    let mut pauses = Pauses::default();
    loop {
        let session = raw_session_id(client);
        match client.multi(ops.clone()).await {
            Ok(mut results) => {
                results.pop();
                remove_marker(client, &marker).await;
                return Ok(Some(results));
            }
            Err(e) if e.is_retryable() && may_retry(client) => {
                pauses.pause().await;
                match applied(client, &marker, session).await? {
                    Some(true) => {
                        remove_marker(client, &marker).await;
                        return Ok(None);
                    }
                    Some(false) => continue,
                    // The session changed: its marker went with it, the outcome is unknown.
                    None => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Whether the marker of a transaction sent in `session` exists: `None` when that session
/// is over (an ephemeral marker would be gone either way).
async fn applied(client: &Client, marker: &str, session: i64) -> Result<Option<bool>, Error> {
    let mut pauses = Pauses::default();
    loop {
        if raw_session_id(client) != session {
            return Ok(None);
        }
        match client.exists(marker).await {
            Ok(stat) => {
                if raw_session_id(client) != session {
                    return Ok(None);
                }
                return Ok(Some(stat.is_some()));
            }
            Err(e) if e.is_retryable() && may_retry(client) => pauses.pause().await,
            Err(e) => return Err(e),
        }
    }
}

/// Deletes the marker; it is ephemeral, so a failure only leaves it until the session ends.
async fn remove_marker(client: &Client, marker: &str) {
    let mut pauses = Pauses::default();
    for _ in 0..5 {
        match client.delete(marker, Version::Any).await {
            Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => return,
            Err(e) if e.is_retryable() && may_retry(client) => pauses.pause().await,
            Err(_) => return,
        }
    }
}
