//! The session task: a thin tokio shell around [`SessionCore`] that moves bytes between the
//! socket and the core, runs the core's actions (connect, disconnect, probe) and sleeps until
//! its next deadline. Everything the session decides is decided in the core.

use std::{future::Future, pin::Pin, sync::Arc, task::Poll};

use crate::{
    command::Command,
    connection::{self, ConnectFailure, Connection},
    deadline_grid, jitter,
    session::{Action, Config, Phase, SessionCore, Shared},
    trace::{self, Spans},
    transport::Security,
};
use rand::seq::SliceRandom;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    sync::mpsc,
    task::JoinHandle,
    time::{sleep_until, Instant},
};

type Attempt = Pin<Box<dyn Future<Output = Result<Connection, ConnectFailure>> + Send>>;

/// Starts the session task for `cfg`; it runs until the session has ended and every handle
/// is gone.
pub(crate) fn spawn(mut cfg: Config, shared: Arc<Shared>, rx: mpsc::UnboundedReceiver<Command>) {
    // Made here, in the caller's context, so that the session span follows from the caller's;
    // before the shuffle, so that it shows the connect string as given.
    let spans = Spans::new(&cfg.hosts, &cfg.chroot, cfg.resume.as_ref().map(|r| r.0));
    // Shuffled, as the reference client does, so clients spread over the ensemble.
    cfg.hosts.shuffle(&mut jitter::rng());
    let hosts = cfg.hosts.clone();
    // Opening streams is the driver's business, not the core's.
    let security = cfg.security.clone();
    let seed = jitter::random_range(0..=u64::MAX);
    let core = SessionCore::new(cfg, shared, seed, Instant::now());
    let driver = Driver {
        core,
        rx,
        rx_open: true,
        hosts,
        security,
        conn: None,
        attempt: None,
        attempt_host: 0,
        probe: None,
        spans,
    };
    tokio::spawn(Box::new(driver).run());
}

struct Driver {
    core: SessionCore,
    rx: mpsc::UnboundedReceiver<Command>,
    /// False once every handle is gone.
    rx_open: bool,
    hosts: Vec<(String, u16)>,
    security: Security,
    conn: Option<Connection>,
    attempt: Option<Attempt>,
    attempt_host: usize,
    probe: Option<JoinHandle<usize>>,
    /// Entered around every call into the core, so its events land in the right span.
    spans: Spans,
}

/// Most commands taken in one go, so that one write carries many requests but reads and
/// timers still get their turn.
const COMMAND_BATCH: usize = 1024;

impl Driver {
    /// Boxed: an async fn keeps its argument twice in its future (once as passed, once as
    /// moved into the body), and the future's size is every idle session's.
    async fn run(mut self: Box<Self>) {
        let timer = sleep_until(Instant::now());
        tokio::pin!(timer);
        let mut armed: Option<Instant> = None;
        loop {
            self.run_actions().await;
            if self.core.is_ended() && !self.rx_open {
                break;
            }
            // An earlier deadline re-arms the timer; a later one waits for it to fire (the
            // core ignores early calls), which spares a reset per write. Far deadlines wake
            // on a grid that idle sessions share.
            if let Some(t) = self.core.poll_timeout() {
                if armed.is_none_or(|a| t < a) {
                    let at = deadline_grid::wake_at(t, Instant::now());
                    if armed.is_none_or(|a| at < a) {
                        timer.as_mut().reset(at);
                        armed = Some(at);
                    }
                }
            }
            let connected = self.conn.is_some();
            let writing = connected && !self.core.transmit().is_empty();
            let take_commands = self.rx_open && self.core.wants_commands();
            let Driver {
                core,
                rx,
                conn,
                attempt,
                probe,
                ..
            } = &mut *self;
            let (rd, wr, rbuf) = match conn.as_mut() {
                Some(c) => {
                    c.reserve_read();
                    (Some(&mut c.rd), Some(&mut c.wr), Some(&mut c.rbuf))
                }
                None => (None, None, None),
            };
            tokio::select! {
                r = async { rd.unwrap().read_buf(rbuf.unwrap()).await }, if connected => {
                    let now = Instant::now();
                    match r {
                        // Boxed, like every await off the request path: the future's
                        // size is every idle session's, and this one (a TCP probe) is large.
                        Ok(0) => Box::pin(self.hung_up(now)).await,
                        Err(e) => self.in_span(|d| d.core.handle_io_error(e, now)),
                        Ok(_) => {
                            if let Some(c) = self.conn.as_mut() {
                                c.read_done(now);
                            }
                            self.input(now);
                        }
                    }
                }
                r = async { wr.unwrap().write_buf(core.transmit()).await }, if writing => {
                    self.wrote(r);
                }
                cmd = rx.recv(), if take_commands => self.commands(cmd).await,
                _ = &mut timer, if armed.is_some() => {
                    armed = None;
                    let now = Instant::now();
                    if let Some(c) = self.conn.as_mut() {
                        c.shrink_if_idle(now);
                    }
                    self.in_span(|d| d.core.handle_timeout(now));
                    // Most often a ping: out in this pass, not the next.
                    self.write_now().await;
                }
                r = async { attempt.as_mut().unwrap().await }, if attempt.is_some() => {
                    self.attempt = None;
                    self.attempted(r);
                }
                found = async { probe.as_mut().unwrap().await }, if probe.is_some() => {
                    self.probe = None;
                    if let Ok(host) = found {
                        self.in_span(|d| d.core.handle_read_write_found(host, Instant::now()));
                    }
                }
            }
        }
    }

    /// Runs `f` inside the current connection's span (or the session's between connections).
    fn in_span<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let span = self.spans.current();
        span.in_scope(|| f(self))
    }

    /// Runs what the core asked for.
    async fn run_actions(&mut self) {
        while let Some(action) = self.core.poll_action() {
            match action {
                Action::Connect {
                    host,
                    request,
                    timeout,
                } => {
                    let addr = self.hosts[host].clone();
                    let security = self.security.clone();
                    let span = self.spans.connection_started(&addr, request.session_id);
                    span.in_scope(|| {
                        trace::debug!(
                            server = %trace::Server(&addr),
                            session_id = %trace::SessionId(request.session_id),
                            last_zxid_seen = request.last_zxid_seen,
                            timeout_ms = timeout.as_millis() as u64,
                            "connecting"
                        );
                    });
                    let _ = timeout; // Only the log reads it (none without `tracing`).
                    let attempt = connection::open(addr, security);
                    self.attempt = Some(Box::pin(self.spans.instrument(attempt)));
                    self.attempt_host = host;
                }
                Action::Disconnect => {
                    self.spans.connection_over();
                    self.attempt = None;
                    if let Some(p) = self.probe.take() {
                        p.abort();
                    }
                    if let Some(mut c) = self.conn.take() {
                        // Best effort: let the server see the close rather than wait for a
                        // timeout. Boxed, so that the idle session's future does not hold
                        // room for a connection and its shutdown.
                        let _ = Box::pin(async move { c.wr.shutdown().await }).await;
                    }
                }
                Action::ServerList(hosts) => self.hosts = hosts,
                Action::ProbeReadWrite { skip } => {
                    let hosts = self.hosts.clone();
                    let probe =
                        connection::find_read_write_server(hosts, skip, self.security.clone());
                    self.probe = Some(tokio::spawn(self.spans.instrument(probe)));
                }
            }
        }
    }

    /// The server closed the stream. A plain handshake that gets no byte before the first
    /// connection may have reached a TLS port: a probe tells, so that `connect` can stop
    /// trying a port that will never answer in plain.
    async fn hung_up(&mut self, now: Instant) {
        if let (Phase::Handshaking { host }, Security::Plain, true) =
            (self.core.phase(), &self.security, self.core.first_connect())
        {
            let nothing_read = self.conn.as_ref().is_some_and(|c| c.rbuf.is_empty());
            let (h, p) = self.hosts[host].clone();
            if nothing_read && connection::answers_plain(&h, p).await == Some(false) {
                let tls_port = ConnectFailure::Tls(crate::TlsFailure::ServerExpectsTls);
                let now = Instant::now();
                return self.in_span(|d| d.core.handle_connect_failed(host, tls_port, now));
            }
        }
        self.in_span(|d| d.core.handle_disconnected(now))
    }

    /// Hands the end of a connection attempt to the core, inside the attempt's span.
    fn attempted(&mut self, r: Result<Connection, ConnectFailure>) {
        let (host, now) = (self.attempt_host, Instant::now());
        match r {
            Ok(c) => {
                self.conn = Some(c);
                self.in_span(|d| d.core.handle_stream_opened(host, now));
            }
            Err(f) => self.in_span(|d| d.core.handle_connect_failed(host, f, now)),
        }
    }

    /// Hands what was read to the core. A handshake that it completes gives the session
    /// span its session id.
    fn input(&mut self, now: Instant) {
        let handshaking = matches!(self.core.phase(), Phase::Handshaking { .. });
        self.in_span(|d| {
            let c = d.conn.as_mut().expect("connected");
            d.core.handle_input(&mut c.rbuf, now);
        });
        if handshaking && matches!(self.core.phase(), Phase::Connected { .. }) {
            self.spans.session_known(self.core.session_id());
        }
    }

    /// Writes what the core has to send, if the socket takes it at once, rather than on the
    /// next pass of the select (a pass less, which an idle session makes for every ping).
    /// What the socket does not take waits for the select's write branch.
    async fn write_now(&mut self) {
        let Driver { core, conn, .. } = self;
        let Some(c) = conn.as_mut() else { return };
        // Only on a connection the core keeps: one it just ended is closed by the actions.
        if core.transmit().is_empty() || !matches!(core.phase(), Phase::Connected { .. }) {
            return;
        }
        let written = {
            let mut write = std::pin::pin!(c.wr.write_buf(core.transmit()));
            std::future::poll_fn(|cx| Poll::Ready(write.as_mut().poll(cx))).await
        };
        if let Poll::Ready(r) = written {
            self.wrote(r);
        }
    }

    /// Tells the core how a write ended.
    fn wrote(&mut self, r: std::io::Result<usize>) {
        let now = Instant::now();
        match r {
            Ok(_) => self.in_span(|d| d.core.handle_written(now)),
            Err(e) => self.in_span(|d| d.core.handle_io_error(e, now)),
        }
    }

    /// Takes `first` and whatever else is queued, so that one write carries many requests.
    async fn commands(&mut self, first: Option<Command>) {
        let now = Instant::now();
        let mut next = first;
        let mut taken = 0;
        let mut yielded = false;
        loop {
            match next.take() {
                None => {
                    self.rx_open = false;
                    self.in_span(|d| d.core.handle_handles_gone(now));
                    return;
                }
                Some(cmd) => self.in_span(|d| d.core.handle_command(cmd, now)),
            }
            taken += 1;
            if taken >= COMMAND_BATCH || !self.core.wants_commands() {
                return;
            }
            match self.rx.try_recv() {
                Ok(c) => next = Some(c),
                // Callers just answered (on this thread or another) are likely to send again:
                // yield once so that their requests join this write instead of costing a
                // write (and a server wake-up) each.
                Err(mpsc::error::TryRecvError::Empty)
                    if self.core.expects_commands() && !yielded =>
                {
                    yielded = true;
                    tokio::task::yield_now().await;
                    match self.rx.try_recv() {
                        Ok(c) => next = Some(c),
                        Err(_) => {
                            // They had nothing more to send.
                            self.core.handle_commands_drained();
                            return;
                        }
                    }
                }
                Err(_) => return,
            }
        }
    }
}
