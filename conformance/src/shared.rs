//! [`shared_standalone`]: one server per test process for tests that only need *a* server.

use std::sync::OnceLock;

use crate::{sys, HarnessError, Standalone};

static SHARED: OnceLock<Result<Standalone, String>> = OnceLock::new();

/// A standalone server shared by every test in this process, started on first use.
///
/// Starting a JVM costs about half a second, so tests that only need a server should share
/// this one and keep out of each other's way by working under unique paths (for example
/// `/<test name>-<random>`). Do not kill, pause or restart it: other tests are using it. It
/// runs with the default options plus `extended_types` (TTL nodes) and is killed, and its
/// files removed, when the process exits.
///
/// Panics (in every caller) when the server cannot be started.
///
/// ```no_run
/// let zk = conformance::shared_standalone();
/// println!("connect to {}", zk.connect_string());
/// ```
pub fn shared_standalone() -> &'static Standalone {
    let shared = SHARED.get_or_init(|| {
        let started = Standalone::builder()
            .extended_types(true)
            .start()
            .map_err(|e: HarnessError| e.to_string());
        if started.is_ok() {
            // Statics are never dropped: kill the server and remove its files at exit.
            sys::at_exit(cleanup_at_exit);
        }
        started
    });
    match shared {
        Ok(server) => server,
        Err(e) => panic!("cannot start the shared ZooKeeper server: {e}"),
    }
}

extern "C" fn cleanup_at_exit() {
    if let Some(Ok(server)) = SHARED.get() {
        server.kill9();
        if std::env::var_os("ZK_CONFORMANCE_KEEP").is_none() {
            let _ = std::fs::remove_dir_all(server.dir());
        }
    }
}
