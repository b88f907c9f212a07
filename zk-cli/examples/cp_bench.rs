//! `zk cp` against zk-shell's `cp`: a tree copied between two real ensembles by each, timed
//! in the same run, each copy checked with `zk diff`. Prints a table; nothing fails on a slow
//! run.
//!
//! ```sh
//! cargo build --release -p zk-cli --bin zk --example cp_bench
//! ZK_SHELL=/path/to/venv/bin/zk-shell target/release/examples/cp_bench [NODES]
//! ```
//!
//! NODES (default 100000) znodes of 32 bytes in a tree of 100 branches; without `ZK_SHELL`
//! only `zk cp` runs.

use std::{
    path::PathBuf,
    process::Command,
    time::{Duration, Instant},
};

use zk_session::{Client, CreateOptions, Op};
use zk_testkit::Standalone;

const BRANCHES: usize = 100;

fn zk_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    // target/<profile>/examples/cp_bench → target/<profile>/zk
    exe.parent()
        .and_then(|p| p.parent())
        .map(|p| p.join("zk"))
        .expect("a target directory")
}

/// Fills `/bench` with `nodes` znodes: 100 branches, the rest spread below them.
async fn fill(server: &str, nodes: usize) {
    let c = Client::builder(server).connect().await.expect("connect");
    c.create("/bench", b"root", CreateOptions::persistent())
        .await
        .expect("root");
    let per_branch = (nodes - 1 - BRANCHES) / BRANCHES;
    let data = [b'd'; 32];
    for b in 0..BRANCHES {
        let branch = format!("/bench/b{b:03}");
        c.create(&branch, &data, CreateOptions::persistent())
            .await
            .expect("branch");
        let names: Vec<String> = (0..per_branch)
            .map(|i| format!("{branch}/n{i:05}"))
            .collect();
        for chunk in names.chunks(1000) {
            let ops = chunk
                .iter()
                .map(|p| Op::create(p.clone(), &data, CreateOptions::persistent()));
            c.multi(ops).await.expect("fill");
        }
    }
    let _ = c.close().await;
}

/// Runs a command to its end; its wall time.
fn timed(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let out = cmd.output().expect("run");
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn diff(a: &str, b: &str) -> bool {
    Command::new(zk_binary())
        .args(["diff", a, b])
        .output()
        .expect("zk diff")
        .status
        .success()
}

#[tokio::main]
async fn main() {
    let nodes: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse().expect("NODES is a number"))
        .unwrap_or(100_000);
    let options = || Standalone::builder().max_heap_mb(1024);
    let (a, b) = (
        options().start().expect("ensemble A"),
        options().start().expect("ensemble B"),
    );
    let (sa, sb) = (a.connect_string(), b.connect_string());
    fill(&sa, nodes).await;
    let src = format!("zk://{sa}/bench");
    let mut rows = Vec::new();

    let ours = format!("zk://{sb}/ours");
    let took = timed(Command::new(zk_binary()).args(["cp", &src, &ours]));
    rows.push(("zk cp", took, diff(&src, &ours)));

    let file = std::env::temp_dir().join(format!("cp_bench-{}.zkb", std::process::id()));
    let backup = format!("file:{}", file.display());
    let took = timed(Command::new(zk_binary()).args(["cp", &src, &backup]));
    rows.push(("zk cp to a backup file", took, diff(&src, &backup)));
    let restored = format!("zk://{sb}/restored");
    let took = timed(Command::new(zk_binary()).args(["cp", &backup, &restored]));
    rows.push(("zk cp from the backup file", took, diff(&src, &restored)));
    let _ = std::fs::remove_file(&file);

    if let Ok(shell) = std::env::var("ZK_SHELL") {
        let theirs = format!("zk://{sb}/theirs");
        // recursive, overwrite, asynchronous (its faster walk).
        let cp = format!("cp {src} {theirs} true true true");
        let took = timed(Command::new(&shell).args(["--run-once", &cp, &sa]));
        rows.push(("zk-shell cp", took, diff(&src, &theirs)));
    }

    println!("{nodes} znodes of 32 bytes, /bench with {BRANCHES} branches, between two standalone servers\n");
    println!("| copy | seconds | znodes/s | equal (zk diff) |");
    println!("|---|---:|---:|---|");
    for (what, took, equal) in &rows {
        let s = took.as_secs_f64();
        println!("| {what} | {s:.2} | {:.0} | {equal} |", nodes as f64 / s);
    }
    if let (Some(ours), Some(theirs)) = (rows.first(), rows.iter().find(|r| r.0 == "zk-shell cp")) {
        println!(
            "\nzk cp is {:.1}x faster than zk-shell cp",
            theirs.1.as_secs_f64() / ours.1.as_secs_f64()
        );
    }
}
