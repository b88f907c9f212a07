//! The figures printed before the invariants: what the run did (faults, operations, lock
//! acquisitions, leader changes, sessions), what became of holders cut off past their session
//! timeout, the clients' memory, and what the servers were left with.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::{
    invariants::{
        applied, hold_ledger, key, worker_of, Inputs, Logs, RSS_GROWTH_KB, RSS_GROWTH_RATIO,
    },
    records::{HoldRec, Outcome, Record, RequestsRec, WriteRec},
    snapshot::Snapshot,
};

/// Every figure, in print order, and the memory violations found on the way.
pub fn figures(inp: &Inputs, snap: &Snapshot, logs: &Logs) -> (Vec<String>, Vec<String>) {
    let mut f = Vec::new();
    activity(&mut f, inp, snap, logs);
    cut_off_holders(&mut f, inp, snap, logs);
    believed_overlaps(&mut f, inp, logs);
    let mem_violations = memory(&mut f, inp);
    ending(&mut f, inp, snap);
    (f, mem_violations)
}

/// Faults, operations, fenced writes, lock acquisitions, leader changes and sessions.
fn activity(f: &mut Vec<String>, inp: &Inputs, snap: &Snapshot, logs: &Logs) {
    let Logs {
        writes,
        holds,
        requests,
        session_events,
        ..
    } = logs;
    f.push(format!(
        "\n== soak report: seed {}, {} s asked, {:.0} s run, {} client processes × {} sessions, \
         session timeout {} ms",
        inp.seed,
        inp.seconds,
        inp.elapsed.as_secs_f64(),
        inp.clients,
        inp.sessions,
        inp.session_timeout.as_millis()
    ));
    let total_faults: u64 = inp.faults.counts.values().sum();
    f.push(format!("faults injected: {total_faults}"));
    for (k, n) in &inp.faults.counts {
        f.push(format!("  {:<46} {n}", k.name()));
    }
    f.push(format!(
        "  connections reset by ss -K: {}; time without quorum: {:.1} s",
        inp.faults.connections_reset,
        inp.faults.quorum_lost_for.as_secs_f64()
    ));
    if !inp.faults.skipped.is_empty() {
        f.push(format!("  skipped: {:?}", inp.faults.skipped));
    }
    if !inp.faults.heal_failures.is_empty() {
        f.push(format!(
            "  ensemble slow to heal ({} times; harness/machine, not client): {:?}",
            inp.faults.heal_failures.len(),
            inp.faults.heal_failures
        ));
    }
    let sum = |g: fn(&RequestsRec) -> u64| requests.iter().map(|r| g(r)).sum::<u64>();
    f.push(format!(
        "operations: {} requests issued, {} answered, {} cancelled, {} hung; {} register \
         writes, {} register reads, {} failed calls (connection loss, timeouts, expiry)",
        sum(|r| r.issued),
        sum(|r| r.answered),
        sum(|r| r.cancelled),
        sum(|r| r.hung),
        sum(|r| r.kv_writes),
        sum(|r| r.kv_reads),
        sum(|r| r.errors),
    ));
    let kind_of = |ledger: &str| {
        if ledger == crate::LEADER {
            2
        } else if ledger.starts_with("store-") {
            1
        } else {
            0
        }
    };
    let mut by_outcome: BTreeMap<(u8, &str), u64> = BTreeMap::new();
    for w in writes.iter() {
        *by_outcome
            .entry((kind_of(&w.ledger), w.outcome.as_str()))
            .or_default() += 1;
    }
    let outcomes = |kind: u8| {
        ["ok", "refused", "ambiguous", "cancelled"]
            .iter()
            .map(|o| format!("{} {o}", by_outcome.get(&(kind, *o)).unwrap_or(&0)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    f.push(format!(
        "fenced writes: lock ledgers (holder's session) {}; store ledgers (storage session) \
         {}; leader ledger {}",
        outcomes(0),
        outcomes(1),
        outcomes(2)
    ));
    let lock_holds: Vec<&&HoldRec> = holds.iter().filter(|h| h.ledger != crate::LEADER).collect();
    let mut per_lock: BTreeMap<&str, u64> = BTreeMap::new();
    let mut lock_ends: BTreeMap<String, u64> = BTreeMap::new();
    for h in &lock_holds {
        *per_lock.entry(h.ledger.as_str()).or_default() += 1;
        *lock_ends.entry(h.how.clone()).or_default() += 1;
    }
    let server_holds: Vec<String> = snap
        .ledgers
        .iter()
        .filter(|l| l.name.starts_with("lock-"))
        .map(|l| format!("{} {}", l.name, l.buckets.len()))
        .collect();
    f.push(format!(
        "lock acquisitions: {} ({per_lock:?}); holds that wrote, on the server: {}; \
         how holds ended: {lock_ends:?}",
        lock_holds.len(),
        server_holds.join(", ")
    ));
    let terms: Vec<&&HoldRec> = holds.iter().filter(|h| h.ledger == crate::LEADER).collect();
    let mut term_ends: BTreeMap<&str, u64> = BTreeMap::new();
    for t in &terms {
        *term_ends.entry(t.how.as_str()).or_default() += 1;
    }
    let server_terms = snap
        .ledgers
        .iter()
        .find(|l| l.name == crate::LEADER)
        .map_or(0, |l| l.buckets.len());
    let leader_writers: HashSet<&str> = terms.iter().map(|t| t.writer.as_str()).collect();
    f.push(format!(
        "leader changes: {} terms reported by clients ({} distinct leaders; ended: \
         {term_ends:?}); {server_terms} terms on the server's record",
        terms.len(),
        leader_writers.len()
    ));
    f.push(format!("sessions: {session_events:?}"));
}

/// Holders paused or partitioned past the session timeout: how they learned, and what their
/// late writes did.
fn cut_off_holders(f: &mut Vec<String>, inp: &Inputs, snap: &Snapshot, logs: &Logs) {
    let Logs { writes, holds, .. } = logs;
    // Holders paused or partitioned past the session timeout: how they learned, and what
    // their late writes did.
    let hold_index: HashMap<(&str, u64), &HoldRec> = holds
        .iter()
        .map(|h| ((h.ledger.as_str(), h.token), *h))
        .collect();
    let applied = applied(snap);
    for (what, windows) in [
        ("client pauses", &inp.faults.pauses),
        ("network partitions", &inp.faults.partitions),
    ] {
        let long: Vec<_> = windows.iter().filter(|p| p.long).collect();
        let mut learned: BTreeMap<String, u64> = BTreeMap::new();
        // (attempted, told ok, applied on the server) for writes issued after the end
        let mut late = (0u64, 0u64, 0u64);
        // From the end to lost() (locks) or to the task's cancellation (terms), in ms.
        let mut told_after: Vec<f64> = Vec::new();
        for p in &long {
            for (ledger, token) in &p.held {
                if let Some(h) = hold_index.get(&(ledger.as_str(), *token)) {
                    let told = if ledger == crate::LEADER {
                        (h.how == "cancelled").then_some(h.end_us)
                    } else {
                        h.lost_us
                    };
                    if let Some(t) = told.filter(|t| *t >= p.end_us) {
                        told_after.push((t - p.end_us) as f64 / 1000.0);
                    }
                }
                let late_writes: Vec<&&WriteRec> = writes
                    .iter()
                    .filter(|w| {
                        hold_ledger(&w.ledger) == ledger
                            && w.token == *token
                            && w.issued_us >= p.end_us
                    })
                    .collect();
                let how = hold_index
                    .get(&(ledger.as_str(), *token))
                    .map_or("no record".to_string(), |h| h.how.clone());
                let kind = if ledger == crate::LEADER {
                    "term"
                } else {
                    "lock"
                };
                let how = if late_writes.is_empty() && (how == "released" || how == "returned") {
                    format!("{how} (no write after the end)")
                } else {
                    how
                };
                *learned.entry(format!("{kind} {how}")).or_default() += 1;
                for w in late_writes {
                    late.0 += 1;
                    if w.outcome == Outcome::Ok {
                        late.1 += 1;
                    }
                    if applied.contains(&key(w)) {
                        late.2 += 1;
                    }
                }
            }
        }
        f.push(format!(
            "{what}: {} past the session timeout ({} while holding a lock or leading), {} \
             brief; holds cut off past the timeout ended: {learned:?}; their writes after the \
             end: {} attempted, {} reported applied, {} applied on the server (possible only \
             if the lock node outlived the fault; the ledger order check covers them)",
            long.len(),
            long.iter().filter(|p| !p.held.is_empty()).count(),
            windows.len() - long.len(),
            late.0,
            late.1,
            late.2
        ));
        told_after.sort_by(f64::total_cmp);
        if !told_after.is_empty() {
            f.push(format!(
                "  holders told after the end: {} times, in {:.0} ms median, {:.0} ms at most",
                told_after.len(),
                told_after[told_after.len() / 2],
                told_after[told_after.len() - 1]
            ));
        }
    }
}

/// Informational: holds that overlapped in the clients' belief (the server's record decides
/// safety; a belief overlaps when the older holder has not yet been told).
fn believed_overlaps(f: &mut Vec<String>, inp: &Inputs, logs: &Logs) {
    let holds = &logs.holds;
    let mut believed = 0u64;
    let mut explained = 0u64;
    let mut by_ledger: BTreeMap<&str, Vec<&HoldRec>> = BTreeMap::new();
    for h in holds.iter() {
        by_ledger.entry(h.ledger.as_str()).or_default().push(h);
    }
    for hs in by_ledger.values_mut() {
        hs.sort_by_key(|h| h.token);
        for (i, a) in hs.iter().enumerate() {
            let a_end = a.lost_us.unwrap_or(a.end_us).min(a.end_us);
            for b in &hs[i + 1..] {
                if b.writer != a.writer && b.start_us < a_end {
                    believed += 1;
                    let wa = worker_of(&a.writer);
                    if inp
                        .faults
                        .pauses
                        .iter()
                        .chain(&inp.faults.partitions)
                        .any(|p| {
                            Some(p.worker) == wa && p.start_us < a_end && p.end_us > a.start_us
                        })
                    {
                        explained += 1;
                    }
                }
            }
        }
    }
    f.push(format!(
        "client-side view: {believed} pairs of holds/terms believed at once by their \
         holders ({explained} with the older holder's process paused or cut off meanwhile; the rest \
         within the time it takes to notice a lost connection)"
    ));
}

/// Each worker's resident set after the warm-up and at the end; growth past both limits is a
/// violation (returned).
fn memory(f: &mut Vec<String>, inp: &Inputs) -> Vec<String> {
    let mut mem_lines = Vec::new();
    let mut mem_violations = Vec::new();
    for w in inp.workers {
        let samples: Vec<(u64, u64)> = w
            .records
            .iter()
            .filter_map(|r| match r {
                Record::Mem { at_us, rss_kb } => Some((*at_us, *rss_kb)),
                _ => None,
            })
            .collect();
        let first = samples
            .iter()
            .find(|(t, _)| *t >= inp.warmup_end_us)
            .or(samples.first());
        let last = samples.last();
        let peak = samples.iter().map(|(_, k)| *k).max().unwrap_or(0);
        match (first, last) {
            (Some(&(_, a)), Some(&(_, b))) => {
                mem_lines.push(format!(
                    "worker {} {:.1} → {:.1} MiB (peak {:.1})",
                    w.id,
                    a as f64 / 1024.0,
                    b as f64 / 1024.0,
                    peak as f64 / 1024.0
                ));
                if b as f64 > a as f64 * RSS_GROWTH_RATIO && b.saturating_sub(a) > RSS_GROWTH_KB {
                    mem_violations.push(format!(
                        "worker {}: resident set grew from {a} KiB to {b} KiB",
                        w.id
                    ));
                }
            }
            _ => mem_violations.push(format!("worker {}: no memory samples", w.id)),
        }
    }
    f.push(format!(
        "client memory (after warm-up → end): {}",
        mem_lines.join("; ")
    ));
    mem_violations
}

/// How the workers stopped and what the servers were left with.
fn ending(f: &mut Vec<String>, inp: &Inputs, snap: &Snapshot) {
    f.push(format!(
        "workers stopped in: {}",
        inp.workers
            .iter()
            .map(|w| format!("{:.1} s", w.stop_secs))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    f.push(format!(
        "members' copies of the ledgers: {}",
        snap.replicas_compared
    ));
    f.push(format!(
        "after the clients closed: {}; watches: {}",
        match snap.leftovers_cleared_after {
            Some(d) => format!("no node or watch left ({:.1} s to clear)", d.as_secs_f64()),
            None => "leftovers remained".to_string(),
        },
        snap.watch_summaries.join(" | ")
    ));
}
