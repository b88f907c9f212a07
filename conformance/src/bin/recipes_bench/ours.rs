//! zk-recipes measured: clients contending for one InterProcessMutex, and a LeaderSelector's failovers.

use std::{
    sync::{
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
        Arc, Mutex as StdMutex,
    },
    time::{Duration, Instant},
};

use zk_recipes::{InterProcessMutex, LeaderSelector};
use zk_session::Client;

use crate::{
    results::{failovers, ElectOutcome, LockOutcome, LockRun},
    settings::Settings,
    NONE, SESSION_TIMEOUT,
};

pub(crate) async fn connect(connect: &str) -> Result<Client, String> {
    Client::builder(connect)
        .session_timeout(SESSION_TIMEOUT)
        .connect()
        .await
        .map_err(|e| format!("connect: {e}"))
}

pub(crate) async fn connect_all(connect_string: &str, n: usize) -> Result<Vec<Client>, String> {
    let mut clients = Vec::with_capacity(n);
    for _ in 0..n {
        clients.push(connect(connect_string).await?);
    }
    Ok(clients)
}

pub(crate) async fn close_all(clients: Vec<Client>) {
    for c in clients {
        let _ = c.close().await;
    }
}

/// What the contenders of one lock workload share.
pub(crate) struct Shared {
    pub(crate) origin: Instant,
    pub(crate) stop: AtomicBool,
    pub(crate) measuring: AtomicBool,
    pub(crate) inside: AtomicBool,
    pub(crate) last_release: AtomicU64,
    pub(crate) acquisitions: AtomicU64,
    pub(crate) total: AtomicU64,
    pub(crate) violations: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) samples: StdMutex<Vec<u64>>,
}

impl Shared {
    pub(crate) fn now(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }
}

pub(crate) async fn contend(mutex: InterProcessMutex, shared: Arc<Shared>) {
    let mut samples = Vec::new();
    let mut acquired = 0;
    let mut total = 0;
    while !shared.stop.load(Ordering::Relaxed) {
        let guard = match mutex.acquire().await {
            Ok(g) => g,
            Err(_) => {
                shared.errors.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let now = shared.now();
        total += 1;
        let previous = shared.last_release.load(Ordering::SeqCst);
        if shared.inside.swap(true, Ordering::SeqCst) {
            shared.violations.fetch_add(1, Ordering::Relaxed);
        }
        if shared.measuring.load(Ordering::Relaxed) {
            acquired += 1;
            if previous != NONE {
                samples.push(now.saturating_sub(previous));
            }
        }
        shared.inside.store(false, Ordering::SeqCst);
        shared.last_release.store(shared.now(), Ordering::SeqCst);
        if guard.release().await.is_err() {
            shared.errors.fetch_add(1, Ordering::Relaxed);
        }
    }
    shared.acquisitions.fetch_add(acquired, Ordering::Relaxed);
    shared.total.fetch_add(total, Ordering::Relaxed);
    shared
        .samples
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(samples);
}

pub(crate) async fn ours_lock(
    connect_string: &str,
    path: &str,
    n: usize,
    warmup: f64,
    secs: f64,
) -> LockOutcome {
    let clients = connect_all(connect_string, n).await?;
    let shared = Arc::new(Shared {
        origin: Instant::now(),
        stop: AtomicBool::new(false),
        measuring: AtomicBool::new(false),
        inside: AtomicBool::new(false),
        last_release: AtomicU64::new(NONE),
        acquisitions: AtomicU64::new(0),
        total: AtomicU64::new(0),
        violations: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        samples: StdMutex::new(Vec::new()),
    });
    let tasks: Vec<_> = clients
        .iter()
        .map(|c| {
            tokio::spawn(contend(
                InterProcessMutex::new(c.clone(), path),
                shared.clone(),
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_secs_f64(warmup)).await;
    let t0 = Instant::now();
    shared.measuring.store(true, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    shared.measuring.store(false, Ordering::Relaxed);
    let elapsed = t0.elapsed();
    shared.stop.store(true, Ordering::Relaxed);
    let mut stuck = 0;
    for t in tasks {
        if tokio::time::timeout(Duration::from_secs(30), t)
            .await
            .is_err()
        {
            stuck += 1;
        }
    }
    close_all(clients).await;
    if stuck > 0 {
        return Err(format!("{stuck} contenders did not stop"));
    }
    let mut handoffs =
        std::mem::take(&mut *shared.samples.lock().unwrap_or_else(|e| e.into_inner()));
    handoffs.sort_unstable();
    Ok(LockRun {
        acquisitions: shared.acquisitions.load(Ordering::Relaxed),
        elapsed,
        total: shared.total.load(Ordering::Relaxed),
        requests: None,
        handoffs,
        violations: shared.violations.load(Ordering::Relaxed),
        errors: shared.errors.load(Ordering::Relaxed),
    })
}

pub(crate) async fn ours_elect(connect_string: &str, path: &str, set: &Settings) -> ElectOutcome {
    let clients = connect_all(connect_string, set.participants).await?;
    let origin = Instant::now();
    let starts = Arc::new(StdMutex::new(Vec::new()));
    let exits = Arc::new(StdMutex::new(Vec::new()));
    let started = Arc::new(AtomicUsize::new(0));
    let enough = Arc::new(tokio::sync::Notify::new());
    let want = set.election_terms();
    let hold = Duration::from_millis(set.hold_ms);
    let starting: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (starts, exits, started, enough) = (
                starts.clone(),
                exits.clone(),
                started.clone(),
                enough.clone(),
            );
            LeaderSelector::builder(c.clone(), path)
                .task(move |_lead| {
                    let (starts, exits, started, enough) = (
                        starts.clone(),
                        exits.clone(),
                        started.clone(),
                        enough.clone(),
                    );
                    async move {
                        let start = origin.elapsed().as_nanos() as u64;
                        starts.lock().unwrap_or_else(|e| e.into_inner()).push(start);
                        if started.fetch_add(1, Ordering::SeqCst) + 1 >= want {
                            enough.notify_one();
                        }
                        tokio::time::sleep(hold).await;
                        let exit = origin.elapsed().as_nanos() as u64;
                        exits.lock().unwrap_or_else(|e| e.into_inner()).push(exit);
                    }
                })
                .id(format!("ours-{i}"))
                .auto_requeue(true)
                .start()
        })
        .collect();
    // Each start returns once its node is in line, a round trip; the first term is
    // already running meanwhile.
    let mut selectors: Vec<LeaderSelector> = Vec::new();
    for start in starting {
        selectors.push(start.await.map_err(|e| format!("a selector start: {e}"))?);
    }
    let limit = Duration::from_secs(30) + (hold + Duration::from_secs(1)) * want as u32;
    let finished = tokio::time::timeout(limit, enough.notified()).await.is_ok();
    for s in selectors {
        let _ = s.close().await;
    }
    close_all(clients).await;
    let starts = std::mem::take(&mut *starts.lock().unwrap_or_else(|e| e.into_inner()));
    let exits = std::mem::take(&mut *exits.lock().unwrap_or_else(|e| e.into_inner()));
    if !finished {
        return Err(format!(
            "only {} of {want} terms in {limit:?}",
            starts.len()
        ));
    }
    Ok(failovers("ours", starts, exits, set))
}
