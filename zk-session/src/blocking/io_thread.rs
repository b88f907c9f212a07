//! The session's one I/O thread (`zk-session-io`): it reads the connection's stream with a
//! read timeout set to the core's next deadline, feeds the bytes to the core, runs the
//! core's actions (connect, disconnect, probes, SASL) and handles its timers. Callers write
//! their own requests (see [`session`](super::session)); this thread writes only what its
//! own inputs make (handshake, pings, re-registrations).

use std::{
    io::{self, Read, Write},
    net::Shutdown,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, MutexGuard, Weak,
    },
    time::Duration,
};

use super::{
    session::{now, wake_all, CoreInstant, Locked, Session, Wakes},
    stream::{open_tcp, ReadBuf, Stream},
};
use crate::{security::Security, session::Action};

/// Starts the I/O thread of `session`; it ends once the session has ended.
pub(crate) fn spawn(
    session: Arc<Session>,
    hosts: Vec<(String, u16)>,
    security: Security,
) -> io::Result<()> {
    let io = IoThread {
        hosts,
        security,
        rbuf: ReadBuf::for_session(),
        armed: None,
        probe_stop: None,
        wakes: Wakes::new(),
    };
    std::thread::Builder::new()
        .name("zk-session-io".into())
        .spawn(move || io.run(&session))
        .map(drop)
}

struct IoThread {
    hosts: Vec<(String, u16)>,
    /// Plain TCP or TLS, for every server and every reconnect.
    security: Security,
    rbuf: ReadBuf,
    /// The read timeout set on the stream of this generation (`None` inside: none).
    armed: Option<(u64, Option<Duration>)>,
    /// Stops the read-write probe under way, if any.
    probe_stop: Option<Arc<AtomicBool>>,
    /// Callers answered under the lock, woken when this thread next lets go of it: each
    /// turn of the loop takes the lock once.
    wakes: Wakes,
}

impl IoThread {
    fn run(mut self, s: &Arc<Session>) {
        let mut g = s.lock();
        loop {
            g = self.run_actions(s, g);
            if g.core.is_ended() {
                break;
            }
            let deadline = g.core.poll_timeout();
            g = match g.stream.clone() {
                Some(stream) => self.read(s, g, stream, deadline),
                None => {
                    // Rare (no connection): woken under the lock, which the wait lets go.
                    wake_all(&mut self.wakes);
                    sleep(s, g, deadline)
                }
            };
            if g.core.poll_timeout().is_some_and(|d| d <= now()) {
                g.core.handle_timeout(now());
            }
            g = s.settle(g, &mut self.wakes);
        }
        self.unlock(g);
        self.stop_probe();
    }

    /// Lets go of the lock and wakes the callers answered under it: before anything that
    /// blocks.
    fn unlock(&mut self, g: MutexGuard<'_, Locked>) {
        drop(g);
        wake_all(&mut self.wakes);
    }

    /// One read of the stream, up to `deadline`, outside the lock; its bytes (or its end)
    /// go to the core unless the stream was dropped meanwhile.
    fn read<'s>(
        &mut self,
        s: &'s Session,
        g: MutexGuard<'s, Locked>,
        stream: Arc<Stream>,
        deadline: Option<CoreInstant>,
    ) -> MutexGuard<'s, Locked> {
        let gen = g.conn_gen;
        self.unlock(g);
        let wait = deadline.map(|d| d.saturating_duration_since(now()));
        let r = if wait.is_some_and(|w| w.is_zero()) {
            Err(io::ErrorKind::TimedOut.into())
        } else {
            let armed = self.armed.filter(|a| a.0 == gen).map(|a| a.1);
            if rearm(armed, wait) {
                stream.set_read_timeout(wait);
                self.armed = Some((gen, wait));
            }
            stream.read(&mut self.rbuf)
        };
        let mut g = s.lock();
        if g.conn_gen != gen {
            self.rbuf.frames.clear();
            return g;
        }
        let now = now();
        match r {
            Ok(0) => g.core.handle_disconnected(now),
            Ok(_) => {
                s.prune_if_handshaking(&mut g);
                g.core.handle_input(&mut self.rbuf.frames, now);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => g.core.handle_io_error(e, now),
        }
        g
    }

    /// Runs the actions queued, in order; a connect runs outside the lock.
    fn run_actions<'s>(
        &mut self,
        s: &'s Arc<Session>,
        mut g: MutexGuard<'s, Locked>,
    ) -> MutexGuard<'s, Locked> {
        while let Some(action) = g.actions.pop_front() {
            g = match action {
                Action::Connect { host, timeout, .. } => self.connect(s, g, host, timeout),
                Action::Disconnect => {
                    // The stream was dropped when the action was taken.
                    self.rbuf.frames.clear();
                    self.stop_probe();
                    g
                }
                Action::ServerList(hosts) => {
                    self.hosts = hosts;
                    g
                }
                Action::ProbeTls { host } => {
                    let (h, p) = self.hosts[host].clone();
                    self.unlock(g);
                    let plain = answers_plain(&h, p);
                    let mut g = s.lock();
                    g.core.handle_tls_probe(host, plain, now());
                    s.settle(g, &mut self.wakes)
                }
                Action::ProbeReadWrite { skip } => {
                    self.start_probe(s, skip);
                    g
                }
                #[cfg(feature = "sasl")]
                Action::Sasl { attempt, work } => {
                    // Kerberos may ask the KDC: outside the lock, so that callers go on.
                    self.unlock(g);
                    let done = work.run();
                    let mut g = s.lock();
                    g.core.handle_sasl_done(attempt, done, now());
                    s.settle(g, &mut self.wakes)
                }
            };
        }
        g
    }

    /// Opens a stream to `hosts[host]` outside the lock, and tells the core how it went,
    /// unless the attempt was given up meanwhile.
    fn connect<'s>(
        &mut self,
        s: &'s Session,
        g: MutexGuard<'s, Locked>,
        host: usize,
        timeout: Duration,
    ) -> MutexGuard<'s, Locked> {
        let gen = g.conn_gen;
        self.unlock(g);
        let (h, p) = self.hosts[host].clone();
        let r = Stream::open(&h, p, &self.security, timeout);
        let mut g = s.lock();
        if g.conn_gen != gen {
            // Given up meanwhile (a close, an end): the stream goes unused.
            return g;
        }
        match r {
            Ok(stream) => {
                g.conn_gen += 1;
                self.rbuf.frames.clear();
                g.stream = Some(Arc::new(stream));
                g.core.handle_stream_opened(host, now());
            }
            Err(f) => g.core.handle_connect_failed(host, f, now()),
        }
        s.settle(g, &mut self.wakes)
    }

    fn start_probe(&mut self, s: &Arc<Session>, skip: usize) {
        self.stop_probe();
        let stop = Arc::new(AtomicBool::new(false));
        self.probe_stop = Some(stop.clone());
        let (hosts, weak) = (self.hosts.clone(), Arc::downgrade(s));
        let security = self.security.clone();
        let _ = std::thread::Builder::new()
            .name("zk-session-probe".into())
            .spawn(move || probe_read_write(hosts, &security, skip, stop, weak));
    }

    fn stop_probe(&mut self) {
        if let Some(s) = self.probe_stop.take() {
            s.store(true, Ordering::Release);
        }
    }
}

/// No stream: waits for the deadline, or for a caller's command or action.
fn sleep<'s>(
    s: &'s Session,
    mut g: MutexGuard<'s, Locked>,
    deadline: Option<CoreInstant>,
) -> MutexGuard<'s, Locked> {
    if !g.actions.is_empty() {
        return g;
    }
    g.io_sleeping = true;
    let wait = deadline.map(|d| d.saturating_duration_since(now()));
    let mut g = match wait {
        Some(w) if w.is_zero() => g,
        Some(w) => match s.wake.wait_timeout(g, w) {
            Ok((g, _)) => g,
            Err(e) => e.into_inner().0,
        },
        None => s.wake.wait(g).unwrap_or_else(|e| e.into_inner()),
    };
    g.io_sleeping = false;
    g
}

/// Whether a read that may wait `wait` needs the socket's read timeout set again, given
/// the one `armed` on it (`None`: never set). A shorter timeout only makes the thread wake
/// early, which the core ignores, so it stays unless it is much shorter than needed: under
/// load the deadline moves with every reply, and a setsockopt per read would cost a syscall
/// per request.
fn rearm(armed: Option<Option<Duration>>, wait: Option<Duration>) -> bool {
    match (armed, wait) {
        (None, _) | (Some(None), Some(_)) | (Some(Some(_)), None) => true,
        (Some(None), None) => false,
        (Some(Some(a)), Some(w)) => w < a || w > a.saturating_mul(2),
    }
}

/// Whether `host:port` answers a four-letter word in plain (`None`: no answer in time).
fn answers_plain(host: &str, port: u16) -> Option<bool> {
    let wait = Duration::from_secs(1);
    let mut s = open_tcp(host, port, wait).ok()?;
    s.set_read_timeout(Some(wait)).ok()?;
    // Five bytes: a TLS port needs a whole record header before it gives up on us.
    s.write_all(b"srvr\n").ok()?;
    let mut byte = [0u8; 1];
    let r = match s.read(&mut byte) {
        Ok(n) => Some(n > 0),
        Err(e) if e.kind() == io::ErrorKind::ConnectionReset => Some(false),
        Err(_) => None,
    };
    let _ = s.shutdown(Shutdown::Both);
    r
}

/// Looks for a read-write server other than `skip` until one answers "rw" or `stop` is set,
/// then tells the core.
fn probe_read_write(
    hosts: Vec<(String, u16)>,
    security: &Security,
    skip: usize,
    stop: Arc<AtomicBool>,
    session: Weak<Session>,
) {
    let mut pause = Duration::from_millis(200);
    while !stop.load(Ordering::Acquire) {
        for (i, (h, p)) in hosts.iter().enumerate() {
            if (i == skip && hosts.len() > 1) || !is_read_write(h, *p, security) {
                continue;
            }
            let Some(session) = session.upgrade() else {
                return;
            };
            let mut g = session.lock();
            if !stop.load(Ordering::Acquire) {
                g.core.handle_read_write_found(i, now());
            }
            return session.settle_and_unlock(g);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_secs(10));
    }
}

fn is_read_write(host: &str, port: u16, security: &Security) -> bool {
    let wait = Duration::from_secs(2);
    let Ok(s) = Stream::open(host, port, security, wait) else {
        return false;
    };
    s.set_read_timeout(Some(wait));
    let mut answer = ReadBuf::new(16);
    // The answer is "rw" or "ro": two bytes, whatever else the peer sends.
    let ok = s.write_all(b"isro").is_ok();
    while ok && answer.frames.len() < 2 {
        match s.read(&mut answer) {
            Ok(n) if n > 0 => {}
            _ => break,
        }
    }
    s.shutdown();
    answer.frames.starts_with(b"rw")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_read_timeout_is_set_again_only_when_it_would_wake_late_or_far_too_early() {
        let s = Duration::from_secs;
        assert!(rearm(None, Some(s(5))), "never set");
        assert!(rearm(Some(Some(s(5))), Some(s(4))), "would wake late");
        assert!(!rearm(Some(Some(s(5))), Some(s(5))));
        assert!(!rearm(Some(Some(s(5))), Some(s(9))), "wakes a little early");
        assert!(
            rearm(Some(Some(s(5))), Some(s(11))),
            "would wake far too often"
        );
        assert!(rearm(Some(None), Some(s(5))), "no timeout would wake late");
        assert!(!rearm(Some(None), None));
        assert!(rearm(Some(Some(s(1))), None));
    }
}
