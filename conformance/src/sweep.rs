//! A cancellation sweep: poll a future k times, drop it, check that nothing was left behind,
//! for every k until the future completes.
//!
//! Any future may be dropped at any await point (a `select!`, a `timeout`, a task aborted),
//! and must leave nothing behind. [`poll_then_drop`] stops a future after exactly k polls,
//! on the real runtime, with a short sleep before each poll so that the connection's I/O
//! progresses between them; [`sweep`] runs a test's step for k = 0, 1, 2, … as a
//! [`SweepPlan`] says (densely for small k, with a stride after), collecting what the
//! step's checks found. The checks that apply to every client operation are here:
//!
//! - [`owned_nodes`]: the ephemeral znodes a session owns under a path, seen from a second
//!   client (`ephemeralOwner`);
//! - [`watches_of`]: the data watches the server holds for a session (the `wchc`
//!   four-letter word; the harness whitelists every four-letter word), and
//!   [`child_watches`] for child watches, which 3.8's four-letter words do not list;
//! - [`settle`]: such a check polled until it holds, since cleanup of a dropped future
//!   runs in the background.
//!
//! ```no_run
//! # async fn f(c: zk_session::Client, observer: zk_session::Client) {
//! use std::time::Duration;
//! use conformance::ephemeral_owner;
//! use conformance::sweep::{owned_nodes, poll_then_drop, settle, sweep, SweepPlan};
//! use zk_session::{CreateOptions, Version};
//!
//! let plan = SweepPlan::default();
//! let pause = plan.pause;
//! let report = sweep(&plan, |k| {
//!     let (c, observer) = (c.clone(), observer.clone());
//!     async move {
//!         let options = CreateOptions::ephemeral();
//!         if poll_then_drop(c.create("/x", b"", options), k, pause).await.is_some() {
//!             c.delete("/x", Version::Any).await.map_err(|e| e.to_string())?;
//!             return Ok(true);
//!         }
//!         settle("no node", Duration::from_secs(5), || async {
//!             let sid = ephemeral_owner(&c);
//!             let left = owned_nodes(&observer, sid, "/").await.unwrap();
//!             left.is_empty().then_some(()).ok_or(format!("{left:?}"))
//!         })
//!         .await?;
//!         Ok(false)
//!     }
//! })
//! .await;
//! assert!(report.violations.is_empty(), "{:?}", report.violations);
//! # }
//! ```

use std::{
    collections::HashMap,
    future::Future,
    net::SocketAddr,
    pin::pin,
    task::Poll,
    time::{Duration, Instant},
};

use zk_session::{Client, Error, ErrorCode, WatcherType};

use crate::four_letter_word;

/// Which k to sweep: every k up to `dense`, then every `stride`-th up to `max`.
#[derive(Debug, Clone)]
pub struct SweepPlan {
    /// Every k in `0..=dense`.
    pub dense: u32,
    /// The step after `dense`.
    pub stride: u32,
    /// The largest k tried; a future still pending there is reported as never completing
    /// only if the step says it must complete.
    pub max: u32,
    /// What happens before each poll after the first.
    pub pause: Pause,
    /// When the future has not completed by `max`: one more run that polls it to the end,
    /// for at most this long. Under load a round trip can outlast `max` yields, so a
    /// future that completes would otherwise look as if it never does. `None` for a
    /// future that is not meant to complete.
    pub finish_within: Option<Duration>,
}

/// What happens between two polls of a swept future.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pause {
    /// `tokio::task::yield_now`: other tasks run, the I/O driver only now and then, so
    /// the future is caught at many points of its own work.
    Yield,
    /// A sleep: the I/O driver runs, so replies arrive between polls.
    Sleep(Duration),
}

impl Pause {
    async fn wait(self) {
        match self {
            Pause::Yield => tokio::task::yield_now().await,
            Pause::Sleep(d) => tokio::time::sleep(d).await,
        }
    }
}

impl Default for SweepPlan {
    /// k = 0..=24, then every 6th up to 120, with 1 ms between polls; then, if the future
    /// has not completed, polled to the end for up to 60 s.
    fn default() -> Self {
        SweepPlan {
            dense: 24,
            stride: 6,
            max: 120,
            pause: Pause::Sleep(Duration::from_millis(1)),
            finish_within: Some(Duration::from_secs(60)),
        }
    }
}

impl SweepPlan {
    /// A plan for a future that took `polls` polls to complete with `pause`: every k up
    /// to 24, then some 40 more up to twice `polls` (it may take longer when swept).
    ///
    /// ```
    /// use conformance::sweep::{Pause, SweepPlan};
    /// let plan = SweepPlan::fitted(4000, Pause::Yield);
    /// assert_eq!((plan.dense, plan.stride, plan.max), (24, 100, 8000));
    /// ```
    pub fn fitted(polls: u32, pause: Pause) -> SweepPlan {
        SweepPlan {
            stride: (polls / 40).max(1),
            max: polls.saturating_mul(2).max(24),
            pause,
            ..SweepPlan::default()
        }
    }

    /// The k of this plan, in order.
    ///
    /// ```
    /// let plan = conformance::sweep::SweepPlan { dense: 2, stride: 5, max: 12, ..Default::default() };
    /// assert_eq!(plan.ks().collect::<Vec<_>>(), [0, 1, 2, 7, 12]);
    /// ```
    pub fn ks(&self) -> impl Iterator<Item = u32> + '_ {
        let dense = 0..=self.dense.min(self.max);
        let sparse =
            (self.dense + self.stride.max(1)..=self.max).step_by(self.stride.max(1) as usize);
        dense.chain(sparse)
    }
}

/// Polls `fut` to the end, with `pause` before each poll after the first: its output, and
/// how many polls it took (to fit a [`SweepPlan`] to a future whose length in polls is not
/// known, such as one that another worker's task completes).
pub async fn polls_to_complete<F: Future>(fut: F, pause: Pause) -> (F::Output, u32) {
    let mut fut = pin!(fut);
    let mut polls = 0;
    loop {
        if polls > 0 {
            pause.wait().await;
        }
        polls += 1;
        let polled = std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await;
        if let Poll::Ready(v) = polled {
            return (v, polls);
        }
    }
}

/// Polls `fut` at most `k` times (with `pause` before each poll after the first) and drops
/// it if it has not completed: `Some(output)` when it completed within `k` polls. With
/// `k` = 0 the future is dropped without being polled.
pub async fn poll_then_drop<F: Future>(fut: F, k: u32, pause: Pause) -> Option<F::Output> {
    let mut fut = pin!(fut);
    for i in 0..k {
        if i > 0 {
            pause.wait().await;
        }
        let polled = std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await;
        if let Poll::Ready(v) = polled {
            return Some(v);
        }
    }
    None
}

/// What a sweep found.
#[derive(Debug, Clone, Default)]
pub struct SweepReport {
    /// How many times the future was dropped before completing.
    pub drops: u32,
    /// The k at which the future first completed, if it did within the plan (`u32::MAX`:
    /// in the plan's finishing run).
    pub completed_at: Option<u32>,
    /// What the step's checks found, prefixed with the k.
    pub violations: Vec<String>,
}

/// Prints what a sweep found, and fails the test on any violation, or when a future that
/// `must_complete` never did.
pub fn assert_swept(what: &str, report: &SweepReport, must_complete: bool) {
    println!(
        "{what}: dropped {} times, completed at k={:?}",
        report.drops, report.completed_at
    );
    assert!(
        report.violations.is_empty(),
        "{what}: {:#?}",
        report.violations
    );
    if must_complete {
        assert!(report.completed_at.is_some(), "{what} never completed");
    }
}

/// Runs `step(k)` for each k of `plan` until a step reports that its future completed
/// (`Ok(true)`); `Ok(false)` means dropped and checked, `Err` a violation found after the
/// drop at k (the sweep goes on, to find them all).
pub async fn sweep<S, Fut>(plan: &SweepPlan, mut step: S) -> SweepReport
where
    S: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<bool, String>>,
{
    let mut report = SweepReport::default();
    for k in plan.ks() {
        match step(k).await {
            Ok(true) => {
                report.completed_at = Some(k);
                break;
            }
            Ok(false) => report.drops += 1,
            Err(v) => {
                report.drops += 1;
                report.violations.push(format!("k={k}: {v}"));
            }
        }
    }
    if let (None, Some(within)) = (report.completed_at, plan.finish_within) {
        match tokio::time::timeout(within, step(u32::MAX)).await {
            Ok(Ok(true)) => report.completed_at = Some(u32::MAX),
            Ok(Ok(false)) => {}
            Ok(Err(v)) => report.violations.push(format!("polled to the end: {v}")),
            Err(_) => report
                .violations
                .push(format!("polled to the end: not done after {within:?}")),
        }
    }
    report
}

/// Polls `check` every 10 ms until it returns `Ok`, for at most `within`; the last error,
/// prefixed with `what`, when it never does.
pub async fn settle<C, Fut>(what: &str, within: Duration, mut check: C) -> Result<(), String>
where
    C: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let deadline = Instant::now() + within;
    loop {
        match check().await {
            Ok(()) => return Ok(()),
            Err(e) if Instant::now() >= deadline => return Err(format!("{what}: {e}")),
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// The paths of the znodes at or below `under` whose `ephemeralOwner` is `session`, as
/// `observer` (best a second client) sees them, sorted.
pub async fn owned_nodes(
    observer: &Client,
    session: i64,
    under: &str,
) -> Result<Vec<String>, Error> {
    let mut found = Vec::new();
    let mut todo = vec![under.to_owned()];
    while let Some(path) = todo.pop() {
        let stat = match observer.exists(&path).await? {
            Some(s) => s,
            None => continue,
        };
        if stat.ephemeral_owner == session {
            found.push(path.clone());
        }
        if stat.num_children == 0 {
            continue;
        }
        match observer.get_children(&path).await {
            Ok(kids) => todo.extend(kids.iter().map(|k| child(&path, k))),
            Err(Error::Code(ErrorCode::NoNode)) => {}
            Err(e) => return Err(e),
        }
    }
    found.sort();
    Ok(found)
}

fn child(parent: &str, name: &str) -> String {
    if parent == "/" {
        format!("/{name}")
    } else {
        format!("{parent}/{name}")
    }
}

/// The server's watches by session (`wchc`): session id → watched paths.
pub fn watches_by_session(server: SocketAddr) -> std::io::Result<HashMap<i64, Vec<String>>> {
    let text = four_letter_word(server, "wchc", Duration::from_secs(10))?;
    Ok(parse_wchc(&text))
}

/// Parses a `wchc` answer: a `0x<session>` line, then its watched paths, indented.
///
/// ```
/// let m = conformance::sweep::parse_wchc("0x1a\n\t/a\n\t/b\n0x2\n\t/c\n");
/// assert_eq!(m[&0x1a], ["/a", "/b"]);
/// assert_eq!(m[&2], ["/c"]);
/// ```
pub fn parse_wchc(text: &str) -> HashMap<i64, Vec<String>> {
    let mut out: HashMap<i64, Vec<String>> = HashMap::new();
    let mut current = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(hex) = line.strip_prefix("0x") {
            if let Ok(id) = u64::from_str_radix(hex, 16) {
                out.entry(id as i64).or_default();
                current = Some(id as i64);
            }
        } else if let (Some(id), true) = (current, line.starts_with('/')) {
            out.entry(id).or_default().push(line.to_owned());
        }
    }
    out
}

/// The paths at or below `under` that `session` watches on `server`, sorted.
pub fn watches_of(server: SocketAddr, session: i64, under: &str) -> std::io::Result<Vec<String>> {
    let mut v: Vec<String> = watches_by_session(server)?
        .remove(&session)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.starts_with(under))
        .collect();
    v.sort();
    Ok(v)
}

/// The paths among `paths` on which `client`'s session holds a child watch (or a persistent
/// one), asked of the server with checkWatches: in 3.8 the four-letter words list data
/// watches only.
pub async fn child_watches(client: &Client, paths: &[String]) -> Result<Vec<String>, Error> {
    let mut found = Vec::new();
    for p in paths {
        match client.check_watches(p, WatcherType::Children).await {
            Ok(()) => found.push(p.clone()),
            Err(Error::Code(ErrorCode::NoWatcher | ErrorCode::NoNode)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(found)
}

/// Checks, settling for at most `within`, that `session` owns no znode at or below `under`
/// other than `allowed_nodes`, and holds no watch there other than `allowed_watches`.
pub async fn expect_clean(
    observer: &Client,
    server: SocketAddr,
    session: i64,
    under: &str,
    allowed_nodes: &[String],
    allowed_watches: &[String],
    within: Duration,
) -> Result<(), String> {
    settle("leftovers", within, || async {
        let nodes = owned_nodes(observer, session, under)
            .await
            .map_err(|e| format!("listing: {e}"))?;
        let nodes: Vec<_> = nodes
            .into_iter()
            .filter(|n| !allowed_nodes.contains(n))
            .collect();
        let watches = watches_of(server, session, under).map_err(|e| format!("wchc: {e}"))?;
        let watches: Vec<_> = watches
            .into_iter()
            .filter(|w| !allowed_watches.contains(w))
            .collect();
        if nodes.is_empty() && watches.is_empty() {
            Ok(())
        } else {
            Err(format!("nodes {nodes:?}, watches {watches:?}"))
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A future that is ready at its `n`th poll.
    fn ready_after(n: u32) -> impl Future<Output = ()> {
        let mut polls = 0;
        std::future::poll_fn(move |cx| {
            polls += 1;
            if polls >= n {
                Poll::Ready(())
            } else {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        })
    }

    fn plan(finish_within: Option<Duration>) -> SweepPlan {
        SweepPlan {
            dense: 3,
            stride: 2,
            max: 7,
            pause: Pause::Yield,
            finish_within,
        }
    }

    async fn run(plan: &SweepPlan, n: u32) -> SweepReport {
        let pause = plan.pause;
        sweep(plan, |k| async move {
            Ok(poll_then_drop(ready_after(n), k, pause).await.is_some())
        })
        .await
    }

    #[tokio::test]
    async fn a_future_done_within_the_plan_stops_the_sweep_there() {
        let report = run(&plan(Some(Duration::from_secs(5))), 5).await;
        assert_eq!((report.drops, report.completed_at), (4, Some(5)));
    }

    #[tokio::test]
    async fn a_future_slower_than_the_plan_is_polled_to_the_end() {
        let report = run(&plan(Some(Duration::from_secs(5))), 50).await;
        assert_eq!(report.completed_at, Some(u32::MAX));
        assert!(report.violations.is_empty(), "{:?}", report.violations);
        let report = run(&plan(None), 50).await;
        assert_eq!((report.drops, report.completed_at), (6, None));
    }

    #[tokio::test]
    async fn a_future_that_never_completes_is_a_violation_of_the_finishing_run() {
        let report = run(&plan(Some(Duration::from_millis(50))), u32::MAX).await;
        assert_eq!(report.completed_at, None);
        assert_eq!(report.violations.len(), 1, "{:?}", report.violations);
    }
}
