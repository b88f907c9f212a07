//! The client processes: this program started again as `soak worker …`.
//!
//! A worker runs one or more session slots. Each slot keeps a ZooKeeper session and, on it,
//! at once:
//! - a lock task: acquire one of the lock paths, make a few fenced writes to that lock's
//!   ledgers, release; over and over. The writes alternate between the lock's ledger, through
//!   `InterProcessMutexGuard::fenced_multi` on the holder's own session, and the lock's store ledger,
//!   through the process's storage session (20 s timeout, outliving any pause) behind a check
//!   of the guard's lock node;
//! - an election participant (a `LeaderSelector` with auto-requeue) whose term writes to the
//!   leader's ledger behind the leadership fence;
//! - a key-value task: writes to its own ephemeral register and reads it back (several reads
//!   pipelined), checking each read against what the session wrote.
//!
//! When the session ends (expired after a pause, say), the slot goes on with a new one and a
//! new writer name: even slots with a new client, odd slots on the same client, which
//! re-creates its session itself (`OnExpiry::NewSession`), keeping the slot's mutexes and
//! leader selector (see [`slots`]). Every write and hold is logged (see [`crate::records`]); a few live events go
//! to stdout for the driver (`HOLD`, `FREE`, `LEAD`, `UNLEAD`, `RSS`, `READY`, `DONE`).
//! A line `stop` on stdin (or its end) makes the worker leave everything, close its sessions
//! and exit.

use conformance::ephemeral_owner;
use std::{
    future::Future,
    io::BufRead,
    path::PathBuf,
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc, Mutex as StdMutex,
    },
    time::Duration,
};

use rand::{rngs::SmallRng, RngExt};
use tokio::sync::watch;
use zk_recipes::{
    InterProcessMutex, InterProcessMutexGuard, LeaderSelector, Leadership, LostReason, RecipeError,
};
use zk_session::{Client, OnExpiry};

use crate::records::{now_us, HoldRec, LogFile, Outcome, Record, RequestsRec};

mod fenced;
mod register;
mod slots;

use fenced::{Fence, LedgerWriter};
use register::kv_task;

/// A request (or recipe call) not answered after this long counts as hung. Far beyond the
/// request timeout, the longest acquire wait and the longest pause the driver inflicts.
const HANG_LIMIT: Duration = Duration::from_secs(60);

/// Every request of a worker session gives up after this (`RequestTimeout`).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(8);

/// The storage session's timeout: longer than any pause of the process.
const STORAGE_SESSION_TIMEOUT: Duration = Duration::from_secs(20);

/// How often the resident set size is sampled.
const RSS_EVERY: Duration = Duration::from_secs(2);

/// The worker's command line, after `soak worker`.
#[derive(Debug, Clone)]
pub struct Args {
    pub id: usize,
    pub hosts: String,
    pub seed: u64,
    pub sessions: usize,
    pub log: PathBuf,
    pub session_timeout: Duration,
}

impl Args {
    pub fn to_argv(&self) -> Vec<String> {
        vec![
            "worker".into(),
            self.id.to_string(),
            self.hosts.clone(),
            self.seed.to_string(),
            self.sessions.to_string(),
            self.log.display().to_string(),
            self.session_timeout.as_millis().to_string(),
        ]
    }

    pub fn parse(argv: &[String]) -> Option<Args> {
        match argv {
            [id, hosts, seed, sessions, log, timeout_ms] => Some(Args {
                id: id.parse().ok()?,
                hosts: hosts.clone(),
                seed: seed.parse().ok()?,
                sessions: sessions.parse().ok()?,
                log: PathBuf::from(log),
                session_timeout: Duration::from_millis(timeout_ms.parse().ok()?),
            }),
            _ => None,
        }
    }
}

/// Runs the worker; the process's exit code.
pub fn main(args: Args) -> i32 {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("worker {}: no runtime: {e}", args.id);
            return 3;
        }
    };
    let log = match LogFile::create(&args.log) {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "worker {}: cannot create {}: {e}",
                args.id,
                args.log.display()
            );
            return 3;
        }
    };
    rt.block_on(run(args, log));
    0
}

fn say(line: &str) {
    // stdout is line-buffered: each line reaches the driver at once.
    println!("{line}");
}

struct Worker {
    args: Args,
    log: LogFile,
    stop: watch::Receiver<bool>,
    ready: AtomicBool,
    /// The storage session, shared by the slots; replaced if it ever ends.
    storage: tokio::sync::Mutex<Option<Client>>,
}

impl Worker {
    /// The storage session (a long session timeout, so that it outlives the pauses the
    /// driver inflicts on this process); `None` while no server takes a new one.
    async fn storage(&self) -> Option<Client> {
        let mut slot = self.storage.lock().await;
        if let Some(c) = slot.as_ref() {
            if !c.state().is_terminal() {
                return Some(c.clone());
            }
        }
        let c = Client::builder(&self.args.hosts)
            .session_timeout(STORAGE_SESSION_TIMEOUT)
            // One client per session: the soak counts a new session as a new writer.
            .on_session_expiry(OnExpiry::End)
            .operation_timeout(REQUEST_TIMEOUT)
            .connect()
            .await
            .ok()?;
        *slot = Some(c.clone());
        Some(c)
    }

    fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    fn violation(&self, what: String) {
        eprintln!("worker {}: VIOLATION {what}", self.args.id);
        self.log.emit(&Record::Violation(what));
    }
}

async fn run(args: Args, log: LogFile) {
    let (stop_tx, stop) = watch::channel(false);
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut line = String::new();
        loop {
            line.clear();
            match stdin.lock().read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) if line.trim() == "stop" => break,
                Ok(_) => {}
            }
        }
        let _ = stop_tx.send(true);
    });
    let w = Arc::new(Worker {
        args,
        log,
        stop,
        ready: AtomicBool::new(false),
        storage: tokio::sync::Mutex::new(None),
    });
    let sampler = tokio::spawn(sample_rss(w.clone()));
    let mut tasks = tokio::task::JoinSet::new();
    for slot in 0..w.args.sessions {
        tasks.spawn(slots::run(w.clone(), slot));
    }
    while let Some(r) = tasks.join_next().await {
        if let Err(e) = r {
            w.violation(format!("worker {} slot task failed: {e}", w.args.id));
        }
    }
    if let Some(c) = w.storage.lock().await.take() {
        let _ = tokio::time::timeout(HANG_LIMIT, c.close()).await;
    }
    sampler.abort();
    record_rss(&w);
    w.log.emit(&Record::Exit { at_us: now_us() });
    say("DONE");
}

fn rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn record_rss(w: &Worker) {
    if let Some(kb) = rss_kb() {
        w.log.emit(&Record::Mem {
            at_us: now_us(),
            rss_kb: kb,
        });
        say(&format!("RSS {kb}"));
    }
}

async fn sample_rss(w: Arc<Worker>) {
    loop {
        record_rss(&w);
        tokio::time::sleep(RSS_EVERY).await;
    }
}

/// Request counts of one session, for "every request answered exactly once".
#[derive(Debug, Default)]
struct Counters {
    issued: AtomicU64,
    answered: AtomicU64,
    cancelled: AtomicU64,
    hung: AtomicU64,
    kv_writes: AtomicU64,
    kv_reads: AtomicU64,
    errors: AtomicU64,
}

/// One session of a slot and what its tasks share.
struct Sess {
    w: Arc<Worker>,
    writer: String,
    client: Client,
    /// The session this writer is: a re-created session (`OnExpiry::NewSession`) is a new
    /// writer on the same client.
    session_id: i64,
    seq: AtomicU64,
    rng: StdMutex<SmallRng>,
    req: Counters,
}

/// Counts a call as cancelled when dropped before it was answered.
struct Unanswered<'a> {
    c: &'a Counters,
    armed: bool,
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.c.cancelled.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The writer's request counts go to the log when the last task using it lets go of it: a
/// leader's term can outlive its session's turn in the slot.
impl Drop for Sess {
    fn drop(&mut self) {
        self.w.log.emit(&Record::Requests(self.requests_record()));
    }
}

impl Sess {
    fn rand<T, R>(&self, range: R) -> T
    where
        T: rand::distr::uniform::SampleUniform,
        R: rand::distr::uniform::SampleRange<T>,
    {
        self.rng
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .random_range(range)
    }

    fn pause(&self, lo_ms: u64, hi_ms: u64) -> tokio::time::Sleep {
        tokio::time::sleep(Duration::from_millis(self.rand(lo_ms..hi_ms)))
    }

    /// Stop (driver's order), a session that can never come back, or a client that has moved
    /// on to a new session.
    fn should_end(&self) -> bool {
        self.w.stopping()
            || self.client.state().is_terminal()
            || ephemeral_owner(&self.client) != self.session_id
    }

    /// Issues one call, counting it as issued and then answered (or cancelled, when the
    /// future is dropped first, or hung, when it takes longer than [`HANG_LIMIT`]).
    async fn counted<F: Future>(&self, what: &str, fut: F) -> Option<F::Output> {
        self.req.issued.fetch_add(1, Ordering::Relaxed);
        let mut pending = Unanswered {
            c: &self.req,
            armed: true,
        };
        let r = tokio::time::timeout(HANG_LIMIT, fut).await;
        pending.armed = false;
        match r {
            Ok(v) => {
                self.req.answered.fetch_add(1, Ordering::Relaxed);
                Some(v)
            }
            Err(_) => {
                self.req.hung.fetch_add(1, Ordering::Relaxed);
                self.w.violation(format!(
                    "{}: {what} not answered within {HANG_LIMIT:?}",
                    self.writer
                ));
                None
            }
        }
    }

    fn error(&self) {
        self.req.errors.fetch_add(1, Ordering::Relaxed);
    }

    fn requests_record(&self) -> RequestsRec {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        RequestsRec {
            writer: self.writer.clone(),
            issued: g(&self.req.issued),
            answered: g(&self.req.answered),
            cancelled: g(&self.req.cancelled),
            hung: g(&self.req.hung),
            kv_writes: g(&self.req.kv_writes),
            kv_reads: g(&self.req.kv_reads),
            errors: g(&self.req.errors),
        }
    }
}

// ----- the lock task -----

/// One mutex per lock path, on `client`.
fn mutexes(client: &Client) -> Vec<InterProcessMutex> {
    (0..crate::LOCK_COUNT)
        .map(|i| InterProcessMutex::new(client.clone(), crate::lock_path(i)))
        .collect()
}

async fn lock_task(s: Arc<Sess>, mutexes: &[InterProcessMutex]) {
    while !s.should_end() {
        let i = s.rand(0..mutexes.len());
        let wait = Duration::from_millis(s.rand(500..3000));
        match s.counted("acquire", mutexes[i].acquire_timeout(wait)).await {
            Some(Ok(guard)) => hold(&s, &crate::lock_name(i), guard).await,
            Some(Err(RecipeError::Timeout)) | None => {}
            Some(Err(_)) => {
                s.error();
                if s.should_end() {
                    break;
                }
                s.pause(50, 200).await;
            }
        }
        s.pause(0, 50).await;
    }
}

/// One hold: a few fenced writes, watching `lost()` all along, then release.
async fn hold(s: &Sess, ledger: &str, guard: InterProcessMutexGuard) {
    let token = guard.fencing_token();
    let start_us = now_us();
    say(&format!("HOLD {ledger} {token}"));
    let lost: StdMutex<Option<(u64, LostReason)>> = StdMutex::new(None);
    let writes = s.rand(2..=6);
    let mut lw = LedgerWriter::new(s, ledger, token);
    let store_ledger = crate::store_name(ledger);
    let mut sw = LedgerWriter::new(s, &store_ledger, token);
    let storage = s.w.storage().await;
    let how = {
        // Records when the guard says the lock is lost; the writes go on regardless, so that
        // the guard itself must refuse them.
        let watcher = async {
            let r = guard.lost().await;
            *lost.lock().unwrap_or_else(|e| e.into_inner()) = Some((now_us(), r));
            std::future::pending::<()>().await
        };
        let work = async {
            for i in 0..writes {
                // Every other write goes through the storage session.
                let outcome = match &storage {
                    Some(c) if i % 2 == 1 => sw.write(Fence::Store(&guard, c)).await,
                    _ => lw.write(Fence::Lock(&guard)).await,
                };
                if outcome == Outcome::Refused {
                    return "refused";
                }
                if s.w.stopping() {
                    break;
                }
                s.pause(20, 200).await;
            }
            "released"
        };
        tokio::select! {
            _ = watcher => unreachable!("the watcher never completes"),
            how = work => how,
        }
    };
    let lost = *lost.lock().unwrap_or_else(|e| e.into_inner());
    // The holder's belief ends when it starts to let go.
    let end_us = now_us();
    if !matches!(s.counted("release", guard.release()).await, Some(Ok(()))) {
        s.error();
    }
    s.w.log.emit(&Record::Hold(HoldRec {
        ledger: ledger.to_owned(),
        token,
        writer: s.writer.clone(),
        start_us,
        end_us,
        how: match lost {
            Some((_, r)) => format!("lost:{r:?}"),
            None => how.to_string(),
        },
        lost_us: lost.map(|(t, _)| t),
    }));
    say(&format!("FREE {ledger} {token}"));
}

// ----- the election -----

/// A selector whose terms are written by the slot's current writer (`current` is swapped
/// when the client moves on to a new session); `None` when the client ended before it
/// joined.
async fn start_selector(
    client: &Client,
    current: Arc<StdMutex<Arc<Sess>>>,
) -> Option<LeaderSelector> {
    let id = lock(&current).writer.clone();
    LeaderSelector::builder(client.clone(), crate::ELECTION)
        .task(move |lead: Leadership| {
            let s = lock(&current).clone();
            async move { term(s, lead).await }
        })
        .id(id)
        .auto_requeue(true)
        .start()
        .await
        .ok()
}

fn lock<T>(m: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Logs a term when it ends, also when the selector cancels (drops) the task.
struct Term {
    s: Arc<Sess>,
    token: u64,
    start_us: u64,
    how: &'static str,
}

impl Drop for Term {
    fn drop(&mut self) {
        self.s.w.log.emit(&Record::Hold(HoldRec {
            ledger: crate::LEADER.to_owned(),
            token: self.token,
            writer: self.s.writer.clone(),
            start_us: self.start_us,
            end_us: now_us(),
            how: self.how.to_owned(),
            lost_us: None,
        }));
        say(&format!("UNLEAD {}", self.token));
    }
}

/// One term of leadership: a few fenced writes of the term to the leader's ledger, then
/// step down (and queue again).
async fn term(s: Arc<Sess>, lead: Leadership) {
    let token = lead.fencing_token();
    say(&format!("LEAD {token}"));
    let mut rec = Term {
        s: s.clone(),
        token,
        start_us: now_us(),
        how: "cancelled",
    };
    let mut lw = LedgerWriter::new(&s, crate::LEADER, token);
    for _ in 0..s.rand(2..=6) {
        if lw.write(Fence::Lead(&lead)).await == Outcome::Refused {
            rec.how = "refused";
            return;
        }
        s.pause(50, 300).await;
    }
    rec.how = "returned";
}
