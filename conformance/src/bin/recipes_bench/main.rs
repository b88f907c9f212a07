//! Recipes benchmark: zk-recipes' InterProcessMutex and LeaderSelector beside Curator's InterProcessMutex
//! and LeaderSelector and kazoo's Lock, on one standalone server, in one run.
//!
//! ```sh
//! cargo run --release -p conformance --bin recipes_bench
//! cargo run --release -p conformance --bin recipes_bench -- --secs 2 --rounds 1 --only ours
//! ```
//!
//! InterProcessMutex, with 1, 4 and 16 contenders on one lock path (a session each): every contender
//! loops acquire → (empty critical section) → release. After a warm-up, the acquisitions of
//! `--secs` seconds are counted, and every measured acquisition that follows a release gives
//! one handoff latency: from the moment the previous holder calls release to the moment this
//! acquire returns (with one contender, its own previous release). All contenders of one
//! client live in one process and take their time stamps from one monotonic clock
//! (`CLOCK_MONOTONIC`: `Instant` here, `System.nanoTime()` in the JVM, `time.monotonic_ns()`
//! in Python), so release and acquire stamps of different contenders compare directly:
//! - **ours**: `zk_recipes::InterProcessMutex`, one `zk_session::Client` per contender, as tasks on a
//!   multi-threaded tokio runtime (one worker per core);
//! - **Curator**: `conformance/java/CuratorLockBench.java` (InterProcessMutex, one
//!   CuratorFramework and thread per contender), compiled here with `CuratorPeers.java` and
//!   `BenchArgs.java` by `javac` against Debian's jars; one JVM per contender count and round,
//!   with an extra JIT warm-up;
//! - **kazoo**: `conformance/python/kazoo_lock_bench.py` (Lock with its default node names,
//!   one KazooClient and thread per contender).
//!
//! Every contender also flags the critical section, so two holders at once would show as a
//! violation. Each workload also counts the requests the server received (its `srvr`
//! "Received:" before the first connect and after the last close) per acquisition.
//!
//! Leader failover: 3 participants with auto-requeue on one election path; each leader's task
//! holds for `--hold-ms` and returns. A failover is the time from a task's return to the next
//! leader's task starting; the first `--skip-terms` are warm-up, the next `--terms` are
//! measured. Ours is `zk_recipes::LeaderSelector`, Curator's its
//! `LeaderSelector` (threads in the JVM of its 16-contender lock run).
//!
//! `--rounds` rounds (default 2): per contender count, ours, Curator and kazoo one after the
//! other, in the opposite order in odd rounds, so that each row is measured close together in
//! time. The table shows each client's best round (load from other processes only ever slows
//! a run down), and the figures of every round below it. Medians and p99 are computed here
//! (nearest rank) from the raw samples each client prints, the same way for all.
//!
//! Targets (printed, not asserted): ours at least 1.2× Curator's and kazoo's acquisitions per
//! second, and a lower median handoff than each. Anything that cannot run shows as n/a with
//! the reason. The default run takes about two and a half minutes.

mod ours;
mod peer_runs;
mod report;
mod results;
mod settings;

use std::{env, fs, thread, time::Duration};

use conformance::{
    bench::{self, RunStart},
    peers, Standalone,
};
use zk_session::CreateOptions;

use crate::{
    ours::{close_all, connect_all, ours_elect, ours_lock},
    peer_runs::{Curator, Kazoo},
    report::{report, Results},
    results::{counting, ElectOutcome, LockOutcome},
    settings::{Peer, Settings},
};

const CURATOR_SOURCE: &str = include_str!("../../../java/CuratorLockBench.java");
const KAZOO_SOURCE: &str = include_str!("../../../python/kazoo_lock_bench.py");

const SESSION_TIMEOUT: Duration = Duration::from_secs(30);
/// Stands for "no release yet" in the shared last-release stamp.
const NONE: u64 = u64::MAX;

// ----- main -----

fn main() {
    let set = bench::or_exit(Settings::from_args());
    let start = RunStart::now();
    let zk = bench::start_server(Standalone::builder().max_session_timeout(SESSION_TIMEOUT));
    let connect = zk.connect_string();
    let addr = zk.client_addr();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let base = format!("/recipes-bench-{}", std::process::id());
    let setup = rt.block_on(async {
        let c = connect_all(&connect, 1).await?;
        c[0].create(&base, b"", CreateOptions::persistent())
            .await
            .map_err(|e| format!("create: {e}"))?;
        close_all(c).await;
        Ok::<(), String>(())
    });
    if let Err(e) = setup {
        eprintln!("setting up {base}: {e}");
        std::process::exit(1);
    }
    let tmp = peers::process_dir(&env::temp_dir(), "recipes-bench");
    let want = |p: Peer| set.peers.contains(&p);

    let curator = if want(Peer::Curator) {
        eprintln!("compiling the Curator program…");
        Curator::compile(&tmp)
    } else {
        Err("not selected (--only)".to_owned())
    };
    let kazoo = if want(Peer::Kazoo) {
        Kazoo::prepare(&tmp)
    } else {
        Err("not selected (--only)".to_owned())
    };

    // The server's JIT warms up on a few seconds of contention, unmeasured.
    eprintln!("warming up the server…");
    let warm = format!("{base}/ours/warm-up");
    if let Err(e) = rt.block_on(ours_lock(&connect, &warm, 4, 2.0, 0.5)) {
        eprintln!("server warm-up: {e}");
    }

    // Per round and contender count, the three clients one after the other (in the opposite
    // order in odd rounds), so that each row's figures are taken close together in time.
    let mut lock_runs: Vec<(usize, [Vec<LockOutcome>; 3])> = set
        .contenders
        .iter()
        .map(|&n| (n, Default::default()))
        .collect();
    let mut elect_runs: [Vec<ElectOutcome>; 2] = Default::default();
    let last = set.contenders.len().saturating_sub(1);
    for round in 0..set.timing.rounds {
        for (i, &n) in set.contenders.iter().enumerate() {
            let mut order = Peer::ALL;
            if round % 2 == 1 {
                order.reverse();
            }
            for peer in order {
                if !want(peer) {
                    continue;
                }
                let tag = format!("{round}/{n}");
                let outcome = match peer {
                    Peer::Ours => {
                        eprintln!("round {round}: ours     {n} contenders");
                        let path = format!("{base}/ours/lock-{tag}");
                        let run = counting(addr, || {
                            rt.block_on(ours_lock(
                                &connect,
                                &path,
                                n,
                                set.timing.warmup,
                                set.timing.secs,
                            ))
                        });
                        if i == last {
                            eprintln!("round {round}: ours     election");
                            let path = format!("{base}/ours/elect-{round}");
                            elect_runs[0].push(rt.block_on(ours_elect(&connect, &path, &set)));
                        }
                        run
                    }
                    Peer::Curator => match &curator {
                        Ok(c) => {
                            let mut workloads = vec![format!("lock:{n}")];
                            if i == last {
                                eprintln!("round {round}: Curator  {n} contenders, then election");
                                workloads.push(format!(
                                    "elect:{}:{}:{}",
                                    set.participants,
                                    set.election_terms(),
                                    set.hold_ms
                                ));
                            } else {
                                eprintln!("round {round}: Curator  {n} contenders");
                            }
                            let base = format!("{base}/curator/{tag}");
                            let out = c.run(&connect, &base, &set, &workloads);
                            if i == last {
                                elect_runs[1].push(out.election(&set));
                            }
                            out.lock(n)
                        }
                        Err(e) => Err(e.clone()),
                    },
                    Peer::Kazoo => match &kazoo {
                        Ok(k) => {
                            eprintln!("round {round}: kazoo    {n} contenders");
                            k.run(&connect, &format!("{base}/kazoo/{tag}"), &set, n)
                        }
                        Err(e) => Err(e.clone()),
                    },
                };
                lock_runs[i].1[peer as usize].push(outcome);
            }
        }
    }
    let not_run = |p: Peer| -> String {
        match p {
            Peer::Curator => curator.as_ref().err().cloned(),
            Peer::Kazoo => kazoo.as_ref().err().cloned(),
            Peer::Ours => None,
        }
        .unwrap_or_else(|| "not selected (--only)".to_owned())
    };
    let locks: Vec<(usize, [Vec<LockOutcome>; 3])> = lock_runs
        .into_iter()
        .map(|(n, mut runs)| {
            for p in Peer::ALL {
                if runs[p as usize].is_empty() {
                    runs[p as usize].push(Err(not_run(p)));
                }
            }
            (n, runs)
        })
        .collect();
    for (k, p) in [Peer::Ours, Peer::Curator].into_iter().enumerate() {
        if elect_runs[k].is_empty() {
            elect_runs[k].push(Err(not_run(p)));
        }
    }
    drop(rt);
    let _ = fs::remove_dir_all(&tmp);

    println!(
        "recipes_bench: {} rounds; per mutex workload {} s measured after {} s warm-up (+{} s \
         JIT warm-up per JVM); one standalone ZooKeeper 3.8 (forceSync=no, tickTime 200) on \
         {connect}; zk-recipes on a multi-threaded tokio runtime ({} workers)",
        set.timing.rounds,
        set.timing.secs,
        set.timing.warmup,
        set.timing.jit_warmup,
        thread::available_parallelism().map_or(0, |n| n.get())
    );
    start.print_load();
    report(
        &Results {
            locks,
            elect: elect_runs,
        },
        &set,
    );
    drop(zk);
}
