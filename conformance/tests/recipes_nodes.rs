//! PersistentNode and GroupMember against a real ZooKeeper 3.8 server: the node comes back
//! after a deletion, a connection loss and a session expiry (under the same name, with our
//! data re-applied), its status says when it is lost and back, and the group's view follows
//! members joining, changing and leaving.

mod recipes_support;

use std::time::Duration;

use recipes_support::{
    client, expire_and_renew, proxied, shared, soon, unique, until_some, until_state,
};
use zk_recipes::{node::NodeStatus, GroupMember, PersistentNode};
use zk_session::{Client, CreateOptions, SessionState, Version};

const WAIT: Duration = Duration::from_secs(30);

/// Waits until `admin` sees `path` with `data`, owned by `owner`.
async fn until_node(admin: &Client, path: &str, data: &[u8], owner: i64) {
    until_some(&format!("{path} with our data"), || async {
        match admin.get_data(path).await {
            Ok((d, stat)) if &d[..] == data && stat.ephemeral_owner == owner => Some(()),
            _ => None,
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_node_comes_back_after_deletion_and_expiry() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let base = format!("{}/services/api-", unique("pnode"));
    let node = PersistentNode::builder(c.clone(), &base, b"v1")
        .options(CreateOptions::ephemeral_sequential())
        .protected()
        .start();
    let path = node.wait_until_present(WAIT).await.unwrap();
    let name = path.rsplit('/').next().unwrap().to_owned();
    assert!(name.starts_with("_c_") && name.contains("-api-"), "{name}");
    until_node(
        &admin,
        &path,
        b"v1",
        c.session_id().map_or(0, zk_session::SessionId::get),
    )
    .await;
    let mut status = node.status();

    // Deleted by someone else: lost, then back under the same name.
    admin.delete(&path, Version::Any).await.unwrap();
    soon("lost", status.wait_for(|s| *s == NodeStatus::Lost))
        .await
        .unwrap();
    soon(
        "back",
        status.wait_for(|s| matches!(s, NodeStatus::Present(_))),
    )
    .await
    .unwrap();
    until_node(
        &admin,
        &path,
        b"v1",
        c.session_id().map_or(0, zk_session::SessionId::get),
    )
    .await;

    // Someone overwrites the data: ours is re-applied after the next re-creation; a new
    // value of ours is written at once.
    node.set_data(b"v2").await.unwrap();
    until_node(
        &admin,
        &path,
        b"v2",
        c.session_id().map_or(0, zk_session::SessionId::get),
    )
    .await;

    // A connection loss: the node stays (same session).
    proxy.partition(true);
    until_state(&c, SessionState::Suspended).await;
    proxy.partition(false);
    until_state(&c, SessionState::Connected).await;
    until_node(
        &admin,
        &path,
        b"v2",
        c.session_id().map_or(0, zk_session::SessionId::get),
    )
    .await;

    // Session expiry: the ephemeral goes with the session, and comes back on the new one,
    // same name, our data.
    let (_, new) = expire_and_renew(&proxy, &c).await;
    until_node(&admin, &path, b"v2", new).await;
    assert_eq!(node.path().as_deref(), Some(path.as_str()));

    node.close().await.unwrap();
    assert_eq!(admin.exists(&path).await.unwrap(), None);
}

/// A node already there (say, of a previous run) is adopted and gets our data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_node_adopts_an_existing_node() {
    let c = client(&shared()).await;
    let path = unique("pnode-adopt");
    c.create(&path, b"old", CreateOptions::persistent())
        .await
        .unwrap();
    let node = PersistentNode::builder(c.clone(), &path, b"new")
        .options(CreateOptions::persistent())
        .start();
    assert_eq!(node.wait_until_present(WAIT).await.unwrap(), path);
    until_node(&c, &path, b"new", 0).await;
    node.close().await.unwrap();
    assert_eq!(c.exists(&path).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_members_see_each_other_join_change_and_leave() {
    let group = unique("group");
    let (a, b) = (client(&shared()).await, client(&shared()).await);
    let alice = GroupMember::start(a, &group, "alice", b"10.0.0.1");
    // Before the view has seen anything, this member is in it with its payload.
    assert_eq!(&alice.members()["alice"][..], b"10.0.0.1");
    let mut bob = GroupMember::start(b, &group, "bob", b"10.0.0.2");
    alice.wait_until_registered(WAIT).await.unwrap();
    bob.wait_until_registered(WAIT).await.unwrap();
    let mut view = alice.changes();
    soon("alice sees bob", view.wait_for(|m| m.len() == 2))
        .await
        .unwrap();
    bob.set_payload(b"10.0.0.2;draining").await.unwrap();
    soon(
        "alice sees bob's payload",
        view.wait_for(|m| m.get("bob").is_some_and(|p| &p[..] == b"10.0.0.2;draining")),
    )
    .await
    .unwrap();
    bob.close().await.unwrap();
    soon(
        "alice sees bob leave",
        view.wait_for(|m| !m.contains_key("bob")),
    )
    .await
    .unwrap();
    assert_eq!(alice.members().len(), 1);
    alice.close().await.unwrap();
}
