//! The cancellation sweep of `SetPartitionerBuilder::start`: dropped after every number of
//! polls, it leaves no node of the session's under the path (no party node, no lock node)
//! and no children watch on the party; once it completes, `close` leaves nothing either. Then
//! the close of a member holding its locks, dropped at every k: its cleanup still happens.

mod recipes_support;

use std::time::Duration;

use conformance::{
    ephemeral_owner,
    sweep::{assert_swept, child_watches, owned_nodes, poll_then_drop, settle, sweep, SweepPlan},
};
use recipes_support::{client, shared, unique};
use zk_recipes::SetPartitioner;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_start_leaves_nothing_behind() {
    let (c, observer) = (client(&shared()).await, client(&shared()).await);
    let path = unique("partition-sweep");
    let party = format!("{path}/party");
    let plan = SweepPlan::default();
    let (c, observer, path, party) = (&c, &observer, &path, &party);
    let left = || async move {
        let sid = ephemeral_owner(c);
        let nodes = owned_nodes(observer, sid, path)
            .await
            .map_err(|e| e.to_string())?;
        let watches = child_watches(c, std::slice::from_ref(party))
            .await
            .map_err(|e| e.to_string())?;
        if nodes.is_empty() && watches.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "left behind: nodes {nodes:?}, child watches {watches:?}"
            ))
        }
    };
    let report = sweep(&plan, |k| async move {
        let start = SetPartitioner::builder(c.clone(), path.as_str())
            .items(["a", "b", "c"])
            .identifier("swept")
            .time_boundary(Duration::from_millis(50))
            .start();
        match poll_then_drop(start, k, plan.pause).await {
            Some(Ok(p)) => {
                p.close().await.map_err(|e| e.to_string())?;
                left().await?;
                Ok(true)
            }
            Some(Err(e)) => Err(e.to_string()),
            None => settle("nothing left", Duration::from_secs(10), left)
                .await
                .map(|()| false),
        }
    })
    .await;
    assert_swept("SetPartitioner start", &report, true);

    // A member holding its locks, its close dropped at every k: the cleanup goes on.
    let report = sweep(&plan, |k| async move {
        let p = SetPartitioner::builder(c.clone(), path.as_str())
            .items(["a", "b", "c"])
            .identifier("held")
            .time_boundary(Duration::from_millis(50))
            .start()
            .await
            .map_err(|e| e.to_string())?;
        p.status()
            .wait_for(|s| s.is_acquired())
            .await
            .map_err(|e| e.to_string())?;
        let done = poll_then_drop(p.close(), k, plan.pause).await;
        if let Some(r) = &done {
            r.as_ref().map_err(|e| e.to_string())?;
        }
        settle("nothing left", Duration::from_secs(10), left).await?;
        Ok(done.is_some())
    })
    .await;
    assert_swept("SetPartitioner close", &report, true);
}
