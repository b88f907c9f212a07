//! The cancellation sweep of `connect`: the connect future is polled k times and dropped,
//! for every k of a [`SweepPlan`] until it completes, and after each drop the server must
//! hold nothing for the dropped client.
//!
//! Dropping the connect future drops the only handle on the session it started, whatever
//! the handshake's progress: the TCP connect, the connect request (which makes a session on
//! the server), SASL. What the server holds is read with four-letter words: the sessions
//! of its session tracker (`dump`) and its client connections (`cons`). After each drop,
//! within the settle time, they must be back to what they were before the connect: no more
//! sessions and no more connections. The session timeout given to the client must be far
//! longer than the settle time, so that the server's own expiry cannot be what cleans up:
//! the client must close the session it made. Then a new connect with the same builder
//! must work on the same runtime, and its close must leave nothing either.
//!
//! ```no_run
//! # async fn f() {
//! use std::time::Duration;
//! use conformance::{connect_sweep::sweep_connect, sweep::SweepPlan, Standalone};
//! use zk_session::Client;
//!
//! let zk = Standalone::start().unwrap();
//! let cs = zk.connect_string();
//! let builder = || Client::builder(&cs).session_timeout(Duration::from_secs(30));
//! let report = sweep_connect(zk.client_addr(), &SweepPlan::default(), Duration::from_secs(5), builder).await;
//! assert!(report.violations.is_empty(), "{:?}", report.violations);
//! # }
//! ```

use std::{collections::BTreeSet, io, net::SocketAddr, time::Duration};

use zk_session::ClientBuilder;

use crate::{
    four_letter_word,
    sweep::{poll_then_drop, polls_to_complete, settle, sweep, Pause, SweepPlan, SweepReport},
};

/// The two sweeps of a connect: with a 1 ms sleep between polls (replies arrive between
/// them; k = 0..=24, then every 6th k up to 120), and with a yield, which stops the
/// handshake at many more points (k = 0..=24, then every 16th k up to 800).
pub fn plans() -> [SweepPlan; 2] {
    [
        SweepPlan::default(),
        SweepPlan {
            pause: Pause::Yield,
            stride: 16,
            max: 800,
            ..SweepPlan::default()
        },
    ]
}

/// What a server holds for its clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holdings {
    /// The session ids its session tracker lists (`dump`), as written there (`0x…`).
    pub sessions: BTreeSet<String>,
    /// Its client connections (`cons`), the four-letter word's own among them.
    pub connections: Vec<String>,
}

impl Holdings {
    /// Reads what `server` holds now.
    pub fn of(server: SocketAddr) -> io::Result<Holdings> {
        let timeout = Duration::from_secs(10);
        let dump = four_letter_word(server, "dump", timeout)?;
        let cons = four_letter_word(server, "cons", timeout)?;
        Ok(Holdings {
            sessions: parse_dump_sessions(&dump),
            connections: parse_cons(&cons),
        })
    }

    /// What this holds beyond `before`: sessions it did not have, and connections past its
    /// count; `None` when nothing.
    pub fn beyond(&self, before: &Holdings) -> Option<String> {
        let sessions: Vec<_> = self.sessions.difference(&before.sessions).collect();
        let more = self.connections.len() > before.connections.len();
        (!sessions.is_empty() || more).then(|| {
            format!(
                "sessions {sessions:?} not there before; connections {:?} (before: {})",
                self.connections,
                before.connections.len()
            )
        })
    }
}

/// The session ids in the session tracker part of a `dump` answer.
///
/// ```
/// let dump = "SessionTracker dump:\nSession Sets (2)/(1):\n0 expire at x:\n1 expire at y:\n\t0x1000a\nephemeral nodes dump:\nSessions with Ephemerals (1):\n0x1000b:\n\t/e\n";
/// let sessions = conformance::connect_sweep::parse_dump_sessions(dump);
/// assert_eq!(sessions.into_iter().collect::<Vec<_>>(), ["0x1000a"]);
/// ```
pub fn parse_dump_sessions(text: &str) -> BTreeSet<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("SessionTracker dump"))
        .take_while(|l| !l.starts_with("ephemeral nodes dump"))
        .map(str::trim)
        .filter(|l| l.starts_with("0x"))
        .map(str::to_owned)
        .collect()
}

/// The connection lines of a `cons` answer.
///
/// ```
/// let cons = " /127.0.0.1:5[1](queued=0,sid=0x1a)\n /127.0.0.1:6[0](queued=0)\n\n";
/// assert_eq!(conformance::connect_sweep::parse_cons(cons).len(), 2);
/// ```
pub fn parse_cons(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with('/'))
        .map(str::to_owned)
        .collect()
}

/// The two sweeps for a multi-thread runtime, where the session task runs on another worker
/// than the test's: 800 yields take far less time than a handshake there, so the yield
/// sweep is fitted to the polls a whole connect takes (the fewest of three: the first may
/// do more, such as fetch a Kerberos service ticket).
pub async fn fitted_plans<B>(builder: B) -> [SweepPlan; 2]
where
    B: Fn() -> ClientBuilder,
{
    let mut polls = u32::MAX;
    for _ in 0..3 {
        let (c, n) = polls_to_complete(builder().connect(), Pause::Yield).await;
        if let Ok(c) = c {
            let _ = c.close().await;
        }
        polls = polls.min(n);
    }
    println!("a connect took {polls} polls a yield apart");
    [SweepPlan::default(), SweepPlan::fitted(polls, Pause::Yield)]
}

/// Settles, for at most `within`, until `server` holds nothing beyond `before`.
async fn back_to(
    server: SocketAddr,
    before: &Holdings,
    what: &str,
    within: Duration,
) -> Result<(), String> {
    settle(what, within, || async {
        let now = Holdings::of(server).map_err(|e| format!("four-letter words: {e}"))?;
        now.beyond(before).map_or(Ok(()), Err)
    })
    .await
}

/// Sweeps `builder().connect()` over `plan` against `server`, checking after each drop
/// that within `within` the server holds nothing beyond what it held before the connect,
/// and that a new connect works on this runtime; a connect that completes must show as
/// one more session and connection while it is open (so that the checks can see one).
pub async fn sweep_connect<B>(
    server: SocketAddr,
    plan: &SweepPlan,
    within: Duration,
    builder: B,
) -> SweepReport
where
    B: Fn() -> ClientBuilder,
{
    let builder = &builder;
    sweep(plan, |k| async move {
        let before = Holdings::of(server).map_err(|e| format!("four-letter words: {e}"))?;
        match poll_then_drop(builder().connect(), k, plan.pause).await {
            Some(Ok(c)) => {
                let open = Holdings::of(server).map_err(|e| e.to_string())?;
                if open.sessions.len() <= before.sessions.len() {
                    return Err(format!("the open session does not show: {open:?}"));
                }
                c.close().await.map_err(|e| format!("close: {e}"))?;
                back_to(server, &before, "after the close", within).await?;
                Ok(true)
            }
            Some(Err(e)) => Err(format!("connect failed: {e}")),
            None => {
                back_to(server, &before, "after the drop", within).await?;
                next_connect(server, builder(), &before, within).await?;
                Ok(false)
            }
        }
    })
    .await
}

/// A new connect works, its session answers, and its close leaves nothing.
async fn next_connect(
    server: SocketAddr,
    builder: ClientBuilder,
    before: &Holdings,
    within: Duration,
) -> Result<(), String> {
    let c = tokio::time::timeout(within, builder.connect())
        .await
        .map_err(|_| format!("the next connect took over {within:?}"))?
        .map_err(|e| format!("the next connect failed: {e}"))?;
    c.exists("/")
        .await
        .map_err(|e| format!("the next client's request failed: {e}"))?;
    c.close().await.map_err(|e| format!("close: {e}"))?;
    back_to(server, before, "after the next client's close", within).await
}
