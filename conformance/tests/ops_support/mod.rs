//! Helpers of the operation tests (session_ops.rs, session_auth.rs, session_lifecycle.rs,
//! session_watches.rs, tree_ops.rs): clients of the shared server, unique base paths, bounded
//! waits and clients behind a fault proxy.

// Each test binary uses a part of these.
#![allow(dead_code)]

use std::time::Duration;

use conformance::{fault_proxy::FaultProxy, shared_standalone};
use zk_session::{Client, ClientBuilder, CreateOptions, SessionState};

/// A client of the shared standalone server.
pub async fn client() -> Client {
    Client::builder(&shared_standalone().connect_string())
        .session_timeout(Duration::from_secs(10))
        .connect()
        .await
        .expect("connect")
}

/// A fresh, unique base path per test, so tests can share one server.
pub async fn base(c: &Client, name: &str) -> String {
    let p = format!("/ops-{name}-{}", rand_suffix());
    c.create(&p, b"", &CreateOptions::persistent())
        .await
        .unwrap();
    p
}

/// A number that differs between tests and test runs, for unique paths.
pub fn rand_suffix() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        ^ std::process::id() as u64
}

/// `f`'s output; panics when it takes more than `secs` seconds.
pub async fn within_secs<T>(secs: u64, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(secs), f)
        .await
        .unwrap_or_else(|_| panic!("nothing within {secs} s"))
}

/// Returns once `c` is in state `want`.
pub async fn wait_for_state(c: &Client, want: SessionState) {
    let mut rx = c.watch_state();
    while rx.get_and_update() != want {
        rx.changed().await.expect("client gone");
    }
}

/// A client connected through a fresh proxy to the shared standalone server, with the given
/// session timeout and whatever else `configure` sets.
pub async fn proxied_client(
    session_timeout_secs: u64,
    configure: impl FnOnce(ClientBuilder) -> ClientBuilder,
) -> (FaultProxy, Client) {
    let proxy = FaultProxy::start(shared_standalone().client_addr()).await;
    let c = configure(
        Client::builder(&proxy.connect_string())
            .session_timeout(Duration::from_secs(session_timeout_secs)),
    )
    .connect()
    .await
    .expect("connect");
    (proxy, c)
}

/// Cuts the proxy's connection, waits for the client to see it, and lets it back in, until the
/// client is connected again.
pub async fn reconnect_through(proxy: &FaultProxy, c: &Client) {
    proxy.partition(true);
    within_secs(10, wait_for_state(c, SessionState::Suspended)).await;
    proxy.partition(false);
    within_secs(20, wait_for_state(c, SessionState::Connected)).await;
}
