//! PersistentNode and GroupMember against a real ZooKeeper 3.8 server: the node comes back
//! after a deletion, a connection loss and a session expiry (under the same name, with our
//! data re-applied), its status says when it is lost and back, a TTL node comes back after
//! a deletion or the server's reaping, and the group's view follows members joining,
//! changing and leaving, across reconnects.

mod recipes_support;

use conformance::ephemeral_owner;
use std::time::Duration;

use conformance::Standalone;
use recipes_support::{
    children, client, cut_and_reconnect, eventually, expire_and_renew, proxied, shared, soon,
    unique, until_some, until_state,
};
use zk_recipes::{GroupMember, NodeStatus, PersistentNode, RecipeError};
use zk_session::{Client, CreateOptions, OpCode, SessionState, Version};

/// A started member of `group`.
async fn member(c: Client, group: &str, id: &str, payload: &[u8]) -> GroupMember {
    GroupMember::builder(c, group)
        .id(id)
        .payload(payload)
        .start()
        .await
        .unwrap()
}

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
    let node = PersistentNode::builder(c.clone(), &base)
        .data(b"v1")
        .options(CreateOptions::ephemeral_sequential())
        .protected()
        .start()
        .await
        .unwrap();
    let path = node.path().unwrap();
    let name = path.rsplit('/').next().unwrap().to_owned();
    assert!(name.starts_with("_c_") && name.contains("-api-"), "{name}");
    until_node(&admin, &path, b"v1", ephemeral_owner(&c)).await;
    let mut status = node.status();

    // Deleted by someone else: lost, then back under the same name.
    // The node is usually back before this task looks at the status: the count says it
    // was lost, and a receiver was woken.
    assert_eq!(node.times_lost(), 0);
    admin.delete(&path, Version::Any).await.unwrap();
    soon("told", status.changed()).await.unwrap();
    until_some("counted as lost", || async {
        (node.times_lost() == 1).then_some(())
    })
    .await;
    soon(
        "back",
        status.wait_for(|s| matches!(s, NodeStatus::Present(_))),
    )
    .await
    .unwrap();
    until_node(&admin, &path, b"v1", ephemeral_owner(&c)).await;

    // Someone overwrites the data: ours is re-applied after the next re-creation; a new
    // value of ours is written at once.
    node.set_data(b"v2").await.unwrap();
    until_node(&admin, &path, b"v2", ephemeral_owner(&c)).await;

    // A connection loss: the node stays (same session).
    proxy.partition(true);
    until_state(&c, SessionState::Suspended).await;
    proxy.partition(false);
    until_state(&c, SessionState::Connected).await;
    until_node(&admin, &path, b"v2", ephemeral_owner(&c)).await;

    assert_eq!(node.times_lost(), 1, "a connection loss is not a loss");

    // Session expiry: the ephemeral goes with the session, and comes back on the new one,
    // same name, our data.
    let (_, new) = expire_and_renew(&proxy, &c).await;
    until_node(&admin, &path, b"v2", new).await;
    // The server may show the node before the keeper has read its create's reply.
    until_some("the expiry counted as a loss too", || async {
        (node.times_lost() == 2).then_some(())
    })
    .await;
    assert_eq!(node.path().as_deref(), Some(path.as_str()));

    node.close().await.unwrap();
    assert_eq!(admin.exists(&path).await.unwrap(), None);
    // The status says so, and its watch ends: close() consumed the recipe.
    soon(
        "closed",
        status.wait_for(|s| matches!(s, NodeStatus::Closed)),
    )
    .await
    .unwrap();
    let gone = soon("the watch ends", status.changed()).await;
    assert!(matches!(gone, Err(RecipeError::Closed)), "{gone:?}");
}

/// A node already there (say, of a previous run) is adopted and gets our data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_node_adopts_an_existing_node() {
    let c = client(&shared()).await;
    let path = unique("pnode-adopt");
    c.create(&path, b"old", CreateOptions::persistent())
        .await
        .unwrap();
    let node = PersistentNode::builder(c.clone(), &path)
        .data(b"new")
        .options(CreateOptions::persistent())
        .start()
        .await
        .unwrap();
    assert_eq!(node.path().unwrap(), path);
    until_node(&c, &path, b"new", 0).await;
    node.close().await.unwrap();
    assert_eq!(c.exists(&path).await.unwrap(), None);
}

/// A TTL node (the shared server runs with `extendedTypesEnabled`): created as one, created
/// again after another client deletes it, and removed by close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_ttl_node_comes_back_and_close_removes_it() {
    let c = client(&shared()).await;
    let admin = client(&shared()).await;
    let path = format!("{}/lease", unique("pnode-ttl"));
    let node = PersistentNode::builder(c.clone(), &path)
        .data(b"t1")
        .options(CreateOptions::ttl(Duration::from_secs(600)))
        .start()
        .await
        .unwrap();
    assert_eq!(node.path().unwrap(), path);
    let (data, first) = admin.get_data(&path).await.unwrap();
    assert_eq!(&data[..], b"t1");
    // Not an ephemeral (the server hides the TTL it keeps in this field).
    assert_eq!(first.ephemeral_owner, 0, "{first:?}");

    admin.delete(&path, Version::Any).await.unwrap();
    let again = until_some("the TTL node created again", || async {
        match admin.get_data(&path).await {
            Ok((d, stat)) if stat.czxid != first.czxid => Some((d, stat)),
            _ => None,
        }
    })
    .await;
    assert_eq!(&again.0[..], b"t1");
    assert_eq!(again.1.ephemeral_owner, 0);

    node.close().await.unwrap();
    assert_eq!(admin.exists(&path).await.unwrap(), None);
}

/// The node is a TTL node indeed: a server that reaps often deletes it once it has not
/// changed for its TTL, and the recipe creates it again, until close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_ttl_node_reaped_by_the_server_comes_back() {
    // The reaper runs every znode.container.checkIntervalMs (60 s by default).
    let zk = tokio::task::block_in_place(|| {
        Standalone::builder()
            .extended_types(true)
            .system_property("znode.container.checkIntervalMs", "100")
            .start()
            .unwrap()
    });
    let c = client(&zk.connect_string()).await;
    let node = PersistentNode::builder(c.clone(), "/lease")
        .data(b"t1")
        .options(CreateOptions::ttl(Duration::from_millis(500)))
        .start()
        .await
        .unwrap();
    let first = until_some("the first TTL node", || async {
        c.exists("/lease").await.ok().flatten()
    })
    .await;
    until_some("a TTL node reaped and created again", || async {
        let stat = c.exists("/lease").await.ok().flatten()?;
        (stat.czxid != first.czxid).then_some(())
    })
    .await;
    node.close().await.unwrap();
    assert_eq!(c.exists("/lease").await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_members_see_each_other_join_change_and_leave() {
    let group = unique("group");
    let (a, b) = (client(&shared()).await, client(&shared()).await);
    let alice = member(a, &group, "alice", b"10.0.0.1").await;
    // Before the view has seen anything, this member is in it with its payload.
    assert_eq!(&alice.members()["alice"][..], b"10.0.0.1");
    let mut bob = member(b, &group, "bob", b"10.0.0.2").await;
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

/// Waits until `member`'s view is `want` (ids and payloads).
async fn until_members(member: &GroupMember, want: &[(&str, &[u8])]) {
    let want: Vec<(String, Vec<u8>)> = want
        .iter()
        .map(|(id, p)| ((*id).to_owned(), p.to_vec()))
        .collect();
    eventually(&format!("members {want:?}"), || async {
        let got: Vec<(String, Vec<u8>)> = member
            .members()
            .into_iter()
            .map(|(id, p)| (id, p.to_vec()))
            .collect();
        got == want
    })
    .await;
}

/// The view is the cache's: members another client adds and removes come and go, and after
/// forced reconnects (one with changes made while the member was cut off, which no watch
/// reports) the view is read again and is right.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_view_follows_other_clients_across_reconnects() {
    let group = unique("group-cache");
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let alice = member(c.clone(), &group, "alice", b"a1").await;
    let carol = format!("{group}/carol");
    admin
        .create(&carol, b"c1", CreateOptions::persistent())
        .await
        .unwrap();
    until_members(&alice, &[("alice", b"a1"), ("carol", b"c1")]).await;
    admin.delete(&carol, Version::Any).await.unwrap();
    until_members(&alice, &[("alice", b"a1")]).await;

    // Cut off (the proxy cuts the connection and refuses new ones) while carol comes back
    // with new data and dave joins: a persistent watch does not replay what it missed; the
    // cache's resync after the reconnect reads it.
    let session = c.session_id();
    proxy.partition(true);
    until_state(&c, SessionState::Suspended).await;
    admin
        .create(&carol, b"c2", CreateOptions::persistent())
        .await
        .unwrap();
    let dave = format!("{group}/dave");
    admin
        .create(&dave, b"d1", CreateOptions::persistent())
        .await
        .unwrap();
    proxy.partition(false);
    until_state(&c, SessionState::Connected).await;
    assert_eq!(c.session_id(), session, "the same session");
    until_members(
        &alice,
        &[("alice", b"a1"), ("carol", b"c2"), ("dave", b"d1")],
    )
    .await;

    // A plain cut: the client reconnects at once and the view keeps following.
    cut_and_reconnect(&proxy, &c).await;
    admin.delete(&carol, Version::Any).await.unwrap();
    admin.set_data(&dave, b"d2", Version::Any).await.unwrap();
    until_members(&alice, &[("alice", b"a1"), ("dave", b"d2")]).await;

    admin.delete(&dave, Version::Any).await.unwrap();
    alice.close().await.unwrap();
    assert!(children(&admin, &group).await.is_empty());
}

/// A member whose session expires registers again on the client's new session, under the
/// same id with its payload; the other member sees it back, and its own view is read again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_member_registers_again_on_the_new_session() {
    let group = unique("group-expiry");
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let alice = member(c.clone(), &group, "alice", b"a1").await;
    let bob = member(admin.clone(), &group, "bob", b"b1").await;
    until_members(&alice, &[("alice", b"a1"), ("bob", b"b1")]).await;

    let (old, new) = expire_and_renew(&proxy, &c).await;
    let alice_path = format!("{group}/alice");
    until_node(&admin, &alice_path, b"a1", new).await;
    assert_ne!(old, new);
    // The view follows the group on the new session.
    bob.close().await.unwrap();
    until_members(&alice, &[("alice", b"a1")]).await;
    let carol = member(admin.clone(), &group, "carol", b"c1").await;
    until_members(&alice, &[("alice", b"a1"), ("carol", b"c1")]).await;
    until_members(&carol, &[("alice", b"a1"), ("carol", b"c1")]).await;
    carol.close().await.unwrap();
    alice.close().await.unwrap();
    assert!(children(&admin, &group).await.is_empty());
}

/// A reconnect that lost nothing changes nothing: the status says `Present` again only
/// after a real re-creation (a loss counted first), never for a node merely adopted back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_node_status_is_quiet_across_a_reconnect_that_lost_nothing() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("pnode-quiet");
    let node = PersistentNode::builder(c.clone(), &path)
        .data(b"q")
        .start()
        .await
        .unwrap();
    let (_, before) = admin.get_data(&path).await.unwrap();
    // Records every status change as it is published, with the loss count then.
    let mut status = node.status();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let recorder = {
        let seen = seen.clone();
        tokio::spawn(async move {
            while let Ok(s) = status.changed().await {
                seen.lock().unwrap().push(s);
            }
        })
    };

    let creates = || proxy.count(OpCode::Create) + proxy.count(OpCode::Create2);
    let tried = creates();
    cut_and_reconnect(&proxy, &c).await;
    // The keeper has looked again once it tried its create (answered NodeExists).
    until_some("the keeper looks again after the reconnect", || async {
        (creates() > tried).then_some(())
    })
    .await;
    // Found as it was: adopted back without a write, so watchers see nothing either.
    for _ in 0..3 {
        admin.exists(&path).await.unwrap();
    }
    let (_, now) = admin.get_data(&path).await.unwrap();
    assert_eq!(
        now.version, before.version,
        "our unchanged data was written again"
    );
    // A few round trips for a (wrong) announcement to reach the recorder.
    for _ in 0..3 {
        admin.exists(&path).await.unwrap();
    }
    assert_eq!(node.times_lost(), 0);
    node.close().await.unwrap();
    soon("the recorder ends", recorder).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, vec![NodeStatus::Closed], "a change means a change");
}
