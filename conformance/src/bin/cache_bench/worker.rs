//! Our side, run as a child process of the benchmark (`cache_bench --worker CONNECT ROOT`),
//! so that its resident memory is that of a fresh process, as the JVM's is. It speaks the
//! same lines as conformance/java/CuratorCacheBench.java (see there).

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use tokio::io::{AsyncBufReadExt, BufReader};
use zk_recipes::{Cache, CacheEvent};
use zk_session::Client;

use crate::{wall_nanos, ALLOCATOR};

/// Resident memory of this process, in KiB.
pub(crate) fn rss_kb() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(-1)
}

pub(crate) async fn run(connect: &str, root: &str) {
    let client = Client::builder(connect)
        .session_timeout(Duration::from_secs(60))
        .connect()
        .await
        .expect("connect");
    let rss0 = rss_kb();
    let live0 = ALLOCATOR.allocated();
    let t0 = Instant::now();
    let cache = Cache::builder(client, root).start().await.expect("start");
    let elapsed = t0.elapsed();
    let rss1 = rss_kb();
    let live1 = ALLOCATOR.allocated();
    // Subscribed after the load, as Curator's change listener hears no load events.
    let mut events = cache.subscribe();
    let changes: Arc<Mutex<Vec<String>>> = Arc::default();
    let recorder = {
        let changes = changes.clone();
        tokio::spawn(async move {
            while let Some(e) = events.next().await {
                if let CacheEvent::Changed { path, new, .. } = e {
                    let line = format!("{path} {} {}", new.stat().version, wall_nanos());
                    changes.lock().unwrap().push(line);
                }
            }
        })
    };
    println!(
        "LOADED {} {} {rss0} {rss1} {live0} {live1}",
        cache.len(),
        elapsed.as_nanos()
    );
    println!("READY");
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(cmd)) = lines.next_line().await {
        match cmd.as_str() {
            "COUNT" => println!("COUNT {}", changes.lock().unwrap().len()),
            "DUMP" => {
                let out: String = changes
                    .lock()
                    .unwrap()
                    .iter()
                    .map(|c| format!("EV {c}\n"))
                    .collect();
                print!("{out}");
                println!("END");
                break;
            }
            _ => {}
        }
    }
    drop(cache);
    let _ = recorder.await;
}
