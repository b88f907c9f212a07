//! A lock-safe DistributedQueue consumer in a process of its own, for the tests that kill a
//! consumer mid-item (conformance/tests/recipes_queue_killed.rs). Usage:
//!
//!     queue_consumer CONNECT PATH LOCK_PATH SESSION_MS
//!
//! Prints READY once connected, takes one item (lock-safe), prints `HELD <item>` and then
//! holds it without calling done, until killed.

use std::time::Duration;

use zk_recipes::DistributedQueue;
use zk_session::Client;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [connect, path, lock_path, session_ms] = &args[..] else {
        eprintln!("usage: queue_consumer CONNECT PATH LOCK_PATH SESSION_MS");
        std::process::exit(2);
    };
    let session = Duration::from_millis(session_ms.parse().unwrap_or(2000));
    let run = async {
        let client = Client::builder(connect.as_str())
            .session_timeout(session)
            .connect()
            .await?;
        let queue = DistributedQueue::builder(client, path.as_str())
            .lock_safe(lock_path.as_str())
            .start()
            .await?;
        println!("READY");
        let item = queue.take().await?;
        println!("HELD {}", String::from_utf8_lossy(&item.items()[0]));
        // Never done: the test kills this process with the item held.
        std::future::pending::<()>().await;
        drop(item);
        Ok::<(), Box<dyn std::error::Error>>(())
    };
    if let Err(e) = run.await {
        println!("ERROR {e}");
        std::process::exit(1);
    }
}
