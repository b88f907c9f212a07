//! Our side of each workload: a DistributedQueue per client, and a ServiceProvider and
//! ServiceCache for the lookups.

use std::{
    net::SocketAddr,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use conformance::fault_proxy::FaultProxy;
use tokio::task::JoinSet;
use zk_recipes::{DistributedQueue, ProviderStrategy, ServiceDiscovery, ServiceInstance};
use zk_session::{Client, CreateOptions, OpCode};

use crate::{Run, Settings};

/// Every item: 64 bytes.
const ITEM: [u8; 64] = [7; 64];

/// How many creates [`fill`] keeps in flight.
const FILL_WINDOW: usize = 256;

async fn connect(connect: &str) -> Result<Client, String> {
    Client::builder(connect)
        .session_timeout(Duration::from_secs(30))
        .max_frame_len(8 << 20)
        .connect()
        .await
        .map_err(|e| format!("connect: {e}"))
}

async fn queue(c: &Client, path: &str) -> Result<DistributedQueue, String> {
    DistributedQueue::builder(c.clone(), path)
        .start()
        .await
        .map_err(|e| format!("start: {e}"))
}

/// One item in Curator's envelope (version, one item, end), as both consumers read it.
fn envelope() -> Vec<u8> {
    let mut e = vec![0, 1, 0, 1, 1];
    e.extend_from_slice(&(ITEM.len() as u32).to_be_bytes());
    e.extend_from_slice(&ITEM);
    e.push(2);
    e
}

/// Fills the queue at `path` with `n` items, many creates in flight (faster than puts one
/// by one; the items are what a put writes).
pub(crate) async fn fill(server: &str, path: &str, n: usize) -> Result<(), String> {
    let c = connect(server).await?;
    zk_recipes::create_parents(&c, path)
        .await
        .map_err(|e| format!("{path}: {e}"))?;
    let item = Arc::new(envelope());
    let name = format!("{path}/queue-");
    let mut tasks = JoinSet::new();
    for i in 0..n {
        if i >= FILL_WINDOW {
            tasks
                .join_next()
                .await
                .unwrap()
                .map_err(|e| e.to_string())??;
        }
        let (c, item, name) = (c.clone(), item.clone(), name.clone());
        tasks.spawn(async move {
            c.create(&name, &item, CreateOptions::persistent_sequential())
                .await
                .map(drop)
                .map_err(|e| format!("fill: {e}"))
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.map_err(|e| e.to_string())??;
    }
    let _ = c.close().await;
    Ok(())
}

/// One producer putting for `secs` seconds.
pub(crate) async fn put(server: &str, path: &str, secs: f64) -> Result<Run, String> {
    let c = connect(server).await?;
    let q = queue(&c, path).await?;
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let mut ops = 0;
    while Instant::now() < end {
        q.put(&ITEM).await.map_err(|e| format!("put: {e}"))?;
        ops += 1;
    }
    let elapsed = start.elapsed();
    let _ = q.close().await;
    let _ = c.close().await;
    Ok(Run { ops, elapsed })
}

/// `consumers` clients, each a plain consumer, take `set.items` items (or stop at
/// `set.take_secs`); the clock runs from their start to the last take, as Curator's does.
pub(crate) async fn take(
    server: &str,
    path: &str,
    consumers: usize,
    set: &Settings,
) -> Result<Run, String> {
    let mut clients = Vec::new();
    for _ in 0..consumers {
        clients.push(connect(server).await?);
    }
    let taken = Arc::new(AtomicU64::new(0));
    let target = set.items as u64;
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(set.take_secs);
    let mut tasks = JoinSet::new();
    for c in &clients {
        let (c, path, taken) = (c.clone(), path.to_owned(), taken.clone());
        tasks.spawn(async move {
            let q = queue(&c, &path).await?;
            let mut last = None;
            while taken.load(Ordering::Relaxed) < target && Instant::now() < deadline {
                let item = q
                    .take_timeout(Duration::from_millis(100))
                    .await
                    .map_err(|e| format!("take: {e}"))?;
                if item.is_some() {
                    taken.fetch_add(1, Ordering::Relaxed);
                    last = Some(Instant::now());
                }
            }
            Ok::<_, String>(last)
        });
    }
    let mut last = start;
    while let Some(r) = tasks.join_next().await {
        if let Some(t) = r.map_err(|e| e.to_string())?? {
            last = last.max(t);
        }
    }
    for c in clients {
        let _ = c.close().await;
    }
    Ok(Run {
        ops: taken.load(Ordering::Relaxed),
        elapsed: last - start,
    })
}

/// One consumer, behind a proxy that counts its listings, takes `takes` items of the big
/// queue; the run and the listings (its start's included, as for Curator).
pub(crate) async fn take_big(
    server: SocketAddr,
    path: &str,
    takes: u64,
    set: &Settings,
) -> Result<(Run, u64), String> {
    let proxy = FaultProxy::start(server).await;
    let listings = || proxy.count(OpCode::GetChildren) + proxy.count(OpCode::GetChildren2);
    let c = connect(&proxy.connect_string()).await?;
    let before = listings();
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(set.take_secs * 3.0);
    let q = queue(&c, path).await?;
    let mut ops = 0;
    while ops < takes && Instant::now() < deadline {
        q.take().await.map_err(|e| format!("take: {e}"))?;
        ops += 1;
    }
    let run = Run {
        ops,
        elapsed: start.elapsed(),
    };
    let lists = listings() - before;
    let _ = c.close().await;
    Ok((run, lists))
}

/// Lookups of one of 8 instances for `secs` seconds each: from a round-robin
/// ServiceProvider, and the whole list from a ServiceCache; then `theirs` (Curator's
/// provider) runs while the instances are still registered.
pub(crate) async fn lookups(
    server: &str,
    base: &str,
    secs: f64,
    theirs: impl FnOnce() -> Result<Run, String>,
) -> Result<Vec<(&'static str, Result<Run, String>)>, String> {
    let e = |e: zk_recipes::RecipeError| e.to_string();
    let (writer, reader) = (connect(server).await?, connect(server).await?);
    let registry = ServiceDiscovery::builder(writer.clone(), base)
        .start()
        .await
        .map_err(e)?;
    for i in 0..8u16 {
        let instance = ServiceInstance::builder("api")
            .id(format!("api-{i}"))
            .address("10.0.0.5")
            .port(8000 + i)
            .build();
        registry.register(&instance).await.map_err(e)?;
    }
    let discovery = ServiceDiscovery::builder(reader.clone(), base)
        .start()
        .await
        .map_err(e)?;
    let provider = discovery
        .provider("api")
        .strategy(ProviderStrategy::RoundRobin)
        .start()
        .await
        .map_err(e)?;
    let cache = discovery.service_cache("api").start().await.map_err(e)?;
    while cache.instances().len() < 8 || provider.all_instances().len() < 8 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let measure = |f: &dyn Fn() -> usize| {
        let start = Instant::now();
        let end = start + Duration::from_secs_f64(secs);
        let (mut ops, mut seen) = (0u64, 0usize);
        while Instant::now() < end {
            for _ in 0..1000 {
                seen += f();
            }
            ops += 1000;
        }
        assert!(seen > 0, "nothing was found");
        Run {
            ops,
            elapsed: start.elapsed(),
        }
    };
    let rows = vec![
        (
            "ServiceProvider::get_instance",
            Ok(measure(&|| {
                provider
                    .get_instance()
                    .map_or(0, |i| i.port().map_or(0, usize::from))
            })),
        ),
        (
            "ServiceCache::instances (all 8)",
            Ok(measure(&|| cache.instances().len())),
        ),
        (
            "Curator ServiceProvider.getInstance",
            tokio::task::block_in_place(theirs),
        ),
    ];
    let _ = provider.close().await;
    let _ = cache.close().await;
    let _ = registry.close().await;
    let _ = writer.close().await;
    let _ = reader.close().await;
    Ok(rows)
}
