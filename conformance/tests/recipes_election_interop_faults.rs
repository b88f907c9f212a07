//! zk-recipes' LeaderLatch and LeaderSelector beside real Curator's (5.4, Debian's
//! libcurator-recipes-java) on one election path of a real server when one side fails: our
//! leader's session is expired or times out behind a cut connection, or Curator's JVM is
//! SIGKILLed while it leads. Leadership passes to the other side only once the failed
//! side's node is gone, ours says it lost leadership before Curator's can take it (under
//! the default suspend policy; under WaitForLost once told of the expiry), and after
//! our client comes back on a new session ours queues behind Curator's, leading only once
//! Curator's gives up. Locks and leases under the same faults: recipes_interop_faults.rs.

mod interop_faults_support;
mod recipes_support;

use std::{sync::Arc, time::Duration};

use interop_faults_support::*;
use recipes_support::{peer::Peer, *};
use tokio::sync::mpsc;
use zk_recipes::{
    LeaderLatch, LeaderSelector, Leadership, LeadershipEvent, LostReason, SuspendPolicy,
};
use zk_session::Client;

/// Our LeaderSelector "ours" on `path` with auto-requeue, under `policy`; each term's
/// [`Leadership`] comes out of the receiver as the term begins, and the term lasts until it
/// is lost.
async fn reporting_selector(
    c: &Client,
    path: &str,
    policy: SuspendPolicy,
) -> (LeaderSelector, mpsc::UnboundedReceiver<Leadership>) {
    let (tx, terms) = mpsc::unbounded_channel();
    let selector = LeaderSelector::builder(c.clone(), path)
        .task(move |lead: Leadership| {
            let _ = tx.send(lead);
            std::future::pending()
        })
        .id("ours")
        .auto_requeue(true)
        .suspend_policy(policy)
        .start()
        .await
        .expect("the selector starts");
    (selector, terms)
}

/// Waits for `term` of our `selector` to end; its reason, once the selector no longer
/// claims leadership.
async fn stepped_down(term: &Leadership, selector: &LeaderSelector) -> LostReason {
    let reason = term.lost().await;
    // The supervisor drops the flag before it publishes the term's end.
    assert!(
        !selector.has_leadership(),
        "ours still claims leadership after its term ended ({reason:?})"
    );
    reason
}

/// Our selector leading on a path, and Curator's waiting behind it.
struct Contest {
    selector: LeaderSelector,
    terms: mpsc::UnboundedReceiver<Leadership>,
    /// Our term.
    term: Leadership,
    peer: Peer,
    /// The Curator peer's session.
    curator: i64,
}

impl Side {
    /// Our selector (under `policy`) leads on the side's path, then Curator's joins and
    /// waits on our node.
    async fn contest(&self, policy: SuspendPolicy) -> Contest {
        let (path, admin) = (&self.path, &self.admin);
        let (selector, mut terms) = reporting_selector(&self.c, path, policy).await;
        let term = soon("ours leads", terms.recv()).await.unwrap();
        let (peer, curator) = start_peer("selector", path, CURATOR_SESSION_MS).await;
        until_children(admin, path, 2).await;
        until_watching(curator, term.node()).await;
        assert!(!peer.has_said("LEADER"), "two leaders");
        Contest {
            selector,
            terms,
            term,
            peer,
            curator,
        }
    }

    /// Our selector leads and Curator's waits on the side's path; our client is cut off and
    /// its session `end`s. Ours must say its term is lost, and stop claiming leadership,
    /// before Curator's leads, and Curator's must lead only once our node is gone (see
    /// [`Side::cut_until_curator_in`]); then see [`Side::selector_after_loss`].
    async fn selector_loses_to_curator(&self, end: SessionEnd) {
        let mut c = self.contest(SuspendPolicy::StepDown).await;
        let lost = stepped_down(&c.term, &c.selector);
        let (listed, new) = self
            .cut_until_curator_in(&mut c.peer, "LEADER", lost, c.term.node(), c.curator, end)
            .await;
        assert!(!c.term.is_current(), "the lost term is current again");
        self.selector_after_loss(c, &listed, new).await;
    }

    /// After our selector lost its term and our client came back on session `new` while
    /// Curator's leads by node `listed`: ours queues behind Curator's on the new session and
    /// does not lead while Curator's does; its next term begins once Curator's has given up,
    /// on the rejoined node, alone. Closes it and cleans up.
    async fn selector_after_loss(&self, c: Contest, listed: &str, new: i64) {
        let Contest {
            selector,
            mut terms,
            peer,
            ..
        } = c;
        let (path, admin) = (&self.path, &self.admin);
        let curator_node = format!("{path}/{listed}");
        let rejoined = until_node_of(admin, path, new).await;
        until_watching(new, &curator_node).await;
        assert_eq!(
            participant_ids(selector.participants().await.unwrap()),
            vec!["curator".to_owned(), "ours".to_owned()]
        );
        assert!(!selector.has_leadership(), "ours leads behind Curator's");
        assert!(terms.try_recv().is_err(), "a term of ours behind Curator's");
        assert!(!peer.has_said("NOTLEADER"), "Curator's term ended");

        let next = tokio::spawn(async move { Ok(terms.recv().await.expect("a next term")) });
        let term = hand_back(peer, admin, &curator_node, next).await;
        assert_eq!(term.node(), rejoined);
        assert_eq!(term.term(), 2);
        ours_alone(admin, path, &rejoined, new).await;
        selector.close().await.unwrap();
        self.clean(path).await;
    }
}

/// 1. Our LeaderLatch leads and Curator's waits; our leader is cut off and its session
/// expired at once. Ours steps down as soon as it is cut off, without waiting for the
/// session's end (before Curator's can lead), Curator's takes the lead once our node is
/// gone, and ours takes part again on its new session behind Curator's, leading only when
/// Curator's closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latch_curator_leads_when_our_leaders_session_expires() {
    let side = Side::new("ifault-latch", Duration::from_secs(10)).await;
    let (path, admin) = (&side.path, &side.admin);
    let latch = LeaderLatch::builder(side.c.clone(), path)
        .id("ours")
        .start()
        .await
        .unwrap();
    soon("ours leads", leads(&latch)).await.unwrap();
    let our_node = latch.our_path().expect("a node while leading");
    let (mut peer, curator_session) = start_peer("latch", path, CURATOR_SESSION_MS).await;
    until_children(admin, path, 2).await;
    until_watching(curator_session, &our_node).await;
    assert!(!peer.has_said("LEADER"), "two leaders");

    let mut changes = latch.changes();
    let old = session_of(&side.c);
    let curator_said = peer.stdout.clone();
    cut_off(&side.proxy, &side.c).await;
    // The expiry races our step-down: ours must not wait for the session's end.
    let victim = side.c.clone();
    let expiry = tokio::spawn(async move { expire_session(&shared(), &victim).await });
    assert_eq!(
        soon("ours steps down", changes.next()).await,
        Some(LeadershipEvent::NotLeader)
    );
    assert!(
        !curator_said.snapshot().iter().any(|l| l == "LEADER"),
        "Curator's latch led before ours stepped down"
    );
    assert!(!latch.has_leadership());
    soon("the expiry", expiry).await.unwrap();
    peer.expect("LEADER").await;
    assert!(admin.exists(&our_node).await.unwrap().is_none());
    let curator_node = until_node_of(admin, path, curator_session).await;

    let new = let_back_renewed(&side.proxy, &side.c, old).await;
    let rejoined = until_some("ours takes part again on the new session", || async {
        let node = latch.our_path()?;
        let owner = admin.exists(&node).await.ok()??.ephemeral_owner;
        (owner == new).then_some(node)
    })
    .await;
    assert_ne!(rejoined, our_node);
    assert_eq!(
        participant_ids(latch.participants().await.unwrap()),
        vec!["curator".to_owned(), "ours".to_owned()]
    );
    assert!(!latch.has_leadership(), "ours leads behind Curator's");
    assert!(!peer.has_said("NOTLEADER"), "Curator's stepped down");

    let leads = spawn_on(&Arc::new(latch), |l| async move {
        leads(&l).await?;
        Ok(l)
    });
    let latch = hand_back(peer, admin, &curator_node, leads).await;
    let latch = Arc::into_inner(latch).expect("the last handle");
    latch.close().await.unwrap();
    side.clean(path).await;
}

/// 2. Our LeaderSelector leads and Curator's waits; our leader's connection is cut for
/// longer than its session. Our term ends (Suspended) as soon as the connection goes, before
/// Curator's can lead; the server times our session out and Curator's leads alone; once the
/// cut heals ours queues again on its new session behind Curator's and leads only when
/// Curator's term ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selector_curator_leads_when_our_cut_off_leader_times_out() {
    // No expire_session here: the server times the session out by itself.
    let side = Side::new("ifault-selector-cut", SHORT_SESSION).await;
    side.selector_loses_to_curator(SessionEnd::TimesOut).await;
}

/// 3. Our LeaderSelector leads and Curator's waits; our leader is cut off and its session
/// expired at once (taken over and closed from a second connection), racing our step-down.
/// Our term ends as soon as the connection goes, before Curator's can lead: with the default
/// `SuspendPolicy::StepDown` its reason is Suspended, since a client hears of an expiry only
/// on reconnecting, after the server (and so Curator) already has. Curator's leads once our
/// node is gone; ours queues again on the new session (the default `OnExpiry::NewSession`)
/// behind Curator's and leads only when Curator's term ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selector_curator_leads_when_our_leaders_session_expires() {
    let side = Side::new("ifault-selector-expiry", Duration::from_secs(10)).await;
    side.selector_loses_to_curator(SessionEnd::Expired).await;
}

/// 4. As 3., but our selector runs under `SuspendPolicy::WaitForLost`: only the session's
/// end ends its term, so the term's reason is the expiry itself. Ours cannot hear of the
/// expiry while it is cut off, so (the price of that policy) it may still claim leadership
/// when Curator's leads; Curator's still leads only once our node is gone, and ours, told
/// of the expiry when it reconnects, queues behind Curator's on the new session and leads
/// only when Curator's term ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selector_waiting_for_loss_hears_its_sessions_expiry() {
    let side = Side::new("ifault-selector-expiry-wait", Duration::from_secs(10)).await;
    let mut c = side.contest(SuspendPolicy::WaitForLost).await;
    let (listed, new) = side
        .expire_until_curator_in(&mut c.peer, "LEADER", &side.path, c.term.node(), c.curator)
        .await;
    let lost = soon(
        "ours hears its term is lost",
        stepped_down(&c.term, &c.selector),
    )
    .await;
    assert_eq!(lost, LostReason::Expired, "why our term ended");
    side.selector_after_loss(c, &listed, new).await;
}

/// 5. Curator's LeaderSelector leads and ours waits; Curator's JVM is SIGKILLed. Ours leads
/// once the server has removed Curator's node (its session timed out), never while it is
/// still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selector_we_lead_when_the_curator_leader_is_killed() {
    let mut case = KillCase::start("ifault-selector-kill", "selector", "LEADER", "").await;
    let (selector, mut terms) =
        reporting_selector(&case.c, &case.path, SuspendPolicy::default()).await;
    until_watching(session_of(&case.c), &case.node).await;
    assert!(!selector.has_leadership(), "ours leads beside Curator's");

    case.kill_until_gone(|| selector.has_leadership()).await;
    let term = soon("ours leads after Curator's session", terms.recv())
        .await
        .unwrap();
    assert!(term.is_current() && selector.has_leadership());
    case.ours_alone(term.node()).await;
    selector.close().await.unwrap();
    case.all_gone().await;
}

/// 6. Curator's LeaderLatch leads and ours waits; Curator's JVM is SIGKILLed. Ours leads
/// once the server has removed Curator's latch node, never while it is still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latch_we_lead_when_the_curator_leader_is_killed() {
    let mut case = KillCase::start("ifault-latch-kill", "latch", "LEADER", "").await;
    let latch = LeaderLatch::builder(case.c.clone(), &case.path)
        .id("ours")
        .start()
        .await
        .unwrap();
    until_watching(session_of(&case.c), &case.node).await;
    assert!(!latch.has_leadership(), "ours leads beside Curator's");

    case.kill_until_gone(|| latch.has_leadership()).await;
    soon("ours leads after Curator's session", leads(&latch))
        .await
        .unwrap();
    case.ours_alone(&latch.our_path().expect("a node while leading"))
        .await;
    latch.close().await.unwrap();
    case.all_gone().await;
}
