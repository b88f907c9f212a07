//! A work queue shared with Curator's DistributedQueue: a producer puts jobs, two lock-safe
//! consumers take them, each job is done exactly once.
//!
//! `cargo run -p zk-examples --bin work_queue -- HOSTS`

use std::collections::BTreeSet;

use zk_recipes::DistributedQueue;
use zk_session::Client;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let servers = zk_examples::servers();
    let path = format!("/examples/jobs-{}", std::process::id());
    let locks = format!("{path}-locks");
    let producer = DistributedQueue::builder(Client::builder(&servers).connect().await?, &path)
        .start()
        .await?;
    for i in 0..10 {
        producer.put(format!("job-{i}").as_bytes()).await?;
    }

    // Two consumers, each its own session: an item stays in the queue, locked, until done.
    let mut workers = Vec::new();
    for name in ["a", "b"] {
        let client = Client::builder(&servers).connect().await?;
        let queue = DistributedQueue::builder(client, &path)
            .lock_safe(&locks)
            .start()
            .await?;
        workers.push(tokio::spawn(async move {
            let mut done = Vec::new();
            while let Some(item) = queue.try_take().await? {
                done.push(String::from_utf8_lossy(&item.items()[0]).into_owned());
                item.done().await?;
            }
            queue.close().await?;
            Ok::<_, zk_recipes::RecipeError>((name, done))
        }));
    }
    let mut all = BTreeSet::new();
    for worker in workers {
        let (name, done) = worker.await??;
        println!("consumer {name} did {} jobs", done.len());
        all.extend(done);
    }
    println!("jobs done once each: {}", all.len());
    producer.close().await?;
    Ok(())
}
