//! Watches on one session: `n` exists watches (on znodes that do not exist yet) set on one
//! session to a 3-member ensemble; the member it is connected to is killed; after the
//! session has moved to another member, every watched znode is created (in multis of
//! [`BATCH`]) and every watch must fire. Memory per watch is this process's resident growth
//! while they are set, over `n`, the caller's `OneshotWatch` handles included.

use std::time::{Duration, Instant};

use conformance::Ensemble;
use tokio::task::JoinSet;
use zk_session::{Client, CreateOptions, EventType, OneshotWatch, Op, SessionState};

use crate::procstat::sample;

/// Creates per multi.
const BATCH: usize = 1000;
/// exists requests in flight while the watches are set.
const WINDOW: usize = 512;

/// What the watches run found.
#[derive(Debug, Clone)]
pub(crate) struct Watches {
    pub(crate) watches: usize,
    pub(crate) set_time: Duration,
    pub(crate) rss_growth_kib: u64,
    /// From the kill to the session's being connected to another member.
    pub(crate) failover: Duration,
    /// Watches that fired with NodeCreated after the failover.
    pub(crate) fired: usize,
    pub(crate) fire_time: Duration,
}

impl Watches {
    pub(crate) fn kib_per_watch(&self) -> f64 {
        self.rss_growth_kib as f64 / self.watches as f64
    }
}

pub(crate) async fn run(ens: &mut Ensemble, n: usize) -> Result<Watches, String> {
    let client = Client::builder(&ens.connect_string())
        .session_timeout(Duration::from_secs(20))
        .connect()
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let base = format!("/scale-watches-{}", std::process::id());
    client
        .create(&base, b"", CreateOptions::persistent())
        .await
        .map_err(|e| format!("{base}: {e}"))?;
    let path = |i: usize| format!("{base}/w{i}");

    let before = sample();
    let start = Instant::now();
    let watches = set_watches(&client, n, &path).await?;
    let set_time = start.elapsed();
    let after = sample();

    let server = client.connected_server().ok_or("not connected")?;
    let member = ens
        .client_addrs()
        .iter()
        .position(|a| server.ends_with(&format!(":{}", a.port())))
        .ok_or_else(|| format!("{server} is no member"))?;
    ens.server(member).kill9();
    let failover = wait_moved(&client, &server).await?;

    let start = Instant::now();
    let mut fired_tasks = JoinSet::new();
    for w in watches {
        fired_tasks.spawn(async move {
            matches!(w.await, Ok(e) if e.event_type() == EventType::NodeCreated)
        });
    }
    for chunk in (0..n).collect::<Vec<_>>().chunks(BATCH) {
        let ops = chunk
            .iter()
            .map(|&i| Op::create(path(i), b"", CreateOptions::persistent()));
        client.multi(ops).await.map_err(|e| format!("multi: {e}"))?;
    }
    let mut fired = 0;
    let wait = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(r) = fired_tasks.join_next().await {
            fired += usize::from(matches!(r, Ok(true)));
        }
    });
    let _ = wait.await;
    let fire_time = start.elapsed();
    let _ = client.close().await;
    Ok(Watches {
        watches: n,
        set_time,
        rss_growth_kib: after.rss_kib.saturating_sub(before.rss_kib),
        failover,
        fired,
        fire_time,
    })
}

async fn set_watches(
    client: &Client,
    n: usize,
    path: &impl Fn(usize) -> String,
) -> Result<Vec<OneshotWatch>, String> {
    let mut watches = Vec::with_capacity(n);
    let mut tasks = JoinSet::new();
    for i in 0..n {
        if tasks.len() >= WINDOW {
            watches.push(joined(tasks.join_next().await)?);
        }
        let (client, p) = (client.clone(), path(i));
        tasks.spawn(async move { client.exists_watch(&p).await });
    }
    while let Some(r) = tasks.join_next().await {
        watches.push(joined(Some(r))?);
    }
    Ok(watches)
}

type Joined = Option<
    Result<
        Result<(Option<zk_session::Stat>, OneshotWatch), zk_session::Error>,
        tokio::task::JoinError,
    >,
>;

fn joined(r: Joined) -> Result<OneshotWatch, String> {
    match r {
        Some(Ok(Ok((None, w)))) => Ok(w),
        Some(Ok(Ok((Some(_), _)))) => Err("a watched znode exists already".to_owned()),
        Some(Ok(Err(e))) => Err(format!("exists: {e}")),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("no task".to_owned()),
    }
}

/// Waits until the session is connected to a server other than `old`; returns how long.
async fn wait_moved(client: &Client, old: &str) -> Result<Duration, String> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if client.state() == SessionState::Connected
            && client.connected_server().is_some_and(|s| s != old)
        {
            return Ok(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Err(format!("still not moved from {old} after 60 s"))
}
