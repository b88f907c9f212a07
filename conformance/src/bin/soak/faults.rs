//! The fault driver: a seeded random schedule of faults against the ensemble and the client
//! processes, one at a time, each followed by healing (every member running and the ensemble
//! serving with one leader) and a random gap.
//!
//! The schedule is drawn from a "deck" holding every kind of fault in fixed proportions,
//! shuffled with the seeded RNG and dealt until the run's time is up, so that even a short
//! run sees every kind early and the same seed deals the same faults in the same order
//! (with the same durations and member choices; which member leads and which client holds a
//! lock at a given moment depend on timing).

use std::{
    collections::{BTreeMap, HashSet},
    process::Command,
    sync::{Arc, Mutex as StdMutex, MutexGuard},
    thread,
    time::{Duration, Instant},
};

use conformance::{
    sys::{send_signal, Signal},
    Ensemble,
};
use rand::{rngs::StdRng, seq::SliceRandom, RngExt, SeedableRng};

use crate::{netns::Netns, records::now_us};

/// How long healing may take before the driver gives up on a fault's aftermath.
const HEAL_TIMEOUT: Duration = Duration::from_secs(90);

/// The kinds of fault, with their share of the deck.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// kill -9 a random member, restart it after a moment.
    KillMember,
    /// kill -9 the ensemble's leader, restart it after a moment.
    KillLeader,
    /// SIGSTOP a member for up to twice the session timeout, then SIGCONT.
    PauseMember,
    /// Stop a member gracefully (SIGTERM) and start it again.
    RestartMember,
    /// Reset every client connection of a member (`ss -K`), the member itself untouched.
    CutConnections,
    /// SIGSTOP a client process (a lock holder when there is one) past its session timeout:
    /// the "long GC pause".
    ClientPause,
    /// SIGSTOP a client process for well under its session timeout.
    ClientBlip,
    /// kill -9 two of the three members: no quorum for a few seconds.
    QuorumLoss,
    /// Cut the client process in the network namespace off from every member, past its
    /// session timeout: packets dropped, no reset.
    Partition,
    /// The same cut, for less than the session timeout.
    PartitionBlip,
}

const DECK: &[(Kind, usize)] = &[
    (Kind::ClientPause, 3),
    (Kind::KillMember, 2),
    (Kind::CutConnections, 2),
    (Kind::PauseMember, 2),
    (Kind::KillLeader, 1),
    (Kind::RestartMember, 1),
    (Kind::ClientBlip, 1),
    (Kind::QuorumLoss, 1),
    (Kind::Partition, 2),
    (Kind::PartitionBlip, 1),
];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::KillMember => "kill -9 member + restart",
            Kind::KillLeader => "kill -9 leader + restart",
            Kind::PauseMember => "SIGSTOP member",
            Kind::RestartMember => "graceful member restart",
            Kind::CutConnections => "reset client connections (ss -K)",
            Kind::ClientPause => "client process paused past session timeout",
            Kind::ClientBlip => "client process paused briefly",
            Kind::QuorumLoss => "quorum lost (2 of 3 killed)",
            Kind::Partition => "client partitioned past session timeout",
            Kind::PartitionBlip => "client partitioned briefly",
        }
    }
}

/// What the driver knows live about a worker process, from its stdout.
#[derive(Debug, Default)]
pub struct Live {
    /// (ledger, token) of the locks it holds now.
    pub holds: HashSet<(String, u64)>,
    /// Token of its current leadership term, if it leads.
    pub leading: HashSet<u64>,
    pub ready: bool,
    pub done: bool,
    pub last_rss_kb: u64,
}

/// A worker as the fault driver sees it.
#[derive(Debug, Clone)]
pub struct WorkerView {
    pub id: usize,
    pub pid: u32,
    pub live: Arc<StdMutex<Live>>,
}

impl WorkerView {
    /// Its live state; a reader that panicked while holding it does not take it along.
    pub fn state(&self) -> MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The workers among `workers` whose live state passes `test`.
fn workers_where<'a>(
    workers: impl IntoIterator<Item = &'a WorkerView>,
    test: impl Fn(&Live) -> bool,
) -> Vec<&'a WorkerView> {
    workers.into_iter().filter(|w| test(&w.state())).collect()
}

/// A client process pause, or a partition of the client in the network namespace.
#[derive(Debug, Clone)]
pub struct PauseWindow {
    pub worker: usize,
    pub start_us: u64,
    pub end_us: u64,
    /// Past the session timeout.
    pub long: bool,
    /// What it held (ledger, token) when it was paused.
    pub held: Vec<(String, u64)>,
}

/// What the driver did.
#[derive(Debug, Default)]
pub struct FaultLog {
    pub counts: BTreeMap<Kind, u64>,
    pub pauses: Vec<PauseWindow>,
    /// Partitions of the client in the network namespace (it ran on, cut off).
    pub partitions: Vec<PauseWindow>,
    /// Faults that could not be carried out (and why); not client failures.
    pub skipped: Vec<String>,
    /// Moments the ensemble did not come back in time: trouble of the harness or the machine.
    pub heal_failures: Vec<String>,
    /// Connections reset by `ss -K`.
    pub connections_reset: u64,
    /// Total time without a quorum that the driver caused on purpose.
    pub quorum_lost_for: Duration,
}

struct Driver<'a> {
    ens: &'a Ensemble,
    workers: &'a [WorkerView],
    /// The worker in a network namespace, and the namespace.
    partitioned: Option<(usize, &'a Netns)>,
    rng: StdRng,
    t0: Instant,
    session_timeout: Duration,
    log: FaultLog,
}

/// Runs the schedule until `deadline`, then heals everything (members running, clients
/// resumed) and returns what was done.
pub fn run(
    ens: &Ensemble,
    workers: &[WorkerView],
    partitioned: Option<(usize, &Netns)>,
    seed: u64,
    t0: Instant,
    deadline: Instant,
    session_timeout: Duration,
) -> FaultLog {
    let mut d = Driver {
        ens,
        workers,
        partitioned,
        rng: StdRng::seed_from_u64(seed),
        t0,
        session_timeout,
        log: FaultLog::default(),
    };
    let mut deck: Vec<Kind> = Vec::new();
    loop {
        // A gap of calm between faults, which also lets the clients settle.
        let gap = Duration::from_millis(d.rng.random_range(1000..3500));
        if Instant::now() + gap >= deadline {
            break;
        }
        thread::sleep(gap);
        if deck.is_empty() {
            deck = DECK
                .iter()
                .flat_map(|(k, n)| std::iter::repeat_n(*k, *n))
                .collect();
            deck.shuffle(&mut d.rng);
        }
        let Some(kind) = deck.pop() else { break };
        d.inject(kind);
        d.heal();
    }
    d.heal();
    d.log
}

impl Driver<'_> {
    fn say(&self, what: &str) {
        println!("  +{:>7.1}s  {what}", self.t0.elapsed().as_secs_f64());
    }

    fn ms(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(self.rng.random_range(lo..hi))
    }

    fn member_label(&self, i: usize) -> String {
        format!("member {i} ({})", self.ens.server(i).connect_string())
    }

    fn inject(&mut self, kind: Kind) {
        let n = self.ens.len();
        let timeout_ms = self.session_timeout.as_millis() as u64;
        // Drawn whatever the kind, so the RNG's sequence does not depend on the machine.
        let member = self.rng.random_range(0..n);
        let other = (member + self.rng.random_range(1..n)) % n;
        let pick: u64 = self.rng.random();
        let done = match kind {
            Kind::KillMember | Kind::KillLeader => {
                let down = self.ms(300, 3000);
                let victim = if kind == Kind::KillLeader {
                    match self.ens.leader_index() {
                        Some(l) => l,
                        None => {
                            self.skip(kind, "no leader found");
                            return;
                        }
                    }
                } else {
                    member
                };
                self.say(&format!(
                    "{}: {}, down for {:.1} s",
                    kind.name(),
                    self.member_label(victim),
                    down.as_secs_f64()
                ));
                self.ens.server(victim).kill9();
                thread::sleep(down);
                self.start_member(victim)
            }
            Kind::RestartMember => {
                self.say(&format!("{}: {}", kind.name(), self.member_label(member)));
                let restarted = self.ens.server(member).restart();
                self.healed(&format!("restart of member {member}"), restarted)
            }
            Kind::PauseMember => {
                let frozen = self.ms(500, 2 * timeout_ms);
                self.say(&format!(
                    "{}: {} for {:.1} s",
                    kind.name(),
                    self.member_label(member),
                    frozen.as_secs_f64()
                ));
                if let Err(e) = self.ens.server(member).pause() {
                    self.skip(kind, &e.to_string());
                    return;
                }
                thread::sleep(frozen);
                self.ens.server(member).resume().is_ok()
            }
            Kind::CutConnections => {
                let port = self.ens.server(member).client_port();
                let filter = format!("( sport = :{port} )");
                match Command::new("ss")
                    .args(["-K", "-t", "-n", "state", "established", &filter])
                    .output()
                {
                    Ok(out) if out.status.success() => {
                        // One line per socket killed, after the header.
                        let killed = String::from_utf8_lossy(&out.stdout)
                            .lines()
                            .skip(1)
                            .filter(|l| !l.trim().is_empty())
                            .count() as u64;
                        self.log.connections_reset += killed;
                        self.say(&format!(
                            "{}: {}, {killed} connections reset",
                            kind.name(),
                            self.member_label(member)
                        ));
                        true
                    }
                    Ok(out) => {
                        let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
                        self.skip(kind, &format!("ss -K failed: {why}"));
                        return;
                    }
                    Err(e) => {
                        self.skip(kind, &format!("ss not available: {e}"));
                        return;
                    }
                }
            }
            Kind::ClientPause | Kind::ClientBlip => {
                let long = kind == Kind::ClientPause;
                let frozen = if long {
                    self.ms(timeout_ms * 16 / 10, timeout_ms * 26 / 10)
                } else {
                    self.ms(200, (timeout_ms / 3).max(300))
                };
                self.pause_client(kind, pick, frozen, long)
            }
            Kind::QuorumLoss => {
                let down = self.ms(1000, 4000);
                self.say(&format!(
                    "{}: {} and {} for {:.1} s",
                    kind.name(),
                    self.member_label(member),
                    self.member_label(other),
                    down.as_secs_f64()
                ));
                let lost_at = Instant::now();
                self.ens.server(member).kill9();
                self.ens.server(other).kill9();
                thread::sleep(down);
                let a = self.ens.server(member).start_no_wait();
                let b = self.ens.server(other).start_no_wait();
                let ok = a.is_ok() && b.is_ok() && {
                    let healthy = self.ens.wait_healthy(HEAL_TIMEOUT);
                    self.healed("after quorum loss", healthy)
                };
                self.log.quorum_lost_for += lost_at.elapsed();
                ok
            }
            Kind::Partition | Kind::PartitionBlip => {
                let long = kind == Kind::Partition;
                let cut = if long {
                    self.ms(timeout_ms * 16 / 10, timeout_ms * 26 / 10)
                } else {
                    // Either side of the read timeout (2/3 of the session timeout).
                    self.ms(timeout_ms / 4, timeout_ms * 9 / 10)
                };
                self.partition(kind, cut, long)
            }
        };
        if done {
            *self.log.counts.entry(kind).or_default() += 1;
        }
    }

    fn skip(&mut self, kind: Kind, why: &str) {
        self.say(&format!("{}: skipped ({why})", kind.name()));
        self.log.skipped.push(format!("{}: {why}", kind.name()));
    }

    /// Pauses a client process, preferring one that holds a lock (then one that leads).
    fn pause_client(&mut self, kind: Kind, pick: u64, frozen: Duration, long: bool) -> bool {
        let live = workers_where(self.workers, |l| l.ready && !l.done);
        let holders = workers_where(live.iter().copied(), |l| !l.holds.is_empty());
        let leaders = workers_where(live.iter().copied(), |l| !l.leading.is_empty());
        let pool = if !holders.is_empty() {
            holders
        } else if !leaders.is_empty() {
            leaders
        } else {
            live
        };
        if pool.is_empty() {
            self.skip(kind, "no live client process");
            return false;
        }
        let w = pool[(pick % pool.len() as u64) as usize];
        let start_us = now_us();
        if send_signal(w.pid, Signal::Stop).is_err() {
            self.skip(kind, "SIGSTOP failed");
            return false;
        }
        // Read right after the stop: what the frozen process believes it holds.
        let (held, leading) = {
            let l = w.state();
            let mut held: Vec<(String, u64)> = l.holds.iter().cloned().collect();
            held.sort();
            (held, l.leading.iter().copied().collect::<Vec<_>>())
        };
        self.say(&format!(
            "{}: worker {} (pid {}) for {:.1} s, holding {:?}{}",
            kind.name(),
            w.id,
            w.pid,
            frozen.as_secs_f64(),
            held,
            if leading.is_empty() {
                String::new()
            } else {
                format!(", leading (token {leading:?})")
            }
        ));
        thread::sleep(frozen);
        let resumed = send_signal(w.pid, Signal::Cont).is_ok();
        let mut held = held;
        held.extend(leading.into_iter().map(|t| (crate::LEADER.to_owned(), t)));
        self.log.pauses.push(PauseWindow {
            worker: w.id,
            start_us,
            end_us: now_us(),
            long,
            held,
        });
        resumed
    }

    /// Cuts the worker in the network namespace off for `cut`, then heals the link.
    fn partition(&mut self, kind: Kind, cut: Duration, long: bool) -> bool {
        let Some((id, ns)) = self.partitioned else {
            self.skip(kind, "no network namespace on this machine");
            return false;
        };
        let Some(w) = self.workers.iter().find(|w| w.id == id) else {
            self.skip(kind, "the partitioned worker is unknown");
            return false;
        };
        let start_us = now_us();
        if let Err(e) = ns.cut() {
            self.skip(kind, &e);
            return false;
        }
        // What the process believes it holds as the cut begins; it runs on, unlike a pause.
        let mut held: Vec<(String, u64)> = {
            let l = w.state();
            let mut held: Vec<(String, u64)> = l.holds.iter().cloned().collect();
            held.sort();
            held.extend(l.leading.iter().map(|t| (crate::LEADER.to_owned(), *t)));
            held
        };
        held.dedup();
        self.say(&format!(
            "{}: worker {} (pid {}) cut off for {:.1} s, holding {:?}",
            kind.name(),
            w.id,
            w.pid,
            cut.as_secs_f64(),
            held
        ));
        thread::sleep(cut);
        let healed = ns.heal();
        let healed = self.healed("partition heal", healed);
        self.log.partitions.push(PauseWindow {
            worker: w.id,
            start_us,
            end_us: now_us(),
            long,
            held,
        });
        healed
    }

    /// Starts a killed member and waits until it serves.
    fn start_member(&mut self, i: usize) -> bool {
        let started = self.ens.server(i).start();
        self.healed(&format!("start of member {i}"), started)
    }

    /// Whether `result`, a step of healing, succeeded; its error is logged as a heal failure
    /// of `what`.
    fn healed<T, E: std::fmt::Display>(&mut self, what: &str, result: Result<T, E>) -> bool {
        match result {
            Ok(_) => true,
            Err(e) => {
                self.log.heal_failures.push(format!("{what}: {e}"));
                false
            }
        }
    }

    /// Every member running and unpaused, every client process running, and the ensemble
    /// serving with one leader; retried a few times.
    fn heal(&mut self) {
        for w in self.workers {
            let _ = send_signal(w.pid, Signal::Cont);
        }
        if let Some((_, ns)) = self.partitioned {
            let _ = ns.heal();
        }
        for attempt in 0..3 {
            for i in 0..self.ens.len() {
                let s = self.ens.server(i);
                if s.is_paused() {
                    let _ = s.resume();
                }
                if !s.is_running() {
                    let _ = s.start_no_wait();
                }
            }
            match self.ens.wait_healthy(HEAL_TIMEOUT) {
                Ok(_) => return,
                Err(e) => {
                    self.say(&format!(
                        "ensemble not healthy (attempt {}): {e}",
                        attempt + 1
                    ));
                    self.log.heal_failures.push(e.to_string());
                    // Start over whatever does not serve.
                    for (i, m) in self.ens.modes().into_iter().enumerate() {
                        if m.is_none() {
                            let _ = self.ens.server(i).stop();
                        }
                    }
                }
            }
        }
    }
}
