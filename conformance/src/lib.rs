//! Real-server conformance tests and the harness that runs ZooKeeper for them.
//!
//! The harness starts Debian's ZooKeeper 3.8 (`apt-get install zookeeper`, done on demand by
//! [`ensure_installed`]) as plain JVM processes on 127.0.0.1, each in its own scratch
//! directory:
//!
//! - [`Standalone`]: one server; [`shared_standalone`] is one per test process, for tests
//!   that only need a server and use unique paths;
//! - [`Ensemble`]: a quorum, with per-member [`ZkServer`] control (`kill9`, `stop`,
//!   `restart`, `pause`/`resume`) for failover tests.
//!
//! The API is synchronous (std only), usable from `#[test]` and `#[tokio::test]` alike
//! (it blocks while a server starts, typically well under a second).
//!
//! Servers never outlive the tests: `Drop` kills them (also while unwinding from a panic),
//! and every JVM is spawned with a parent-death signal so it dies with the test process even
//! when that is SIGKILLed (see [`spawner`]).
//!
//! [`bench`](mod@bench) holds what the benchmark programs share.
//!
//! [`peers`] compiles and runs the other clients the tests and benchmarks compare with
//! (Curator and the ZooKeeper Java client, kazoo).
//!
//! ```no_run
//! use conformance::{Ensemble, Mode, Standalone};
//!
//! let zk = Standalone::start().unwrap();
//! assert_eq!(zk.mode(), Some(Mode::Standalone));
//!
//! let ens = Ensemble::start(3).unwrap();
//! println!("{}", ens.connect_string()); // 127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3
//! ```

pub mod bench;
pub mod certs;
pub mod config;
pub mod ensemble;
pub mod error;
pub mod fault_proxy;
pub mod four_letter;
pub mod install;
pub mod load_average;
pub mod options;
pub mod peers;
pub mod ports;
pub mod sasl;
pub mod scratch;
pub mod server;
pub mod shared;
pub mod spawner;
pub mod standalone;
pub mod sweep;
pub mod sys;
pub mod tls_server;

pub use certs::TestCerts;
pub use ensemble::{Ensemble, EnsembleBuilder};
pub use error::{HarnessError, Result};
pub use four_letter::{four_letter_word, server_received, Mode};
pub use install::{ensure_installed, Installation};
pub use load_average::load_average;
pub use options::{ServerOptions, ServerTls};
pub use ports::{free_port, free_ports};
pub use sasl::SaslServer;
pub use server::ZkServer;
pub use shared::shared_standalone;
pub use standalone::{Standalone, StandaloneBuilder};
pub use tls_server::{shared_tls_standalone, TlsStandalone};
