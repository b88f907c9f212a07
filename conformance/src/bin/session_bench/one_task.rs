//! Ours driven from one task: `window` requests in flight as futures polled by one task
//! (each woken on its own, as a `FuturesUnordered` would), instead of a task per request.
//! On the multi-thread runtime this keeps the callers off the second worker: it shows what
//! the task per request of the `ours` run costs there.

use std::{
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll, Wake, Waker},
};

use conformance::{bench::Throughput, counters::Counters};
use zk_session::Client;

use crate::{
    ours::one_op,
    settings::{Paths, Settings},
    workloads::Workload,
};

type Op = Pin<Box<dyn Future<Output = bool> + Send>>;

pub(crate) async fn ours_one_task_run(
    client: &Client,
    w: Workload,
    paths: &Paths,
    set: &Settings,
) -> Vec<Throughput> {
    let counters = Counters::default();
    // Made once: an op allocates only its own future, as a caller's would.
    let cd_paths: Vec<String> = (0..w.window)
        .map(|i| format!("{}/one-{i}", paths.cd_base))
        .collect();
    let shared = Arc::new((client.clone(), paths.data.clone(), cd_paths));
    let new_op = move |i: usize| -> Op {
        let shared = shared.clone();
        Box::pin(async move {
            let (client, data, cd_paths) = &*shared;
            one_op(client, w.kind, data, &cd_paths[i]).await
        })
    };
    let task = tokio::spawn(InFlight::new(w.window, new_op, counters.clone()));
    let out = counters.measure(set.schedule()).await;
    let _ = task.await;
    out
}

/// `window` slots, each an op in flight; a finished op counts and is replaced until stop.
struct InFlight<F> {
    slots: Vec<Option<Op>>,
    wakers: Vec<Waker>,
    ready: Arc<Ready>,
    new_op: F,
    counters: Counters,
}

/// The slots woken since the task last ran, and the task's waker.
#[derive(Default)]
struct Ready {
    slots: Mutex<Vec<usize>>,
    task: Mutex<Option<Waker>>,
}

struct SlotWaker {
    slot: usize,
    ready: Arc<Ready>,
}

impl Wake for SlotWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.ready.slots.lock().unwrap().push(self.slot);
        if let Some(w) = self.ready.task.lock().unwrap().as_ref() {
            w.wake_by_ref();
        }
    }
}

impl<F: Fn(usize) -> Op + Unpin> InFlight<F> {
    fn new(window: usize, new_op: F, counters: Counters) -> Self {
        let ready = Arc::new(Ready::default());
        let wakers = (0..window)
            .map(|slot| {
                Waker::from(Arc::new(SlotWaker {
                    slot,
                    ready: ready.clone(),
                }))
            })
            .collect();
        *ready.slots.lock().unwrap() = (0..window).collect();
        InFlight {
            slots: (0..window).map(|i| Some(new_op(i))).collect(),
            wakers,
            ready,
            new_op,
            counters,
        }
    }
}

impl<F: Fn(usize) -> Op + Unpin> Future for InFlight<F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        *this.ready.task.lock().unwrap() = Some(cx.waker().clone());
        loop {
            let woken = std::mem::take(&mut *this.ready.slots.lock().unwrap());
            if woken.is_empty() {
                break;
            }
            for i in woken {
                while let Some(op) = this.slots[i].as_mut() {
                    let Poll::Ready(ok) =
                        op.as_mut().poll(&mut Context::from_waker(&this.wakers[i]))
                    else {
                        break;
                    };
                    this.counters.count(ok);
                    this.slots[i] = (!this.counters.stopped()).then(|| (this.new_op)(i));
                }
            }
        }
        if this.slots.iter().all(Option::is_none) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}
