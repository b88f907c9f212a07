//! What the Curator-interop-under-faults tests share (recipes_interop_faults.rs for locks
//! and leases, recipes_election_interop_faults.rs for elections): the Curator peer
//! (conformance/java/CuratorFaults.java, compiled with javac), our side behind a fault
//! proxy, and the checks that the failed side's node was gone before the other side got in.
//!
//! The peer says which session it has, so the tests can ask the server (`wchc`, ephemeral
//! owners) what Curator waits on and owns. Nothing is skipped: without javac or the jars the
//! tests fail and say what to install.

#![allow(dead_code)]

use std::{
    future::Future,
    sync::OnceLock,
    time::{Duration, Instant},
};

use conformance::{peers::JavaProgram, shared_standalone};
use tokio::task::JoinHandle;
use zk_recipes::{LostReason, RecipeError};
use zk_session::{Client, CreateOptions, Op, Version};

use crate::recipes_support::{peer::Peer, *};

/// The Curator peer's session timeout when nothing fails on its side (the shared server
/// caps sessions at 4 s).
pub const CURATOR_SESSION_MS: &str = "4000";
/// The session timeout of a side that is left to time out: short, so the tests stay short.
pub const SHORT_SESSION: Duration = Duration::from_secs(2);

/// CuratorFaults compiled into a scratch directory, once per process.
fn curator() -> &'static JavaProgram {
    static PROGRAM: OnceLock<JavaProgram> = OnceLock::new();
    PROGRAM.get_or_init(|| compile_curator_peer("CuratorFaults.java", "zk-recipes-faults"))
}

/// Starts the peer in `mode` on `path` with sessions of `session_ms`; the peer and its
/// session id.
pub async fn start_peer(mode: &str, path: &str, session_ms: &str) -> (Peer, i64) {
    let mut cmd = curator().command_with(&["-Xmx128m"]);
    cmd.args([mode, &shared(), path, session_ms]);
    let mut peer = Peer::start(&format!("Curator {mode}"), cmd).await;
    let session = peer.answer("SESSION").await;
    let session = session
        .parse()
        .unwrap_or_else(|_| panic!("a session id, not {session:?}"));
    (peer, session)
}

/// A test that SIGKILLs a Curator peer while it holds or leads and ours waits: our client,
/// an admin client that looks on, the path, and the peer's node under `parent` (the path, or
/// where the recipe keeps its holders' nodes below it).
pub struct KillCase {
    pub c: Client,
    pub admin: Client,
    pub path: String,
    parent: String,
    peer: Option<Peer>,
    /// The Curator peer's node: it holds or leads by it.
    pub node: String,
}

impl KillCase {
    /// Starts the peer in `mode` on a fresh path with a short session and waits until it
    /// says `said` (it holds or leads) while alone: `{path}{below}` then has one child, the
    /// peer's.
    pub async fn start(tag: &str, mode: &str, said: &str, below: &str) -> KillCase {
        let (c, admin) = (client(&shared()).await, client(&shared()).await);
        let path = unique(tag);
        let parent = format!("{path}{below}");
        let short = SHORT_SESSION.as_millis().to_string();
        let (mut peer, session) = start_peer(mode, &path, &short).await;
        peer.expect(said).await;
        let kids = children(&admin, &parent).await;
        assert_eq!(kids.len(), 1, "Curator alone under {parent}: {kids:?}");
        let node = format!("{parent}/{}", kids[0]);
        assert_eq!(owner(&admin, &node).await, session, "{node} is Curator's");
        KillCase {
            c,
            admin,
            path,
            parent,
            peer: Some(peer),
            node,
        }
    }

    /// SIGKILLs the peer and waits until the server has removed its node (the peer's
    /// session timed out), failing if `granted` (our side's report that it got what the
    /// node held) says yes while the node is still there (see [`until_gone_ungranted`]).
    pub async fn kill_until_gone(&mut self, granted: impl Fn() -> bool) {
        self.peer.take().expect("a peer to kill").kill9();
        until_gone_ungranted(&self.admin, &self.node, granted).await;
    }

    /// `ours` is the only node under the parent, and our client's.
    pub async fn ours_alone(&self, ours: &str) {
        ours_alone(&self.admin, &self.parent, ours, session_of(&self.c)).await;
    }

    /// Nothing is left under the parent.
    pub async fn all_gone(&self) {
        assert!(children(&self.admin, &self.parent).await.is_empty());
    }
}

/// Polls until the server has removed `node`, failing if `granted` (our side's report that
/// it got what the node held) says yes while the node is still there: a grant seen before a
/// later sighting of the node would mean two holders.
pub async fn until_gone_ungranted(admin: &Client, node: &str, granted: impl Fn() -> bool) {
    let deadline = Instant::now() + SOON;
    loop {
        let granted = granted();
        if admin.exists(node).await.unwrap().is_none() {
            return;
        }
        assert!(!granted, "ours got in while {node} still exists");
        assert!(
            Instant::now() < deadline,
            "the server kept Curator's {node} for {SOON:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `ours` is the only child of `parent` and belongs to `session`.
pub async fn ours_alone(admin: &Client, parent: &str, ours: &str, session: i64) {
    assert_eq!(owner(admin, ours).await, session, "{ours} is ours");
    assert_eq!(children(admin, parent).await, vec![name_of(ours)]);
}

/// Waits until `session` watches `path` on the shared server: a waiter that watches the
/// node ahead of it can only go on when told that node changed.
pub async fn until_watching(session: i64, path: &str) {
    eventually(&format!("session {session:#x} watches {path}"), || async {
        watches_of(shared_standalone(), session)
            .iter()
            .any(|p| p == path)
    })
    .await;
}

/// The child of `parent` that `session` owns, once there is one.
pub async fn until_node_of(admin: &Client, parent: &str, session: i64) -> String {
    until_some(
        &format!("a node of {session:#x} under {parent}"),
        || async {
            for kid in children(admin, parent).await {
                let node = format!("{parent}/{kid}");
                if admin.exists(&node).await.ok()??.ephemeral_owner == session {
                    return Some(node);
                }
            }
            None
        },
    )
    .await
}

/// What the peer's `ACQUIRED` or `LEADER` line lists (the children of `parent` as Curator
/// saw them once in) must be one node, not `ours`, owned by the peer's `session`: our node
/// was gone.
pub async fn only_curators(admin: &Client, parent: &str, listed: &str, ours: &str, session: i64) {
    assert!(
        !listed.is_empty() && !listed.contains(','),
        "Curator got in beside another node: {listed:?} under {parent}"
    );
    assert_ne!(listed, name_of(ours), "Curator listed our node as its own");
    let node = format!("{parent}/{listed}");
    assert_eq!(owner(admin, &node).await, session, "{node} is Curator's");
    assert!(
        admin.exists(ours).await.unwrap().is_none(),
        "{ours} is gone"
    );
}

/// How our side's session ends while it is cut off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEnd {
    /// The server times it out by itself: the side's session must be short.
    TimesOut,
    /// It is expired at once: taken over and closed from a second connection.
    Expired,
}

/// Our side of a test: a client behind its own fault proxy, an admin client that looks on,
/// the recipe's path and a persistent data node beside it for fenced writes.
pub struct Side {
    pub proxy: Proxy,
    pub c: Client,
    pub admin: Client,
    pub path: String,
    pub target: String,
}

impl Side {
    /// Our client has a session of `session`.
    pub async fn new(tag: &str, session: Duration) -> Side {
        let (proxy, c) = proxied_for(session).await;
        let admin = client(&shared()).await;
        let path = unique(tag);
        let target = format!("{path}-data");
        admin
            .create(&target, b"", CreateOptions::persistent())
            .await
            .unwrap();
        Side {
            proxy,
            c,
            admin,
            path,
            target,
        }
    }

    /// Cuts our client off and expires its session while Curator waits; once Curator says
    /// `said` (ACQUIRED, LEADER), checks that it got in alone under `parent` (see
    /// [`only_curators`]), lets our client back and waits for its new session. Curator's node
    /// and our new session id.
    pub async fn expire_until_curator_in(
        &self,
        peer: &mut Peer,
        said: &str,
        parent: &str,
        ours: &str,
        curator: i64,
    ) -> (String, i64) {
        let old = session_of(&self.c);
        self.proxy.partition(true);
        expire_session(&shared(), &self.c).await;
        let listed = peer.answer(said).await;
        only_curators(&self.admin, parent, &listed, ours, curator).await;
        (listed, let_back_renewed(&self.proxy, &self.c, old).await)
    }

    /// Cuts our client off while Curator waits, and lets its session `end`: our side's
    /// report `lost` must say Suspended as soon as the connection goes, before Curator says
    /// `said` (an expiry at once races that report); once its session is over Curator gets
    /// in alone (see [`only_curators`]). Lets our client back and waits for its new session.
    /// Curator's node and our new session id.
    pub async fn cut_until_curator_in(
        &self,
        peer: &mut Peer,
        said: &str,
        lost: impl Future<Output = LostReason>,
        ours: &str,
        curator: i64,
        end: SessionEnd,
    ) -> (String, i64) {
        let old = session_of(&self.c);
        cut_off(&self.proxy, &self.c).await;
        let expiry = (end == SessionEnd::Expired).then(|| {
            let victim = self.c.clone();
            tokio::spawn(async move { expire_session(&shared(), &victim).await })
        });
        // Whichever comes first: Curator getting in while ours still holds is the failure.
        let reason = tokio::select! {
            biased;
            reason = lost => reason,
            line = peer.expect(said) => panic!("Curator said {line:?} before ours let go"),
        };
        assert_eq!(reason, LostReason::Suspended, "why ours let go");
        if let Some(expiry) = expiry {
            soon("the expiry", expiry).await.unwrap();
        }
        let listed = peer.answer(said).await;
        only_curators(&self.admin, &self.path, &listed, ours, curator).await;
        (listed, let_back_renewed(&self.proxy, &self.c, old).await)
    }

    /// A fenced write to the data node, which must be refused: the hold is lost.
    pub fn stale_write(&self) -> [Op; 1] {
        [Op::set_data(&self.target, b"stale", Version::Any)]
    }

    /// Nothing is left under `parent`, nor written by a stale hold; removes the data node.
    pub async fn clean(&self, parent: &str) {
        assert!(children(&self.admin, parent).await.is_empty());
        assert_ne!(
            &self.admin.get_data(&self.target).await.unwrap().0[..],
            b"stale"
        );
        self.admin.delete(&self.target, Version::Any).await.unwrap();
    }
}

/// A fenced write of a lost hold must fail with `Lost`.
pub fn assert_refused<T: std::fmt::Debug>(r: zk_recipes::Result<T>) {
    assert!(matches!(r, Err(RecipeError::Lost(_))), "{r:?}");
}

/// Tells the peer, which holds or leads by `node`, to let go: our `waiter` must not get
/// what the peer held while `node` is still there. Waits until the peer has let go and
/// exited, then for the waiter.
pub async fn hand_back<T>(
    mut peer: Peer,
    admin: &Client,
    node: &str,
    waiter: JoinHandle<zk_recipes::Result<T>>,
) -> T {
    assert!(!waiter.is_finished(), "ours got in while Curator holds");
    peer.send("release").await;
    until_gone_ungranted(admin, node, || waiter.is_finished()).await;
    peer.expect("RELEASED").await;
    peer.finish().await;
    soon("ours after Curator lets go", waiter)
        .await
        .unwrap()
        .unwrap()
}
