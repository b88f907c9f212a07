//! One run: a cache (ours or Curator's) in a child process loads a tree, then a second client
//! here does the setData writes; the child's change events are matched with the writes' acks.

use std::{
    collections::HashMap,
    io::Write,
    net::SocketAddr,
    process::{Command, Stdio},
    sync::Arc,
    time::Duration,
};

use conformance::{peers::Lines, server_received};
use tokio::{sync::Semaphore, task::JoinSet};
use zk_session::{Client, Version};

use crate::{trees::DATA_LEN, wall_nanos};

/// Writes in flight at once: "as fast as it can" from one session.
const WRITE_WINDOW: usize = 100;
const LOAD_LIMIT: Duration = Duration::from_secs(600);

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outcome {
    pub(crate) nodes: u64,
    pub(crate) load: Duration,
    /// Packets the server received from the child's start to the end of its load.
    pub(crate) requests: Option<u64>,
    pub(crate) rss_growth_kb: i64,
    /// Live heap bytes' growth: allocated and not freed (ours), the heap after a GC (JVM).
    pub(crate) heap_growth: Option<i64>,
    /// Change events the cache delivered that match a write.
    pub(crate) events: usize,
    /// From the first write sent to the last event.
    pub(crate) events_span: Duration,
    /// Write ack to event, per matched event, in nanoseconds (may be negative: the event can
    /// reach the cache before the ack reaches the writer).
    pub(crate) latencies: Vec<i64>,
}

fn fields(line: &str, tag: &str) -> Option<Vec<i64>> {
    let rest = line.strip_prefix(tag)?;
    rest.split_whitespace().map(|v| v.parse().ok()).collect()
}

/// Runs the child `cmd` (which speaks the CuratorCacheBench lines) on the tree `paths`.
pub(crate) async fn run(
    mut cmd: Command,
    server: SocketAddr,
    writer: &Client,
    paths: &[String],
    writes: usize,
) -> Result<Outcome, String> {
    let before = server_received(server);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let lines = Lines::follow(child.stdout.take().expect("piped"));
    let mut stdin = child.stdin.take().expect("piped");
    let loaded = lines
        .wait_for(LOAD_LIMIT, |ls, ended| {
            if let Some(e) = ls.iter().find(|l| l.starts_with("ERROR")) {
                return Some(Err(e.clone()));
            }
            let ready = ls.iter().any(|l| l == "READY");
            match ls.iter().find_map(|l| fields(l, "LOADED")) {
                Some(v) if ready => Some(Ok(v)),
                _ if ended => Some(Err("the child ended before its load".to_owned())),
                _ => None,
            }
        })
        .await
        .ok_or("no load within the limit")??;
    let requests = match (before, server_received(server)) {
        (Some(b), Some(a)) => Some(a.saturating_sub(b)),
        _ => None,
    };
    let [nodes, load_ns, rss0, rss1, heap0, heap1] = loaded[..] else {
        return Err(format!("bad LOADED line {loaded:?}"));
    };
    let mut out = Outcome {
        nodes: nodes as u64,
        load: Duration::from_nanos(load_ns as u64),
        requests,
        rss_growth_kb: rss1 - rss0,
        heap_growth: (heap0 >= 0).then_some(heap1 - heap0),
        ..Outcome::default()
    };
    let (first_send, acks) = write_all(writer, paths, writes).await?;
    settle(&lines, &mut stdin, writes).await?;
    writeln!(stdin, "DUMP").map_err(|e| e.to_string())?;
    let dump = lines
        .wait_for(Duration::from_secs(60), |ls, ended| {
            (ended || ls.iter().any(|l| l == "END")).then(|| ls.to_vec())
        })
        .await
        .ok_or("no dump")?;
    drop(stdin);
    let _ = child.wait();
    let mut last = first_send;
    for l in dump.iter().filter_map(|l| l.strip_prefix("EV ")) {
        let mut f = l.split_whitespace();
        let (Some(path), Some(Ok(version)), Some(Ok(at))) = (
            f.next(),
            f.next().map(str::parse::<i32>),
            f.next().map(str::parse::<i64>),
        ) else {
            continue;
        };
        if let Some(ack) = acks.get(&(path.to_owned(), version)) {
            out.events += 1;
            out.latencies.push(at - ack);
            last = last.max(at);
        }
    }
    out.events_span = Duration::from_nanos((last - first_send).max(0) as u64);
    Ok(out)
}

/// `writes` setData of 100 bytes round the tree's znodes, at most [`WRITE_WINDOW`] in flight.
/// Returns when the first was sent and each write's ack time by (path, new version).
async fn write_all(
    writer: &Client,
    paths: &[String],
    writes: usize,
) -> Result<(i64, HashMap<(String, i32), i64>), String> {
    let window = Arc::new(Semaphore::new(WRITE_WINDOW));
    let mut tasks = JoinSet::new();
    let first = wall_nanos();
    for i in 0..writes {
        let permit = window.clone().acquire_owned().await.expect("open");
        let (w, path) = (writer.clone(), paths[i % paths.len()].clone());
        tasks.spawn(async move {
            let stat = w.set_data(&path, &[b'y'; DATA_LEN], Version::Any).await;
            let at = wall_nanos();
            drop(permit);
            stat.map(|s| ((path, s.version), at))
        });
    }
    let mut acks = HashMap::new();
    while let Some(r) = tasks.join_next().await {
        let (key, at) = r.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
        acks.insert(key, at);
    }
    Ok((first, acks))
}

/// Asks the child how many changes it has seen until it has all, or none came for 2 s.
async fn settle(lines: &Lines, stdin: &mut impl Write, writes: usize) -> Result<(), String> {
    let mut last = (0, std::time::Instant::now());
    loop {
        let asked = lines.snapshot().len();
        writeln!(stdin, "COUNT").map_err(|e| e.to_string())?;
        let n = lines
            .wait_for(Duration::from_secs(30), |ls, _| {
                ls[asked.min(ls.len())..]
                    .iter()
                    .find_map(|l| fields(l, "COUNT"))
                    .and_then(|v| v.first().copied())
            })
            .await
            .ok_or("no COUNT answer")?;
        if n as usize >= writes || last.1.elapsed() > Duration::from_secs(2) {
            return Ok(());
        }
        if n != last.0 {
            last = (n, std::time::Instant::now());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
