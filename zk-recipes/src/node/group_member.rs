//! [`GroupMember`]: Curator's GroupMember. This member is a [`PersistentNode`] (ephemeral,
//! not protected) at `<group>/<id>` holding its payload; the membership is the view of a
//! [`Cache`] of the group's children and their data, so it is read again in full after
//! every reconnect or new session, as the cache is.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use bytes::Bytes;
use tokio::{sync::watch, task::AbortHandle};
use zk_session::{Client, ErrorCode};

use super::PersistentNode;
use crate::{
    cache::{Cache, CacheEvents, CacheMode},
    plumbing::liveness::client_ended,
    plumbing::protected::child_path,
    plumbing::retry::retry_while,
    RecipeError, Result, ValueWatch,
};

/// The members of a group: each member's id (its node's name) and payload (its data).
pub type Members = BTreeMap<String, Bytes>;

/// A member of a group; see the [module documentation](crate::node).
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use std::time::Duration;
/// use zk_recipes::GroupMember;
///
/// let me = GroupMember::start(client, "/groups/indexers", "host-7", b"10.0.0.7");
/// me.wait_until_registered(Duration::from_secs(10)).await?;
/// for (id, payload) in me.members() {
///     println!("{id}: {}", String::from_utf8_lossy(&payload));
/// }
/// let mut changes = me.changes();
/// while let Ok(members) = changes.changed().await {
///     println!("{} members", members.len());
/// }
/// me.close().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct GroupMember {
    node: PersistentNode,
    id: String,
    payload: Bytes,
    view: Arc<watch::Sender<Members>>,
    follower: AbortOnDrop,
}

impl GroupMember {
    /// Joins the group at `group` as `id` with `payload`, and starts following the
    /// membership (inside a tokio runtime).
    ///
    /// See the example on [`GroupMember`].
    pub fn start(
        client: Client,
        group: impl Into<String>,
        id: impl Into<String>,
        payload: &[u8],
    ) -> GroupMember {
        let (group, id) = (group.into(), id.into());
        let node = PersistentNode::new(client.clone(), child_path(&group, &id), payload);
        let view = Arc::new(watch::channel(Members::new()).0);
        let follower = tokio::spawn(follow(client, group, view.clone()));
        GroupMember {
            node,
            id,
            payload: Bytes::copy_from_slice(payload),
            view,
            follower: AbortOnDrop(follower.abort_handle()),
        }
    }

    /// This member's id.
    ///
    /// See the example on [`GroupMember`].
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Waits until this member's node is there. Cancel-safe.
    ///
    /// See the example on [`GroupMember`].
    pub async fn wait_until_registered(&self, wait: Duration) -> Result<()> {
        self.node.wait_until_present(wait).await.map(drop)
    }

    /// The members as last seen, this one always included (with its own payload until the
    /// view has seen its node), as Curator's `getCurrentMembers`.
    ///
    /// See the example on [`GroupMember`].
    pub fn members(&self) -> Members {
        let mut m = self.view.borrow().clone();
        m.entry(self.id.clone())
            .or_insert_with(|| self.payload.clone());
        m
    }

    /// The membership view as it changes: the cache's view of the group, published once
    /// the cache has loaded it and after each change the cache sees.
    ///
    /// See the example on [`GroupMember`].
    pub fn changes(&self) -> ValueWatch<Members> {
        ValueWatch::new(self.view.subscribe())
    }

    /// Changes this member's payload.
    ///
    /// ```no_run
    /// # async fn f(mut me: zk_recipes::GroupMember) -> zk_recipes::Result<()> {
    /// me.set_payload(b"10.0.0.7;draining").await?;
    /// # Ok(()) }
    /// ```
    pub async fn set_payload(&mut self, payload: &[u8]) -> Result<()> {
        self.payload = Bytes::copy_from_slice(payload);
        self.node.set_data(payload).await
    }

    /// Leaves the group: deletes this member's node and stops following the group.
    ///
    /// See the example on [`GroupMember`].
    pub async fn close(self) -> Result<()> {
        drop(self.follower);
        self.node.close().await
    }
}

/// Stops the follower (and its cache, whose watch goes with it), however the member ends.
#[derive(Debug)]
struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts a cache of the group's children with their data, retrying while the connection
/// is down, and mirrors it into `view` until the cache stops (its client ended).
async fn follow(client: Client, group: String, view: Arc<watch::Sender<Members>>) {
    let started = retry_while(
        || async {
            let mut builder = Cache::builder(client.clone(), &group).mode(CacheMode::Children);
            // Subscribed before the start: the initial load's events are not missed.
            let events = builder.subscribe();
            Ok::<_, RecipeError>((builder.start().await?, events))
        },
        |e| {
            matches!(e, RecipeError::Session(e)
                if (e.is_retryable() || e.code() == Some(ErrorCode::SessionExpired))
                    && !client_ended(&client))
        },
    )
    .await;
    // A group path the server refuses: nothing to follow; the view keeps this member.
    if let Ok((cache, mut events)) = started {
        mirror(&cache, &mut events, &view).await
    }
}

/// Copies the cache's view into `view` once the cache is initialized and after each burst
/// of its events (one copy for all the events queued together), until the cache stops.
async fn mirror(cache: &Cache, events: &mut CacheEvents, view: &watch::Sender<Members>) {
    while events.next().await.is_some() {
        while let Some(Some(_)) = events.try_next() {}
        if cache.is_initialized() {
            let members = members_of(cache);
            view.send_if_modified(|m| {
                let changed = *m != members;
                *m = members;
                changed
            });
        }
    }
}

/// The cached children of the cache's root and their data.
fn members_of(cache: &Cache) -> Members {
    let group = cache.root();
    let names = cache.children(group).unwrap_or_default();
    names
        .into_iter()
        .filter_map(|name| {
            let node = cache.get(&child_path(group, &name))?;
            let payload = node.data_bytes().cloned().unwrap_or_default();
            Some((name, payload))
        })
        .collect()
}
