//! In-flight requests: getData of a 100-byte znode with `window` requests in flight on one
//! session (`window` tasks on clones of one client), in this process.

use std::{
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use conformance::bench::Throughput;
use tokio::task::JoinSet;
use zk_session::Client;

use crate::procstat::sample;

pub(crate) const DATA_LEN: usize = 100;

/// Warms up for `warmup`, then measures `secs`.
pub(crate) async fn run(
    client: &Client,
    path: &str,
    window: usize,
    warmup: Duration,
    secs: Duration,
) -> Throughput {
    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = JoinSet::new();
    for _ in 0..window {
        let (client, done, errors, stop) =
            (client.clone(), done.clone(), errors.clone(), stop.clone());
        let path = path.to_owned();
        workers.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let ok = matches!(client.get_data(&path).await, Ok((d, _)) if d.len() == DATA_LEN);
                if !ok {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    tokio::time::sleep(warmup).await;
    let (ops0, err0, cpu0, t0) = (
        done.load(Ordering::Relaxed),
        errors.load(Ordering::Relaxed),
        sample().cpu,
        Instant::now(),
    );
    tokio::time::sleep(secs).await;
    let m = Throughput {
        ops: done.load(Ordering::Relaxed) - ops0,
        elapsed: t0.elapsed(),
        cpu: sample().cpu - cpu0,
        errors: errors.load(Ordering::Relaxed) - err0,
    };
    stop.store(true, Ordering::Relaxed);
    while workers.join_next().await.is_some() {}
    m
}
