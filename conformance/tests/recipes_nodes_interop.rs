//! zk-recipes' DoubleBarrier, PersistentNode and GroupMember beside real Curator (Java 17 and
//! Debian's libcurator-recipes-java 5.4) on the same paths of a real server: Curator's
//! members and ours enter and leave one barrier together, protected ephemeral-sequential
//! nodes of both have one layout (each side reads the other's names as its own kind), and
//! the members of one group see each other's ids and payloads.
//!
//! The peer is conformance/java/CuratorMembers.java, compiled here with javac and driven
//! over stdin. Nothing is skipped: when javac or the Curator jars are missing, the tests fail
//! and say what to install.

mod recipes_support;

use conformance::ephemeral_owner;
use std::{
    sync::{Arc, OnceLock},
    time::{Duration, Instant},
};

use conformance::peers::JavaProgram;
use recipes_support::{
    children, client, compile_curator_peer, name_of, peer::Peer, shared, soon, unique,
    until_children, until_some, watches_under, SOON,
};
use zk_recipes::{DoubleBarrier, GroupMember, PersistentNode, ProtectedCreate, Recovery};
use zk_session::CreateOptions;

/// CuratorMembers compiled into a scratch directory, once per process.
fn curator() -> &'static JavaProgram {
    static PROGRAM: OnceLock<JavaProgram> = OnceLock::new();
    PROGRAM.get_or_init(|| compile_curator_peer("CuratorMembers.java", "zk-recipes-members"))
}

/// A Curator peer connected to the shared server.
async fn start_peer() -> Peer {
    let mut cmd = curator().command();
    cmd.arg(shared());
    Peer::start("Curator", cmd).await
}

/// A protected name's protected id and the rest (`_c_<uuid>-<rest>`), if it is one.
fn protected_parts(name: &str) -> Option<(&str, &str)> {
    let id = name.strip_prefix("_c_")?.get(..36)?;
    let rest = name.get(3 + 36..)?.strip_prefix('-')?;
    let uuid_shape = id.split('-').map(str::len).eq([8, 4, 4, 4, 12]);
    (uuid_shape && id.chars().all(|c| c == '-' || c.is_ascii_hexdigit())).then_some((id, rest))
}

/// The sequence suffix of `rest` after `base`: ten digits.
fn sequence_after<'a>(rest: &'a str, base: &str) -> Option<&'a str> {
    let seq = rest.strip_prefix(base)?;
    (seq.len() == 10 && seq.chars().all(|c| c.is_ascii_digit())).then_some(seq)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn double_barrier_members_of_curator_and_ours_enter_and_leave_together() {
    const N: usize = 4;
    let admin = client(&shared()).await;
    let path = unique("interop-barrier");
    let (mut p1, mut p2) = (start_peer().await, start_peer().await);
    let ours: Vec<Arc<DoubleBarrier>> = vec![
        Arc::new(DoubleBarrier::new(client(&shared()).await, &path, N)),
        Arc::new(DoubleBarrier::new(client(&shared()).await, &path, N)),
    ];
    let enter = |b: &Arc<DoubleBarrier>| {
        let b = b.clone();
        tokio::spawn(async move { b.acquire().await })
    };

    // Three of four in: nobody is through.
    p1.send(&format!("enter {path} {N}")).await;
    let first = enter(&ours[0]);
    p2.send(&format!("enter {path} {N}")).await;
    until_children(&admin, &path, 3).await;
    assert!(!p1.has_said("ENTERED") && !p2.has_said("ENTERED"));
    assert!(!first.is_finished(), "ours entered with three of four");
    // The fourth, ours: all are through.
    let last = enter(&ours[1]);
    p1.expect("ENTERED").await;
    p2.expect("ENTERED").await;
    let entered = [
        soon("our first enter", first).await.unwrap().unwrap(),
        soon("our last enter", last).await.unwrap().unwrap(),
    ];
    let members = children(&admin, &path).await;
    assert_eq!(members.len(), N + 1, "{members:?}");
    assert!(members.contains(&"ready".to_owned()));
    // One layout: every member a bare uuid, Curator's and ours alike.
    for m in members.iter().filter(|m| *m != "ready") {
        assert_eq!(
            m.split('-').map(str::len).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
    }
    for m in &entered {
        assert!(members.contains(&name_of(m.path())));
    }

    // Leaving: nobody is done before all have started to leave.
    p1.send("leave").await;
    let [ours_first, ours_second] = entered;
    let first = tokio::spawn(ours_first.release());
    let second = tokio::spawn(ours_second.release());
    // Curator's first member and ours wait, each watching another member's node (the one
    // still in, p2, watches none).
    let server = conformance::shared_standalone();
    let ready = format!("{path}/ready");
    until_some("three members waiting to leave", || async {
        let mut leaving: Vec<i64> = watches_under(server, &format!("{path}/"))
            .into_iter()
            .filter(|(_, p)| *p != ready)
            .map(|(s, _)| s)
            .collect();
        leaving.dedup();
        (leaving.len() == 3).then_some(())
    })
    .await;
    assert!(!p1.has_said("LEFT"), "Curator left before all");
    assert!(
        !first.is_finished() && !second.is_finished(),
        "ours left before all"
    );
    p2.send("leave").await;
    p1.expect("LEFT").await;
    p2.expect("LEFT").await;
    soon("our first leave", first).await.unwrap().unwrap();
    soon("our second leave", second).await.unwrap().unwrap();
    until_children(&admin, &path, 0).await;
    p1.finish().await;
    p2.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_nodes_protected_sequential_share_curators_layout() {
    let admin = client(&shared()).await;
    let parent = format!("{}/services", unique("interop-pnode"));
    let base = format!("{parent}/api-");
    let mut peer = start_peer().await;
    peer.send(&format!("node {base} from-curator")).await;
    let theirs = peer.answer("NODE").await;
    let c = client(&shared()).await;
    let node = PersistentNode::builder(c.clone(), &base)
        .data(b"from-us")
        .options(CreateOptions::ephemeral_sequential())
        .protected()
        .start()
        .await
        .unwrap();
    let ours = node.path().unwrap();

    // Both under the parent, both `_c_<uuid>-api-<ten digits>`.
    let mut names = children(&admin, &parent).await;
    names.sort();
    let mut want = vec![name_of(&theirs), name_of(&ours)];
    want.sort();
    assert_eq!(names, want);
    let mut ids = Vec::new();
    for name in &names {
        let (id, rest) = protected_parts(name).unwrap_or_else(|| panic!("not protected: {name}"));
        assert!(sequence_after(rest, "api-").is_some(), "{name}");
        ids.push(id.to_owned());
    }
    assert_ne!(ids[0], ids[1]);
    // Curator reads our name as one of its protected nodes: the id we wrote, and the name
    // without the prefix.
    let our_name = name_of(&ours);
    let (our_id, our_rest) = protected_parts(&our_name).unwrap();
    peer.send(&format!("protected {our_name}")).await;
    assert_eq!(
        peer.answer("PROTECTED").await,
        format!("true {our_id} {our_rest}")
    );
    // Each side's data and session.
    let (data, stat) = admin.get_data(&theirs).await.unwrap();
    assert_eq!(&data[..], b"from-curator");
    assert_ne!(stat.ephemeral_owner, 0);
    let (data, stat) = admin.get_data(&ours).await.unwrap();
    assert_eq!(&data[..], b"from-us");
    assert_eq!(stat.ephemeral_owner, ephemeral_owner(&c));

    // Our protected-mode recovery reads Curator's name as one of its kind: looking for
    // Curator's id on another session finds its node (and deletes it, not being that
    // session's); Curator's PersistentNode puts it back.
    let their_name = name_of(&theirs);
    let (their_id, _) = protected_parts(&their_name).unwrap();
    let recovered = ProtectedCreate::new(&parent, "api-")
        .recover(&admin, their_id)
        .await
        .unwrap();
    assert_eq!(recovered, Recovery::Removed(vec![their_name.clone()]));
    let back = until_some("Curator's node back", || async {
        let names = children(&admin, &parent).await;
        let back: Vec<String> = names.into_iter().filter(|n| *n != our_name).collect();
        (back.len() == 1).then(|| back[0].clone())
    })
    .await;
    let (_, rest) = protected_parts(&back).unwrap_or_else(|| panic!("not protected: {back}"));
    assert!(sequence_after(rest, "api-").is_some(), "{back}");

    // Curator's node goes with its close; ours stays until we close it.
    peer.send("node-close").await;
    peer.expect("NODE-CLOSED").await;
    assert_eq!(until_children(&admin, &parent, 1).await, vec![our_name]);
    node.close().await.unwrap();
    assert!(children(&admin, &parent).await.is_empty());
    peer.finish().await;
}

/// Asks the Curator member for its view until it is `want` (`id=payload,…`, sorted).
async fn until_curator_sees(peer: &mut Peer, want: &str) {
    let deadline = Instant::now() + SOON;
    loop {
        peer.send("members").await;
        let got = peer.answer("MEMBERS").await;
        if got == want {
            return;
        }
        if Instant::now() > deadline {
            peer.fail(&format!("Curator's members {got:?}, not {want:?}"))
                .await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until our member's view is `want`.
async fn until_we_see(member: &GroupMember, want: &[(&str, &[u8])]) {
    until_some(&format!("our view {want:?}"), || async {
        let got = member.members();
        let same = got.len() == want.len()
            && want
                .iter()
                .all(|(id, p)| got.get(*id).is_some_and(|g| &g[..] == *p));
        same.then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_members_of_curator_and_ours_see_each_other() {
    let admin = client(&shared()).await;
    let group = unique("interop-group");
    let mut peer = start_peer().await;
    peer.send(&format!("join {group} curator c1")).await;
    peer.expect("JOINED").await;
    let mut ours = GroupMember::builder(client(&shared()).await, &group)
        .id("ours")
        .payload(b"o1")
        .start()
        .await
        .unwrap();
    // One layout: a node per member, named by its id, holding its payload.
    assert_eq!(
        until_children(&admin, &group, 2).await,
        vec!["curator".to_owned(), "ours".to_owned()]
    );
    until_we_see(&ours, &[("curator", b"c1"), ("ours", b"o1")]).await;
    until_curator_sees(&mut peer, "curator=c1,ours=o1").await;

    ours.set_payload(b"o2").await.unwrap();
    until_curator_sees(&mut peer, "curator=c1,ours=o2").await;
    peer.send("payload c2").await;
    peer.expect("PAYLOAD-SET").await;
    until_we_see(&ours, &[("curator", b"c2"), ("ours", b"o2")]).await;

    peer.send("group-close").await;
    peer.expect("GROUP-CLOSED").await;
    until_we_see(&ours, &[("ours", b"o2")]).await;
    ours.close().await.unwrap();
    assert!(children(&admin, &group).await.is_empty());
    peer.finish().await;
}
