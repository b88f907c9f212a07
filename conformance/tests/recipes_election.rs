//! Leader election against a real ZooKeeper 3.8: zk-recipes' LeaderLatch and LeaderSelector.
//!
//! Sessions are expired the classic way: a second connection resumes the session with its id
//! and password (`ClientBuilder::resume_session`) and closes it, so the server deletes the
//! session's nodes while the owner is still running. No test asserts on how fast anything
//! happens, only on what happens (waits are bounded by a generous [`SOON`]).

mod recipes_support;

use std::{
    future::Future,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex as StdMutex,
    },
    time::{Duration, Instant},
};

use conformance::{four_letter_word, shared_standalone, Standalone, ZkServer};
// The helpers the mutex tests use too (same SOON); `watches_under` stays here, shaped for
// elections.
use recipes_support::{client, eventually, leads, participant_ids, soon, unique_under, SOON};
use zk_recipes::{
    CloseMode, InterProcessMutex, LatchStatus, LeaderLatch, LeaderSelector, Leadership,
    LeadershipEvent, LostReason, RecipeError, SelectorStatus, SuspendPolicy,
};
use zk_session::{Client, OnExpiry, SessionState, Version};

fn unique(tag: &str) -> String {
    unique_under("election", tag)
}

/// Every watched path at or below `prefix`, from the server's `wchc`.
fn watches_under(server: &ZkServer, prefix: &str) -> Vec<String> {
    let text =
        four_letter_word(server.client_addr(), "wchc", Duration::from_secs(10)).expect("wchc");
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

/// Expires `victim`'s session: a second connection takes it over and closes it.
///
/// The victim's client reconnects at once when the server drops its connection for the
/// thief's, and may take the session back before the thief has closed it; under load that
/// race is real, so this tries again until the victim's client has seen the expiry.
async fn expire(connect: &str, victim: &Client) {
    let (id, password) = (victim.session_id().unwrap(), victim.session_password());
    let deadline = Instant::now() + SOON;
    loop {
        let thief = Client::builder(connect)
            .resume_session(id, password.clone())
            .connect()
            .await;
        if let Ok(thief) = thief {
            let _ = thief.close().await;
        }
        let mut state = victim.watch_state();
        let expired = tokio::time::timeout(
            Duration::from_secs(5),
            state.wait_for(|s| s == SessionState::Ended(zk_session::EndReason::SessionExpired)),
        )
        .await;
        if matches!(expired, Ok(Ok(_))) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "could not expire session {id:#x}; the victim is {:?}",
            victim.state()
        );
    }
}

/// A client that ends with its session (`OnExpiry::End`), for the tests of that ending;
/// recipes_expiry.rs has the default, a new session on the same handle.
async fn ending_client(connect: &str) -> Client {
    Client::builder(connect)
        .session_timeout(Duration::from_secs(20))
        .on_session_expiry(OnExpiry::End)
        .connect()
        .await
        .expect("connect")
}

/// Once everyone has left: no participant nodes and no watches under `path`.
async fn assert_no_leftovers(c: &Client, server: &ZkServer, path: &str) {
    eventually(&format!("no nodes left under {path}"), || async {
        match c.get_children(path).await {
            Ok(ch) => ch.is_empty(),
            Err(e) => e.code() == Some(zk_session::ErrorCode::NoNode),
        }
    })
    .await;
    eventually(&format!("no watches left under {path}"), || async {
        watches_under(server, path).is_empty()
    })
    .await;
}

async fn latch(c: &Client, path: &str, id: &str) -> LeaderLatch {
    soon(
        "latch start",
        LeaderLatch::builder(c.clone(), path).id(id).start(),
    )
    .await
    .expect("latch start")
}

#[tokio::test]
async fn latch_basics_order_stream_and_close_modes() {
    let zk = shared_standalone();
    let cs = zk.connect_string();
    let (ca, cb, cc) = (client(&cs).await, client(&cs).await, client(&cs).await);
    let path = unique("latch-basics");
    let a = latch(&ca, &path, "a").await;
    soon("a leads", leads(&a)).await.unwrap();
    let b = latch(&cb, &path, "b").await;
    let c = latch(&cc, &path, "c").await;
    assert!(a.has_leadership());
    // Waiting behind a leader times out (not a timing assertion: b cannot lead while a does).
    let r = tokio::time::timeout(Duration::from_millis(300), leads(&b))
        .await
        .unwrap_or(Err(RecipeError::Timeout));
    assert!(matches!(r, Err(RecipeError::Timeout)), "{r:?}");
    assert!(!b.has_leadership() && !c.has_leadership());

    // Curator's names and our ids as node data, in line order.
    let ps = a.participants().await.unwrap();
    let ids: Vec<&str> = ps.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert_eq!(ps.iter().filter(|p| p.is_leader).count(), 1);
    assert!(ps[0].is_leader);
    assert_eq!(
        zk_session::SessionId::new(ps[0].session_id),
        ca.session_id()
    );
    for p in &ps {
        let name = p.path.rsplit('/').next().unwrap();
        assert!(
            name.starts_with("_c_") && name[40..].starts_with("latch-"),
            "{name}"
        );
        assert_eq!(name.len(), 40 + "latch-".len() + 10, "{name}");
    }
    assert_eq!(a.our_path().as_deref(), Some(ps[0].path.as_str()));
    assert_eq!(c.leader().await.unwrap().unwrap().id, "a");

    // NotifyLeader: a's stream hears NotLeader; b's hears IsLeader.
    let mut a_changes = a.changes();
    let mut b_changes = b.changes();
    let a_status = a.status();
    a.close_with(CloseMode::NotifyLeader).await.unwrap();
    assert!(matches!(a_status.get(), LatchStatus::Closed));
    assert_eq!(a_changes.next().await, Some(LeadershipEvent::NotLeader));
    assert_eq!(
        a_changes.next().await,
        None,
        "the stream ends with the latch"
    );
    assert_eq!(
        soon("b hears", b_changes.next()).await,
        Some(LeadershipEvent::IsLeader)
    );
    assert!(b.has_leadership());
    assert_eq!(c.leader().await.unwrap().unwrap().id, "b");

    // Silent: b steps down without telling its stream.
    let b_status = b.status();
    b.close().await.unwrap();
    assert!(matches!(b_status.get(), LatchStatus::Closed));
    assert_eq!(b_changes.next().await, None);
    soon("c leads", leads(&c)).await.unwrap();
    c.close().await.unwrap();
    assert_no_leftovers(&ca, zk, &path).await;
}

#[tokio::test]
async fn latch_leader_whose_node_is_deleted_steps_down_and_queues_again() {
    let zk = shared_standalone();
    let cs = zk.connect_string();
    let (ca, cb, admin) = (client(&cs).await, client(&cs).await, client(&cs).await);
    let path = unique("latch-deleted");
    let a = latch(&ca, &path, "a").await;
    soon("a leads", leads(&a)).await.unwrap();
    let b = latch(&cb, &path, "b").await;
    let mut a_changes = a.changes();
    admin
        .delete(&a.our_path().unwrap(), Version::Any)
        .await
        .unwrap();
    // Curator's leader would not notice; ours does, and b takes over.
    assert_eq!(
        soon("a steps down", a_changes.next()).await,
        Some(LeadershipEvent::NotLeader)
    );
    soon("b leads", leads(&b)).await.unwrap();
    // a is back in line, behind b.
    eventually("a queued again", || async {
        let ids = participant_ids(a.participants().await.unwrap());
        ids == ["b", "a"]
    })
    .await;
    assert!(!a.has_leadership());
    b.close().await.unwrap();
    soon("a leads again", leads(&a)).await.unwrap();
    a.close().await.unwrap();
    assert_no_leftovers(&admin, zk, &path).await;
}

#[tokio::test]
async fn latch_leader_losing_its_session_gives_exactly_one_new_leader() {
    let zk = shared_standalone();
    let cs = zk.connect_string();
    let path = unique("latch-expiry");
    let mut clients = Vec::new();
    let mut latches = Vec::new();
    for id in ["a", "b", "c", "d"] {
        let c = ending_client(&cs).await;
        latches.push(latch(&c, &path, id).await);
        clients.push(c);
    }
    soon("a leads", leads(&latches[0])).await.unwrap();
    expire(&cs, &clients[0]).await;
    // The old leader knows it is out: its latch ends with the session.
    let r = soon("a's latch ends", leads(&latches[0])).await;
    assert!(matches!(r, Err(RecipeError::Lost(_))), "{r:?}");
    assert!(!latches[0].has_leadership());
    // The next in line leads, and only it.
    soon("b leads", leads(&latches[1])).await.unwrap();
    let leaders: Vec<usize> = (0..4).filter(|i| latches[*i].has_leadership()).collect();
    assert_eq!(leaders, [1]);
    let ps = latches[2].participants().await.unwrap();
    let ids: Vec<&str> = ps.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["b", "c", "d"]);
    for l in latches.drain(1..) {
        l.close().await.unwrap();
    }
    assert_no_leftovers(&clients[1], zk, &path).await;
}

/// Stops and restarts a private server under a leader: with the default policy it steps down
/// while suspended and leads again on reconnecting (same session, same node); with
/// `WaitForLost` it keeps leading through the outage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latch_suspend_policies_across_a_server_restart() {
    let zk = Arc::new(Standalone::start().expect("private server"));
    let cs = zk.connect_string();
    // The longest session the server grants: a JVM restart on a busy machine can take a
    // while, and the sessions must outlive it. A short connect timeout, because a handshake
    // sent while the JVM is starting may go unanswered, and by default the client would
    // wait the session timeout divided by the number of hosts (60 s) before trying again.
    let long = || async {
        Client::builder(&cs)
            .session_timeout(Duration::from_secs(60))
            .connect_attempt_timeout(Duration::from_secs(2))
            .connect()
            .await
            .expect("connect")
    };
    let (ca, cb) = (long().await, long().await);
    let path = unique("latch-suspend");
    let strict = latch(&ca, &path, "strict").await;
    let patient = soon(
        "patient start",
        LeaderLatch::builder(cb.clone(), format!("{path}-patient"))
            .id("patient")
            .suspend_policy(SuspendPolicy::WaitForLost)
            .start(),
    )
    .await
    .unwrap();
    soon("strict leads", leads(&strict)).await.unwrap();
    soon("patient leads", leads(&patient)).await.unwrap();
    let strict_node = strict.our_path().unwrap();
    let mut changes = strict.changes();

    let z = zk.clone();
    tokio::task::spawn_blocking(move || z.stop())
        .await
        .unwrap()
        .unwrap();
    eventually("both suspended", || async {
        ca.state() != SessionState::Connected && cb.state() != SessionState::Connected
    })
    .await;
    assert_eq!(
        soon("strict steps down", changes.next()).await,
        Some(LeadershipEvent::NotLeader)
    );
    assert!(!strict.has_leadership());
    assert!(
        patient.has_leadership(),
        "WaitForLost keeps leading while suspended"
    );

    let z = zk.clone();
    tokio::task::spawn_blocking(move || z.start())
        .await
        .unwrap()
        .unwrap();
    let change = match tokio::time::timeout(SOON, changes.next()).await {
        Ok(c) => c,
        Err(_) => panic!(
            "strict did not lead again: client {:?}, server {:?}, leader {}",
            ca.state(),
            zk.mode(),
            strict.has_leadership()
        ),
    };
    if change.is_none() {
        panic!(
            "the latch ended: {:?}; client {:?}",
            leads(&strict).await,
            ca.state()
        );
    }
    assert_eq!(change, Some(LeadershipEvent::IsLeader));
    assert_eq!(strict.our_path().as_deref(), Some(strict_node.as_str()));
    assert!(patient.has_leadership());
    strict.close().await.unwrap();
    patient.close().await.unwrap();
    assert_no_leftovers(&ca, &zk, &path).await;
}

/// Counts leaders running at once, in-process.
#[derive(Default)]
struct Stage {
    now: AtomicUsize,
    max: AtomicUsize,
    terms: StdMutex<Vec<String>>,
}

/// Decrements on drop, so a cancelled task counts as stopped too.
struct OnStage(Arc<Stage>);

impl OnStage {
    fn enter(stage: &Arc<Stage>, id: &str) -> OnStage {
        let n = stage.now.fetch_add(1, Ordering::SeqCst) + 1;
        stage.max.fetch_max(n, Ordering::SeqCst);
        stage.terms.lock().unwrap().push(id.to_owned());
        OnStage(stage.clone())
    }
}

impl Drop for OnStage {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Selectors "a", "b" and "c" with auto-requeue on `path`, one on each of `clients`, and the
/// stage their terms share: each term goes on it (and off it when it ends or is cancelled)
/// and runs `term`.
async fn staged_selectors<F, Fut>(
    clients: &[Client],
    path: &str,
    term: F,
) -> (Arc<Stage>, Vec<LeaderSelector>)
where
    F: Fn(Leadership) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let stage = Arc::new(Stage::default());
    let mut selectors = Vec::new();
    for (c, id) in clients.iter().zip(["a", "b", "c"]) {
        let (st, term) = (stage.clone(), term.clone());
        let s = LeaderSelector::builder(c.clone(), path)
            .task(move |lead: Leadership| {
                let (st, term) = (st.clone(), term.clone());
                async move {
                    let _on = OnStage::enter(&st, lead.id());
                    term(lead).await;
                }
            })
            .id(id)
            .auto_requeue(true)
            .start()
            .await
            .expect("the selector starts");
        selectors.push(s);
    }
    (stage, selectors)
}

#[tokio::test]
async fn selector_rotation_with_auto_requeue_never_two_leaders() {
    let zk = shared_standalone();
    let cs = zk.connect_string();
    let path = unique("selector-rotation");
    let clients = [client(&cs).await, client(&cs).await, client(&cs).await];
    let (stage, selectors) = staged_selectors(&clients, &path, |lead: Leadership| async move {
        assert!(lead.is_current());
        tokio::time::sleep(Duration::from_millis(30)).await;
    })
    .await;
    eventually("every participant led at least twice", || async {
        let terms = stage.terms.lock().unwrap();
        ["a", "b", "c"]
            .iter()
            .all(|id| terms.iter().filter(|t| t == id).count() >= 2)
    })
    .await;
    // A snapshot: a participant between two terms is briefly out of the line.
    let deadline = Instant::now() + SOON;
    let ps = loop {
        let ps = selectors[0].participants().await.unwrap();
        let mut ids: Vec<&str> = ps.iter().map(|p| p.id.as_str()).collect();
        ids.sort();
        if ids == ["a", "b", "c"] {
            break ps;
        }
        assert!(
            Instant::now() < deadline,
            "never all three in line: {ids:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(ps.iter().filter(|p| p.is_leader).count(), 1);
    for p in &ps {
        let name = p.path.rsplit('/').next().unwrap();
        assert!(
            name.starts_with("_c_") && name[40..].starts_with("lock-"),
            "{name}"
        );
    }
    for s in selectors {
        let status = s.status();
        let what = format!("closing {}", s.id());
        soon(&what, s.close()).await.unwrap();
        assert!(matches!(status.get(), SelectorStatus::Closed));
    }
    assert_eq!(stage.max.load(Ordering::SeqCst), 1, "two leaders at once");
    assert_eq!(stage.now.load(Ordering::SeqCst), 0);
    assert_no_leftovers(&clients[0], zk, &path).await;
}

#[tokio::test]
async fn selector_leader_losing_its_session_is_cancelled_and_exactly_one_takes_over() {
    let zk = shared_standalone();
    let cs = zk.connect_string();
    let path = unique("selector-expiry");
    let clients = [
        ending_client(&cs).await,
        ending_client(&cs).await,
        ending_client(&cs).await,
    ];
    // Leaders lead until something takes it away.
    let (stage, selectors) = staged_selectors(&clients, &path, |_lead: Leadership| {
        std::future::pending::<()>()
    })
    .await;
    let first = soon("someone leads", async {
        loop {
            if let Some(i) = (0..3).find(|i| selectors[*i].has_leadership()) {
                return i;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    expire(&cs, &clients[first]).await;
    eventually(
        "the old leader's task is dropped and its selector ends",
        || async {
            !selectors[first].has_leadership() && selectors[first].status().get().has_ended()
        },
    )
    .await;
    assert!(matches!(
        selectors[first].status().get(),
        SelectorStatus::Ended(RecipeError::Lost(_))
    ));
    eventually("a new leader", || async {
        (0..3).any(|i| i != first && selectors[i].has_leadership())
    })
    .await;
    // Settled: exactly one leader, one task running, two terms in all.
    let leaders: Vec<usize> = (0..3).filter(|i| selectors[*i].has_leadership()).collect();
    assert_eq!(leaders.len(), 1, "{leaders:?}");
    assert_eq!(stage.now.load(Ordering::SeqCst), 1);
    assert_eq!(stage.terms.lock().unwrap().len(), 2);
    let leader = selectors[leaders[0]].leader().await.unwrap().unwrap();
    assert_eq!(leader.id, selectors[leaders[0]].id());
    for (i, s) in selectors.into_iter().enumerate() {
        if i != first {
            s.close().await.unwrap();
        }
    }
    assert_eq!(stage.now.load(Ordering::SeqCst), 0);
    let other = clients[(first + 1) % 3].clone();
    assert_no_leftovers(&other, zk, &path).await;
}

#[tokio::test]
async fn selector_without_requeue_interrupt_node_deletion_and_requeue() {
    let zk = shared_standalone();
    let cs = zk.connect_string();
    let (c, admin) = (client(&cs).await, client(&cs).await);
    let path = unique("selector-once");
    let stage = Arc::new(Stage::default());
    let st = stage.clone();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(u64, String, u64)>();
    let s = LeaderSelector::builder(c.clone(), path.clone())
        .task(move |lead: Leadership| {
            let st = st.clone();
            let tx = tx.clone();
            async move {
                let _on = OnStage::enter(&st, lead.id());
                let _ = tx.send((lead.term(), lead.node().to_owned(), lead.fencing_token()));
                std::future::pending::<()>().await;
            }
        })
        .id("solo")
        .start()
        .await
        .expect("the selector starts");
    // Term 1, cancelled by interrupt_leadership; without auto-requeue it stays out.
    let (term, node1, token1) = soon("term 1", rx.recv()).await.unwrap();
    assert_eq!(term, 1);
    assert!(s.has_leadership());
    assert!(!s.requeue(), "leading: nothing to requeue");
    s.interrupt_leadership();
    eventually("term 1 over", || async { !s.has_leadership() }).await;
    eventually("left the line", || async {
        s.participants().await.unwrap().is_empty()
    })
    .await;
    assert_eq!(stage.now.load(Ordering::SeqCst), 0);
    // Term 2 after requeue, ended by deleting its node.
    assert!(s.requeue());
    let (term, node2, token2) = soon("term 2", rx.recv()).await.unwrap();
    assert_eq!(term, 2);
    assert_ne!(node1, node2);
    assert!(token2 > token1, "fencing tokens grow");
    admin.delete(&node2, Version::Any).await.unwrap();
    eventually("term 2 cancelled", || async {
        !s.has_leadership() && stage.now.load(Ordering::SeqCst) == 0
    })
    .await;
    assert!(!s.status().get().has_ended());
    s.close().await.unwrap();
    assert_eq!(stage.max.load(Ordering::SeqCst), 1);
    assert_no_leftovers(&admin, zk, &path).await;
}

/// The selector's start returns once its node is in line, as the latch's does, and fails
/// with the reason when the election cannot be joined; a term's `lost()` says why it ended.
#[tokio::test]
async fn selector_start_joins_the_line_and_a_term_says_why_it_ended() {
    let zk = shared_standalone();
    let cs = zk.connect_string();
    let (c, admin) = (client(&cs).await, client(&cs).await);
    let path = unique("selector-start");
    // A holder of the election's lock keeps the selector waiting in line.
    let holder = InterProcessMutex::new(admin.clone(), &path);
    let hg = holder.acquire().await.unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<LostReason>();
    let s = LeaderSelector::builder(c.clone(), path.clone())
        .task(move |lead: Leadership| {
            let tx = tx.clone();
            async move {
                // Outlives the task, which the interrupt drops.
                tokio::spawn(async move {
                    let _ = tx.send(lead.lost().await);
                });
                std::future::pending::<()>().await;
            }
        })
        .id("joiner")
        .start()
        .await
        .expect("the selector starts");
    // In line as soon as start returns: behind the holder, not leading.
    let line = participant_ids(s.participants().await.unwrap());
    assert_eq!(line, ["", "joiner"], "the holder's node has no data");
    assert!(!s.has_leadership());
    hg.release().await.unwrap();
    eventually("the selector leads", || async { s.has_leadership() }).await;
    s.interrupt_leadership();
    let reason = soon("the term's end", rx.recv()).await;
    assert_eq!(reason, Some(LostReason::Interrupted));
    s.close().await.unwrap();
    // An election that cannot be joined: the start fails, with the session's error.
    let bad = LeaderSelector::builder(c.clone(), "no-leading-slash")
        .task(|_lead| async {})
        .start()
        .await;
    assert!(matches!(bad, Err(RecipeError::Session(_))), "{bad:?}");
    assert_no_leftovers(&admin, zk, &path).await;
}
