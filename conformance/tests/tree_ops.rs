//! `Client::create_with_parents` and `Client::delete_all` against a real server, alone and
//! while a second client changes the same tree.

mod ops_support;

use std::{future::Future, time::Duration};

use conformance::sweep::{poll_then_drop, sweep, Pause, SweepPlan};
use ops_support::{client, rand_suffix};
use zk_session::{Acl, Client, CreateOptions, Error, ErrorCode, Version};

fn unique(tag: &str) -> String {
    format!("/tree-{tag}-{}", rand_suffix())
}

#[tokio::test]
async fn create_with_parents_creates_what_is_missing() {
    let c = client().await;
    let base = unique("mkdirs");
    let deep = format!("{base}/a/b/c");
    let created = c
        .create_with_parents(&deep, b"leaf", CreateOptions::persistent())
        .await
        .unwrap();
    assert_eq!(created, deep);
    assert_eq!(&c.get_data(&deep).await.unwrap().0[..], b"leaf");
    // Parents are empty persistent znodes.
    let (data, stat) = c.get_data(&format!("{base}/a/b")).await.unwrap();
    assert!(data.is_empty());
    assert_eq!(stat.ephemeral_owner, 0);
    // Existing parents are fine; the node itself existing is NodeExists as with create.
    let seq = c
        .create_with_parents(
            &format!("{base}/a/s-"),
            b"",
            CreateOptions::persistent_sequential(),
        )
        .await
        .unwrap();
    assert!(seq.starts_with(&format!("{base}/a/s-")) && seq.len() == base.len() + 15);
    let again = c
        .create_with_parents(&deep, b"", CreateOptions::persistent())
        .await;
    assert!(matches!(again, Err(Error::Code(ErrorCode::NodeExists))));
    // Parents take the ACL of the options (as kazoo's makepath does): read-only for everyone
    // here, so the server refuses the next level under the first parent with NoAuth.
    let ro = format!("{base}/ro/x/y");
    let refused = c
        .create_with_parents(
            &ro,
            b"",
            CreateOptions::persistent().with_acl(Acl::read_unsafe()),
        )
        .await;
    assert!(
        matches!(refused, Err(Error::Code(ErrorCode::NoAuth))),
        "{refused:?}"
    );
    let (acl, _) = c.get_acl(&format!("{base}/ro")).await.unwrap();
    assert_eq!(acl, Acl::read_unsafe());
    // A path the client refuses is a typed error before anything is sent.
    let bad = c
        .create_with_parents("no-slash/x", b"", CreateOptions::persistent())
        .await;
    assert!(matches!(bad, Err(Error::InvalidPath { .. })), "{bad:?}");
    // A parent that is ephemeral cannot have children: the server's code comes back.
    let eph = format!("{base}/eph");
    c.create(&eph, b"", CreateOptions::ephemeral())
        .await
        .unwrap();
    let under = c
        .create_with_parents(&format!("{eph}/x/y"), b"", CreateOptions::persistent())
        .await;
    assert!(
        matches!(under, Err(Error::Code(ErrorCode::NoChildrenForEphemerals))),
        "{under:?}"
    );
    c.delete(&eph, Version::Any).await.unwrap();
    c.delete_all(&base).await.unwrap();
    assert_eq!(c.exists(&base).await.unwrap(), None);
}

/// Two clients create paths sharing parents at the same moment: every create succeeds
/// (NodeExists on a shared parent is not an error).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_share_parents() {
    let (a, b) = (client().await, client().await);
    let base = unique("race");
    for round in 0..20 {
        let shared = format!("{base}/r{round}/p/q");
        let (pa, pb) = (format!("{shared}/a"), format!("{shared}/b"));
        let opts = CreateOptions::persistent();
        let (ra, rb) = tokio::join!(
            a.create_with_parents(&pa, b"", opts.clone()),
            b.create_with_parents(&pb, b"", opts.clone())
        );
        assert_eq!(ra.unwrap(), pa);
        assert_eq!(rb.unwrap(), pb);
    }
    let mut children = a.get_children(&base).await.unwrap();
    children.sort();
    assert_eq!(children.len(), 20);
    a.delete_all(&base).await.unwrap();
}

#[tokio::test]
async fn delete_all_removes_a_subtree_and_reports_a_missing_root() {
    let c = client().await;
    let base = unique("rmr");
    for p in ["x/1/a", "x/1/b", "x/2", "y"] {
        c.create_with_parents(&format!("{base}/{p}"), b"d", CreateOptions::persistent())
            .await
            .unwrap();
    }
    let sibling = format!("{base}-sibling");
    c.create(&sibling, b"", CreateOptions::persistent())
        .await
        .unwrap();
    c.delete_all(&format!("{base}/x")).await.unwrap();
    assert_eq!(c.get_children(&base).await.unwrap(), ["y"]);
    c.delete_all(&base).await.unwrap();
    assert_eq!(c.exists(&base).await.unwrap(), None);
    // A name that merely starts with the deleted path is not below it.
    assert!(c.exists(&sibling).await.unwrap().is_some());
    c.delete_all(&sibling).await.unwrap();
    // Missing from the start: NoNode, like zkCli's deleteall.
    let missing = c.delete_all(&base).await;
    assert!(matches!(missing, Err(Error::Code(ErrorCode::NoNode))));
    let root = c.delete_all("/").await;
    assert!(matches!(root, Err(Error::InvalidArgument(_))), "{root:?}");
    assert!(c.exists("/zookeeper").await.unwrap().is_some());
}

/// A second client keeps adding children while the subtree is deleted: delete_all lists again
/// on NotEmpty and ends with nothing left. The writer adds a bounded number of children, so a
/// bounded number of retries always catches up; children it adds after delete_all started
/// are not in the first listing, so success shows the retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_all_while_another_client_adds_children() {
    use std::sync::{
        atomic::{AtomicU32, Ordering},
        Arc,
    };
    let (c, writer) = (client().await, client().await);
    let base = unique("rmr-race");
    for i in 0..50 {
        c.create_with_parents(&format!("{base}/n{i}/c"), b"", CreateOptions::persistent())
            .await
            .unwrap();
    }
    let added = Arc::new(AtomicU32::new(0));
    let adder = {
        let (base, added) = (base.clone(), added.clone());
        tokio::spawn(async move {
            for i in 0..300 {
                let r = writer
                    .create(&format!("{base}/late{i}"), b"", CreateOptions::persistent())
                    .await;
                match r {
                    Ok(_) => added.fetch_add(1, Ordering::SeqCst),
                    // The parent is gone: the deletion won.
                    Err(Error::Code(ErrorCode::NoNode)) => return,
                    Err(e) => panic!("writer: {e}"),
                };
            }
        })
    };
    while added.load(Ordering::SeqCst) < 10 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let before = added.load(Ordering::SeqCst);
    let deleted = c.delete_all(&base).await;
    adder.await.unwrap();
    let after = added.load(Ordering::SeqCst);
    println!(
        "the writer added {} children while delete_all ran: {deleted:?}",
        after - before
    );
    assert!(after > before, "the writer never ran concurrently");
    deleted.unwrap();
    assert_eq!(c.exists(&base).await.unwrap(), None);
}

/// Someone else deletes parts of the subtree (and finally its root) while delete_all runs:
/// nodes already gone are taken as deleted, and the call succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_all_while_another_client_deletes_too() {
    let (a, b) = (client().await, client().await);
    let base = unique("rmr-both");
    for i in 0..30 {
        for j in 0..3 {
            a.create_with_parents(
                &format!("{base}/n{i}/m{j}"),
                b"",
                CreateOptions::persistent(),
            )
            .await
            .unwrap();
        }
    }
    let (ra, rb) = tokio::join!(a.delete_all(&base), b.delete_all(&base));
    // Both succeed: whichever finds a node gone takes it as deleted, and the root vanishing
    // under the second one is success too (it existed when that call started).
    ra.unwrap();
    rb.unwrap();
    assert_eq!(a.exists(&base).await.unwrap(), None);
}

/// Every znode at or below `base`, as `c` sees it, sorted.
async fn tree(c: &Client, base: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![base.to_owned()];
    while let Some(p) = todo.pop() {
        match c.get_children(&p).await {
            Ok(children) => {
                out.push(p.clone());
                todo.extend(children.into_iter().map(|ch| format!("{p}/{ch}")));
            }
            Err(Error::Code(ErrorCode::NoNode)) => {}
            Err(e) => panic!("{p}: {e}"),
        }
    }
    out.sort();
    out
}

/// Runs `step(client, base, k, pause)` for every drop point k of the default sweep plan, each
/// on a fresh base path tagged `{tag}-{k}`, and asserts that no step found a violation, that
/// the swept call completed at some k, and that it was dropped before that.
async fn sweep_drops<S, Fut>(tag: &str, step: S)
where
    S: Fn(Client, String, u32, Pause) -> Fut,
    Fut: Future<Output = Result<bool, String>>,
{
    let c = client().await;
    // 1 ms between polls: replies arrive in between, so the drop lands after each step.
    let plan = SweepPlan::default();
    let report = sweep(&plan, |k| {
        step(c.clone(), unique(&format!("{tag}-{k}")), k, plan.pause)
    })
    .await;
    eprintln!("{report:?}");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    assert!(report.completed_at.is_some(), "never completed: {report:?}");
    assert!(report.drops > 0, "{report:?}");
}

/// `create_with_parents` dropped after k polls, for every k until it completes: what is left
/// is some of the missing parents, top down (each a create already sent), never a stray
/// znode, and the same call then completes on the same handle.
#[tokio::test]
async fn create_with_parents_dropped_at_any_point_leaves_a_prefix_and_can_be_redone() {
    sweep_drops("mkdirs-drop", |c, base, k, pause| async move {
        let deep = format!("{base}/a/b/c");
        let done = poll_then_drop(
            c.create_with_parents(&deep, b"leaf", CreateOptions::persistent()),
            k,
            pause,
        )
        .await;
        if let Some(r) = &done {
            r.as_ref().map_err(|e| format!("completed with {e}"))?;
        }
        // Whatever was sent has been applied once this sync is answered (one session).
        c.sync(&deep).await.map_err(|e| e.to_string())?;
        let chain = [
            base.clone(),
            format!("{base}/a"),
            format!("{base}/a/b"),
            deep.clone(),
        ];
        let left = tree(&c, &base).await;
        if left[..] != chain[..left.len()] {
            return Err(format!("left {left:?}, not a top-down prefix of {chain:?}"));
        }
        if done.is_none() && left.len() < chain.len() {
            c.create_with_parents(&deep, b"leaf", CreateOptions::persistent())
                .await
                .map_err(|e| format!("redo: {e}"))?;
        }
        c.delete_all(&base).await.map_err(|e| e.to_string())?;
        Ok(done.is_some())
    })
    .await;
}

/// `delete_all` dropped after k polls: what is left is still one tree under the root (children
/// only ever go before their parents), and `delete_all` then removes the rest.
#[tokio::test]
async fn delete_all_dropped_at_any_point_leaves_a_tree_and_can_be_redone() {
    sweep_drops("deleteall-drop", |c, base, k, pause| async move {
        for leaf in ["x/1", "x/2", "y/1/deep", "z"] {
            c.create_with_parents(&format!("{base}/{leaf}"), b"", CreateOptions::persistent())
                .await
                .map_err(|e| e.to_string())?;
        }
        let done = poll_then_drop(c.delete_all(&base), k, pause).await;
        if let Some(r) = &done {
            r.as_ref().map_err(|e| format!("completed with {e}"))?;
        }
        c.sync(&base).await.map_err(|e| e.to_string())?;
        let left = tree(&c, &base).await;
        // A znode whose parent is gone cannot exist; so every one left must hang from
        // `base` through znodes that are also left.
        for p in &left {
            if p != &base {
                let parent = &p[..p.rfind('/').unwrap()];
                if !left.iter().any(|q| q == parent) {
                    return Err(format!("{p} left without {parent}"));
                }
            }
        }
        if done.is_some() && !left.is_empty() {
            return Err(format!("completed but left {left:?}"));
        }
        if !left.is_empty() {
            c.delete_all(&base)
                .await
                .map_err(|e| format!("redo: {e}"))?;
        }
        if !tree(&c, &base).await.is_empty() {
            return Err("the redo left znodes".into());
        }
        Ok(done.is_some())
    })
    .await;
}
