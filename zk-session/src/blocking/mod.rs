//! A blocking client (feature `blocking`), for code that is not async: the same session core
//! as the async [`Client`](crate::Client), driven by one I/O thread per session instead of
//! a tokio task. Its own code uses std only (threads, `std::net`, Mutex and Condvar).
//!
//! [`Client`] has a blocking method for every operation of the async client, with the same
//! names, arguments and results. Watches come as [`OneshotWatch`] (`wait`, `wait_timeout`)
//! and [`PersistentWatch`] (`recv`, `recv_timeout`, iteration); session events on a std
//! channel ([`Client::session_events`]) or by waiting for a state
//! ([`Client::wait_for_state`]).
//!
//! How it runs: a caller gives the core its request and writes it on the socket itself
//! (writes are combined, one thread at a time, in xid order), then blocks on its own reply
//! slot. The I/O thread (`zk-session-io`) reads the socket with a read timeout set to the
//! core's next deadline (pings, read timeout), hands replies to their callers, and runs
//! reconnects, probes and SASL. An idle session wakes once per ping interval.
//!
//! TLS (feature `tls`, or `blocking-tls` in a build without the default `tokio` feature) is
//! rustls over the std socket. With
//! [`ServerList::FollowEnsemble`] a second thread
//! (`zk-session-ensemble`) follows the ensemble's configuration.
//!
//! ```no_run
//! # fn f() -> zk_session::Result<()> {
//! use zk_session::{blocking, CreateOptions};
//!
//! let client = blocking::Client::builder("127.0.0.1:2181/app").connect_blocking()?;
//! let path = client.create("/jobs/job-", b"payload", CreateOptions::persistent_sequential())?;
//! let (_children, _stat, watch) = client.get_children_watch("/jobs")?;
//! let event = watch.wait()?;
//! println!("{path} and then {event:?}");
//! # Ok(()) }
//! ```

mod board;
mod client;
mod ensemble_ops;
mod follow;
mod io_thread;
mod node_ops;
mod session;
mod slot;
mod stream;
mod transactions;
mod watch;

use std::sync::Arc;

use rand::seq::SliceRandom;

pub use self::client::{Client, SessionEvents};
pub use self::watch::{Events, OneshotWatch, PersistentWatch};
use self::{client::Handle, session::Session};
use crate::{
    first_connection, jitter, session::SessionCore, ClientBuilder, Error, ServerList, SessionState,
};

impl ClientBuilder {
    /// Starts a blocking client's session (its I/O thread) and waits until it is connected,
    /// up to the first connection timeout (default: the session timeout). Every option of
    /// the builder applies as it does to [`connect`](Self::connect).
    ///
    /// ```no_run
    /// # fn f() -> zk_session::Result<()> {
    /// use std::time::Duration;
    /// use zk_session::{blocking, Error};
    ///
    /// let connecting = blocking::Client::builder("127.0.0.1:2181")
    ///     .first_connection_timeout(Duration::from_secs(5))
    ///     .connect_blocking();
    /// match connecting {
    ///     Ok(client) => println!("session {:?}", client.session_id()),
    ///     Err(Error::ConnectTimeout { last_error, .. }) => eprintln!("no server: {last_error:?}"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(()) }
    /// ```
    pub fn connect_blocking(self) -> Result<Client, Error> {
        let (mut cfg, opts) = self.into_config()?;
        // Shuffled, as the reference client does, so that clients spread over the ensemble.
        cfg.hosts.shuffle(&mut jitter::rng());
        let (hosts, security) = (cfg.hosts.clone(), cfg.security.clone());
        let chroot = cfg.chroot.clone();
        let seed = jitter::random_range(0..=u64::MAX);
        let session = Arc::new(Session::new(SessionCore::new(cfg, seed, session::now())));
        // The handle first: if the thread cannot start, dropping it ends the session.
        let client = Client {
            handle: Arc::new(Handle {
                session: session.clone(),
                chroot,
                operation_timeout: opts.operation_timeout,
                persistent_watch_buffer: opts.persistent_watch_buffer,
            }),
        };
        // The core's first actions (a connect) wait for the thread.
        session.settle_and_unlock(session.lock());
        // No thread, no session: the handle's drop ends it.
        io_thread::spawn(session.clone(), hosts, security).map_err(|_| Error::Closed)?;
        let wait = opts.first_connection_wait;
        let p = session.board.wait_until(wait, |p| {
            p.state != SessionState::Connecting || p.hopeless.is_some()
        });
        if let Some(e) = p.hopeless.clone() {
            return Err(e);
        }
        let reached = (p.state != SessionState::Connecting).then_some(p.state);
        let last_error = p.last_connect_error.clone();
        drop(p);
        first_connection::outcome(reached, wait, || last_error)?;
        if opts.server_list == ServerList::FollowEnsemble {
            follow::spawn(&client);
        }
        Ok(client)
    }
}
