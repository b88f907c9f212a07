//! Idle sessions in one process: ours (this program run again as a child, one per count, so
//! that each count starts from a fresh heap) and the Java client (one JVM).
//!
//! A child connects `n` sessions, waits `settle` (past the first pings, so that every
//! session's buffers are in their steady state), then measures `idle` seconds of heartbeats
//! only. It prints one `RESULT n connect_ns rss_before_kib rss_after_kib cpu_ns idle_ns
//! threads connected` line; the Java program prints the same.

use std::{
    path::Path,
    process::Command,
    sync::Arc,
    time::{Duration, Instant},
};

use conformance::peers::{self, JavaProgram};
use tokio::{sync::Semaphore, task::JoinSet};
use zk_session::{Client, SessionState};

use crate::procstat::{sample, Sample};

/// The session timeout of every idle session: a ping every ~3.3 s.
pub(crate) const SESSION_TIMEOUT: Duration = Duration::from_secs(10);
/// Connect attempts under way at once (the server's accept backlog is small).
const CONNECTING: usize = 64;
const JAVA_SOURCE: &str = include_str!("../../../java/IdleSessions.java");

/// What one count of idle sessions cost.
#[derive(Debug, Clone)]
pub(crate) struct Idle {
    pub(crate) sessions: u64,
    pub(crate) connect: Duration,
    pub(crate) rss_growth_kib: u64,
    pub(crate) cpu: Duration,
    pub(crate) idle: Duration,
    pub(crate) threads: u64,
    pub(crate) connected: u64,
}

impl Idle {
    pub(crate) fn kib_per_session(&self) -> f64 {
        self.rss_growth_kib as f64 / self.sessions as f64
    }

    /// CPU per session per second of idling, µs.
    pub(crate) fn us_per_session_second(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.sessions as f64 / self.idle.as_secs_f64()
    }

    pub(crate) fn parse(stdout: &str) -> Result<Idle, String> {
        let line = stdout
            .lines()
            .find(|l| l.starts_with("RESULT "))
            .ok_or_else(|| format!("no RESULT line in {stdout:?}"))?;
        let f: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|x| x.parse().map_err(|e| format!("{line}: {e}")))
            .collect::<Result<_, _>>()?;
        let [sessions, connect, before, after, cpu, idle, threads, connected] = f[..] else {
            return Err(format!("bad RESULT line {line}"));
        };
        Ok(Idle {
            sessions,
            connect: Duration::from_nanos(connect),
            rss_growth_kib: after.saturating_sub(before),
            cpu: Duration::from_nanos(cpu),
            idle: Duration::from_nanos(idle),
            threads,
            connected,
        })
    }
}

/// Runs this program as `--child-idle N CONNECT SETTLE IDLE` and reads its result.
pub(crate) fn ours(connect: &str, n: usize, settle: f64, idle: f64) -> Result<Idle, String> {
    run_child("--child-idle", n, connect, settle, idle)
}

/// Runs this program as `FLAG N TARGET SETTLE IDLE` (a child of each kind holds `n`
/// sessions to `TARGET`) and reads its result.
pub(crate) fn run_child(
    flag: &str,
    n: usize,
    target: &str,
    settle: f64,
    idle: f64,
) -> Result<Idle, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    cmd.args([
        flag,
        &n.to_string(),
        target,
        &settle.to_string(),
        &idle.to_string(),
    ]);
    let limit = Duration::from_secs_f64(settle + idle + 300.0);
    Idle::parse(&peers::run_child(&mut cmd, limit)?)
}

/// The Java client: `n` sessions in one JVM.
pub(crate) fn java(
    connect: &str,
    n: usize,
    settle: f64,
    idle: f64,
    tmp: &Path,
) -> Result<Idle, String> {
    let java = JavaProgram::compile_embedded(
        &[("IdleSessions.java", JAVA_SOURCE)],
        tmp,
        peers::ZOOKEEPER_CLIENT_JARS,
        "libzookeeper-java libslf4j-java",
    )?;
    let mut cmd = java.command();
    cmd.args([
        connect.to_owned(),
        n.to_string(),
        settle.to_string(),
        idle.to_string(),
        SESSION_TIMEOUT.as_millis().to_string(),
    ]);
    let limit = Duration::from_secs_f64(settle + idle + 300.0);
    Idle::parse(&peers::run_child(&mut cmd, limit)?)
}

/// The child's side: connect, settle, measure, print, close.
pub(crate) fn child(args: &[String]) -> Result<(), String> {
    let a = ChildArgs::parse(args, "--child-idle N CONNECT SETTLE IDLE")?;
    // The runtime users run: multi-thread, one worker per core.
    let rt = runtime()?;
    rt.block_on(async {
        let before = sample();
        let start = Instant::now();
        let clients = connect_all(&a.target, a.n).await?;
        let connect_time = start.elapsed();
        let m = a.measure(before, connect_time).await;
        let connected = clients
            .iter()
            .filter(|c| c.state() == SessionState::Connected)
            .count();
        m.print(connected);
        close_all(clients).await;
        Ok(())
    })
}

/// What a child is told: how many sessions, to where, and how long to settle and to measure.
pub(crate) struct ChildArgs {
    pub(crate) n: usize,
    pub(crate) target: String,
    settle: Duration,
    idle: Duration,
}

impl ChildArgs {
    pub(crate) fn parse(args: &[String], usage: &str) -> Result<ChildArgs, String> {
        let [n, target, settle, idle] = args else {
            return Err(usage.to_owned());
        };
        Ok(ChildArgs {
            n: n.parse().map_err(|e| format!("{n}: {e}"))?,
            target: target.clone(),
            settle: Duration::from_secs_f64(conformance::bench::seconds(settle)?),
            idle: Duration::from_secs_f64(conformance::bench::seconds(idle)?),
        })
    }

    /// Settles, then samples the process over the idle time.
    pub(crate) async fn measure(&self, before: Sample, connect_time: Duration) -> Measured {
        tokio::time::sleep(self.settle).await;
        let mid = sample();
        let t = Instant::now();
        tokio::time::sleep(self.idle).await;
        let after = sample();
        Measured {
            n: self.n,
            connect_time,
            before,
            mid,
            after,
            idle: t.elapsed(),
        }
    }
}

/// A child's samples, printed as its `RESULT` line.
pub(crate) struct Measured {
    n: usize,
    connect_time: Duration,
    before: Sample,
    mid: Sample,
    after: Sample,
    idle: Duration,
}

impl Measured {
    pub(crate) fn print(&self, connected: usize) {
        println!(
            "RESULT {} {} {} {} {} {} {} {connected}",
            self.n,
            self.connect_time.as_nanos(),
            self.before.rss_kib,
            self.after.rss_kib,
            (self.after.cpu - self.mid.cpu).as_nanos(),
            self.idle.as_nanos(),
            self.after.threads,
        );
    }
}

/// The runtime users run: multi-thread, one worker per core.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}

async fn connect_all(connect: &str, n: usize) -> Result<Vec<Client>, String> {
    let permits = Arc::new(Semaphore::new(CONNECTING));
    let mut tasks = JoinSet::new();
    for _ in 0..n {
        let (connect, permits) = (connect.to_owned(), permits.clone());
        tasks.spawn(async move {
            let _p = permits.acquire_owned().await;
            Client::builder(&connect)
                .session_timeout(SESSION_TIMEOUT)
                .connect()
                .await
        });
    }
    let mut clients = Vec::with_capacity(n);
    while let Some(r) = tasks.join_next().await {
        let c = r.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
        clients.push(c);
    }
    Ok(clients)
}

/// Closes every session, so the server does not keep them until they expire.
async fn close_all(clients: Vec<Client>) {
    let permits = Arc::new(Semaphore::new(CONNECTING * 4));
    let mut tasks = JoinSet::new();
    for c in clients {
        let permits = permits.clone();
        tasks.spawn(async move {
            let _p = permits.acquire_owned().await;
            let _ = tokio::time::timeout(Duration::from_secs(5), c.close()).await;
        });
    }
    while tasks.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_line_gives_the_growth_and_the_rates() {
        let out = "noise\nRESULT 100 5000000 1000 1500 2000000 10000000000 4 100\n";
        let r = Idle::parse(out).unwrap();
        assert_eq!((r.sessions, r.rss_growth_kib, r.threads), (100, 500, 4));
        assert!((r.kib_per_session() - 5.0).abs() < 1e-9);
        // 2 ms over 100 sessions and 10 s: 2 µs per session per second.
        assert!((r.us_per_session_second() - 2.0).abs() < 1e-9);
        assert!(Idle::parse("RESULT 1 2").is_err());
        assert!(Idle::parse("").is_err());
    }
}
