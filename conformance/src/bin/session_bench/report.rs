//! The tables: throughput and CPU per op side by side, ratios and the targets met or missed.

use std::collections::HashMap;

use conformance::{
    bench::Throughput,
    outcome::{best, cpu_cell, ratio, show, verdict, Cell, Outcome},
};

use crate::workloads::{Peer, Workload};

/// One client's outcome on one workload ("not run" if it was not).
fn outcome(results: &HashMap<(Workload, Peer), Outcome>, w: Workload, p: Peer) -> Outcome {
    results
        .get(&(w, p))
        .cloned()
        .unwrap_or_else(|| Err("not run".to_owned()))
}

pub(crate) fn report(results: &HashMap<(Workload, Peer), Outcome>, workloads: &[Workload]) {
    let get = |w, p| outcome(results, w, p);
    // Raw, ours, Java and kazoo on one workload: a row of each table.
    let row = |w: Workload| {
        (
            get(w, Peer::Raw),
            get(w, Peer::Ours),
            get(w, Peer::Java),
            get(w, Peer::Kazoo),
        )
    };
    let tput = |m: &Throughput| m.ops_per_sec();
    let cpu = |m: &Throughput| m.cpu_us_per_op();

    println!();
    println!(
        "| workload | window | raw ops/s | ours ops/s | Java ops/s | kazoo ops/s | ours/raw \
         | ours/Java | ours/kazoo | CPU µs/op raw | CPU µs/op ours | CPU µs/op Java \
         | CPU µs/op kazoo | CPU ours/Java |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &w in workloads {
        let (raw, ours, java, kazoo) = row(w);
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
        let (raw, ours, java, kazoo) = row(w);
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

/// The raw loop, the same loop on a tokio socket, the smallest multiplexed client and ours,
/// side by side: how much of ours' cost over the raw loop the runtime and the design take
/// before any client work.
pub(crate) fn report_runtime(results: &HashMap<(Workload, Peer), Outcome>, workloads: &[Workload]) {
    let get = |w, p| outcome(results, w, p);
    let tput = |m: &Throughput| m.ops_per_sec();
    let cpu = |m: &Throughput| m.cpu_us_per_op();
    println!();
    println!(
        "The raw loop on a tokio socket (tokio: one task), the smallest multiplexed client \
         (mux: an I/O task and a task per request in flight) and the same with callers \
         writing their own requests (direct), on the same runtime as ours (ours1: ours with \
         its requests in flight polled by one task):"
    );
    println!();
    println!(
        "| workload | window | raw ops/s | tokio x raw | mux x raw | direct x raw | ours x raw \
         | ours1 x raw | CPU µs/op raw | tokio | mux | direct | ours | ours1 | CPU tokio x raw \
         | mux x raw | direct x raw | ours x raw | ours1 x raw | ours x mux |"
    );
    println!("|---|---:{}|", "|---:".repeat(18));
    for &w in workloads {
        let [raw, tokio, mux, direct, ours, ours1, ..] = Peer::ALL.map(|p| get(w, p));
        let x_raw = |o: &Outcome, value| show(ratio(o, &raw, value));
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} \
             | {} | {} | {} |",
            w.label(),
            w.window,
            Cell(&raw),
            x_raw(&tokio, tput),
            x_raw(&mux, tput),
            x_raw(&direct, tput),
            x_raw(&ours, tput),
            x_raw(&ours1, tput),
            cpu_cell(&raw),
            cpu_cell(&tokio),
            cpu_cell(&mux),
            cpu_cell(&direct),
            cpu_cell(&ours),
            cpu_cell(&ours1),
            x_raw(&tokio, cpu),
            x_raw(&mux, cpu),
            x_raw(&direct, cpu),
            x_raw(&ours, cpu),
            x_raw(&ours1, cpu),
            show(ratio(&ours, &mux, cpu)),
        );
    }
}

/// zk-session over plain TCP and over TLS, from the same run.
pub(crate) fn report_tls(
    results: &HashMap<(Workload, Peer), Outcome>,
    tls_reps: &HashMap<Workload, Vec<Throughput>>,
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
        let plain = outcome(results, w, Peer::Ours);
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
