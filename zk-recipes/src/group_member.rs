//! [`GroupMember`]: Curator's GroupMember. This member is a
//! [`PersistentNode`](crate::PersistentNode) (ephemeral, not protected) at `<group>/<id>`
//! holding its payload; the membership is the view of a
//! [`Cache`] of the group's children and their data, so it is read again in full after
//! every reconnect or new session, as the cache is.

use std::{collections::BTreeMap, sync::Arc};

use bytes::Bytes;
use tokio::{sync::watch, task::AbortHandle};
use zk_session::{Client, ErrorCode};

use crate::{
    cache::{Cache, CacheEvents, CacheMode},
    participant::default_id,
    plumbing::liveness::client_ended,
    plumbing::protected::child_path,
    plumbing::retry::retry_while,
    plumbing::runtime,
    NodeStatus, PersistentNode, RecipeError, Result, ValueWatch,
};

/// The members of a group: each member's id (its node's name) and payload (its data).
pub type Members = BTreeMap<String, Bytes>;

/// Builds a [`GroupMember`]; see [`GroupMember::builder`].
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::GroupMember;
///
/// let me = GroupMember::builder(client, "/groups/indexers")
///     .id("host-7")
///     .payload(b"10.0.0.7")
///     .start()
///     .await?;
/// println!("{} members", me.members().len());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct GroupMemberBuilder {
    client: Client,
    group: String,
    id: Option<String>,
    payload: Bytes,
}

impl GroupMemberBuilder {
    /// This member's id, its node's name under the group (default `host:pid:n`).
    ///
    /// See the example on [`GroupMemberBuilder`].
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// This member's payload, its node's data (default: none).
    ///
    /// See the example on [`GroupMemberBuilder`].
    pub fn payload(mut self, payload: &[u8]) -> Self {
        self.payload = Bytes::copy_from_slice(payload);
        self
    }

    /// Joins the group and returns once this member's node exists and the membership has
    /// been read; from then on the membership is followed in the background. While the
    /// client is disconnected this waits for the connection.
    ///
    /// Fails as [`PersistentNodeBuilder::start`](crate::PersistentNodeBuilder::start) does
    /// (the server's refusal, the client's end, [`RecipeError::NoRuntime`]), or with the
    /// server's refusal of the group's watch. Cancel-safe: a dropped start leaves the group.
    ///
    /// See the example on [`GroupMemberBuilder`].
    pub async fn start(self) -> Result<GroupMember> {
        let handle = runtime::current()?;
        let id = self.id.unwrap_or_else(default_id);
        let node = PersistentNode::builder(self.client.clone(), child_path(&self.group, &id))
            .data(&self.payload)
            .start()
            .await?;
        let (cache, events) = start_cache(&self.client, &self.group).await?;
        let view = Arc::new(watch::channel(members_of(&cache)).0);
        let follower = handle.spawn(mirror(cache, events, view.clone()));
        Ok(GroupMember {
            node,
            id,
            payload: self.payload,
            view,
            follower: AbortOnDrop(follower.abort_handle()),
        })
    }
}

/// A member of a group (Curator's GroupMember): a [`PersistentNode`](crate::PersistentNode)
/// (ephemeral, not protected) at `<group>/<id>` holding its payload; the membership is the
/// view of a [`Cache`](crate::Cache) of the group's children and their data, so it is read
/// again in full after every reconnect or new session, as the cache is.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::GroupMember;
///
/// let me = GroupMember::builder(client, "/groups/indexers")
///     .id("host-7")
///     .payload(b"10.0.0.7")
///     .start()
///     .await?;
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
    /// A builder for a member of the group at `group` (the parent of the members' nodes).
    ///
    /// See the example on [`GroupMemberBuilder`].
    pub fn builder(client: Client, group: impl Into<String>) -> GroupMemberBuilder {
        GroupMemberBuilder {
            client,
            group: group.into(),
            id: None,
            payload: Bytes::new(),
        }
    }

    /// This member's id.
    ///
    /// See the example on [`GroupMember`].
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Where this member's node stands, as it changes (the member is its node, a
    /// [`PersistentNode`]); its last state says why the member ended.
    ///
    /// ```no_run
    /// # async fn f(me: zk_recipes::GroupMember) -> zk_recipes::Result<()> {
    /// use zk_recipes::NodeStatus;
    /// let mut status = me.status();
    /// let now = status.wait_for(|s| matches!(s, NodeStatus::Lost) || s.has_ended()).await?;
    /// println!("{now:?}");
    /// # Ok(()) }
    /// ```
    pub fn status(&self) -> ValueWatch<NodeStatus> {
        self.node.status()
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

    /// The membership view as it changes: the cache's view of the group, published after
    /// each change the cache sees.
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

    /// Leaves the group: deletes this member's node (`Ok` once it is gone, as
    /// [`PersistentNode::close`]) and stops following the group.
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

/// Starts an (initialized) cache of the group's children with their data, retrying while
/// the connection is down; the stream of its events from the start on.
async fn start_cache(client: &Client, group: &str) -> Result<(Cache, CacheEvents)> {
    retry_while(
        || async {
            let mut builder = Cache::builder(client.clone(), group).mode(CacheMode::Children);
            // Subscribed before the start: no change after the load goes unseen.
            let events = builder.subscribe();
            Ok::<_, RecipeError>((builder.start().await?, events))
        },
        |e| {
            matches!(e, RecipeError::Session(e)
                if (e.is_retryable() || e.code() == Some(ErrorCode::SessionExpired))
                    && !client_ended(client))
        },
    )
    .await
}

/// Copies the cache's view into `view` after each burst of its events (one copy for all
/// the events queued together), until the cache stops.
async fn mirror(cache: Cache, mut events: CacheEvents, view: Arc<watch::Sender<Members>>) {
    while events.next().await.is_some() {
        while let Some(Some(_)) = events.try_next() {}
        let members = members_of(&cache);
        view.send_if_modified(|m| {
            let changed = *m != members;
            *m = members;
            changed
        });
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
