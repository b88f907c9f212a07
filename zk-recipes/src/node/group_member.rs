//! [`GroupMember`]: Curator's GroupMember. This member is a [`PersistentNode`] (ephemeral,
//! not protected) at `<group>/<id>` holding its payload; the membership is a view of the
//! group's children and their data, kept by a children watch and re-read after every
//! reconnect or new session.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use bytes::Bytes;
use tokio::{
    sync::watch,
    task::{AbortHandle, JoinSet},
};
use zk_session::{Client, Error, ErrorCode};

use super::PersistentNode;
use crate::{
    counter::reconnected,
    plumbing::protected::child_path,
    plumbing::retry::retry_delay,
    plumbing::watches::{children_watch, data_watch, exists_watch},
    Result,
};

/// The members of a group: each member's id (its node's name) and payload (its data).
pub type Members = BTreeMap<String, Bytes>;

/// A member of a group; see the [module documentation](self).
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
/// while changes.changed().await.is_ok() {
///     println!("{} members", changes.borrow().len());
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

    /// The membership view as it changes (as read from the server).
    ///
    /// See the example on [`GroupMember`].
    pub fn changes(&self) -> watch::Receiver<Members> {
        self.view.subscribe()
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

/// Stops the follower with its member, however the member ends.
#[derive(Debug)]
struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Follows the group's children and their data: a children watch on the group and a data
/// watch on each member, re-read after any of them fires and after every reconnect.
async fn follow(client: Client, group: String, view: Arc<watch::Sender<Members>>) {
    let mut events = client.session_events();
    let mut retry = 0;
    while !client.has_ended() {
        match children_watch(&client, &group).await {
            Ok((children, w)) => {
                retry = 0;
                let mut fired = JoinSet::new();
                fired.spawn(async move {
                    let _ = w.await;
                });
                let members = read_members(&client, &group, children, &mut fired).await;
                view.send_if_modified(|m| {
                    let changed = *m != members;
                    *m = members;
                    changed
                });
                tokio::select! {
                    _ = fired.join_next() => {}
                    _ = reconnected(&mut events) => {}
                }
                // Dropping the set drops the other watches (removed from the server).
            }
            Err(Error::Code(ErrorCode::NoNode)) => {
                view.send_if_modified(|m| std::mem::take(m) != Members::new());
                if let Ok((None, w)) = exists_watch(&client, &group).await {
                    tokio::select! {
                        _ = w => {}
                        _ = reconnected(&mut events) => {}
                    }
                }
            }
            Err(_) => {
                tokio::time::sleep(retry_delay(retry)).await;
                retry += 1;
            }
        }
    }
}

/// Each child's data, with a data watch on it added to `fired`; a child gone meanwhile is
/// left out.
async fn read_members(
    client: &Client,
    group: &str,
    children: Vec<String>,
    fired: &mut JoinSet<()>,
) -> Members {
    let mut members = Members::new();
    for name in children {
        if let Ok((data, _, w)) = data_watch(client, &child_path(group, &name)).await {
            fired.spawn(async move {
                let _ = w.await;
            });
            members.insert(name, data);
        }
    }
    members
}
