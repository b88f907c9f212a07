//! What the benchmark programs (`recipes_bench`, `session_bench`, `scale_bench`) share: the
//! timing settings and their command-line flags, the loop over the command line, the start of
//! a run (a standalone server, the wall clock and the load average printed beside the
//! tables), and a measured stretch of throughput.
//!
//! ```no_run
//! use conformance::{bench, Standalone};
//!
//! let mut timing = bench::Timing { secs: 2.0, warmup: 1.0, jit_warmup: 2.0, rounds: 2 };
//! let parsed = bench::parse_flags("usage: my_bench [--secs S]", |flag, value| timing.flag(flag, value));
//! bench::or_exit(parsed);
//! let start = bench::RunStart::now();
//! let zk = bench::start_server(Standalone::builder());
//! println!("my_bench on {}", zk.connect_string());
//! start.print_load();
//! ```

use std::time::{Duration, Instant};

use crate::{load_average, Standalone, StandaloneBuilder};

/// How long a benchmark measures and warms up, and how often it repeats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Measured seconds per workload (`--secs`).
    pub secs: f64,
    /// Unmeasured seconds before each workload (`--warmup`).
    pub warmup: f64,
    /// Extra unmeasured seconds for the JVM's JIT (`--jit-warmup`).
    pub jit_warmup: f64,
    /// Rounds of every workload; the tables show each client's best (`--rounds`, at least 1).
    pub rounds: usize,
}

impl Timing {
    /// Takes `flag` if it is one of the timing flags, reading its value with `value`; returns
    /// whether it did.
    pub fn flag(
        &mut self,
        flag: &str,
        value: &mut dyn FnMut() -> Result<String, String>,
    ) -> Result<bool, String> {
        match flag {
            "--secs" => self.secs = seconds(&value()?)?,
            "--warmup" => self.warmup = seconds(&value()?)?,
            "--jit-warmup" => self.jit_warmup = seconds(&value()?)?,
            "--rounds" => self.rounds = count(&value()?)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// A number of seconds given on the command line.
pub fn seconds(v: &str) -> Result<f64, String> {
    v.parse::<f64>().map_err(|e| format!("{v}: {e}"))
}

/// A count of at least 1 given on the command line (a fraction is cut off).
pub fn count(v: &str) -> Result<usize, String> {
    Ok(seconds(v)?.max(1.0) as usize)
}

/// The items of `all` that the comma-separated `list` names (by `name`), in its order; an
/// unknown name is an error saying "unknown {what}".
pub fn pick<T: Copy, S: AsRef<str>>(
    list: &str,
    all: &[T],
    name: impl Fn(T) -> S,
    what: &str,
) -> Result<Vec<T>, String> {
    list.split(',')
        .map(|p| {
            all.iter()
                .copied()
                .find(|x| name(*x).as_ref() == p)
                .ok_or_else(|| format!("unknown {what} {p}"))
        })
        .collect()
}

/// Walks the program's arguments: `-h`/`--help` is an error carrying `usage`, any other flag
/// goes to `flag` with a way to read its value; a flag it does not take is an error.
pub fn parse_flags(
    usage: &str,
    mut flag: impl FnMut(&str, &mut dyn FnMut() -> Result<String, String>) -> Result<bool, String>,
) -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "-h" || a == "--help" {
            return Err(usage.to_owned());
        }
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        if !flag(&a, &mut value)? {
            return Err(format!("unknown argument {a}"));
        }
    }
    Ok(())
}

/// The parsed settings, or (on a bad command line or `--help`) the message on stderr and exit
/// status 2.
pub fn or_exit<T>(parsed: Result<T, String>) -> T {
    parsed.unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    })
}

/// Starts a run's standalone server, or says why it cannot and exits with status 1.
pub fn start_server(server: StandaloneBuilder) -> Standalone {
    eprintln!("starting a standalone ZooKeeper server…");
    server.start().unwrap_or_else(|e| {
        eprintln!("cannot start ZooKeeper: {e}");
        std::process::exit(1);
    })
}

/// When a run started and the machine's load then, for the line under the heading.
#[derive(Debug, Clone)]
pub struct RunStart {
    at: Instant,
    load_before: String,
}

impl RunStart {
    /// Now, and the load average now.
    pub fn now() -> RunStart {
        RunStart {
            at: Instant::now(),
            load_before: load_average(),
        }
    }

    /// Prints the load average before and now, and the time the run took.
    pub fn print_load(&self) {
        println!(
            "load average before: {}; after: {}; total time {:.0} s",
            self.load_before,
            load_average(),
            self.at.elapsed().as_secs_f64()
        );
    }
}

/// One measured stretch of a throughput workload: the ops completed, in how long, the client
/// process's CPU time over the same interval, and how many of the ops failed.
///
/// ```
/// use std::time::Duration;
/// use conformance::bench::Throughput;
///
/// let t = Throughput {
///     ops: 2000,
///     elapsed: Duration::from_secs(2),
///     cpu: Duration::from_millis(100),
///     errors: 0,
/// };
/// assert_eq!(t.ops_per_sec(), 1000.0);
/// assert_eq!(t.cpu_us_per_op(), 50.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throughput {
    pub ops: u64,
    pub elapsed: Duration,
    pub cpu: Duration,
    pub errors: u64,
}

impl Throughput {
    /// Ops per second of `elapsed`.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64()
    }

    /// Microseconds of CPU time per op (all of it, when there was no op).
    pub fn cpu_us_per_op(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.ops.max(1) as f64
    }
}
