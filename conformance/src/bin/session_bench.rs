//! Session benchmark: zk-session against the server-bound limit, the ZooKeeper Java client
//! 3.8 and kazoo, on one standalone server, in one run.
//!
//! ```sh
//! cargo run --release -p conformance --bin session_bench
//! cargo run --release -p conformance --bin session_bench -- --secs 2 --reps 2 --only raw,ours
//! cargo run --release -p conformance --bin session_bench -- --tls --only raw,ours --workloads get:1,get:64
//! ```
//!
//! `--tls` gives the server a TLS port beside the plain one (so both are served by the Netty
//! connection factory, not the default NIO one), runs a second zk-session client over mutual
//! TLS after ours in every round, and adds a table of the two side by side.
//!
//! Workloads (each at its window: that many requests kept in flight on one session):
//! - getData of a 100-byte znode at windows 1, 64 and 512;
//! - create + delete pairs (100 bytes of data) at window 64; an op is one pair.
//!
//! Clients:
//! - **raw**: one `TcpStream`, handshake by hand with zk-proto, then a blocking loop that keeps
//!   `window` pre-encoded request frames in flight and counts reply frames by their length
//!   prefix without decoding them (it only looks at the error field of each reply header, so
//!   that a run of error replies cannot pass for throughput). The server-bound limit.
//! - **ours**: a zk-session `Client` on a multi-threaded tokio runtime; `window` tasks, each
//!   awaiting one request after another on a clone of the client.
//! - **Java**: `conformance/java/JavaClientBench.java`, compiled here with the machine's
//!   `javac` against Debian's jars; async API, a semaphore of `window` permits.
//! - **kazoo**: `conformance/python/kazoo_bench.py`; `get_async` / `create_async` /
//!   `delete_async`, a semaphore of `window` permits.
//!
//! Every measurement is a warm-up, then `--reps` timed repetitions of `--secs` seconds; the
//! table shows the best repetition (noise from other processes only ever slows a run down).
//! CPU time is the client process's own (all its threads), per op: for raw and ours this
//! process's `CLOCK_PROCESS_CPUTIME_ID` (the server is another process), for Java the JVM's
//! `getProcessCpuTime`, for kazoo `time.process_time_ns`.
//!
//! Targets (printed, not asserted): ours >= 90% of raw, >= 1.5x Java, >= 3x kazoo, and at
//! most half of Java's CPU time per op.

use std::{
    collections::HashMap,
    env, fmt, fs,
    io::{self, Read, Write},
    net::{SocketAddr, TcpStream},
    os::raw::{c_int, c_long},
    path::Path,
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc,
    },
    thread,
    time::{Duration, Instant},
};

use bytes::{Bytes, BytesMut};
use conformance::{
    peers::{self, run_child, JavaProgram, KazooProgram},
    ServerTls, Standalone, TestCerts,
};
use tokio_util::codec::Decoder;
use zk_proto::{
    jute::Record, Acl, ConnectRequest, ConnectResponse, CreateMode, CreateRequest, DeleteRequest,
    FrameCodec, GetDataRequest, Request,
};
use zk_session::{Client, CreateOptions, TlsConfig, Version};

const JAVA_SOURCE: &str = include_str!("../../java/JavaClientBench.java");
const KAZOO_SOURCE: &str = include_str!("../../python/kazoo_bench.py");

/// Size of the znode read by getData, and of the data of each create.
const DATA_LEN: usize = 100;
/// Frames in the raw loop's ring of pre-encoded requests (at least twice the largest window).
const RING_FRAMES: usize = 1024;
const SESSION_TIMEOUT: Duration = Duration::from_secs(30);

// ----- workloads and clients -----

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// getData of the 100-byte znode.
    Get,
    /// create + delete of a node; one op is the pair.
    CreateDelete,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Workload {
    kind: Kind,
    window: usize,
}

impl Workload {
    /// The spec the Java and Python programs take.
    fn spec(self) -> String {
        match self.kind {
            Kind::Get => format!("get:{}", self.window),
            Kind::CreateDelete => format!("cd:{}", self.window),
        }
    }

    fn label(self) -> &'static str {
        match self.kind {
            Kind::Get => "getData 100 B",
            Kind::CreateDelete => "create+delete pair",
        }
    }
}

const WORKLOADS: [Workload; 4] = [
    Workload {
        kind: Kind::Get,
        window: 1,
    },
    Workload {
        kind: Kind::Get,
        window: 64,
    },
    Workload {
        kind: Kind::Get,
        window: 512,
    },
    Workload {
        kind: Kind::CreateDelete,
        window: 64,
    },
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Peer {
    Raw,
    Ours,
    Java,
    Kazoo,
}

impl Peer {
    const ALL: [Peer; 4] = [Peer::Raw, Peer::Ours, Peer::Java, Peer::Kazoo];

    fn name(self) -> &'static str {
        match self {
            Peer::Raw => "raw",
            Peer::Ours => "ours",
            Peer::Java => "java",
            Peer::Kazoo => "kazoo",
        }
    }
}

/// One timed repetition.
#[derive(Debug, Clone, Copy)]
struct Measure {
    ops: u64,
    elapsed: Duration,
    /// Client process CPU time over the same interval.
    cpu: Duration,
    errors: u64,
}

impl Measure {
    fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64()
    }

    fn cpu_us_per_op(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.ops.max(1) as f64
    }
}

/// The best repetition, or why there is none.
type Outcome = Result<Measure, String>;

fn best(reps: &[Measure]) -> Outcome {
    reps.iter()
        .copied()
        .max_by(|a, b| a.ops_per_sec().total_cmp(&b.ops_per_sec()))
        .ok_or_else(|| "no repetition finished".to_owned())
}

// ----- settings -----

#[derive(Debug, Clone)]
struct Settings {
    /// Seconds per timed repetition.
    secs: f64,
    /// Unmeasured seconds before the repetitions of each workload.
    warmup: f64,
    /// Extra unmeasured seconds for the JVM's JIT before its first workload.
    jit_warmup: f64,
    reps: usize,
    /// Rounds of raw and ours, one after the other (the peers run `rounds * reps` repetitions).
    rounds: usize,
    peers: Vec<Peer>,
    workloads: Vec<Workload>,
    /// Run zk-session on a current-thread runtime instead of the multi-threaded one.
    current_thread: bool,
    /// Also run zk-session over TLS (see the module docs).
    tls: bool,
}

impl Settings {
    fn from_args() -> Result<Settings, String> {
        let mut s = Settings {
            secs: 2.5,
            warmup: 1.0,
            jit_warmup: 4.0,
            reps: 1,
            rounds: 2,
            peers: Peer::ALL.to_vec(),
            workloads: WORKLOADS.to_vec(),
            current_thread: false,
            tls: false,
        };
        let mut args = env::args().skip(1);
        while let Some(a) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
            let num = |v: String| v.parse::<f64>().map_err(|e| format!("{v}: {e}"));
            match a.as_str() {
                "--secs" => s.secs = num(value()?)?,
                "--warmup" => s.warmup = num(value()?)?,
                "--jit-warmup" => s.jit_warmup = num(value()?)?,
                "--reps" => s.reps = num(value()?)?.max(1.0) as usize,
                "--rounds" => s.rounds = num(value()?)?.max(1.0) as usize,
                "--only" => {
                    let v = value()?;
                    s.peers = v
                        .split(',')
                        .map(|p| {
                            Peer::ALL
                                .into_iter()
                                .find(|x| x.name() == p)
                                .ok_or_else(|| format!("unknown client {p}"))
                        })
                        .collect::<Result<_, _>>()?;
                }
                "--workloads" => {
                    let v = value()?;
                    s.workloads = v
                        .split(',')
                        .map(|p| {
                            WORKLOADS
                                .into_iter()
                                .find(|w| w.spec() == p)
                                .ok_or_else(|| format!("unknown workload {p}"))
                        })
                        .collect::<Result<_, _>>()?;
                }
                "--current-thread" => s.current_thread = true,
                "--tls" => s.tls = true,
                "-h" | "--help" => {
                    return Err(
                        "usage: session_bench [--secs S] [--warmup S] [--jit-warmup S] \
                         [--reps N] [--rounds N] [--only raw,ours,java,kazoo] \
                         [--workloads get:1,get:64,get:512,cd:64] [--current-thread] [--tls]"
                            .to_owned(),
                    )
                }
                other => return Err(format!("unknown argument {other}")),
            }
        }
        Ok(s)
    }

    /// Wall-clock time one workload takes in a peer (all its repetitions).
    fn per_workload(&self) -> Duration {
        Duration::from_secs_f64(self.warmup + self.secs * (self.reps * self.rounds) as f64)
    }
}

/// Paths on the server, under a base of this run's own.
#[derive(Debug, Clone)]
struct Paths {
    base: String,
    data: String,
    cd_base: String,
}

// ----- CPU time -----

#[repr(C)]
struct Timespec {
    tv_sec: c_long,
    tv_nsec: c_long,
}

extern "C" {
    fn clock_gettime(clock: c_int, ts: *mut Timespec) -> c_int;
}

const CLOCK_PROCESS_CPUTIME_ID: c_int = 2;

/// CPU time used so far by every thread of this process.
fn process_cpu() -> Duration {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is Linux's constant.
    let rc = unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

// ----- raw -----

/// Pre-encoded request frames, laid out twice in a row so that any run of up to
/// `RING_FRAMES` frames from any position is one contiguous slice.
struct Ring {
    bytes: Vec<u8>,
    /// Start of each frame in `bytes`, plus the end: `2 * RING_FRAMES + 1` entries.
    offsets: Vec<usize>,
}

impl Ring {
    fn new(kind: Kind, paths: &Paths) -> Ring {
        let codec = FrameCodec::new();
        let mut one = BytesMut::new();
        let mut offsets = vec![0];
        for i in 0..RING_FRAMES {
            let xid = i as i32 + 1;
            let req = match kind {
                Kind::Get => Request::GetData(GetDataRequest {
                    path: paths.data.clone(),
                    watch: false,
                }),
                // Pairs in order on one session: the delete always follows its create.
                Kind::CreateDelete => {
                    let path = format!("{}/raw-{}", paths.cd_base, i / 2);
                    if i % 2 == 0 {
                        Request::Create(CreateRequest {
                            path,
                            data: Some(Bytes::from(vec![0u8; DATA_LEN])),
                            acl: Acl::open_unsafe(),
                            mode: CreateMode::Persistent,
                        })
                    } else {
                        Request::Delete(DeleteRequest { path, version: -1 })
                    }
                }
            };
            codec
                .encode_with(&mut one, |b| req.encode(xid, b))
                .expect("small frame");
            offsets.push(one.len());
        }
        let once = one.len();
        let mut bytes = one.to_vec();
        bytes.extend_from_slice(&one);
        for i in 1..=RING_FRAMES {
            offsets.push(once + offsets[i]);
        }
        Ring { bytes, offsets }
    }

    /// `n` frames from frame `at` (`at < RING_FRAMES`, `n <= RING_FRAMES`).
    fn frames(&self, at: usize, n: usize) -> &[u8] {
        &self.bytes[self.offsets[at]..self.offsets[at + n]]
    }
}

fn raw_handshake(addr: SocketAddr) -> io::Result<TcpStream> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let req = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout: SESSION_TIMEOUT.as_millis() as i32,
        session_id: 0,
        passwd: Bytes::from_static(&[0; 16]),
        read_only: false,
    };
    let mut codec = FrameCodec::new();
    let mut out = BytesMut::new();
    codec
        .encode_with(&mut out, |b| req.encode(b))
        .expect("small frame");
    s.write_all(&out)?;
    let mut inbuf = BytesMut::new();
    let frame = loop {
        if let Some(f) = codec.decode(&mut inbuf).map_err(io::Error::other)? {
            break f;
        }
        let mut chunk = [0u8; 256];
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        inbuf.extend_from_slice(&chunk[..n]);
    };
    let resp = ConnectResponse::decode_exact(frame, "ConnectResponse").map_err(io::Error::other)?;
    if resp.is_expired() {
        return Err(io::Error::other("session refused"));
    }
    Ok(s)
}

/// The raw loop: `window` frames in flight, refilled with as many frames as replies came in
/// each read.
fn raw_run(
    addr: SocketAddr,
    w: Workload,
    paths: &Paths,
    set: &Settings,
) -> io::Result<Vec<Measure>> {
    let ring = Ring::new(w.kind, paths);
    let frames_per_op = match w.kind {
        Kind::Get => 1,
        Kind::CreateDelete => 2,
    };
    let mut s = raw_handshake(addr)?;
    let mut buf = vec![0u8; 4 << 20];
    let mut filled = 0;
    let mut cursor = 0;
    s.write_all(ring.frames(cursor, w.window))?;
    cursor = w.window % RING_FRAMES;
    let mut in_flight = w.window;
    let mut replies: u64 = 0;
    let mut errors: u64 = 0;
    let mut stopping = false;
    let mut rep: isize = -1;
    let mut phase_end = Instant::now() + Duration::from_secs_f64(set.warmup);
    let mut mark = (0u64, 0u64, Instant::now(), process_cpu());
    let mut out = Vec::new();
    loop {
        let n = s.read(&mut buf[filled..])?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        filled += n;
        let mut pos = 0;
        let mut got = 0;
        while filled - pos >= 4 {
            let len = i32::from_be_bytes(buf[pos..pos + 4].try_into().unwrap()) as usize;
            if filled - pos < 4 + len {
                break;
            }
            // Reply header: xid (4), zxid (8), err (4).
            if len < 16 || buf[pos + 16..pos + 20] != [0; 4] {
                errors += 1;
            }
            pos += 4 + len;
            got += 1;
        }
        buf.copy_within(pos..filled, 0);
        filled -= pos;
        replies += got as u64;
        in_flight -= got;

        let now = Instant::now();
        if !stopping && now >= phase_end {
            if rep >= 0 {
                out.push(Measure {
                    ops: (replies - mark.0) / frames_per_op,
                    elapsed: now - mark.2,
                    cpu: process_cpu() - mark.3,
                    errors: errors - mark.1,
                });
            }
            rep += 1;
            if rep as usize == set.reps {
                stopping = true;
                // End on a whole pair, so no node is left behind.
                if cursor % frames_per_op as usize != 0 {
                    s.write_all(ring.frames(cursor, 1))?;
                    cursor = (cursor + 1) % RING_FRAMES;
                    in_flight += 1;
                }
            } else {
                mark = (replies, errors, now, process_cpu());
                phase_end = now + Duration::from_secs_f64(set.secs);
            }
        }
        if stopping {
            if in_flight == 0 {
                // Close the session rather than leave it to expire.
                let mut close = BytesMut::new();
                FrameCodec::new()
                    .encode_with(&mut close, |b| Request::CloseSession.encode(2_000_000, b))
                    .expect("small frame");
                let _ = s.write_all(&close);
                break;
            }
        } else if got > 0 {
            s.write_all(ring.frames(cursor, got))?;
            cursor = (cursor + got) % RING_FRAMES;
            in_flight += got;
        }
    }
    Ok(out)
}

// ----- ours -----

async fn ours_run(client: &Client, w: Workload, paths: &Paths, set: &Settings) -> Vec<Measure> {
    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = tokio::task::JoinSet::new();
    for i in 0..w.window {
        let (client, done, errors, stop) =
            (client.clone(), done.clone(), errors.clone(), stop.clone());
        let data_path = paths.data.clone();
        let cd_path = format!("{}/ours-{i}", paths.cd_base);
        let kind = w.kind;
        workers.spawn(async move {
            let payload = [0u8; DATA_LEN];
            let create = CreateOptions::persistent();
            while !stop.load(Ordering::Relaxed) {
                let ok = match kind {
                    Kind::Get => matches!(
                        client.get_data(&data_path).await,
                        Ok((d, _)) if d.len() == DATA_LEN
                    ),
                    Kind::CreateDelete => {
                        let c = client.create(&cd_path, &payload, &create).await.is_ok();
                        c & client.delete(&cd_path, Version::Any).await.is_ok()
                    }
                };
                if !ok {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    let snapshot = || {
        (
            done.load(Ordering::Relaxed),
            errors.load(Ordering::Relaxed),
            Instant::now(),
            process_cpu(),
        )
    };
    tokio::time::sleep(Duration::from_secs_f64(set.warmup)).await;
    let mut out = Vec::new();
    for _ in 0..set.reps {
        let a = snapshot();
        tokio::time::sleep(Duration::from_secs_f64(set.secs)).await;
        let b = snapshot();
        out.push(Measure {
            ops: b.0 - a.0,
            elapsed: b.2 - a.2,
            cpu: b.3 - a.3,
            errors: b.1 - a.1,
        });
    }
    stop.store(true, Ordering::Relaxed);
    while workers.join_next().await.is_some() {}
    out
}

// ----- peers in other processes -----

/// `RESULT SPEC REP OPS NANOS CPU_NANOS ERRORS` lines, per workload.
fn parse_results(stdout: &str) -> HashMap<Workload, Vec<Measure>> {
    let mut map: HashMap<Workload, Vec<Measure>> = HashMap::new();
    for line in stdout.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 7 || f[0] != "RESULT" {
            continue;
        }
        let Some(w) = WORKLOADS.iter().copied().find(|w| w.spec() == f[1]) else {
            continue;
        };
        let num = |s: &str| s.parse::<u64>().ok();
        if let (Some(ops), Some(ns), Some(cpu), Some(errors)) =
            (num(f[3]), num(f[4]), num(f[5]), num(f[6]))
        {
            map.entry(w).or_default().push(Measure {
                ops,
                elapsed: Duration::from_nanos(ns),
                cpu: Duration::from_nanos(cpu),
                errors,
            });
        }
    }
    map
}

fn child_limit(set: &Settings, extra: f64) -> Duration {
    set.per_workload() * set.workloads.len() as u32 + Duration::from_secs_f64(extra + 60.0)
}

fn peer_args(paths: &Paths, connect: &str) -> Vec<String> {
    vec![
        connect.to_owned(),
        paths.data.clone(),
        paths.cd_base.clone(),
    ]
}

fn timing_args(set: &Settings) -> Vec<String> {
    vec![
        set.warmup.to_string(),
        set.secs.to_string(),
        (set.reps * set.rounds).to_string(),
    ]
}

/// [`java_run`] or [`kazoo_run`]: the repetitions of every workload, by workload.
type PeerRun =
    fn(&str, &Paths, &Settings, &Path) -> Result<HashMap<Workload, Vec<Measure>>, String>;

fn java_run(
    connect: &str,
    paths: &Paths,
    set: &Settings,
    tmp: &Path,
) -> Result<HashMap<Workload, Vec<Measure>>, String> {
    let src = peers::write_file(tmp, "JavaClientBench.java", JAVA_SOURCE)?;
    let java = JavaProgram::compile(
        &src,
        tmp,
        peers::ZOOKEEPER_CLIENT_JARS,
        "libzookeeper-java libslf4j-java",
    )?;
    let mut cmd = java.command();
    let mut args = peer_args(paths, connect);
    args.push(set.jit_warmup.to_string());
    args.extend(timing_args(set));
    args.extend(set.workloads.iter().map(|w| w.spec()));
    cmd.args(args);
    let out = run_child(&mut cmd, child_limit(set, set.jit_warmup))?;
    Ok(parse_results(&out))
}

fn kazoo_run(
    connect: &str,
    paths: &Paths,
    set: &Settings,
    tmp: &Path,
) -> Result<HashMap<Workload, Vec<Measure>>, String> {
    let script = peers::write_file(tmp, "kazoo_bench.py", KAZOO_SOURCE)?;
    let mut cmd = KazooProgram::prepare(script)?.command();
    let mut args = peer_args(paths, connect);
    args.extend(timing_args(set));
    args.extend(set.workloads.iter().map(|w| w.spec()));
    cmd.args(args);
    let out = run_child(&mut cmd, child_limit(set, 0.0))?;
    Ok(parse_results(&out))
}

// ----- report -----

fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_owned())
}

struct Cell<'a>(&'a Outcome);

impl fmt::Display for Cell<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Ok(m) => write!(f, "{:.0}", m.ops_per_sec()),
            Err(_) => f.write_str("n/a"),
        }
    }
}

fn ratio(a: &Outcome, b: &Outcome, value: fn(&Measure) -> f64) -> Option<f64> {
    match (a, b) {
        (Ok(a), Ok(b)) => Some(value(a) / value(b)),
        _ => None,
    }
}

fn show(r: Option<f64>) -> String {
    r.map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}"))
}

fn cpu_cell(o: &Outcome) -> String {
    o.as_ref().map_or_else(
        |_| "n/a".to_owned(),
        |m| format!("{:.1}", m.cpu_us_per_op()),
    )
}

fn verdict(r: Option<f64>, ok: impl Fn(f64) -> bool) -> String {
    match r {
        Some(r) if ok(r) => format!("yes ({r:.2})"),
        Some(r) => format!("NO ({r:.2})"),
        None => "n/a".to_owned(),
    }
}

fn report(results: &HashMap<(Workload, Peer), Outcome>, workloads: &[Workload]) {
    let get = |w: Workload, p: Peer| -> Outcome {
        results
            .get(&(w, p))
            .cloned()
            .unwrap_or_else(|| Err("not run".to_owned()))
    };
    let tput = |m: &Measure| m.ops_per_sec();
    let cpu = |m: &Measure| m.cpu_us_per_op();

    println!();
    println!(
        "| workload | window | raw ops/s | ours ops/s | Java ops/s | kazoo ops/s | ours/raw \
         | ours/Java | ours/kazoo | CPU µs/op raw | CPU µs/op ours | CPU µs/op Java \
         | CPU µs/op kazoo | CPU ours/Java |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &w in workloads {
        let (raw, ours, java, kazoo) = (
            get(w, Peer::Raw),
            get(w, Peer::Ours),
            get(w, Peer::Java),
            get(w, Peer::Kazoo),
        );
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            w.label(),
            w.window,
            Cell(&raw),
            Cell(&ours),
            Cell(&java),
            Cell(&kazoo),
            show(ratio(&ours, &raw, tput)),
            show(ratio(&ours, &java, tput)),
            show(ratio(&ours, &kazoo, tput)),
            cpu_cell(&raw),
            cpu_cell(&ours),
            cpu_cell(&java),
            cpu_cell(&kazoo),
            show(ratio(&ours, &java, cpu)),
        );
    }

    println!();
    println!("Targets (printed, not asserted):");
    println!();
    println!(
        "| workload | window | ours >= 0.90x raw | ours >= 1.5x Java | ours >= 3x kazoo \
         | CPU/op <= 0.5x Java |"
    );
    println!("|---|---:|---|---|---|---|");
    for &w in workloads {
        let (raw, ours, java, kazoo) = (
            get(w, Peer::Raw),
            get(w, Peer::Ours),
            get(w, Peer::Java),
            get(w, Peer::Kazoo),
        );
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            w.label(),
            w.window,
            verdict(ratio(&ours, &raw, tput), |r| r >= 0.9),
            verdict(ratio(&ours, &java, tput), |r| r >= 1.5),
            verdict(ratio(&ours, &kazoo, tput), |r| r >= 3.0),
            verdict(ratio(&ours, &java, cpu), |r| r <= 0.5),
        );
    }

    // Why anything is missing, and any error replies (a run with errors is suspect).
    let mut notes = Vec::new();
    for p in Peer::ALL {
        let mut reasons: Vec<String> = Vec::new();
        for &w in workloads {
            match results.get(&(w, p)) {
                Some(Err(e)) if !reasons.contains(e) => reasons.push(e.clone()),
                Some(Ok(m)) if m.errors > 0 => notes.push(format!(
                    "{} {} window {}: {} failed ops in the best repetition",
                    p.name(),
                    w.label(),
                    w.window,
                    m.errors
                )),
                _ => {}
            }
        }
        for r in reasons {
            notes.push(format!("{}: n/a: {r}", p.name()));
        }
    }
    if !notes.is_empty() {
        println!();
        for n in notes {
            println!("- {n}");
        }
    }
}

/// zk-session over plain TCP and over TLS, from the same run.
fn report_tls(
    results: &HashMap<(Workload, Peer), Outcome>,
    tls_reps: &HashMap<Workload, Vec<Measure>>,
    workloads: &[Workload],
) {
    println!();
    println!("zk-session over TLS (mutual, TLS 1.2, the server's default) beside plain TCP:");
    println!();
    println!(
        "| workload | window | ours plain ops/s | ours TLS ops/s | TLS/plain \
         | CPU µs/op plain | CPU µs/op TLS |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for &w in workloads {
        let plain = results
            .get(&(w, Peer::Ours))
            .cloned()
            .unwrap_or_else(|| Err("not run".to_owned()));
        let tls = tls_reps
            .get(&w)
            .map_or_else(|| Err("not run".to_owned()), |v| best(v));
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            w.label(),
            w.window,
            Cell(&plain),
            Cell(&tls),
            show(ratio(&tls, &plain, |m| m.ops_per_sec())),
            cpu_cell(&plain),
            cpu_cell(&tls),
        );
    }
}

/// A client over mutual TLS to the server's secure port.
async fn tls_connect(zk: &Standalone, certs: &TestCerts) -> Client {
    let tls = TlsConfig::builder()
        .ca_file(certs.ca())
        .client_cert_files(certs.client_cert(), certs.client_key())
        .build()
        .expect("TLS config");
    Client::builder(&zk.secure_connect_string())
        .session_timeout(SESSION_TIMEOUT)
        .tls(tls)
        .connect()
        .await
        .expect("connect over TLS")
}

// ----- main -----

fn main() {
    let set = match Settings::from_args() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let started = Instant::now();
    let load_before = load_average();
    eprintln!("starting a standalone ZooKeeper server…");
    let certs = set
        .tls
        .then(|| TestCerts::generate().expect("TLS certificates (openssl)"));
    let mut server = Standalone::builder();
    if let Some(c) = &certs {
        server = server.tls(ServerTls::from_certs(c));
    }
    let zk = match server.start() {
        Ok(zk) => zk,
        Err(e) => {
            eprintln!("cannot start ZooKeeper: {e}");
            std::process::exit(1);
        }
    };
    let connect = zk.connect_string();
    let addr = zk.client_addr();
    let rt = if set.current_thread {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    }
    .enable_all()
    .build()
    .expect("tokio runtime");
    let base = format!("/session-bench-{}", std::process::id());
    let paths = Paths {
        data: format!("{base}/data"),
        cd_base: format!("{base}/cd"),
        base,
    };
    let client = rt.block_on(async {
        let client = Client::builder(&connect)
            .session_timeout(SESSION_TIMEOUT)
            .connect()
            .await
            .expect("connect");
        let opts = CreateOptions::persistent();
        client.create(&paths.base, b"", &opts).await.expect("base");
        client
            .create(&paths.data, &[7u8; DATA_LEN], &opts)
            .await
            .expect("data node");
        client.create(&paths.cd_base, b"", &opts).await.expect("cd");
        client
    });
    let tls_client = certs.as_ref().map(|c| rt.block_on(tls_connect(&zk, c)));
    let tmp = peers::process_dir(&env::temp_dir(), "session-bench");

    let mut results: HashMap<(Workload, Peer), Outcome> = HashMap::new();
    let peers = set.peers.clone();

    // The server's JIT warms up on the raw loop, unmeasured.
    if peers.contains(&Peer::Raw) || peers.contains(&Peer::Ours) {
        eprintln!("warming up the server…");
        let warm = Settings {
            warmup: 2.0,
            secs: 0.5,
            reps: 1,
            ..set.clone()
        };
        for w in [WORKLOADS[1], WORKLOADS[3]] {
            if let Err(e) = raw_run(addr, w, &paths, &warm) {
                eprintln!("server warm-up: {e}");
            }
        }
    }
    // Raw and ours alternate, round after round, so that both see the same background load;
    // each keeps its best repetition over all rounds.
    let mut raw_reps: HashMap<Workload, Result<Vec<Measure>, String>> = HashMap::new();
    let mut ours_reps: HashMap<Workload, Vec<Measure>> = HashMap::new();
    let mut tls_reps: HashMap<Workload, Vec<Measure>> = HashMap::new();
    for round in 0..set.rounds {
        for w in set.workloads.iter().copied() {
            if peers.contains(&Peer::Raw) {
                eprintln!("round {round}: raw  {} window {}", w.label(), w.window);
                let entry = raw_reps.entry(w).or_insert_with(|| Ok(Vec::new()));
                if let Ok(v) = entry {
                    match raw_run(addr, w, &paths, &set) {
                        Ok(m) => v.extend(m),
                        Err(e) => *entry = Err(format!("raw loop: {e}")),
                    }
                }
            }
            if peers.contains(&Peer::Ours) {
                eprintln!("round {round}: ours {} window {}", w.label(), w.window);
                let m = rt.block_on(ours_run(&client, w, &paths, &set));
                ours_reps.entry(w).or_default().extend(m);
                if let Some(tls) = &tls_client {
                    eprintln!(
                        "round {round}: ours over TLS {} window {}",
                        w.label(),
                        w.window
                    );
                    let m = rt.block_on(ours_run(tls, w, &paths, &set));
                    tls_reps.entry(w).or_default().extend(m);
                }
            }
        }
    }
    for (w, r) in raw_reps {
        results.insert((w, Peer::Raw), r.and_then(|v| best(&v)));
    }
    for (w, v) in ours_reps {
        results.insert((w, Peer::Ours), best(&v));
    }
    // The peers in other processes, one run each for all the workloads.
    for (peer, label, run) in [
        (Peer::Java, "java  (compile and run)", java_run as PeerRun),
        (Peer::Kazoo, "kazoo", kazoo_run),
    ] {
        if !peers.contains(&peer) {
            continue;
        }
        eprintln!("{label}");
        let outcome = run(&connect, &paths, &set, &tmp);
        for w in set.workloads.iter().copied() {
            let r = match &outcome {
                Ok(map) => map
                    .get(&w)
                    .map_or_else(|| Err("no result line".to_owned()), |v| best(v)),
                Err(e) => Err(e.clone()),
            };
            results.insert((w, peer), r);
        }
    }
    rt.block_on(async {
        let _ = client.close().await;
        if let Some(tls) = &tls_client {
            let _ = tls.close().await;
        }
    });
    drop(client);
    drop(tls_client);
    rt.shutdown_timeout(Duration::from_secs(2));
    let _ = fs::remove_dir_all(&tmp);

    println!(
        "session_bench: best of {} repetitions of {} s (raw and ours: {} rounds of {}), \
         {} s warm-up per workload (+{} s JIT warm-up for Java); zk-session on a {} tokio \
         runtime; one standalone ZooKeeper 3.8 (forceSync=no) on {}",
        set.reps * set.rounds,
        set.secs,
        set.rounds,
        set.reps,
        set.warmup,
        set.jit_warmup,
        if set.current_thread {
            "current-thread".to_owned()
        } else {
            let workers = thread::available_parallelism().map_or(1, |n| n.get());
            format!("multi-thread ({workers} workers)")
        },
        connect
    );
    println!(
        "load average before: {load_before}; after: {}; total time {:.0} s",
        load_average(),
        started.elapsed().as_secs_f64()
    );
    report(&results, &set.workloads);
    if set.tls {
        report_tls(&results, &tls_reps, &set.workloads);
    }
    drop(zk);
}
