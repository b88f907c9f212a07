//! Real-server conformance tests, benchmarks, soak and demo of the client crates.
//!
//! The servers come from the test kit, [`zk_testkit`]: this crate re-exports it, so tests
//! say `conformance::Standalone`, `conformance::fault_proxy::FaultProxy` and so on, and are
//! its first user. What only this crate needs lives here:
//!
//! - [`bench`](mod@bench) holds what the benchmark programs share; [`workload`],
//!   [`raw_session`], [`counters`], [`cpu`] and [`outcome`] what the request-path benchmarks
//!   (`session_bench`, `blocking_bench`) share;
//! - [`peers`] compiles and runs the other clients the tests and benchmarks compare with
//!   (Curator and the ZooKeeper Java client, kazoo);
//! - [`sweep`] drives the cancellation sweep, and [`connect_sweep`] sweeps `connect` with it.
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
pub mod connect_sweep;
pub mod counters;
pub mod cpu;
pub mod ephemeral_owner;
pub mod load_average;
pub mod outcome;
pub mod peers;
pub mod raw_session;
pub mod sweep;
pub mod workload;

pub use ephemeral_owner::ephemeral_owner;
pub use load_average::load_average;
pub use zk_testkit::*;
