//! The recipes on a client that outlives session expiry (issue 15), against a real ZooKeeper
//! 3.8 server. zk-session's default re-creates the session after expiry on the same handle;
//! every test here expires the session of a client behind a fault proxy the classic way (cut
//! it off, take the session over from a second connection with its id and password, close
//! it there, let the client back), and waits until the same handle has a new session.
//!
//! A second client checks, at each step, that at most one holder or leader exists and, at
//! the end, that no node of the old or the new session is left behind.

mod recipes_support;

use conformance::ephemeral_owner;
use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use recipes_support::{
    children, client, cut_off, eventually, expire_and_renew, expire_session, leads,
    let_back_renewed, name_of, participant_ids, proxied, shared, soon, spawn_acquire, unique,
    until_children, until_some,
};
use zk_recipes::{
    InterProcessMutex, LeaderLatch, LeaderSelector, Leadership, LeadershipEvent, LostReason,
    RecipeError, SuspendPolicy,
};
use zk_session::{Client, CreateOptions, Op, SessionState, Version};

/// The children of `path` with their owning sessions, in line order (by sequence number).
async fn owners(admin: &Client, path: &str) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for name in children(admin, path).await {
        if let Ok(Some(stat)) = admin.exists(&format!("{path}/{name}")).await {
            out.push((name, stat.ephemeral_owner));
        }
    }
    out.sort_by_key(|(name, _)| name.rsplit('-').next().unwrap_or_default().to_owned());
    out
}

/// A lock holder that loses its session: its guard reports the expiry and stays lost after
/// the client has a new session, its fenced writes are refused, the waiter takes over, and
/// a new acquire on the same InterProcessMutex and Client works on the new session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutex_holder_stays_lost_after_the_new_session_and_can_acquire_anew() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("rexp-holder");
    let target = format!("{path}-data");
    admin
        .create(&target, b"", CreateOptions::persistent())
        .await
        .unwrap();
    // Only the session's end counts, so the reason seen is the expiry itself.
    let m = Arc::new(
        InterProcessMutex::builder(c.clone(), &path)
            .suspend_policy(SuspendPolicy::WaitForLost)
            .build(),
    );
    let old_guard = m.acquire().await.unwrap();
    let mw = Arc::new(InterProcessMutex::new(admin.clone(), &path));
    let waiter = spawn_acquire(&mw);
    until_children(&admin, &path, 2).await;

    let (old, new) = expire_and_renew(&proxy, &c).await;
    assert_eq!(
        soon("the holder hears", old_guard.lost()).await,
        LostReason::Expired
    );
    let w = soon("the waiter acquires", waiter).await.unwrap().unwrap();
    // The client is connected again, on a new session; the old guard never comes back.
    assert_eq!(c.state(), SessionState::Connected);
    assert!(!old_guard.is_held() && !m.is_held());
    assert_eq!(old_guard.lost_reason(), Some(LostReason::Expired));
    let line = owners(&admin, &path).await;
    assert_eq!(line, vec![(name_of(w.path()), ephemeral_owner(&admin))]);
    let stale = old_guard
        .fenced_multi([Op::set_data(&target, b"stale", Version::Any)])
        .await;
    assert!(matches!(stale, Err(RecipeError::Lost(_))), "{stale:?}");
    assert!(matches!(old_guard.reenter(), Err(RecipeError::Lost(_))));
    assert_eq!(&admin.get_data(&target).await.unwrap().0[..], b"");
    // Releasing the lost guard sends nothing for the old node and deletes nothing else.
    old_guard.release().await.unwrap();
    assert_eq!(
        owners(&admin, &path).await,
        vec![(name_of(w.path()), ephemeral_owner(&admin))]
    );

    // A new acquire on the same InterProcessMutex and Client queues on the new session.
    let again = spawn_acquire(&m);
    until_children(&admin, &path, 2).await;
    let line = owners(&admin, &path).await;
    assert!(line.iter().all(|(_, s)| *s != old), "{line:?}");
    assert!(line.iter().any(|(_, s)| *s == new), "{line:?}");
    assert!(w.is_held() && !m.is_held(), "one holder at a time");
    let w_token = w.fencing_token();
    w.release().await.unwrap();
    let g = soon("the new acquire", again).await.unwrap().unwrap();
    assert!(g.is_held() && g.fencing_token() > w_token);
    assert_eq!(owners(&admin, &path).await, vec![(name_of(g.path()), new)]);
    g.fenced_multi([Op::set_data(&target, b"fresh", Version::Any)])
        .await
        .unwrap();
    assert_eq!(&admin.get_data(&target).await.unwrap().0[..], b"fresh");
    g.release().await.unwrap();
    assert!(children(&admin, &path).await.is_empty());
    admin.delete(&target, Version::Any).await.unwrap();
}

/// An acquire waiting in line when the session expires fails with
/// `Lost(LostReason::Expired)` (Curator's behaviour: the caller retries); it leaves no node in the old
/// session (gone with it) nor in the new one, and the retry succeeds on the new session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acquire_in_flight_during_the_expiry_fails_lost_and_a_retry_works() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("rexp-waiter");
    let holder = InterProcessMutex::new(admin.clone(), &path);
    let h = holder.acquire().await.unwrap();
    let m = Arc::new(InterProcessMutex::new(c.clone(), &path));
    let waiting = spawn_acquire(&m);
    until_children(&admin, &path, 2).await;

    let (_old, new) = expire_and_renew(&proxy, &c).await;
    let r = soon("the waiting acquire ends", waiting).await.unwrap();
    match &r {
        Err(RecipeError::Lost(reason)) => assert_eq!(*reason, LostReason::Expired),
        other => panic!("{other:?}"),
    }
    // It did not carry on into the new session: only the holder's node is there.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        owners(&admin, &path).await,
        vec![(name_of(h.path()), ephemeral_owner(&admin))]
    );
    assert!(h.is_held() && !m.is_held());

    // The caller's retry runs on the new session.
    let retry = spawn_acquire(&m);
    until_children(&admin, &path, 2).await;
    h.release().await.unwrap();
    let g = soon("the retry acquires", retry).await.unwrap().unwrap();
    assert_eq!(owners(&admin, &path).await, vec![(name_of(g.path()), new)]);
    g.release().await.unwrap();
    assert!(children(&admin, &path).await.is_empty());
}

/// The cleanup of nodes of the old session: a release and a dropped acquire whose deletions
/// could not be sent before the session expired. After re-creation the cleanup deletes
/// nothing of the new session (a lock taken there stays held), and it stops: once every
/// handle is dropped, nothing keeps the client alive, so the new session closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleanup_of_the_old_session_stops_and_spares_the_new_one() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let (p1, p2) = (unique("rexp-clean-a"), unique("rexp-clean-b"));
    let m1 = InterProcessMutex::new(c.clone(), &p1);
    let g1 = m1.acquire().await.unwrap();
    let holder = InterProcessMutex::new(admin.clone(), &p2);
    let h = holder.acquire().await.unwrap();
    let m2 = Arc::new(InterProcessMutex::new(c.clone(), &p2));
    let waiting = spawn_acquire(&m2);
    until_children(&admin, &p2, 2).await;
    // Cut off: the release and the dropped acquire leave their deletions to the background.
    cut_off(&proxy, &c).await;
    g1.release().await.unwrap();
    waiting.abort();
    let _ = waiting.await;
    let old = ephemeral_owner(&c);
    expire_session(&shared(), &c).await;
    let new = let_back_renewed(&proxy, &c, old).await;

    // New-session nodes on both paths, of the same handles.
    let g1 = soon("acquire again", m1.acquire()).await.unwrap();
    let again = spawn_acquire(&m2);
    until_children(&admin, &p2, 2).await;
    // Longer than the cleanup's longest pause between tries (1 s).
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(g1.is_held());
    assert_eq!(owners(&admin, &p1).await, vec![(name_of(g1.path()), new)]);
    let line = owners(&admin, &p2).await;
    assert_eq!(line.len(), 2, "{line:?}");
    assert_eq!(line[0], (name_of(h.path()), ephemeral_owner(&admin)));
    assert_eq!(line[1].1, new);
    assert!(h.is_held());
    h.release().await.unwrap();
    let g2 = soon("the waiter of the new session", again)
        .await
        .unwrap()
        .unwrap();
    g1.release().await.unwrap();
    g2.release().await.unwrap();
    assert!(children(&admin, &p1).await.is_empty());
    assert!(children(&admin, &p2).await.is_empty());

    // Nothing holds the client any more once the caller lets go: its session closes.
    let marker = format!("{p1}-marker");
    c.create(&marker, b"", CreateOptions::ephemeral())
        .await
        .unwrap();
    drop((m1, m2, c));
    eventually("the new session closes: no task keeps it", || async {
        admin.exists(&marker).await.unwrap().is_none()
    })
    .await;
}

/// How many leader tasks run now, and the most ever at once.
#[derive(Default)]
struct Stage {
    now: AtomicUsize,
    most: AtomicUsize,
}

struct OnStage(Arc<Stage>);

impl OnStage {
    fn enter(st: &Arc<Stage>) -> OnStage {
        let n = st.now.fetch_add(1, Ordering::SeqCst) + 1;
        st.most.fetch_max(n, Ordering::SeqCst);
        OnStage(st.clone())
    }
}

impl Drop for OnStage {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn selector(
    c: &Client,
    path: &str,
    id: &str,
    requeue: bool,
    st: &Arc<Stage>,
) -> LeaderSelector {
    let st = st.clone();
    LeaderSelector::builder(c.clone(), path.to_owned())
        .task(move |_lead: Leadership| {
            let st = st.clone();
            async move {
                let _on = OnStage::enter(&st);
                std::future::pending::<()>().await;
            }
        })
        .id(id)
        .auto_requeue(requeue)
        .start()
        .await
        .expect("the selector starts")
}

/// At most one selector leads and at most one task runs; returns the leader's index.
fn one_leader(selectors: &[&LeaderSelector], st: &Stage) -> Option<usize> {
    let leaders: Vec<usize> = (0..selectors.len())
        .filter(|i| selectors[*i].has_leadership())
        .collect();
    assert!(leaders.len() <= 1, "two leaders: {leaders:?}");
    assert!(st.most.load(Ordering::SeqCst) <= 1, "two tasks at once");
    leaders.first().copied()
}

/// A selector with auto-requeue whose leader's session expires queues again on the new
/// session; one without auto-requeue stays out (until `requeue`). Neither ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selector_with_auto_requeue_rejoins_on_the_new_session_and_one_without_does_not() {
    let (pa, ca) = proxied().await;
    let (pb, cb) = proxied().await;
    let cc = client(&shared()).await;
    let path = unique("rexp-selector");
    let st = Arc::new(Stage::default());
    let a = selector(&ca, &path, "a", true, &st).await;
    eventually("a leads", || async { a.has_leadership() }).await;
    let b = selector(&cb, &path, "b", false, &st).await;
    until_children(&cc, &path, 2).await;
    let c = selector(&cc, &path, "c", true, &st).await;
    until_children(&cc, &path, 3).await;
    let all = [&a, &b, &c];
    assert_eq!(one_leader(&all, &st), Some(0));

    // a (auto-requeue) loses its session while leading: b takes over, a queues again.
    let (a_old, a_new) = expire_and_renew(&pa, &ca).await;
    eventually("b leads", || async { one_leader(&all, &st) == Some(1) }).await;
    eventually("a is back in line on its new session", || async {
        let ps = c.participants().await.unwrap();
        ps.iter().any(|p| p.id == "a" && p.session_id == a_new)
            && ps.iter().all(|p| p.session_id != a_old)
    })
    .await;
    assert!(!a.status().get().has_ended());
    let ids = participant_ids(c.participants().await.unwrap());
    assert_eq!(ids, ["b", "c", "a"]);
    assert_eq!(one_leader(&all, &st), Some(1));

    // b (no auto-requeue) loses its session while leading: c takes over, b stays out.
    let (b_old, b_new) = expire_and_renew(&pb, &cb).await;
    eventually("c leads", || async { one_leader(&all, &st) == Some(2) }).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let ps = c.participants().await.unwrap();
    assert!(
        ps.iter().all(|p| p.id != "b" && p.session_id != b_old),
        "{ps:?}"
    );
    assert!(!b.status().get().has_ended() && !b.has_leadership());
    // Asked to, it queues on its new session.
    assert!(b.requeue());
    eventually("b is back in line on its new session", || async {
        let ps = c.participants().await.unwrap();
        ps.iter().any(|p| p.id == "b" && p.session_id == b_new)
    })
    .await;
    assert_eq!(one_leader(&all, &st), Some(2));
    for s in [a, b, c] {
        s.close().await.unwrap();
    }
    assert_eq!(st.now.load(Ordering::SeqCst), 0);
    assert!(st.most.load(Ordering::SeqCst) <= 1);
    until_children(&cc, &path, 0).await;
}

/// A latch of `c` on `path` with `id`, started.
async fn start_latch(c: &Client, path: &str, id: &str) -> LeaderLatch {
    soon(
        &format!("{id} starts"),
        LeaderLatch::builder(c.clone(), path).id(id).start(),
    )
    .await
    .unwrap()
}

/// A latch whose leader's session expires steps down, takes part again with a new node of
/// the new session, and leads again when its turn comes; the latch never ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latch_takes_part_again_on_the_new_session() {
    let (proxy, ca) = proxied().await;
    let cb = client(&shared()).await;
    let path = unique("rexp-latch");
    let a = start_latch(&ca, &path, "a").await;
    let mut changes = a.changes();
    soon("a leads", leads(&a)).await.unwrap();
    let b = start_latch(&cb, &path, "b").await;
    let old_path = a.our_path().unwrap();
    assert!(a.has_leadership() && !b.has_leadership());

    let (old, new) = expire_and_renew(&proxy, &ca).await;
    soon("b leads", leads(&b)).await.unwrap();
    assert!(!a.has_leadership(), "two leaders");
    let new_path = until_some("a's new node", || async {
        a.our_path().filter(|p| *p != old_path)
    })
    .await;
    let ps = b.participants().await.unwrap();
    let line: Vec<(&str, i64)> = ps.iter().map(|p| (p.id.as_str(), p.session_id)).collect();
    assert_eq!(line, [("b", ephemeral_owner(&cb)), ("a", new)]);
    assert!(ps.iter().all(|p| p.session_id != old));
    assert_eq!(ps[1].path, new_path);
    assert!(!a.has_leadership() && b.has_leadership());
    // Still in the election: waiting, not ended.
    let r = tokio::time::timeout(Duration::from_millis(300), leads(&a))
        .await
        .unwrap_or(Err(RecipeError::Timeout));
    assert!(matches!(r, Err(RecipeError::Timeout)), "{r:?}");

    let b_status = b.status();
    b.close().await.unwrap();
    soon("a leads again", leads(&a)).await.unwrap();
    assert!(!b_status.get().is_leader());
    use LeadershipEvent::{IsLeader, NotLeader};
    let mut seen = Vec::new();
    while !seen.ends_with(&[NotLeader, IsLeader]) {
        seen.push(soon("a's changes", changes.next()).await.unwrap());
    }
    // The first term may begin before `changes()` subscribed (start returns once in line);
    // the expiry's step-down and the second term are always seen, once each.
    assert!(
        seen == [IsLeader, NotLeader, IsLeader] || seen == [NotLeader, IsLeader],
        "{seen:?}"
    );
    a.close().await.unwrap();
    until_children(&cb, &path, 0).await;
}

/// An acquire started between the expiry and the new session (the new session's handshake
/// held back by the proxy) does not fail: it waits for the new session and takes the lock
/// there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acquire_started_before_the_new_session_waits_for_it() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("rexp-gap");
    let m = Arc::new(InterProcessMutex::new(c.clone(), &path));
    let old = ephemeral_owner(&c);
    cut_off(&proxy, &c).await;
    expire_session(&shared(), &c).await;
    // Hold every reply back as soon as the client has heard of the expiry, so that the new
    // session's handshake waits in the proxy.
    let stall = tokio::spawn({
        let (c, mut state) = (c.clone(), c.watch_state());
        async move {
            let _ = state.wait_for(|s| s == SessionState::Expired).await;
            c.has_ended()
        }
    });
    tokio::task::yield_now().await;
    proxy.partition(false);
    let ended = soon("the client hears of the expiry", stall).await.unwrap();
    proxy.stall(recipes_support::Direction::ToClient, true);
    assert!(!ended, "a new session follows");
    let acquire = spawn_acquire(&m);
    tokio::time::sleep(Duration::from_millis(500)).await;
    if acquire.is_finished() {
        // The new session came before the stall: then the acquire must have the lock on it.
        let g = acquire.await.unwrap().unwrap();
        assert_ne!(ephemeral_owner(&c), old);
        g.release().await.unwrap();
        proxy.stall(recipes_support::Direction::ToClient, false);
        return;
    }
    proxy.stall(recipes_support::Direction::ToClient, false);
    let g = soon("the acquire on the new session", acquire)
        .await
        .unwrap()
        .unwrap();
    let new = ephemeral_owner(&c);
    assert!(new != old && new != 0);
    assert_eq!(owners(&admin, &path).await, vec![(name_of(g.path()), new)]);
    g.release().await.unwrap();
    assert!(children(&admin, &path).await.is_empty());
}
