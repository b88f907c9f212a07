//! The deletion of our own nodes, owned by something that outlives the caller.
//!
//! A node of ours must go when the operation that made it gives up: an acquire that times
//! out, is dropped or fails, a release whose future is dropped half-way. The future that
//! wants the deletion cannot be trusted to finish it (any future may be dropped at any await
//! point), so the deletion is handed, synchronously, to a background task that retries across
//! reconnects until the node is gone or the session is over (then the server deletes our
//! ephemeral nodes itself). The caller may wait for that task's first answer, a little, to
//! report it; dropping the wait changes nothing.
//!
//! What is to be deleted is tracked in a [`Claim`] from the moment a create is sent until the
//! node is handed over to its holder: by protected id while the create is unanswered, by path
//! once it has answered, and by the session that owns it. The client carries on after an
//! expiry with a new session; an ephemeral node of the old session is gone with it, so the
//! task stops trying as soon as its session is over, sends nothing for it on the new session,
//! and never deletes a node another session owns (a node of the new session is not ours to
//! delete on the old one's behalf).

use std::{
    sync::{Arc, Mutex as StdMutex},
    time::Duration,
};

use tokio::{
    runtime::Handle,
    sync::{oneshot, watch},
};
use zk_session::{Client, Error, ErrorCode, Version};

use crate::plumbing::{
    liveness::{session_gone, Liveness},
    protected::remove_protected_of,
    retry::Pauses,
};

/// The nodes an operation in progress may have made and not handed over: the protected id
/// of a create sent (any child of the parent carrying it may be ours), and the path of the
/// node once the create has answered. Shared between a protected create and the caller that
/// takes over its cleanup.
#[derive(Debug, Clone, Default)]
pub(crate) struct Claim {
    target: Arc<StdMutex<Target>>,
    /// Counts the creates answered with a node, for a recipe that waits to be in line.
    joined: Option<Arc<watch::Sender<u64>>>,
}

/// What a [`Claim`] covers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Target {
    /// The protected id of a create whose outcome may be unknown.
    pub(crate) id: Option<String>,
    /// The node made, once known.
    pub(crate) path: Option<String>,
    /// The session owning the (ephemeral) node, when known: the node is gone with it.
    pub(crate) session: Option<i64>,
}

impl Target {
    /// A node known by path, owned by the session in its Stat (none for a persistent node).
    pub(crate) fn node(node: &crate::ProtectedNode) -> Target {
        Target {
            id: None,
            path: Some(node.path.clone()),
            session: Some(node.stat.ephemeral_owner).filter(|s| *s != 0),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.id.is_none() && self.path.is_none()
    }

    /// Nothing left to do: the session owning the node is over, and the node with it.
    fn gone_with_session(&self, client: &Client) -> bool {
        match self.session {
            Some(owner) => session_gone(client, owner),
            None => Liveness::now(client).ended().is_some(),
        }
    }
}

impl Claim {
    /// A claim that counts in `joined` each node a create makes (or adopts).
    pub(crate) fn counting(joined: Arc<watch::Sender<u64>>) -> Claim {
        Claim {
            target: Arc::default(),
            joined: Some(joined),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Target> {
        self.target.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A create with protected id `id` is about to be sent, on `session` when it makes an
    /// ephemeral node and the session is known (it replaces what was claimed: the caller has
    /// made sure that is gone).
    pub(crate) fn sending(&self, id: &str, session: Option<i64>) {
        *self.lock() = Target {
            id: Some(id.to_owned()),
            path: None,
            session: session.filter(|s| *s != 0),
        };
    }

    /// The create answered with `path`, an ephemeral node of session `owner` (0 for a
    /// persistent node).
    pub(crate) fn created(&self, path: &str, owner: i64) {
        {
            let mut t = self.lock();
            t.path = Some(path.to_owned());
            t.session = (owner != 0).then_some(owner);
        }
        if let Some(joined) = &self.joined {
            joined.send_modify(|n| *n += 1);
        }
    }

    /// Takes what is claimed, leaving nothing: the caller hands it over (to a holder, or to
    /// [`spawn_removal`]).
    pub(crate) fn take(&self) -> Target {
        std::mem::take(&mut *self.lock())
    }
}

/// The first answer of a background removal: `Ok` when the node is gone (or the session is
/// over), the error when the deletion was refused for good. A retryable failure is not
/// reported: the task goes on retrying and the waiter is told `Ok` (handed over).
#[derive(Debug)]
pub(crate) struct Removal(Option<oneshot::Receiver<Result<(), Error>>>);

impl Removal {
    /// Waits at most `grace` for the first answer; `Ok` when it takes longer (the task goes
    /// on). Cancel-safe: the task owns the deletion.
    pub(crate) async fn wait(self, grace: Duration) -> Result<(), Error> {
        let Some(rx) = self.0 else {
            return Ok(());
        };
        match tokio::time::timeout(grace, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) | Err(_) => Ok(()),
        }
    }
}

/// Deletes `target` in a background task on `handle` (or the current runtime), retrying
/// until it is gone or its session is over (the client may go on with a new session: then
/// the task ends without a request). The task holds a client handle, so the session stays
/// open until then.
pub(crate) fn spawn_removal(
    handle: Option<&Handle>,
    client: Client,
    parent: String,
    target: Target,
) -> Removal {
    if target.is_empty() {
        return Removal(None);
    }
    let (tx, rx) = oneshot::channel();
    let task = async move {
        let mut tx = Some(tx);
        let mut pauses = Pauses::default();
        loop {
            // Over: the server deletes (or has deleted) the session's ephemerals.
            if target.gone_with_session(&client) {
                break;
            }
            match remove_once(&client, &parent, &target).await {
                Err(e) if e.is_retryable() => {
                    // Handed over: the waiter need not wait for the reconnect.
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(Ok(()));
                    }
                    pauses.pause().await;
                }
                // The session ended meanwhile: the server deleted the node with it.
                Err(Error::Code(ErrorCode::SessionExpired)) if target.session.is_some() => break,
                Err(Error::Code(ErrorCode::SessionExpired)) => pauses.pause().await,
                Err(Error::Closed) => break,
                other => {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(other);
                    }
                    return;
                }
            }
        }
        if let Some(tx) = tx.take() {
            let _ = tx.send(Ok(()));
        }
    };
    match handle.cloned().or_else(|| Handle::try_current().ok()) {
        Some(h) => {
            h.spawn(task);
            Removal(Some(rx))
        }
        // No runtime left to run it: the process is ending, and the session with it.
        None => Removal(None),
    }
}

/// One try: the node by path when known (then the create has answered, and that is the
/// only node of this id), else every child carrying the id.
async fn remove_once(client: &Client, parent: &str, target: &Target) -> Result<(), Error> {
    if let Some(path) = &target.path {
        return match client.delete(path, Version::Any).await {
            Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => Ok(()),
            Err(e) => Err(e),
        };
    }
    if let Some(id) = &target.id {
        remove_protected_of(client, parent, id, target.session).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_follows_a_create_and_is_taken_once() {
        let claim = Claim::default();
        assert!(claim.take().is_empty());
        claim.sending("id-1", Some(0));
        claim.created("/l/_c_id-1-lock-0000000001", 7);
        let shared = claim.clone();
        assert_eq!(
            shared.take(),
            Target {
                id: Some("id-1".into()),
                path: Some("/l/_c_id-1-lock-0000000001".into()),
                session: Some(7),
            }
        );
        assert!(claim.take().is_empty());
        claim.sending("id-2", Some(9));
        assert_eq!(claim.take().session, Some(9));
        claim.sending("id-3", None);
        assert_eq!(claim.take().path, None);
    }

    #[tokio::test]
    async fn nothing_to_remove_answers_at_once() {
        let client = Client::builder("127.0.0.1:1").build().unwrap();
        let r = spawn_removal(None, client, "/l".into(), Target::default());
        assert!(r.wait(Duration::from_secs(3600)).await.is_ok());
    }
}
