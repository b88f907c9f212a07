//! [`shared_standalone`]: one server per test process for tests that only need *a* server.

use std::sync::OnceLock;

use crate::{HarnessError, Standalone};

static SHARED: OnceLock<Result<Standalone, String>> = OnceLock::new();

/// A standalone server shared by every test in this process, started on first use.
///
/// Starting a JVM costs about half a second, so tests that only need a server should share
/// this one and keep out of each other's way by working under unique paths (for example
/// `/<test name>-<random>`). Do not kill, pause or restart it: other tests are using it. It
/// runs with the default options plus `extended_types` (TTL nodes) and is killed when the
/// process exits; its files are removed by the next process that starts a server (see
/// [`crate::scratch`]).
///
/// Panics (in every caller) when the server cannot be started.
///
/// ```no_run
/// let zk = zk_testkit::shared_standalone();
/// println!("connect to {}", zk.connect_string());
/// ```
pub fn shared_standalone() -> &'static Standalone {
    // Statics are never dropped, but no exit hook is needed: the JVM gets SIGKILL as the
    // process ends, normally or not (see crate::spawner), and its directory, named after
    // this process, is swept as stale by the next one that starts a server.
    let shared = SHARED.get_or_init(|| {
        Standalone::builder()
            .extended_types(true)
            .start()
            .map_err(|e: HarnessError| e.to_string())
    });
    match shared {
        Ok(server) => server,
        Err(e) => panic!("cannot start the shared ZooKeeper server: {e}"),
    }
}
