//! The table: every row beside the raw loop and the threaded floor, and the goals
//! for ours against both.

use std::collections::HashMap;

use conformance::{
    bench::Throughput,
    outcome::{cpu_cell, ratio, show, verdict, Cell, Outcome},
    workload::Workload,
};

use crate::settings::Row;

pub(crate) type Results = HashMap<(Workload, Row), Outcome>;

fn outcome(results: &Results, w: Workload, row: Row) -> Outcome {
    results
        .get(&(w, row))
        .cloned()
        .unwrap_or_else(|| Err("not run".to_owned()))
}

fn tput(m: &Throughput) -> f64 {
    m.ops_per_sec()
}

fn cpu(m: &Throughput) -> f64 {
    m.cpu_us_per_op()
}

pub(crate) fn report(results: &Results, workloads: &[Workload], rows: &[Row]) {
    println!();
    println!(
        "| workload | window | client | ops/s | CPU µs/op | ops/s x raw | CPU x raw \
         | ops/s x raw-threads | CPU x raw-threads |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|---:|---:|");
    for &w in workloads {
        let raw = outcome(results, w, Row::Raw);
        let threads = outcome(results, w, Row::RawThreads);
        for &row in rows {
            let o = outcome(results, w, row);
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                w.label(),
                w.window,
                row.name(),
                Cell(&o),
                cpu_cell(&o),
                show(ratio(&o, &raw, tput)),
                show(ratio(&o, &raw, cpu)),
                show(ratio(&o, &threads, tput)),
                show(ratio(&o, &threads, cpu)),
            );
        }
    }

    println!();
    println!("Goals for ours (issue 29), against the raw loop and against the threaded floor:");
    println!();
    println!(
        "| workload | window | ops/s >= 0.95x raw | CPU <= 1.15x raw \
         | ops/s >= 0.95x raw-threads | CPU <= 1.15x raw-threads |"
    );
    println!("|---|---:|---|---|---|---|");
    for &w in workloads {
        let ours = outcome(results, w, Row::Ours);
        let raw = outcome(results, w, Row::Raw);
        let threads = outcome(results, w, Row::RawThreads);
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            w.label(),
            w.window,
            verdict(ratio(&ours, &raw, tput), |r| r >= 0.95),
            verdict(ratio(&ours, &raw, cpu), |r| r <= 1.15),
            verdict(ratio(&ours, &threads, tput), |r| r >= 0.95),
            verdict(ratio(&ours, &threads, cpu), |r| r <= 1.15),
        );
    }
    notes(results, workloads, rows);
}

/// Why a row has no figures, and any failed ops (a run with errors is suspect).
fn notes(results: &Results, workloads: &[Workload], rows: &[Row]) {
    let mut notes = Vec::new();
    for &row in rows {
        let mut reasons: Vec<&String> = Vec::new();
        for &w in workloads {
            match results.get(&(w, row)) {
                Some(Err(e)) if !reasons.contains(&e) => reasons.push(e),
                Some(Ok(m)) if m.errors > 0 => notes.push(format!(
                    "{} {} window {}: {} failed ops in the best repetition",
                    row.name(),
                    w.label(),
                    w.window,
                    m.errors
                )),
                _ => {}
            }
        }
        notes.extend(reasons.iter().map(|r| format!("{}: n/a: {r}", row.name())));
    }
    if !notes.is_empty() {
        println!();
        for n in notes {
            println!("- {n}");
        }
    }
}
