//! Real ZooKeeper servers for tests, with faults: a test kit for code that uses ZooKeeper.
//!
//! The kit starts Apache ZooKeeper 3.8 (Debian's `zookeeper` package; [`ensure_installed`]
//! says what it installs and installs it on first use when it is missing) as plain JVM
//! processes on 127.0.0.1, each in its own scratch directory, and no Docker:
//!
//! - [`Standalone`]: one server; [`shared_standalone`] is one per test process, for tests
//!   that only need a server and use unique paths;
//! - [`Ensemble`]: a quorum, with per-member [`ZkServer`] control (`kill9`, `stop`,
//!   `restart`, `pause`/`resume`) for failover tests;
//! - TLS and SASL servers: [`TestCerts`] makes throwaway certificates for
//!   [`ServerTls`], [`SaslServer`] DIGEST-MD5 users;
//! - [`fault_proxy::FaultProxy`]: a proxy between your client and a server that cuts, stalls,
//!   partitions, swallows a request or holds its reply;
//! - [`expire_session`]: expires a client's session from outside, as a fault;
//! - [`raw::RawConnection`]: frames built with zk-proto, well-formed or not, sent to a server
//!   and its frames read back decoded, for testing a ZooKeeper-compatible server at the wire.
//!
//! The launcher is synchronous (std only), usable from `#[test]` and `#[tokio::test]` alike
//! (it blocks while a server starts, typically well under a second). The fault proxy runs on
//! tokio.
//!
//! Servers never outlive the tests: `Drop` kills them (also while unwinding from a panic),
//! and every JVM is spawned with a parent-death signal so it dies with the test process even
//! when that is SIGKILLed (see [`spawner`]). Their output goes to a `server.log` in their
//! scratch directory, never to the terminal.
//!
//! # Testing your own failover
//!
//! A service that keeps an ephemeral node while its session lives must notice when the
//! server it is connected to dies, and carry on with the same session on another member.
//! With a 3-member ensemble, kill the member the client is connected to and check:
//!
//! ```no_run
//! use std::time::{Duration, Instant};
//! use zk_session::{Client, CreateOptions, SessionState};
//! use zk_testkit::Ensemble;
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() {
//! let ens = Ensemble::start(3).unwrap();
//! let client = Client::builder(&ens.connect_string())
//!     .session_timeout(Duration::from_secs(10))
//!     .connect()
//!     .await
//!     .unwrap();
//! client
//!     .create("/my-service", b"up", CreateOptions::ephemeral())
//!     .await
//!     .unwrap();
//! let session = client.session_id();
//!
//! // kill -9 the member the client is connected to.
//! let server = client.connected_server().unwrap();
//! let victim = ens
//!     .servers()
//!     .iter()
//!     .position(|s| s.connect_string() == server)
//!     .unwrap();
//! ens.server(victim).kill9();
//!
//! // The client moves to another member with the same session: the ephemeral node stays.
//! let deadline = Instant::now() + Duration::from_secs(30);
//! while client.state() != SessionState::Connected || client.connected_server() == Some(server.clone()) {
//!     assert!(Instant::now() < deadline, "no failover");
//!     tokio::time::sleep(Duration::from_millis(50)).await;
//! }
//! assert_eq!(client.session_id(), session);
//! assert!(client.exists("/my-service").await.unwrap().is_some());
//! # }
//! ```
//!
//! The same test runs as `tests/failover.rs` of this crate. For faults a kill cannot make
//! (a lost reply, a network partition, a stalled server), put a
//! [`FaultProxy`](fault_proxy::FaultProxy) between the client and the server.
//!
//! # Environment
//!
//! - `ZK_TESTKIT_CLASSPATH`: the server's Java classpath instead of Debian's jars (nothing
//!   is installed then); `ZK_TESTKIT_JAVA`: the `java` binary (see [`install`]);
//! - `ZK_TESTKIT_KEEP=1`: keep scratch directories and server logs (see [`scratch`]).

pub mod certs;
pub mod client_certs;
pub mod config;
pub mod ensemble;
pub mod error;
pub mod expiry;
pub mod fault_proxy;
pub mod four_letter;
pub mod install;
pub mod kdc;
pub mod kerberos_server;
pub mod options;
pub mod ports;
pub mod raw;
pub mod reconfig;
pub mod sasl;
pub mod scratch;
pub mod server;
pub mod shared;
pub mod spawner;
pub mod standalone;
pub mod sys;
pub mod tls_server;

pub use certs::TestCerts;
pub use ensemble::{Ensemble, EnsembleBuilder};
pub use error::{HarnessError, Result};
pub use expiry::{expire_session, SessionExpiry};
pub use four_letter::{four_letter_word, server_received, Mode};
pub use install::{ensure_installed, Installation};
pub use kdc::{shared_kdc, Kdc};
pub use kerberos_server::KerberosServer;
pub use options::{ServerOptions, ServerTls};
pub use ports::{free_port, free_ports};
pub use sasl::SaslServer;
pub use server::ZkServer;
pub use shared::shared_standalone;
pub use standalone::{Standalone, StandaloneBuilder};
pub use tls_server::{shared_tls_standalone, TlsStandalone};
