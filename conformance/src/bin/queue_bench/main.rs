//! The queue and discovery benchmark: puts/s and takes/s (one and four consumers) of our
//! DistributedQueue and Curator 5.4's, alternating in the same run against one standalone
//! server; the listings per take on a 100,000-item queue (counted by the test kit's
//! FaultProxy, ours and Curator's); and discovery lookups served from a ServiceProvider and a
//! ServiceCache. Prints tables; BENCHMARKS.md records a run.
//!
//! ```sh
//! cargo run --release -p conformance --bin queue_bench -- [--secs 2] [--items 2000]
//!     [--take-secs 20] [--big 100000] [--rounds 2]
//! ```

mod curator;
mod ours;

use std::{env, time::Duration};

use conformance::{bench, peers, Standalone};

use crate::curator::Curator;

/// What a run does; the command line's flags.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// Seconds of each put run and of the lookup loops.
    pub(crate) secs: f64,
    /// Items in the queue before each take run.
    pub(crate) items: usize,
    /// At most this long for a take run.
    pub(crate) take_secs: f64,
    /// Items in the big queue.
    pub(crate) big: usize,
    /// Rounds of every workload (ours and Curator's alternate; the best of each is shown).
    pub(crate) rounds: usize,
}

const USAGE: &str =
    "usage: queue_bench [--secs S] [--items N] [--take-secs S] [--big N] [--rounds N]";

impl Settings {
    fn from_args() -> Result<Settings, String> {
        let mut s = Settings {
            secs: 2.0,
            items: 2000,
            take_secs: 20.0,
            big: 100_000,
            rounds: 2,
        };
        bench::parse_flags(USAGE, |flag, value| {
            match flag {
                "--secs" => s.secs = bench::seconds(&value()?)?,
                "--take-secs" => s.take_secs = bench::seconds(&value()?)?,
                "--items" => s.items = bench::count(&value()?)?,
                "--big" => s.big = bench::count(&value()?)?,
                "--rounds" => s.rounds = bench::count(&value()?)?,
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        Ok(s)
    }
}

/// A measured run: items and seconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run {
    pub(crate) ops: u64,
    pub(crate) elapsed: Duration,
}

impl Run {
    fn per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The best of `runs` by rate; an error when none worked.
fn best(runs: &[Result<Run, String>]) -> Result<Run, String> {
    runs.iter()
        .filter_map(|r| r.as_ref().ok())
        .copied()
        .max_by(|a, b| a.per_sec().total_cmp(&b.per_sec()))
        .ok_or_else(|| {
            runs.iter()
                .find_map(|r| r.as_ref().err().cloned())
                .unwrap_or_default()
        })
}

fn cell(r: &Result<Run, String>) -> String {
    match r {
        Ok(r) => format!(
            "{:>8} {:>7.2} {:>9.0}",
            r.ops,
            r.elapsed.as_secs_f64(),
            r.per_sec()
        ),
        Err(e) => format!("failed: {e}"),
    }
}

fn main() {
    let set = bench::or_exit(Settings::from_args());
    let start = bench::RunStart::now();
    let zk = bench::start_server(Standalone::builder());
    let connect = zk.connect_string();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let tmp = peers::process_dir(&env::temp_dir(), "queue-bench");
    eprintln!("compiling the Curator program…");
    let curator = Curator::compile(&tmp);
    if let Err(e) = &curator {
        eprintln!("Curator will not run: {e}");
    }
    let base = format!("/queue-bench-{}", std::process::id());

    println!("queue_bench on {connect}: {set:?}");
    start.print_load();
    println!();
    println!("workload   client      items    secs     per s   vs Curator");
    let workloads: [(&str, usize); 3] = [("put", 0), ("take 1", 1), ("take 4", 4)];
    for (w, (name, consumers)) in workloads.iter().enumerate() {
        let (mut mine, mut theirs) = (Vec::new(), Vec::new());
        for round in 0..set.rounds {
            let path = |who: &str| format!("{base}/{w}-{round}-{who}");
            let ours_run = || {
                rt.block_on(async {
                    if *consumers == 0 {
                        ours::put(&connect, &path("ours"), set.secs).await
                    } else {
                        ours::fill(&connect, &path("ours"), set.items).await?;
                        ours::take(&connect, &path("ours"), *consumers, &set).await
                    }
                })
            };
            let curator_run = || -> Result<Run, String> {
                let c = curator.as_ref().map_err(Clone::clone)?;
                if *consumers == 0 {
                    c.put(&connect, &path("curator"), set.secs)
                } else {
                    rt.block_on(ours::fill(&connect, &path("curator"), set.items))?;
                    c.take(
                        &connect,
                        &path("curator"),
                        *consumers,
                        set.items,
                        set.take_secs,
                    )
                }
            };
            // Alternating which goes first, so that neither always meets a fresher server.
            if round % 2 == 0 {
                mine.push(ours_run());
                theirs.push(curator_run());
            } else {
                theirs.push(curator_run());
                mine.push(ours_run());
            }
        }
        let (m, t) = (best(&mine), best(&theirs));
        let ratio = match (&m, &t) {
            (Ok(m), Ok(t)) => format!("{:.2}x", m.per_sec() / t.per_sec()),
            _ => "-".to_owned(),
        };
        println!("{name:<10} zk-recipes {}   {ratio}", cell(&m));
        println!("{name:<10} Curator    {}", cell(&t));
    }

    println!();
    println!(
        "a {}-item queue: listings (getChildren through a FaultProxy) per take, one consumer",
        set.big
    );
    println!("client      takes   listings  per take   takes/s");
    let big = format!("{base}/big");
    match rt.block_on(ours::fill(&connect, &big, set.big)) {
        Err(e) => println!("filling the queue failed: {e}"),
        Ok(()) => {
            let mine = rt.block_on(ours::take_big(zk.client_addr(), &big, 1000, &set));
            let theirs = curator
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|c| rt.block_on(curator::take_big(c, zk.client_addr(), &big, 50, &set)));
            for (who, r) in [("zk-recipes", mine), ("Curator", theirs)] {
                match r {
                    Ok((run, lists)) => println!(
                        "{who:<10} {:>6} {:>10} {:>9.3} {:>9.0}",
                        run.ops,
                        lists,
                        lists as f64 / run.ops.max(1) as f64,
                        run.per_sec()
                    ),
                    Err(e) => println!("{who:<10} failed: {e}"),
                }
            }
        }
    }

    println!();
    println!("discovery lookups (8 instances of one service, a 2nd client registers them)");
    println!("lookup                                lookups    secs     per s");
    let services = format!("{base}/services");
    let theirs = || {
        let c = curator.as_ref().map_err(Clone::clone)?;
        c.lookup(&connect, &services, "api", set.secs)
    };
    match rt.block_on(ours::lookups(&connect, &services, set.secs, theirs)) {
        Ok(rows) => {
            for (what, run) in rows {
                println!("{what:<36} {}", cell(&run));
            }
        }
        Err(e) => println!("failed: {e}"),
    }
    println!();
    start.print_load();
}
