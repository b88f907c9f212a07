//! The task behind a [`PersistentNode`](super::PersistentNode): it creates the node (or
//! adopts it), watches it, and creates it again when it goes.

use std::{
    sync::{atomic::Ordering, Arc},
    time::Duration,
};

use tokio::sync::{oneshot, watch};
use zk_session::{Client, CreateMode, CreateOptions, Error, ErrorCode, EventType, Stat, Version};

use super::{NodeStatus, Shared};
use crate::{
    counter::parent_of,
    plumbing::liveness::{client_ended, raw_session_id, why_ended, Turn},
    plumbing::protected::{create_parents, ProtectedCreate},
    plumbing::retry::{retrying, Pauses},
    plumbing::watches::exists_watch,
    RecipeError, Result,
};

/// The background task.
pub(super) struct Keeper {
    pub(super) client: Client,
    pub(super) base: String,
    pub(super) options: CreateOptions,
    pub(super) protected: bool,
    pub(super) shared: Arc<Shared>,
    pub(super) status: Arc<watch::Sender<NodeStatus>>,
}

/// Why the keeper stopped watching the node.
enum Gone {
    /// Deleted, or its session expired: lost.
    Lost,
    /// A reconnect or a watch failure: create again to find out.
    Check,
}

impl Keeper {
    /// Keeps the node present until the client ends; `first` hears how the first create
    /// went (the server's refusal ends the task: nothing to keep).
    pub(super) async fn run(self, first: oneshot::Sender<Result<()>>) {
        let mut first = Some(first);
        let mut pauses = Pauses::default();
        // Whether the loss that the next creation repairs was already counted.
        let mut counted = false;
        while !client_ended(&self.client) {
            let had_node = self.shared.placed().is_some();
            match self.ensure().await {
                Ok((path, stat, created)) => {
                    pauses.reset();
                    // Created again without having seen it go (deleted, or its session
                    // expired, while we were disconnected): a loss all the same.
                    if had_node && created && !counted {
                        self.lost();
                    }
                    counted = false;
                    self.shared.place(&path, stat.ephemeral_owner);
                    // A node adopted back unchanged after a reconnect is no news.
                    let present = NodeStatus::Present(path.clone());
                    self.status.send_if_modified(|s| {
                        let changed = *s != present;
                        *s = present;
                        changed
                    });
                    if let Some(first) = first.take() {
                        let _ = first.send(Ok(()));
                    }
                    // Events from before this creation are stale (an expiry already
                    // repaired); the exists call in watch sees anything missed since.
                    let mut events = self.client.session_events();
                    let ephemeral = stat.ephemeral_owner != 0;
                    if let Gone::Lost = self.watch(&path, ephemeral, &mut events).await {
                        self.lost();
                        counted = true;
                    }
                }
                Err(RecipeError::Session(e))
                    if first.is_some()
                        && !(e.is_retryable() || e.code() == Some(ErrorCode::SessionExpired)) =>
                {
                    if let Some(first) = first.take() {
                        let _ = first.send(Err(e.into()));
                    }
                    return;
                }
                Err(_) => pauses.pause().await,
            }
        }
        let why = why_ended(&self.client);
        self.status.send_replace(NodeStatus::Ended(why));
    }

    /// Counted before it is told, so a receiver woken by it sees the count.
    fn lost(&self) {
        self.shared.losses.fetch_add(1, Ordering::AcqRel);
        self.status.send_replace(NodeStatus::Lost);
    }

    /// Creates the node (`true`), or adopts it and writes our data onto it (`false`).
    async fn ensure(&self) -> Result<(String, Stat, bool)> {
        let data = self.shared.data();
        let Some((path, _)) = self.shared.placed() else {
            let (path, stat) = self.first_create(&data).await?;
            return Ok((path, stat, true));
        };
        let options = twin(&self.options);
        loop {
            match self
                .client
                .create_with_stat(&path, &data, options.clone())
                .await
            {
                Ok((path, stat)) => return Ok((path, stat, true)),
                // Ours already (a reconnect within the session): written again only when its
                // data differs, so that watchers see no change that is not one.
                Err(Error::Code(ErrorCode::NodeExists)) => {
                    match self.client.get_data(&path).await {
                        Ok((current, stat)) if current[..] == data[..] => {
                            return Ok((path, stat, false))
                        }
                        Ok((_, stat)) => {
                            let version = Version::Exact(stat.version);
                            match self.client.set_data(&path, &data, version).await {
                                Ok(stat) => return Ok((path, stat, false)),
                                Err(Error::Code(ErrorCode::NoNode | ErrorCode::BadVersion)) => {
                                    continue
                                }
                                Err(e) => return Err(e.into()),
                            }
                        }
                        Err(Error::Code(ErrorCode::NoNode)) => continue,
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(Error::Code(ErrorCode::NoNode)) => {
                    create_parents(&self.client, parent_of(&path)).await?
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    async fn first_create(&self, data: &[u8]) -> Result<(String, Stat)> {
        if self.protected {
            let (parent, name) = self.base.rsplit_once('/').unwrap_or(("", &self.base));
            let parent = if parent.is_empty() { "/" } else { parent };
            let node = ProtectedCreate::new(parent, name)
                .data(data)
                .options(self.options.clone())
                .create(&self.client)
                .await?;
            return Ok((node.path, node.stat));
        }
        loop {
            // A plain ephemeral node has a known path, so a dropped start can find it. (A
            // sequential one cannot be found: protected mode is for that.)
            if self.options.mode() == CreateMode::Ephemeral {
                let sent = (self.base.clone(), raw_session_id(&self.client));
                *self
                    .shared
                    .sending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()) = Some(sent);
            }
            match self
                .client
                .create_with_stat(&self.base, data, self.options.clone())
                .await
            {
                Err(Error::Code(ErrorCode::NodeExists)) if !self.options.mode().is_sequential() => {
                    let stat = self.client.set_data(&self.base, data, Version::Any).await?;
                    return Ok((self.base.clone(), stat));
                }
                Err(Error::Code(ErrorCode::NoNode)) => {
                    create_parents(&self.client, parent_of(&self.base)).await?
                }
                other => return Ok(other?),
            }
        }
    }

    /// Watches the node until it goes or the connection comes back after a break.
    async fn watch(
        &self,
        path: &str,
        ephemeral: bool,
        events: &mut zk_session::SessionEvents,
    ) -> Gone {
        loop {
            let w = match exists_watch(&self.client, path).await {
                Ok((Some(_), w)) => w,
                Ok((None, _)) => return Gone::Lost,
                Err(_) => return Gone::Check,
            };
            tokio::select! {
                ev = w => match ev {
                    Ok(ev) if ev.event_type() == EventType::NodeDeleted => return Gone::Lost,
                    Ok(_) => {}
                    Err(_) => return Gone::Check,
                },
                ev = events.next() => match ev.map(Turn::of) {
                    // A persistent or TTL node outlives the session.
                    Some(Some(Turn::Expired)) if ephemeral => return Gone::Lost,
                    Some(Some(Turn::Expired)) => return Gone::Check,
                    Some(Some(t)) if t.writable_again() => return Gone::Check,
                    Some(_) => {}
                    None => return Gone::Check,
                },
            }
        }
    }
}

/// Deletes `path` if it is an ephemeral node of session `owner` (0: none): what a create
/// dropped before its answer may have made. Retried across reconnects; a session that is
/// over took the node with it.
pub(super) async fn remove_if_owned(client: Client, path: String, owner: i64) {
    if owner == 0 {
        return;
    }
    let _ = retrying(&client, || async {
        match client.exists(&path).await? {
            Some(stat) if stat.ephemeral_owner == owner => {
                match client.delete(&path, Version::Exact(stat.version)).await {
                    Ok(()) | Err(Error::Code(ErrorCode::NoNode | ErrorCode::BadVersion)) => Ok(()),
                    Err(e) => Err(e),
                }
            }
            _ => Ok(()),
        }
    })
    .await;
}

/// The mode a node is re-created in once its name is fixed: the non-sequential twin.
fn twin(options: &CreateOptions) -> CreateOptions {
    let acl = options.acl().to_vec();
    let twin = match options.mode() {
        CreateMode::EphemeralSequential => CreateOptions::ephemeral(),
        CreateMode::PersistentSequential => CreateOptions::persistent(),
        CreateMode::PersistentSequentialWithTtl => {
            CreateOptions::ttl(options.ttl_duration().unwrap_or(Duration::from_secs(60)))
        }
        _ => return options.clone(),
    };
    twin.with_acl(acl)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_modes_come_back_as_their_twins() {
        assert_eq!(
            twin(&CreateOptions::ephemeral_sequential()).mode(),
            CreateMode::Ephemeral
        );
        assert_eq!(
            twin(&CreateOptions::persistent_sequential()).mode(),
            CreateMode::Persistent
        );
        let ttl = twin(&CreateOptions::ttl_sequential(Duration::from_secs(5)));
        assert_eq!(ttl.mode(), CreateMode::PersistentWithTtl);
        assert_eq!(ttl.ttl_duration(), Some(Duration::from_secs(5)));
        assert_eq!(
            twin(&CreateOptions::ephemeral()),
            CreateOptions::ephemeral()
        );
    }
}
