//! The end of the run: the server's record (ledgers, leftover nodes and watches) and the
//! workers' logs, checked against each other, and the figures printed.
//!
//! The invariants, and how each is checked:
//!
//! 1. Never two lock holders at once. Every fenced write of a hold creates an entry in the
//!    bucket of its fencing token under the lock's ledger, in one transaction with the
//!    guard's check that the lock node exists. On the server's record, per lock: the buckets
//!    in token order must not interleave (the last write of one token, the bucket's pzxid,
//!    comes before the first write of the next, its czxid), all entries of a token come from
//!    one writer in the order it issued them, and the ledger's data/version agree with the
//!    entries (the transactions were atomic).
//! 2. A write made after its lock was lost is never applied: (a) a late write would land
//!    after the next holder's first write and break (1). Half of each hold's writes go to a
//!    second ledger per lock (`store-lock-N`) through the process's storage session, which
//!    outlives a pause of the process: after a pause past the lock session's timeout, only
//!    the server's check of the lock node stands between such a write and the ledger;
//!    (b) every write a worker was told
//!    succeeded is in the ledger, every write it was told was refused is not, and every entry
//!    of the ledger is a write some worker issued; (c) no write issued after the guard's
//!    `lost()` fired was reported successful.
//! 3. Never two leaders at once: the same as (1) and (2) for the leader's ledger, where each
//!    term writes behind the leadership fence.
//! 4. Every request answered exactly once, no client hangs: each worker counts calls issued,
//!    answered, cancelled and hung (unanswered after 60 s) per session; issued must equal
//!    answered + cancelled, with none hung. Reads of a session's own register must return
//!    what it wrote (a reply given to the wrong request, or a stale server, would not). Every
//!    worker must exit cleanly within the stop deadline, and none may die before.
//! 5. Nothing left behind once every client has closed: no children under the lock,
//!    election and register paths, and no watches on any server (`wchc`).
//! 6. Client memory flat: a worker's resident set at the end against its size after the
//!    warm-up; growth above both 50 % and 20 MiB is a violation.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    net::SocketAddr,
    time::{Duration, Instant},
};

use conformance::{four_letter_word, Ensemble};
use zk_session::{Client, Error, ErrorCode};

use crate::{
    faults::FaultLog,
    records::{HoldRec, Outcome, Record, RequestsRec, WriteRec},
};

/// Growth of a worker's resident set that counts as a leak only above both limits.
const RSS_GROWTH_RATIO: f64 = 1.5;
const RSS_GROWTH_KB: u64 = 20 * 1024;

/// Violations printed per check (all are counted).
const SHOW: usize = 15;

// ----- the server's record -----

#[derive(Debug, Clone)]
pub struct Entry {
    pub writer: String,
    pub seq: u64,
    /// The sequence number the server appended.
    pub n: u64,
}

#[derive(Debug, Clone)]
pub struct Bucket {
    pub token: u64,
    pub czxid: i64,
    pub pzxid: i64,
    /// In the server's order.
    pub entries: Vec<Entry>,
}

#[derive(Debug, Clone)]
pub struct Ledger {
    pub name: String,
    pub root_data: String,
    pub root_version: i32,
    /// The ledger znode's mzxid when it was read.
    pub root_mzxid: i64,
    /// In token order.
    pub buckets: Vec<Bucket>,
    /// Every entry's czxid (with its writer and seq), in zxid order: read only when the
    /// ledger znode's version and the entries disagree, to find where.
    pub entry_zxids: Option<Vec<(i64, String, u64)>>,
}

#[derive(Debug, Default)]
pub struct Snapshot {
    pub ledgers: Vec<Ledger>,
    pub leftover_nodes: Vec<String>,
    pub leftover_watches: Vec<String>,
    /// Each server's `wchs` summary at the end.
    pub watch_summaries: Vec<String>,
    pub errors: Vec<String>,
    /// What was gathered about a ledger whose znode version and entries disagree.
    pub diagnostics: Vec<String>,
    /// How long the leftovers took to go (ephemerals of a session that could not close
    /// politely go with its expiry).
    pub leftovers_cleared_after: Option<Duration>,
}

fn parse_entry(name: &str) -> Option<Entry> {
    let mut parts = name.rsplitn(3, '_');
    let n = parts.next()?.parse().ok()?;
    let seq = parts.next()?.parse().ok()?;
    let writer = parts.next()?.to_owned();
    Some(Entry { writer, seq, n })
}

/// Reads a ledger as one state: the ledger znode, then its buckets, then the znode again. A
/// write lands on the znode and an entry in one transaction, so a write applied between the
/// first read and the listing (a worker's last request still in the ensemble's pipeline when
/// the check starts) shows as a changed mzxid, and the ledger is read again; `changed` counts
/// how often. Without this the checker itself could see one entry more than versions.
async fn read_ledger(
    client: &Client,
    name: &str,
    changed: &mut Vec<String>,
) -> Result<Ledger, String> {
    let root = crate::ledger_root(name);
    // At the end of a soak the writers have stopped, so this settles at once; the deadline
    // only bounds a checker that would otherwise spin.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let l = read_ledger_once(client, name).await?;
        let after = client
            .exists(&root)
            .await
            .map_err(|e| format!("{root}: {e}"))?
            .ok_or_else(|| format!("{root} vanished"))?;
        if after.mzxid == l.root_mzxid {
            return Ok(l);
        }
        changed.push(format!(
            "{name}: written while the checker read it (mzxid {:#x} then {:#x}); read again",
            l.root_mzxid, after.mzxid
        ));
        if Instant::now() > deadline {
            return Err(format!("{root}: still changing after 30 s of reads"));
        }
    }
}

async fn read_ledger_once(client: &Client, name: &str) -> Result<Ledger, String> {
    let root = crate::ledger_root(name);
    let (data, stat) = client
        .get_data(&root)
        .await
        .map_err(|e| format!("{root}: {e}"))?;
    let names = client
        .get_children(&root)
        .await
        .map_err(|e| format!("{root}: {e}"))?;
    let mut buckets = Vec::new();
    for chunk in names.chunks(64) {
        let mut set = tokio::task::JoinSet::new();
        for b in chunk {
            let (c, path, b) = (client.clone(), format!("{root}/{b}"), b.clone());
            set.spawn(async move {
                let r = c.get_children_with_stat(&path).await;
                (b, path, r)
            });
        }
        while let Some(joined) = set.join_next().await {
            let (b, path, r) = joined.map_err(|e| e.to_string())?;
            let (children, stat) = r.map_err(|e| format!("{path}: {e}"))?;
            let token = b
                .strip_prefix("h-")
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| format!("{path}: not a bucket name"))?;
            let mut entries = children
                .iter()
                .map(|c| parse_entry(c).ok_or_else(|| format!("{path}/{c}: not an entry name")))
                .collect::<Result<Vec<_>, _>>()?;
            entries.sort_by_key(|e| e.n);
            buckets.push(Bucket {
                token,
                czxid: stat.czxid,
                pzxid: stat.pzxid,
                entries,
            });
        }
    }
    buckets.sort_by_key(|b| b.token);
    Ok(Ledger {
        name: name.to_owned(),
        root_data: String::from_utf8_lossy(&data).into_owned(),
        root_version: stat.version,
        root_mzxid: stat.mzxid,
        buckets,
        entry_zxids: None,
    })
}

fn entries_of(l: &Ledger) -> usize {
    l.buckets.iter().map(|b| b.entries.len()).sum()
}

/// Every entry's czxid, in zxid order.
async fn entry_zxids(client: &Client, l: &Ledger) -> Result<Vec<(i64, String, u64)>, String> {
    let root = crate::ledger_root(&l.name);
    let mut paths = Vec::new();
    for b in &l.buckets {
        for e in &b.entries {
            let name = format!("{}_{}_{:010}", e.writer, e.seq, e.n);
            paths.push((
                format!("{root}/h-{:020}/{name}", b.token),
                e.writer.clone(),
                e.seq,
            ));
        }
    }
    let mut out = Vec::new();
    for chunk in paths.chunks(64) {
        let mut set = tokio::task::JoinSet::new();
        for (p, w, q) in chunk.iter().cloned() {
            let c = client.clone();
            set.spawn(async move { (c.exists(&p).await, p, w, q) });
        }
        while let Some(j) = set.join_next().await {
            let (r, p, w, q) = j.map_err(|e| e.to_string())?;
            match r {
                Ok(Some(st)) => out.push((st.czxid, w, q)),
                Ok(None) => return Err(format!("{p} vanished")),
                Err(e) => return Err(format!("{p}: {e}")),
            }
        }
    }
    out.sort();
    Ok(out)
}

/// How one server sees a ledger: its znode's version and mzxid, and its entry count.
async fn ledger_on(addr: SocketAddr, name: &str) -> String {
    let c = match Client::builder(&addr.to_string())
        .session_timeout(Duration::from_secs(20))
        .request_timeout(Duration::from_secs(30))
        .connect()
        .await
    {
        Ok(c) => c,
        Err(e) => return format!("{addr}: cannot connect: {e}"),
    };
    let _ = c.sync("/").await;
    let r = match read_ledger(&c, name, &mut Vec::new()).await {
        Ok(l) => format!(
            "{addr}: version {}, {} entries in {} buckets",
            l.root_version,
            entries_of(&l),
            l.buckets.len()
        ),
        Err(e) => format!("{addr}: {e}"),
    };
    let stat = c
        .exists(&crate::ledger_root(name))
        .await
        .ok()
        .flatten()
        .map(|st| format!("; znode mzxid {:#x}, pzxid {:#x}", st.mzxid, st.pzxid))
        .unwrap_or_default();
    let _ = c.close().await;
    format!("{r}{stat}")
}

async fn children_or_empty(client: &Client, path: &str) -> Result<Vec<String>, Error> {
    match client.get_children(path).await {
        Ok(c) => Ok(c),
        Err(Error::Code(ErrorCode::NoNode)) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Sessions with watches on a server, from `wchc` (`0x<session>` lines, then its paths).
fn watches_on(addr: SocketAddr) -> Result<(Vec<String>, String), String> {
    let wchc = four_letter_word(addr, "wchc", Duration::from_secs(10))
        .map_err(|e| format!("wchc on {addr}: {e}"))?;
    let wchs = four_letter_word(addr, "wchs", Duration::from_secs(10))
        .map_err(|e| format!("wchs on {addr}: {e}"))?;
    let mut found = Vec::new();
    let mut session = String::new();
    for line in wchc.lines() {
        let t = line.trim();
        if t.starts_with("0x") {
            session = t.to_owned();
        } else if t.starts_with('/') {
            found.push(format!("{addr}: session {session} watches {t}"));
        }
    }
    Ok((found, wchs.split_whitespace().collect::<Vec<_>>().join(" ")))
}

/// Reads the ledgers, then waits (up to twice the session timeout and some) for the
/// ensemble to show no node and no watch of the closed clients.
pub async fn snapshot(ens: &Ensemble, session_timeout: Duration) -> Snapshot {
    let mut snap = Snapshot::default();
    let mut client = None;
    for _ in 0..5 {
        match Client::builder(&ens.connect_string())
            .session_timeout(Duration::from_secs(20))
            .request_timeout(Duration::from_secs(30))
            .connect()
            .await
        {
            Ok(c) => {
                client = Some(c);
                break;
            }
            Err(e) => snap.errors.push(format!("checker cannot connect: {e}")),
        }
    }
    let Some(client) = client else {
        return snap;
    };
    snap.errors.clear();
    if let Err(e) = client.sync("/").await {
        snap.errors.push(format!("sync: {e}"));
    }
    for name in crate::ledger_names() {
        match read_ledger(&client, &name, &mut snap.diagnostics).await {
            Ok(mut l) => {
                if l.root_version as usize != entries_of(&l) {
                    snap.diagnostics.push(format!(
                        "{}: znode version {} but {} entries; as each server has it:",
                        l.name,
                        l.root_version,
                        entries_of(&l)
                    ));
                    for a in ens.client_addrs() {
                        snap.diagnostics
                            .push(format!("  {}", ledger_on(a, &l.name).await));
                    }
                    match entry_zxids(&client, &l).await {
                        Ok(z) => l.entry_zxids = Some(z),
                        Err(e) => snap
                            .diagnostics
                            .push(format!("  cannot read the entries' zxids: {e}")),
                    }
                }
                snap.ledgers.push(l);
            }
            Err(e) => snap.errors.push(format!("reading ledger {name}: {e}")),
        }
    }
    let mut watched: Vec<String> = (0..crate::LOCK_COUNT).map(crate::lock_path).collect();
    watched.push(crate::ELECTION.to_owned());
    watched.push(crate::KV_DIR.to_owned());
    let started = Instant::now();
    let deadline = started + 2 * session_timeout + Duration::from_secs(15);
    loop {
        let mut nodes = Vec::new();
        for p in &watched {
            match children_or_empty(&client, p).await {
                Ok(c) => nodes.extend(c.into_iter().map(|c| format!("{p}/{c}"))),
                Err(e) => nodes.push(format!("{p}: cannot list: {e}")),
            }
        }
        let addrs = ens.client_addrs();
        let (watches, summaries) = tokio::task::spawn_blocking(move || {
            let mut watches = Vec::new();
            let mut summaries = Vec::new();
            for a in addrs {
                match watches_on(a) {
                    Ok((w, s)) => {
                        watches.extend(w);
                        summaries.push(format!("{a}: {s}"));
                    }
                    Err(e) => watches.push(e),
                }
            }
            (watches, summaries)
        })
        .await
        .unwrap_or_default();
        snap.leftover_nodes = nodes;
        snap.leftover_watches = watches;
        snap.watch_summaries = summaries;
        if snap.leftover_nodes.is_empty() && snap.leftover_watches.is_empty() {
            snap.leftovers_cleared_after = Some(started.elapsed());
            break;
        }
        if Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let _ = client.close().await;
    snap
}

// ----- the checks -----

/// A worker process as the driver saw it end.
#[derive(Debug)]
pub struct WorkerResult {
    pub id: usize,
    pub records: Vec<Record>,
    pub bad_lines: usize,
    /// Exited with status 0 within the stop deadline, log complete.
    pub clean_exit: bool,
    pub exit_note: String,
    pub stop_secs: f64,
}

pub struct Inputs<'a> {
    pub seed: u64,
    pub seconds: u64,
    pub clients: usize,
    pub sessions: usize,
    pub session_timeout: Duration,
    pub elapsed: Duration,
    pub faults: &'a FaultLog,
    pub workers: &'a [WorkerResult],
    /// Workers that died before they were told to stop.
    pub early_exits: &'a [String],
    /// Memory samples before this are the warm-up.
    pub warmup_end_us: u64,
}

#[derive(Debug, Default)]
pub struct Report {
    pub figures: Vec<String>,
    pub diagnostics: Vec<String>,
    /// (invariant, violations)
    pub checks: Vec<(String, Vec<String>)>,
}

impl Report {
    pub fn violations(&self) -> usize {
        self.checks.iter().map(|(_, v)| v.len()).sum()
    }

    fn check(&mut self, name: &str, violations: Vec<String>) {
        self.checks.push((name.to_owned(), violations));
    }

    pub fn print(&self) {
        for f in &self.figures {
            println!("{f}");
        }
        if !self.diagnostics.is_empty() {
            println!("\ndiagnostics:");
            for d in &self.diagnostics {
                println!("  {d}");
            }
        }
        println!("\ninvariants:");
        for (name, v) in &self.checks {
            if v.is_empty() {
                println!("  [ok]   {name}");
            } else {
                println!("  [FAIL] {name}: {} violation(s)", v.len());
                for line in v.iter().take(SHOW) {
                    println!("           - {line}");
                }
                if v.len() > SHOW {
                    println!("           … and {} more", v.len() - SHOW);
                }
            }
        }
    }
}

/// `v=<version> z=<zxid>` from an acknowledged write's detail.
fn parse_reply(detail: &str) -> Option<(i32, i64)> {
    let mut it = detail.split_whitespace();
    let v = it.next()?.strip_prefix("v=")?.parse().ok()?;
    let z = i64::from_str_radix(it.next()?.strip_prefix("z=0x")?, 16).ok()?;
    Some((v, z))
}

/// The lock (or leader) ledger a write belongs to: a store ledger's writes are its lock's.
fn hold_ledger(ledger: &str) -> &str {
    ledger.strip_prefix("store-").unwrap_or(ledger)
}

fn worker_of(writer: &str) -> Option<usize> {
    writer.strip_prefix('w')?.split('s').next()?.parse().ok()
}

type WriteKey = (String, u64, String, u64);

fn key(w: &WriteRec) -> WriteKey {
    (w.ledger.clone(), w.token, w.writer.clone(), w.seq)
}

/// Checks (1)/(3) on one ledger: token order on the server, one writer per token, entries in
/// issue order, and the ledger znode agreeing with its entries.
fn ledger_order(l: &Ledger, out: &mut Vec<String>) {
    for pair in l.buckets.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.pzxid >= b.czxid {
            let who = |x: &Bucket| {
                x.entries
                    .first()
                    .map_or("?".to_string(), |e| e.writer.clone())
            };
            out.push(format!(
                "{}: writes under token {} ({}) went on until zxid {:#x}, after token {} ({}) \
                 began writing at zxid {:#x}: two holders at once",
                l.name,
                a.token,
                who(a),
                a.pzxid,
                b.token,
                who(b),
                b.czxid
            ));
        }
    }
    let mut total = 0usize;
    for b in &l.buckets {
        total += b.entries.len();
        let writers: HashSet<&str> = b.entries.iter().map(|e| e.writer.as_str()).collect();
        if writers.len() > 1 {
            out.push(format!(
                "{}: token {} written by {} writers: {writers:?}",
                l.name,
                b.token,
                writers.len()
            ));
        }
        for pair in b.entries.windows(2) {
            if pair[0].writer == pair[1].writer && pair[0].seq >= pair[1].seq {
                out.push(format!(
                    "{}: token {}: write {} of {} applied after its write {}",
                    l.name, b.token, pair[0].seq, pair[0].writer, pair[1].seq
                ));
            }
        }
        if b.entries.is_empty() {
            out.push(format!("{}: empty bucket for token {}", l.name, b.token));
        }
    }
    if l.root_version as usize != total {
        out.push(format!(
            "{}: the ledger znode was set {} times but has {total} entries (each write \
             does both, in one transaction)",
            l.name, l.root_version
        ));
    }
    if let Some(last) = l.buckets.last() {
        if l.root_data != last.token.to_string() {
            out.push(format!(
                "{}: the ledger znode says token {:?}, the newest bucket is {}",
                l.name, l.root_data, last.token
            ));
        }
    }
}

pub fn check(inp: &Inputs, snap: &Snapshot) -> Report {
    let mut rep = Report {
        diagnostics: snap.diagnostics.clone(),
        ..Report::default()
    };
    let mut writes: Vec<&WriteRec> = Vec::new();
    let mut holds: Vec<&HoldRec> = Vec::new();
    let mut requests: Vec<&RequestsRec> = Vec::new();
    let mut worker_violations = Vec::new();
    let mut session_events: BTreeMap<String, u64> = BTreeMap::new();
    let mut connected_writers: HashSet<(usize, String)> = HashSet::new();
    let mut clean: HashSet<usize> = HashSet::new();
    for w in inp.workers {
        if w.clean_exit {
            clean.insert(w.id);
        }
        for r in &w.records {
            match r {
                Record::Write(x) => writes.push(x),
                Record::Hold(x) => holds.push(x),
                Record::Requests(x) => requests.push(x),
                Record::Violation(v) => worker_violations.push(format!("worker {}: {v}", w.id)),
                Record::Session(s) => {
                    *session_events.entry(s.event.clone()).or_default() += 1;
                    if s.event == "Connected" {
                        connected_writers.insert((w.id, s.writer.clone()));
                    }
                }
                Record::Mem { .. } | Record::Exit { .. } => {}
            }
        }
    }

    // ----- figures -----
    let f = &mut rep.figures;
    f.push(format!(
        "\n== soak report: seed {}, {} s asked, {:.0} s run, {} client processes × {} sessions, \
         session timeout {} ms",
        inp.seed,
        inp.seconds,
        inp.elapsed.as_secs_f64(),
        inp.clients,
        inp.sessions,
        inp.session_timeout.as_millis()
    ));
    let total_faults: u64 = inp.faults.counts.values().sum();
    f.push(format!("faults injected: {total_faults}"));
    for (k, n) in &inp.faults.counts {
        f.push(format!("  {:<46} {n}", k.name()));
    }
    f.push(format!(
        "  connections reset by ss -K: {}; time without quorum: {:.1} s",
        inp.faults.connections_reset,
        inp.faults.quorum_lost_for.as_secs_f64()
    ));
    if !inp.faults.skipped.is_empty() {
        f.push(format!("  skipped: {:?}", inp.faults.skipped));
    }
    if !inp.faults.heal_failures.is_empty() {
        f.push(format!(
            "  ensemble slow to heal ({} times; harness/machine, not client): {:?}",
            inp.faults.heal_failures.len(),
            inp.faults.heal_failures
        ));
    }
    let sum = |g: fn(&RequestsRec) -> u64| requests.iter().map(|r| g(r)).sum::<u64>();
    f.push(format!(
        "operations: {} requests issued, {} answered, {} cancelled, {} hung; {} register \
         writes, {} register reads, {} failed calls (connection loss, timeouts, expiry)",
        sum(|r| r.issued),
        sum(|r| r.answered),
        sum(|r| r.cancelled),
        sum(|r| r.hung),
        sum(|r| r.kv_writes),
        sum(|r| r.kv_reads),
        sum(|r| r.errors),
    ));
    let kind_of = |ledger: &str| {
        if ledger == crate::LEADER {
            2
        } else if ledger.starts_with("store-") {
            1
        } else {
            0
        }
    };
    let mut by_outcome: BTreeMap<(u8, &str), u64> = BTreeMap::new();
    for w in &writes {
        *by_outcome
            .entry((kind_of(&w.ledger), w.outcome.as_str()))
            .or_default() += 1;
    }
    let outcomes = |kind: u8| {
        ["ok", "refused", "ambiguous", "cancelled"]
            .iter()
            .map(|o| format!("{} {o}", by_outcome.get(&(kind, *o)).unwrap_or(&0)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    f.push(format!(
        "fenced writes: lock ledgers (holder's session) {}; store ledgers (storage session) \
         {}; leader ledger {}",
        outcomes(0),
        outcomes(1),
        outcomes(2)
    ));
    let lock_holds: Vec<&&HoldRec> = holds.iter().filter(|h| h.ledger != crate::LEADER).collect();
    let mut per_lock: BTreeMap<&str, u64> = BTreeMap::new();
    let mut lock_ends: BTreeMap<String, u64> = BTreeMap::new();
    for h in &lock_holds {
        *per_lock.entry(h.ledger.as_str()).or_default() += 1;
        *lock_ends.entry(h.how.clone()).or_default() += 1;
    }
    let server_holds: Vec<String> = snap
        .ledgers
        .iter()
        .filter(|l| l.name.starts_with("lock-"))
        .map(|l| format!("{} {}", l.name, l.buckets.len()))
        .collect();
    f.push(format!(
        "lock acquisitions: {} ({per_lock:?}); holds that wrote, on the server: {}; \
         how holds ended: {lock_ends:?}",
        lock_holds.len(),
        server_holds.join(", ")
    ));
    let terms: Vec<&&HoldRec> = holds.iter().filter(|h| h.ledger == crate::LEADER).collect();
    let mut term_ends: BTreeMap<&str, u64> = BTreeMap::new();
    for t in &terms {
        *term_ends.entry(t.how.as_str()).or_default() += 1;
    }
    let server_terms = snap
        .ledgers
        .iter()
        .find(|l| l.name == crate::LEADER)
        .map_or(0, |l| l.buckets.len());
    let leader_writers: HashSet<&str> = terms.iter().map(|t| t.writer.as_str()).collect();
    f.push(format!(
        "leader changes: {} terms reported by clients ({} distinct leaders; ended: \
         {term_ends:?}); {server_terms} terms on the server's record",
        terms.len(),
        leader_writers.len()
    ));
    f.push(format!("sessions: {session_events:?}"));

    // Holders paused or partitioned past the session timeout: how they learned, and what
    // their late writes did.
    let hold_index: HashMap<(&str, u64), &HoldRec> = holds
        .iter()
        .map(|h| ((h.ledger.as_str(), h.token), *h))
        .collect();
    let applied: HashSet<WriteKey> = snap
        .ledgers
        .iter()
        .flat_map(|l| {
            l.buckets.iter().flat_map(move |b| {
                b.entries
                    .iter()
                    .map(move |e| (l.name.clone(), b.token, e.writer.clone(), e.seq))
            })
        })
        .collect();
    for (what, windows) in [
        ("client pauses", &inp.faults.pauses),
        ("network partitions", &inp.faults.partitions),
    ] {
        let long: Vec<_> = windows.iter().filter(|p| p.long).collect();
        let mut learned: BTreeMap<String, u64> = BTreeMap::new();
        // (attempted, told ok, applied on the server) for writes issued after the end
        let mut late = (0u64, 0u64, 0u64);
        // From the end to lost() (locks) or to the task's cancellation (terms), in ms.
        let mut told_after: Vec<f64> = Vec::new();
        for p in &long {
            for (ledger, token) in &p.held {
                if let Some(h) = hold_index.get(&(ledger.as_str(), *token)) {
                    let told = if ledger == crate::LEADER {
                        (h.how == "cancelled").then_some(h.end_us)
                    } else {
                        h.lost_us
                    };
                    if let Some(t) = told.filter(|t| *t >= p.end_us) {
                        told_after.push((t - p.end_us) as f64 / 1000.0);
                    }
                }
                let late_writes: Vec<&&WriteRec> = writes
                    .iter()
                    .filter(|w| {
                        hold_ledger(&w.ledger) == ledger
                            && w.token == *token
                            && w.issued_us >= p.end_us
                    })
                    .collect();
                let how = hold_index
                    .get(&(ledger.as_str(), *token))
                    .map_or("no record".to_string(), |h| h.how.clone());
                let kind = if ledger == crate::LEADER {
                    "term"
                } else {
                    "lock"
                };
                let how = if late_writes.is_empty() && (how == "released" || how == "returned") {
                    format!("{how} (no write after the end)")
                } else {
                    how
                };
                *learned.entry(format!("{kind} {how}")).or_default() += 1;
                for w in late_writes {
                    late.0 += 1;
                    if w.outcome == Outcome::Ok {
                        late.1 += 1;
                    }
                    if applied.contains(&key(w)) {
                        late.2 += 1;
                    }
                }
            }
        }
        f.push(format!(
            "{what}: {} past the session timeout ({} while holding a lock or leading), {} \
             brief; holds cut off past the timeout ended: {learned:?}; their writes after the \
             end: {} attempted, {} reported applied, {} applied on the server (possible only \
             if the lock node outlived the fault; the ledger order check covers them)",
            long.len(),
            long.iter().filter(|p| !p.held.is_empty()).count(),
            windows.len() - long.len(),
            late.0,
            late.1,
            late.2
        ));
        told_after.sort_by(f64::total_cmp);
        if !told_after.is_empty() {
            f.push(format!(
                "  holders told after the end: {} times, in {:.0} ms median, {:.0} ms at most",
                told_after.len(),
                told_after[told_after.len() / 2],
                told_after[told_after.len() - 1]
            ));
        }
    }

    // Informational: holds that overlapped in the clients' belief (the server's record above
    // decides safety; a belief overlaps when the older holder has not yet been told).
    let mut believed = 0u64;
    let mut explained = 0u64;
    let mut by_ledger: BTreeMap<&str, Vec<&HoldRec>> = BTreeMap::new();
    for h in &holds {
        by_ledger.entry(h.ledger.as_str()).or_default().push(h);
    }
    for hs in by_ledger.values_mut() {
        hs.sort_by_key(|h| h.token);
        for (i, a) in hs.iter().enumerate() {
            let a_end = a.lost_us.unwrap_or(a.end_us).min(a.end_us);
            for b in &hs[i + 1..] {
                if b.writer != a.writer && b.start_us < a_end {
                    believed += 1;
                    let wa = worker_of(&a.writer);
                    if inp
                        .faults
                        .pauses
                        .iter()
                        .chain(&inp.faults.partitions)
                        .any(|p| {
                            Some(p.worker) == wa && p.start_us < a_end && p.end_us > a.start_us
                        })
                    {
                        explained += 1;
                    }
                }
            }
        }
    }
    f.push(format!(
        "client-side view: {believed} pairs of holds/terms believed at once by their \
         holders ({explained} with the older holder's process paused or cut off meanwhile; the rest \
         within the time it takes to notice a lost connection)"
    ));

    // Memory.
    let mut mem_lines = Vec::new();
    let mut mem_violations = Vec::new();
    for w in inp.workers {
        let samples: Vec<(u64, u64)> = w
            .records
            .iter()
            .filter_map(|r| match r {
                Record::Mem { at_us, rss_kb } => Some((*at_us, *rss_kb)),
                _ => None,
            })
            .collect();
        let first = samples
            .iter()
            .find(|(t, _)| *t >= inp.warmup_end_us)
            .or(samples.first());
        let last = samples.last();
        let peak = samples.iter().map(|(_, k)| *k).max().unwrap_or(0);
        match (first, last) {
            (Some(&(_, a)), Some(&(_, b))) => {
                mem_lines.push(format!(
                    "worker {} {:.1} → {:.1} MiB (peak {:.1})",
                    w.id,
                    a as f64 / 1024.0,
                    b as f64 / 1024.0,
                    peak as f64 / 1024.0
                ));
                if b as f64 > a as f64 * RSS_GROWTH_RATIO && b.saturating_sub(a) > RSS_GROWTH_KB {
                    mem_violations.push(format!(
                        "worker {}: resident set grew from {a} KiB to {b} KiB",
                        w.id
                    ));
                }
            }
            _ => mem_violations.push(format!("worker {}: no memory samples", w.id)),
        }
    }
    f.push(format!(
        "client memory (after warm-up → end): {}",
        mem_lines.join("; ")
    ));
    f.push(format!(
        "workers stopped in: {}",
        inp.workers
            .iter()
            .map(|w| format!("{:.1} s", w.stop_secs))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    f.push(format!(
        "after the clients closed: {}; watches: {}",
        match snap.leftovers_cleared_after {
            Some(d) => format!("no node or watch left ({:.1} s to clear)", d.as_secs_f64()),
            None => "leftovers remained".to_string(),
        },
        snap.watch_summaries.join(" | ")
    ));

    // ----- the checks -----
    let mut v = Vec::new();
    for l in snap.ledgers.iter().filter(|l| l.name != crate::LEADER) {
        ledger_order(l, &mut v);
    }
    rep.check(
        "never two lock holders at once (each lock's ledger: token order, one writer per \
         token, writes in issue order, atomic)",
        v,
    );
    let mut v = Vec::new();
    for l in snap.ledgers.iter().filter(|l| l.name == crate::LEADER) {
        ledger_order(l, &mut v);
    }
    rep.check(
        "never two leaders at once (the leader's ledger: terms strictly increase, never \
         overlap)",
        v,
    );

    // The ledger znode's version, as the server replied to each acknowledged write: it must
    // rise with the zxid, and where the entries' zxids are known, equal the number of
    // entries up to that write.
    let mut v = Vec::new();
    let mut replies: BTreeMap<&str, Vec<(i64, i32, &WriteRec)>> = BTreeMap::new();
    for w in writes.iter().filter(|w| w.outcome == Outcome::Ok) {
        if let Some((ver, z)) = parse_reply(&w.detail) {
            replies
                .entry(w.ledger.as_str())
                .or_default()
                .push((z, ver, w));
        }
    }
    for (name, rs) in replies.iter_mut() {
        rs.sort_by_key(|r| r.0);
        for pair in rs.windows(2) {
            let ((za, va, wa), (zb, vb, wb)) = (pair[0], pair[1]);
            if vb <= va {
                v.push(format!(
                    "{name}: write {} of {} (zxid {za:#x}) made version {va}, and the later \
                     write {} of {} (zxid {zb:#x}) made version {vb}",
                    wa.seq, wa.writer, wb.seq, wb.writer
                ));
            }
        }
        let Some(zx) = snap
            .ledgers
            .iter()
            .find(|l| l.name == *name)
            .and_then(|l| l.entry_zxids.as_ref())
        else {
            continue;
        };
        let mut shown = 0;
        for (z, ver, w) in rs.iter() {
            let nth = zx.partition_point(|(cz, _, _)| cz <= z);
            if *ver as usize != nth && shown < 3 {
                shown += 1;
                let around: Vec<String> = zx[nth.saturating_sub(3)..(nth + 1).min(zx.len())]
                    .iter()
                    .map(|(cz, cw, cs)| format!("{cw}_{cs}@{cz:#x}"))
                    .collect();
                v.push(format!(
                    "{name}: write {} of {} at zxid {z:#x} made version {ver} but is entry \
                     {nth}; entries around it: {}",
                    w.seq,
                    w.writer,
                    around.join(", ")
                ));
            }
        }
    }
    rep.check(
        "each applied write set its ledger znode exactly once (versions in the replies rise \
         with the zxid)",
        v,
    );

    // The ledgers against the workers' logs.
    let on_server = &applied;
    let logged: HashMap<WriteKey, &WriteRec> = writes.iter().map(|w| (key(w), *w)).collect();
    let mut v = Vec::new();
    for w in &writes {
        let there = on_server.contains(&key(w));
        match w.outcome {
            Outcome::Ok if !there => v.push(format!(
                "{} write {} under token {} by {} was acknowledged but is not in the ledger",
                w.ledger, w.seq, w.token, w.writer
            )),
            Outcome::Refused if there => v.push(format!(
                "{} write {} under token {} by {} was refused ({}) but is in the ledger",
                w.ledger, w.seq, w.token, w.writer, w.detail
            )),
            _ => {}
        }
    }
    for k in on_server {
        let from_clean = worker_of(&k.2).is_some_and(|id| clean.contains(&id));
        if from_clean && !logged.contains_key(k) {
            v.push(format!(
                "{} entry {}_{} under token {} was never issued by its writer",
                k.0, k.2, k.3, k.1
            ));
        }
    }
    rep.check(
        "the ledgers hold exactly the writes the clients were told succeeded (plus unsure \
         ones, never refused ones)",
        v,
    );
    let lost_at: HashMap<(&str, u64, &str), u64> = holds
        .iter()
        .filter_map(|h| Some(((h.ledger.as_str(), h.token, h.writer.as_str()), h.lost_us?)))
        .collect();
    let mut v = Vec::new();
    for w in &writes {
        let hold = (hold_ledger(&w.ledger), w.token, w.writer.as_str());
        if let Some(&lost) = lost_at.get(&hold) {
            if w.outcome == Outcome::Ok && w.issued_us > lost {
                v.push(format!(
                    "{} write {} by {} issued {} µs after lost() fired, and reported applied",
                    w.ledger,
                    w.seq,
                    w.writer,
                    w.issued_us - lost
                ));
            }
        }
    }
    rep.check(
        "no write issued after the guard said the lock was lost succeeds",
        v,
    );

    // Requests.
    let mut v = Vec::new();
    for r in &requests {
        if r.issued != r.answered + r.cancelled + r.hung {
            v.push(format!(
                "{}: {} issued but {} answered + {} cancelled + {} hung",
                r.writer, r.issued, r.answered, r.cancelled, r.hung
            ));
        }
        if r.hung > 0 {
            v.push(format!("{}: {} requests never answered", r.writer, r.hung));
        }
    }
    let reported: HashSet<&str> = requests.iter().map(|r| r.writer.as_str()).collect();
    for (id, writer) in &connected_writers {
        if clean.contains(id) && !reported.contains(writer.as_str()) {
            v.push(format!("{writer}: the session never finished"));
        }
    }
    v.extend(worker_violations);
    rep.check(
        "every request answered exactly once; reads see the session's own writes",
        v,
    );
    let mut v: Vec<String> = inp.early_exits.to_vec();
    for w in inp.workers {
        if !w.clean_exit {
            v.push(format!("worker {}: {}", w.id, w.exit_note));
        }
        if w.bad_lines > 0 {
            v.push(format!(
                "worker {}: {} unreadable log lines",
                w.id, w.bad_lines
            ));
        }
    }
    rep.check("no client hangs: every worker exits cleanly when told", v);
    let mut v: Vec<String> = snap
        .leftover_nodes
        .iter()
        .map(|n| format!("node left: {n}"))
        .collect();
    v.extend(
        snap.leftover_watches
            .iter()
            .map(|w| format!("watch left: {w}")),
    );
    v.extend(snap.errors.iter().map(|e| format!("cannot verify: {e}")));
    rep.check(
        "no ephemeral node or watch left behind after all clients close",
        v,
    );
    rep.check(
        "client memory flat (growth over 50 % and 20 MiB fails)",
        mem_violations,
    );
    rep
}

#[cfg(test)]
mod tests {
    use zk_session::{CreateOptions, Op, Version};

    use super::*;

    /// A writer adds entries (each with its ledger znode set, in one multi, as the workers
    /// do) while the checker reads the ledger: every read must see as many versions as
    /// entries. Reading the znode and the buckets once each (as the checker did when the
    /// unexplained "version 4,746, 4,747 entries" was seen) fails this within a few reads.
    /// Writes of the test: about a second of them.
    const WRITES: u64 = 300;

    #[tokio::test]
    async fn a_ledger_written_while_it_is_read_is_read_as_one_state() {
        let server = conformance::shared_standalone();
        let client = Client::builder(&server.connect_string())
            .connect()
            .await
            .unwrap();
        let name = format!("race-{}", std::process::id());
        let root = crate::ledger_root(&name);
        client
            .create_with_parents(&root, b"", &CreateOptions::persistent())
            .await
            .unwrap();
        // Another session writes, as the workers do.
        let other = Client::builder(&server.connect_string())
            .connect()
            .await
            .unwrap();
        let writer = {
            let (client, root) = (other, root.clone());
            tokio::spawn(async move {
                let bucket = format!("{root}/h-{:020}", 1);
                client
                    .create(&bucket, b"", &CreateOptions::persistent())
                    .await
                    .unwrap();
                for n in 1..=WRITES {
                    let ops = [
                        Op::create(
                            format!("{bucket}/w_{n}_"),
                            b"",
                            CreateOptions::persistent_sequential(),
                        ),
                        Op::set_data(root.clone(), b"1", Version::Any),
                    ];
                    client.multi(ops).await.unwrap();
                    // Pauses let a read fit between writes now and then, as at the end of a
                    // soak, when the last writes trickle in.
                    tokio::time::sleep(Duration::from_millis(n % 3)).await;
                }
            })
        };
        let mut rereads: Vec<String> = Vec::new();
        let mut reads = 0;
        while !writer.is_finished() || reads == 0 {
            let l = read_ledger(&client, &name, &mut rereads).await.unwrap();
            assert_eq!(l.root_version as usize, entries_of(&l), "{rereads:?}");
            reads += 1;
        }
        writer.await.unwrap();
        client.delete_all(&root).await.unwrap();
    }
}
