//! zk-spec: a conformance and robustness checker for servers that speak ZooKeeper's client
//! protocol (ZooKeeper itself, ClickHouse Keeper, zetcd, an in-house server), in the manner of
//! h2spec for HTTP/2.
//!
//! Each [`Check`] tests one rule, cites it (a ZooKeeper Programmer's Guide section or a jute
//! record) and ends in an [`Outcome`]: passed, failed (what was expected, what came back, the
//! frames exchanged) or skipped (a feature that is off on this server). Checks speak the
//! protocol frame by frame over the test kit's raw connection, so they can send what no
//! client library would: pipelined requests, stale SetWatches, malformed frames. After every
//! malformed-input check a probe session checks that the server still serves other sessions.
//!
//! The `zk-spec` binary runs them from the command line; a server implementer's Rust test
//! can run one area or one check:
//!
//! ```no_run
//! use zk_spec::{Area, Outcome, Runner};
//!
//! let addr = "127.0.0.1:2181".parse().unwrap();
//! let runner = Runner::new(addr);
//! // One area.
//! let report = runner.run_area(Area::Multi).unwrap();
//! assert!(report.all_passed(), "{}", zk_spec::report::failures(&report, true));
//! // One check.
//! let one = runner.run_check("watches.before-reply").unwrap().expect("a check of that id");
//! assert_eq!(one.outcome, Outcome::Passed);
//! ```
//!
//! The areas for servers set up in a particular way (sessions moving between ensemble
//! members, a read-only member, reconfig, TLS with a client certificate, SASL) run when a
//! [`Setup`] says how to reach that setup ([`Runner::setup`]) and skip without it:
//!
//! ```no_run
//! use zk_spec::{Area, Runner, Setup};
//!
//! let members = vec!["127.0.0.1:2181".parse().unwrap(), "127.0.0.1:2182".parse().unwrap()];
//! let runner = Runner::new(members[0]).setup(Setup::default().ensemble(members));
//! assert!(runner.run_area(Area::Sessions).unwrap().all_passed());
//! ```
//!
//! Checks are plain functions of a [`Ctx`]; see [`checks`] for the catalogue and
//! [`registry`] to select them. A check that catches a known server bug names it
//! ([`Check::known_bug`]); one that could harm a server with that bug runs only when asked
//! ([`Runner::dangerous`]). [`fuzz`] is the robustness mode (`zk-spec fuzz`).

#![warn(missing_docs)]

pub mod args;
pub mod check;
pub mod checks;
pub mod ctx;
pub mod fuzz;
pub mod registry;
pub mod report;
pub mod req;
pub mod runner;
mod sasl_login;
mod scratch;
pub mod setup;
mod tls_relay;

pub use check::{Area, Check, CheckResult, Failure, Finding, Frame, Outcome};
pub use ctx::{Conn, Ctx};
pub use runner::{CheckReport, Report, RunError, Runner};
pub use setup::{Credentials, Setup, TlsTarget};
