//! The cancellation sweep of `connect` against a real ZooKeeper 3.8 server, plain and with
//! SASL DIGEST-MD5 (GSSAPI's is in gssapi.rs, behind the `gssapi` feature).
//!
//! The connect future is polled k times and dropped, for every k until it completes, with
//! a 1 ms sleep between polls (k = 0..=24, then every 6th k up to 120) and with a yield
//! (k = 0..=24, then every 16th k up to 800), on a current-thread runtime, where the
//! session task moves only between polls; and plain once more on a multi-thread runtime,
//! where it moves while the connect is polled (the yield sweep fitted to a whole connect
//! there). After each drop the server must, within
//! [`SETTLE`], hold no session and no connection beyond what it held before the connect
//! (`dump` and `cons`), and a new connect must work; see `conformance::connect_sweep`. The
//! session timeout is far longer than the settle time, so a session the client made and
//! left behind shows. Each test has a server of its own: others' sessions would make the
//! server's lists move under the checks.

use std::time::Duration;

use conformance::{
    connect_sweep::{fitted_plans, plans, sweep_connect},
    sweep::assert_swept,
    SaslServer, Standalone,
};
use zk_session::{Client, SaslConfig};

/// Far longer than [`SETTLE`]: the server does not expire a session left behind meanwhile.
const SESSION: Duration = Duration::from_secs(30);
const SETTLE: Duration = Duration::from_secs(5);

#[tokio::test]
async fn a_dropped_connect_leaves_no_session_and_no_connection() {
    let zk = Standalone::start().expect("a server");
    let cs = zk.connect_string();
    for plan in plans() {
        let builder = || Client::builder(&cs).session_timeout(SESSION);
        let report = sweep_connect(zk.client_addr(), &plan, SETTLE, builder).await;
        assert_swept(&format!("connect ({:?})", plan.pause), &report, true);
    }
}

#[tokio::test]
async fn a_dropped_digest_md5_connect_leaves_no_session_and_no_connection() {
    let users = SaslServer::digest_md5().user("bob", "bobsecret");
    let zk = Standalone::builder()
        .sasl(users)
        .start()
        .expect("a SASL server");
    let cs = zk.connect_string();
    for plan in plans() {
        let builder = || {
            Client::builder(&cs)
                .session_timeout(SESSION)
                .sasl(SaslConfig::digest_md5("bob", "bobsecret"))
        };
        let report = sweep_connect(zk.client_addr(), &plan, SETTLE, builder).await;
        assert_swept(
            &format!("DIGEST-MD5 connect ({:?})", plan.pause),
            &report,
            true,
        );
    }
}

/// On a multi-thread runtime the session task runs on another worker than the connect
/// future: drops land while it is in the middle of its work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connect_on_a_multi_thread_runtime_leaves_nothing() {
    let zk = Standalone::start().expect("a server");
    let cs = zk.connect_string();
    let builder = || Client::builder(&cs).session_timeout(SESSION);
    for plan in fitted_plans(builder).await {
        let report = sweep_connect(zk.client_addr(), &plan, SETTLE, builder).await;
        assert_swept(
            &format!("connect, multi-thread ({:?})", plan.pause),
            &report,
            true,
        );
    }
}
