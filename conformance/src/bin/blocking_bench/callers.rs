//! Callers on OS threads: `window` threads, each making one blocking call after another, the
//! main thread sampling the counts; and a blocking client measured that way on every
//! workload, one session for all of them.

use std::{sync::Arc, thread};

use conformance::{
    bench::Throughput,
    counters::Counters,
    workload::{Kind, Paths, Schedule, Workload},
};

/// Runs `w.window` caller threads, each doing its own op (made by `new_op(i)`: whether it
/// succeeded) in a loop, through the schedule; returns the repetitions once every caller
/// has stopped.
pub(crate) fn run_callers<F>(
    w: Workload,
    s: Schedule,
    mut new_op: impl FnMut(usize) -> F,
) -> Vec<Throughput>
where
    F: FnMut() -> bool + Send + 'static,
{
    let counters = Counters::default();
    let threads: Vec<_> = (0..w.window)
        .map(|i| {
            let (mut op, counters) = (new_op(i), counters.clone());
            thread::spawn(move || {
                while !counters.stopped() {
                    counters.count(op());
                }
            })
        })
        .collect();
    let out = counters.measure_blocking(s);
    for t in threads {
        let _ = t.join();
    }
    out
}

/// One op of a workload on a blocking client: a getData of the data znode, or the create
/// and the delete of the caller's own node; whether it succeeded.
pub(crate) type OneOp<C> = fn(&C, Kind, &str, &str) -> bool;

/// Measures `client` on every workload, its create + delete nodes named `{tag}-{i}`; prints
/// each workload's `RESULT` lines as soon as it is done.
pub(crate) fn run_client<C: Send + Sync + 'static>(
    client: Arc<C>,
    one_op: OneOp<C>,
    tag: &str,
    workloads: &[Workload],
    paths: &Paths,
    s: Schedule,
) {
    for &w in workloads {
        let reps = run_callers(w, s, |i| {
            let client = client.clone();
            let data = paths.data.clone();
            let cd = format!("{}/{tag}-{i}", paths.cd_base);
            move || one_op(&client, w.kind, &data, &cd)
        });
        crate::print_results(w, &reps);
    }
}
