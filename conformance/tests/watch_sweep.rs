//! Cancellation sweeps of the recipes' watch types against a real ZooKeeper 3.8: a
//! `ValueWatch::changed` (of a selector's status or a count's value) dropped after any number of polls,
//! while the change it waits for is on its way, loses nothing: the same watch's next call
//! still returns that change.

mod recipes_support;

use std::{sync::Arc, time::Duration};

use conformance::sweep::{poll_then_drop, sweep, SweepPlan};
use recipes_support::{client, soon, unique_under};
use zk_recipes::{LeaderSelector, SharedCount};

/// Bounds the wait for a change after a drop (the change is already under way).
const AFTER_DROP: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_leadership_wait_loses_no_change() {
    let c = client(&conformance::shared_standalone().connect_string()).await;
    let path = unique_under("watch-sweep", "selector");
    let selector = LeaderSelector::builder(c.clone(), path.as_str())
        .task(|_lead| std::future::pending())
        .start()
        .await
        .expect("the selector starts");
    let plan = SweepPlan::default();
    let report = sweep(&plan, |k| {
        let selector = &selector;
        async move {
            // One watch for the dropped wait and the next.
            let mut w = selector.status();
            soon("leading again", w.wait_for(|s| s.is_leader()))
                .await
                .map_err(|e| format!("leading again: {e}"))?;
            // The end of the term is on its way while the wait is polled.
            selector.interrupt_leadership();
            let done = poll_then_drop(w.changed(), k, plan.pause).await;
            let outcome = match done {
                Some(Ok(s)) if !s.is_leader() => Ok(true),
                Some(other) => Err(format!("the wait said {other:?}")),
                None => match tokio::time::timeout(AFTER_DROP, w.changed()).await {
                    Ok(Ok(s)) if !s.is_leader() => Ok(false),
                    Ok(other) => Err(format!("after the drop, the next wait said {other:?}")),
                    Err(_) => Err("after the drop, the change was lost".to_owned()),
                },
            };
            selector.requeue();
            outcome
        }
    })
    .await;
    println!("{report:?}");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    assert!(report.drops > 0, "no drop was swept");
    selector.close().await.unwrap();
    let _ = c.delete(&path, zk_session::Version::Any).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_value_wait_loses_no_change() {
    let cs = conformance::shared_standalone().connect_string();
    let (a, b) = (client(&cs).await, client(&cs).await);
    let path = unique_under("watch-sweep", "count");
    let ours = SharedCount::builder(a.clone(), path.as_str())
        .seed(0)
        .start()
        .await
        .unwrap();
    let theirs = Arc::new(
        SharedCount::builder(b, path.as_str())
            .seed(0)
            .start()
            .await
            .unwrap(),
    );
    let plan = SweepPlan::default();
    let report = sweep(&plan, |k| {
        let (ours, theirs) = (&ours, theirs.clone());
        async move {
            // One watch for the dropped wait and the next, from ours' view of the last write.
            let mut changes = ours.changes();
            let last = theirs.count();
            soon(
                "ours sees the last write",
                changes.wait_for(|c| c.value() == last),
            )
            .await
            .map_err(|e| format!("the last write: {e}"))?;
            let want = last + 1;
            // Written by the other client: it reaches ours while the wait is polled.
            let writer = theirs.clone();
            let write = tokio::spawn(async move { writer.set(want).await });
            let done = poll_then_drop(next_value(&mut changes, want), k, plan.pause).await;
            let outcome = match done {
                Some(Ok(())) => Ok(true),
                Some(Err(e)) => Err(format!("the wait said {e}")),
                None => {
                    match tokio::time::timeout(AFTER_DROP, next_value(&mut changes, want)).await {
                        Ok(Ok(())) => Ok(false),
                        Ok(Err(e)) => Err(format!("after the drop, the next wait said {e}")),
                        Err(_) => Err("after the drop, the change was lost".to_owned()),
                    }
                }
            };
            soon("the write", write)
                .await
                .unwrap()
                .map_err(|e| format!("the write: {e}"))?;
            outcome
        }
    })
    .await;
    println!("{report:?}");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    assert!(report.drops > 0, "no drop was swept");
    let _ = a.delete(&path, zk_session::Version::Any).await;
}

/// `changed()` until the value is `want`: the count's follower may tell a value again (a
/// re-read after its watch fired), which is not the change waited for.
async fn next_value(
    changes: &mut zk_recipes::ValueWatch<zk_recipes::VersionedCount>,
    want: i32,
) -> zk_recipes::Result<()> {
    while changes.changed().await?.value() != want {}
    Ok(())
}
