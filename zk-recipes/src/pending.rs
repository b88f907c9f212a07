//! The node of an acquire in progress, until the acquire succeeds: deleted when it fails or
//! times out (before it returns, when the client is connected), and by a background task when
//! the acquire future is dropped. This is what makes a cancelled acquire leave nothing behind
//! (CURATOR-62, kazoo #732).

use std::time::Duration;

use bytes::Bytes;
use tokio::{runtime::Handle, time::timeout};
use zk_session::{Client, Error, ErrorCode, OneshotWatch, Stat, Version};

use crate::protected::{remove_protected, spawn_removal, InFlight};

/// How long a failed or timed-out acquire waits for the delete of its node before leaving it
/// to a background task.
const INLINE_DELETE: Duration = Duration::from_secs(10);

/// The node of an acquire in progress (or the id of its create, while that is unanswered):
/// deleted when the acquire fails, and in the background when the acquire is dropped.
pub(crate) struct Pending {
    client: Client,
    parent: String,
    /// Our node, once the create has answered.
    pub(crate) node: Option<String>,
    /// The protected id of the create while it has not answered.
    pub(crate) in_flight: InFlight,
    handle: Option<Handle>,
}

impl Pending {
    /// Nothing yet, for an acquire under `parent`. Call inside a tokio runtime.
    pub(crate) fn new(client: Client, parent: String) -> Self {
        Pending {
            client,
            parent,
            node: None,
            in_flight: InFlight::default(),
            handle: Handle::try_current().ok(),
        }
    }

    /// Deletes the node now when connected, else (or when that fails) in the background.
    /// Only forgets the node once it is gone or handed over, so that this can itself be
    /// dropped half-way (the unfair attempt calls it while a deadline runs) and the `Drop`
    /// still covers it.
    pub(crate) async fn remove_now(&mut self) {
        let node = self.node.clone();
        let id = self.in_flight.get();
        if node.is_none() && id.is_none() {
            return;
        }
        if self.client.state().is_connected() {
            let inline = async {
                if let Some(path) = &node {
                    match self.client.delete(path, Version::Any).await {
                        Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => {}
                        Err(e) => return Err(e),
                    }
                }
                if let Some(id) = &id {
                    remove_protected(&self.client, &self.parent, id).await?;
                }
                Ok(())
            };
            let done = match timeout(INLINE_DELETE, inline).await {
                // Gone, or nothing more can be done (the session is over, or no permission).
                Ok(Ok(())) => true,
                Ok(Err(e)) => !e.is_retryable(),
                Err(_) => false,
            };
            if done {
                self.node = None;
                self.in_flight.take();
                return;
            }
        }
        self.node = None;
        self.in_flight.take();
        spawn_removal(
            self.handle.as_ref(),
            self.client.clone(),
            self.parent.clone(),
            id,
            node,
        );
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let node = self.node.take();
        let id = self.in_flight.take();
        if node.is_some() || id.is_some() {
            spawn_removal(
                self.handle.as_ref(),
                self.client.clone(),
                std::mem::take(&mut self.parent),
                id,
                node,
            );
        }
    }
}

/// `get_data_watch` in a task of its own, so that dropping the caller cannot cut the request
/// off between its sending and its reply. zk-session removes a dropped watch from the server
/// only once the request that set it has been answered; a watch dropped before that would
/// stay on the server until the node changes. Here the task always sees the reply, and drops
/// the watch after it if nobody wants it any more.
pub(crate) async fn data_watch(
    client: &Client,
    path: &str,
) -> Result<(Bytes, Stat, OneshotWatch), Error> {
    let (client, path) = (client.clone(), path.to_owned());
    tokio::spawn(async move { client.get_data_watch(&path).await })
        .await
        .unwrap_or(Err(Error::Closed))
}
