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

//!
//! Where the members' copies of a ledger differ, the checks run on the copy a majority holds
//! and the difference is reported apart, as a server fault (see [`crate::replicas`]).
//! The figures printed beside the checks are in [`crate::figures`].

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    time::Duration,
};

use crate::{
    faults::FaultLog,
    ledger::{Bucket, Ledger},
    records::{HoldRec, Outcome, Record, RequestsRec, WriteRec},
    snapshot::Snapshot,
};

/// Growth of a worker's resident set that counts as a leak only above both limits.
pub const RSS_GROWTH_RATIO: f64 = 1.5;
pub const RSS_GROWTH_KB: u64 = 20 * 1024;

/// Violations printed per check (all are counted).
const SHOW: usize = 15;

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
    /// Members whose copies differ from the quorum's (not a client invariant).
    pub server_faults: Vec<String>,
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
        if !self.server_faults.is_empty() {
            println!(
                "\nserver faults: the members' copies differ; the checks below judge the \
                 copy a majority holds:"
            );
            for d in &self.server_faults {
                println!("  [SERVER] {d}");
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
pub fn hold_ledger(ledger: &str) -> &str {
    ledger.strip_prefix("store-").unwrap_or(ledger)
}

pub fn worker_of(writer: &str) -> Option<usize> {
    writer.strip_prefix('w')?.split('s').next()?.parse().ok()
}

pub type WriteKey = (String, u64, String, u64);

pub fn key(w: &WriteRec) -> WriteKey {
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

/// The workers' records, by kind.
pub struct Logs<'a> {
    pub writes: Vec<&'a WriteRec>,
    pub holds: Vec<&'a HoldRec>,
    pub requests: Vec<&'a RequestsRec>,
    pub worker_violations: Vec<String>,
    pub session_events: BTreeMap<String, u64>,
    pub connected_writers: HashSet<(usize, String)>,
    /// Workers that exited cleanly.
    pub clean: HashSet<usize>,
}

impl<'a> Logs<'a> {
    fn gather(inp: &Inputs<'a>) -> Self {
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
        Logs {
            writes,
            holds,
            requests,
            worker_violations,
            session_events,
            connected_writers,
            clean,
        }
    }
}

/// Every entry on the server's record, by its write's key.
pub fn applied(snap: &Snapshot) -> HashSet<WriteKey> {
    snap.ledgers
        .iter()
        .flat_map(|l| {
            l.buckets.iter().flat_map(move |b| {
                b.entries
                    .iter()
                    .map(move |e| (l.name.clone(), b.token, e.writer.clone(), e.seq))
            })
        })
        .collect()
}

pub fn check(inp: &Inputs, snap: &Snapshot) -> Report {
    let logs = Logs::gather(inp);
    let (figures, mem_violations) = crate::figures::figures(inp, snap, &logs);
    let mut rep = Report {
        figures,
        diagnostics: snap.diagnostics.clone(),
        server_faults: snap.server_faults.clone(),
        ..Report::default()
    };
    ledger_checks(&mut rep, snap);
    version_check(&mut rep, snap, &logs);
    log_checks(&mut rep, snap, &logs);
    client_checks(&mut rep, inp, snap, &logs);
    rep.check(
        "client memory flat (growth over 50 % and 20 MiB fails)",
        mem_violations,
    );
    rep
}

/// The ledgers' own shape: for each lock, and for the leader.
fn ledger_checks(rep: &mut Report, snap: &Snapshot) {
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
}

/// The ledger znode's version, as the server replied to each acknowledged write: it must rise
/// with the zxid, and where the entries' zxids are known, equal the number of entries up to
/// that write.
fn version_check(rep: &mut Report, snap: &Snapshot, logs: &Logs) {
    let writes = &logs.writes;
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
}

/// The ledgers against the workers' logs.
fn log_checks(rep: &mut Report, snap: &Snapshot, logs: &Logs) {
    let Logs {
        writes,
        holds,
        clean,
        ..
    } = logs;
    let applied = applied(snap);
    let on_server = &applied;
    let logged: HashMap<WriteKey, &WriteRec> = writes.iter().map(|w| (key(w), *w)).collect();
    let mut v = Vec::new();
    for w in writes.iter() {
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
    for w in writes.iter() {
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
}

/// Requests answered, workers' exits, and what the clients left behind.
fn client_checks(rep: &mut Report, inp: &Inputs, snap: &Snapshot, logs: &Logs) {
    let Logs {
        requests,
        connected_writers,
        clean,
        ..
    } = logs;
    let mut worker_violations = logs.worker_violations.clone();
    let mut v = Vec::new();
    for r in requests.iter() {
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
    for (id, writer) in connected_writers.iter() {
        if clean.contains(id) && !reported.contains(writer.as_str()) {
            v.push(format!("{writer}: the session never finished"));
        }
    }
    v.append(&mut worker_violations);
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
}
