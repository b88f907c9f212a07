//! The session task: a thin tokio shell around [`SessionCore`] that moves bytes between the
//! socket and the core, runs the core's actions (connect, disconnect, probe) and sleeps until
//! its next deadline. Everything the session decides is decided in the core.

use std::{
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
};

use crate::{
    callers::Callers,
    connection::{self, ConnectFailure, Connection},
    deadline_grid, jitter,
    security::Security,
    senders::Command,
    session::{Action, Config, Output, Phase, SessionCore},
    shared::Shared,
    trace::{self, Spans},
};
use rand::seq::SliceRandom;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    sync::mpsc,
    task::JoinHandle,
    time::{sleep_until, Sleep},
};

use std::time::Instant;

/// Now, by tokio's clock (which a paused test clock moves), as the core takes it.
fn clock() -> Instant {
    tokio::time::Instant::now().into_std()
}

type Attempt = Pin<Box<dyn Future<Output = Result<Connection, ConnectFailure>> + Send>>;
type TlsProbe = Pin<Box<dyn Future<Output = Option<bool>> + Send>>;

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
    let core = SessionCore::new(cfg, seed, clock());
    let driver = Driver {
        core,
        shared,
        callers: Callers::default(),
        rx,
        rx_open: true,
        hosts,
        security,
        conn: None,
        attempt: None,
        attempt_host: 0,
        probe: None,
        tls_probe: None,
        #[cfg(feature = "sasl")]
        sasl: None,
        spans,
        gathering: false,
        gathered: false,
    };
    tokio::spawn(Box::new(driver).run());
}

struct Driver {
    core: SessionCore,
    /// What the handle reads: written here, from the core's outputs.
    shared: Arc<Shared>,
    /// The channels of everyone waiting for the session, by the keys the core knows.
    callers: Callers,
    rx: mpsc::UnboundedReceiver<Command>,
    /// False once every handle is gone.
    rx_open: bool,
    hosts: Vec<(String, u16)>,
    security: Security,
    conn: Option<Connection>,
    attempt: Option<Attempt>,
    attempt_host: usize,
    probe: Option<JoinHandle<usize>>,
    /// Whether a host that hung up on a plain handshake answers in plain at all.
    tls_probe: Option<(usize, TlsProbe)>,
    /// A SASL mechanism's call on the blocking pool, for the attempt numbered so.
    #[cfg(feature = "sasl")]
    sasl: Option<(u64, JoinHandle<crate::sasl::SaslDone>)>,
    /// Entered around every call into the core, so its events land in the right span.
    spans: Spans,
    /// Yielded for the callers just answered to send their next requests.
    gathering: bool,
    /// A yield has gathered commands since the queue last ran dry: no second yield until it
    /// runs dry again.
    gathered: bool,
}

/// Most commands taken in one go, so that one write carries many requests but reads and
/// timers still get their turn.
const COMMAND_BATCH: usize = 1024;

impl Driver {
    /// Boxed: an async fn keeps its argument twice in its future (once as passed, once as
    /// moved into the body), and the future's size is every idle session's.
    async fn run(mut self: Box<Self>) {
        let timer = sleep_until(tokio::time::Instant::now());
        tokio::pin!(timer);
        let mut armed: Option<Armed> = None;
        loop {
            self.run_actions().await;
            if self.core.is_ended() && !self.rx_open {
                break;
            }
            let step = std::future::poll_fn(|cx| self.poll_step(cx, timer.as_mut(), &mut armed));
            match step.await {
                Step::Again => {}
                // Boxed, like every await off the request path: the future's size is every
                // idle session's, and this one (a TCP probe) is large.
                Step::HungUp(now) => self.in_span(|d| d.core.handle_disconnected(now)),
                #[cfg(feature = "sasl")]
                Step::SaslDone(attempt, done) => {
                    let now = clock();
                    self.in_span(|d| d.core.handle_sasl_done(attempt, done, now))
                }
                Step::TlsProbed(host, plain) => {
                    let now = clock();
                    self.in_span(|d| d.core.handle_tls_probe(host, plain, now))
                }
                Step::Attempted(r) => self.attempted(r),
                Step::Probed(host) => {
                    self.in_span(|d| d.core.handle_read_write_found(host, clock()))
                }
            }
        }
    }

    /// Moves bytes and commands until every source (socket, commands, timer, attempt, probe)
    /// is pending, or something needs the async part of the loop: the core's actions, a
    /// hang-up, the end of an attempt or a probe. Each source is polled until it is pending
    /// once: a pending source holds the task's waker, so polling it again in the same call
    /// would only repeat the work (one pass per wake-up, not two, for thousands of idle
    /// sessions and for every batch of requests).
    fn poll_step(
        &mut self,
        cx: &mut Context<'_>,
        mut timer: Pin<&mut Sleep>,
        armed: &mut Option<Armed>,
    ) -> Poll<Step> {
        let mut pending = Registered::default();
        loop {
            let mut progress = false;
            if armed.is_some() && !pending.timer {
                match self.poll_timer(cx, timer.as_mut(), armed) {
                    Poll::Ready(()) => progress = true,
                    Poll::Pending => pending.timer = true,
                }
            }
            // Actions first: one may end the connection that the sources below would use.
            if self.core.has_actions() {
                return Poll::Ready(Step::Again);
            }
            if self.conn.is_some() && !pending.read {
                match self.poll_read(cx) {
                    Poll::Ready(Some(step)) => return Poll::Ready(step),
                    Poll::Ready(None) => progress = true,
                    Poll::Pending => pending.read = true,
                }
                if self.core.has_actions() {
                    return Poll::Ready(Step::Again);
                }
            }
            if self.takes_commands() && !pending.commands {
                let (taken, dry) = self.poll_commands(cx);
                if self.gathering {
                    return Poll::Pending;
                }
                progress |= taken;
                pending.commands = dry;
                if self.core.has_actions() {
                    return Poll::Ready(Step::Again);
                }
            }
            // Written once the command queue is dry, so that one write carries every request
            // queued. Not held back for more replies: at large windows the server would then
            // wait for requests while this client reads (0.84x the raw loop at window 512).
            let quiet = pending.commands || !self.takes_commands();
            let writing = self.conn.is_some() && !self.core.transmit().is_empty();
            if writing && quiet && !pending.write {
                match self.poll_write(cx) {
                    Poll::Ready(()) => progress = true,
                    Poll::Pending => pending.write = true,
                }
            }
            if let Some(a) = self.attempt.as_mut() {
                if let Poll::Ready(r) = a.as_mut().poll(cx) {
                    self.attempt = None;
                    return Poll::Ready(Step::Attempted(r));
                }
            }
            #[cfg(feature = "sasl")]
            if let Some((attempt, work)) = self.sasl.as_mut() {
                if let Poll::Ready(r) = Pin::new(work).poll(cx) {
                    let attempt = *attempt;
                    self.sasl = None;
                    let done = r.unwrap_or_else(|e| {
                        let why = format!("the mechanism's call failed: {e}");
                        crate::sasl::SaslDone::failed(crate::SaslError::new(why))
                    });
                    return Poll::Ready(Step::SaslDone(attempt, done));
                }
            }
            if let Some((host, p)) = self.tls_probe.as_mut() {
                if let Poll::Ready(plain) = p.as_mut().poll(cx) {
                    let host = *host;
                    self.tls_probe = None;
                    return Poll::Ready(Step::TlsProbed(host, plain));
                }
            }
            if let Some(p) = self.probe.as_mut() {
                if let Poll::Ready(found) = Pin::new(p).poll(cx) {
                    self.probe = None;
                    if let Ok(host) = found {
                        return Poll::Ready(Step::Probed(host));
                    }
                }
            }
            if self.core.has_actions() || (self.core.is_ended() && !self.rx_open) {
                return Poll::Ready(Step::Again);
            }
            // Armed once the pass has settled, not after each source: a ping written in the
            // pass would otherwise re-arm the timer twice (the read deadline, then the ping's).
            if !progress && self.arm(timer.as_mut(), armed) {
                pending.timer = false;
                progress = true;
            }
            if !progress {
                return Poll::Pending;
            }
        }
    }

    fn takes_commands(&self) -> bool {
        self.rx_open && self.core.wants_commands()
    }

    /// An earlier deadline re-arms the timer; a later one waits for it to fire (the core
    /// ignores early calls), which spares a reset per write. Far deadlines wake on a grid
    /// that idle sessions share. Returns whether it re-armed: the timer must then be polled,
    /// so that it holds the task's waker.
    fn arm(&self, timer: Pin<&mut Sleep>, armed: &mut Option<Armed>) -> bool {
        let Some(t) = self.core.poll_timeout() else {
            return false;
        };
        // The timer wakes at or before `t`; or `t` is the deadline it was armed for (most
        // passes find the same one), which then needs no clock or grid again.
        if armed.is_some_and(|a| t >= a.at || t == a.deadline) {
            return false;
        }
        let at = deadline_grid::wake_at(t, clock());
        if let Some(a) = armed.as_mut().filter(|a| at >= a.at) {
            // The timer wakes at or before `at` already.
            a.deadline = t;
            return false;
        }
        timer.reset(tokio::time::Instant::from_std(at));
        *armed = Some(Armed { deadline: t, at });
        true
    }

    /// The timer: when it fires, the core's deadlines are handled.
    fn poll_timer(
        &mut self,
        cx: &mut Context<'_>,
        timer: Pin<&mut Sleep>,
        armed: &mut Option<Armed>,
    ) -> Poll<()> {
        std::task::ready!(timer.poll(cx));
        *armed = None;
        let now = clock();
        if let Some(c) = self.conn.as_mut() {
            c.shrink_if_idle(now);
        }
        self.callers.shrink_if_idle();
        self.in_span(|d| d.core.handle_timeout(now));
        Poll::Ready(())
    }

    /// One read: `Some` when the hang-up needs the async part of the loop.
    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Option<Step>> {
        let Some(c) = self.conn.as_mut() else {
            return Poll::Pending;
        };
        c.reserve_read();
        let r = std::task::ready!(std::pin::pin!(c.rd.read_buf(&mut c.rbuf)).poll(cx));
        let now = clock();
        match r {
            Ok(0) => return Poll::Ready(Some(Step::HungUp(now))),
            Err(e) => self.in_span(|d| d.core.handle_io_error(e, now)),
            Ok(_) => {
                c.read_done(now);
                self.input(now);
            }
        }
        Poll::Ready(None)
    }

    /// One write of what the core has to send.
    fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Driver { core, conn, .. } = self;
        let Some(c) = conn.as_mut() else {
            return Poll::Pending;
        };
        let r = std::task::ready!(std::pin::pin!(c.wr.write_buf(core.transmit())).poll(cx));
        self.wrote(r);
        Poll::Ready(())
    }

    /// Takes the commands queued, up to [`COMMAND_BATCH`] (then the task wakes itself, so that
    /// reads and timers get their turn). When the queue runs dry right after callers were
    /// answered, it yields once first: those callers (on this thread they run first) are
    /// likely to send again, and their requests then share one write instead of costing a
    /// write (and a server wake-up) each.
    /// Returns whether it took any, and whether the queue was found empty (holding the
    /// task's waker).
    fn poll_commands(&mut self, cx: &mut Context<'_>) -> (bool, bool) {
        // Read from the clock only if a command came: most wake-ups bring none.
        let mut now = None;
        let mut now = || *now.get_or_insert_with(clock);
        let mut taken = 0;
        loop {
            match self.rx.poll_recv(cx) {
                Poll::Ready(None) => {
                    self.rx_open = false;
                    self.gathering = false;
                    let now = now();
                    self.in_span(|d| d.core.handle_handles_gone(now));
                    return (true, false);
                }
                Poll::Ready(Some(cmd)) => {
                    let now = now();
                    let cmd = self.callers.take(cmd);
                    self.in_span(|d| d.core.handle_command(cmd, now));
                    if self.core.wants_prune() {
                        let Driver { core, callers, .. } = self;
                        core.prune_waiting(|k| callers.take_if_gone(k));
                    }
                    if self.gathering {
                        self.gathering = false;
                        self.gathered = true;
                    }
                    taken += 1;
                    if taken >= COMMAND_BATCH {
                        // Not polled again in this step: the wake brings the task back.
                        cx.waker().wake_by_ref();
                        return (true, true);
                    }
                    if !self.core.wants_commands() {
                        return (true, false);
                    }
                }
                Poll::Pending if self.gathering => {
                    // The yield is over and the callers had nothing more to send.
                    self.gathering = false;
                    self.core.handle_commands_drained();
                    return (taken > 0, true);
                }
                Poll::Pending if taken > 0 && self.core.expects_commands() && !self.gathered => {
                    // Yield once (`yield_now` puts the task behind the callers just woken
                    // on this worker); what they send is taken on the next poll.
                    let _ = std::pin::pin!(tokio::task::yield_now()).poll(cx);
                    self.gathering = true;
                    return (true, true);
                }
                Poll::Pending => {
                    self.gathered = false;
                    return (taken > 0, true);
                }
            }
        }
    }

    /// Runs `f`, a call into the core, inside the current connection's span (or the
    /// session's between connections), then applies what the core said.
    fn in_span<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let span = self.spans.current();
        let r = span.in_scope(|| f(self));
        self.apply_outputs();
        r
    }

    /// Applies the core's outputs in order: replies, watch events, states.
    fn apply_outputs(&mut self) {
        while let Some(o) = self.core.poll_output() {
            match o {
                // The session span gets its session id.
                Output::Established { session_id } => self.spans.session_known(session_id),
                o => self.callers.apply(o, &self.shared),
            }
        }
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
                    self.tls_probe = None;
                    // A mechanism's call under way finishes on its own; its end is dropped.
                    #[cfg(feature = "sasl")]
                    {
                        self.sasl = None;
                    }
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
                #[cfg(feature = "sasl")]
                Action::Sasl { attempt, work } if work.blocks() => {
                    // Kerberos may ask the KDC: off the runtime's threads, so that even a
                    // current-thread runtime runs on meanwhile.
                    let span = self.spans.current();
                    let work = tokio::task::spawn_blocking(move || span.in_scope(|| work.run()));
                    self.sasl = Some((attempt, work));
                }
                #[cfg(feature = "sasl")]
                Action::Sasl { attempt, work } => {
                    let done = work.run();
                    let now = clock();
                    self.in_span(|d| d.core.handle_sasl_done(attempt, done, now));
                }
                Action::ProbeTls { host } => {
                    let (h, p) = self.hosts[host].clone();
                    let probe = async move { connection::answers_plain(&h, p).await };
                    self.tls_probe = Some((host, Box::pin(self.spans.instrument(probe))));
                }
                Action::ProbeReadWrite { skip } => {
                    let hosts = self.hosts.clone();
                    let probe =
                        connection::find_read_write_server(hosts, skip, self.security.clone());
                    self.probe = Some(tokio::spawn(self.spans.instrument(probe)));
                }
            }
        }
    }

    /// Hands the end of a connection attempt to the core, inside the attempt's span.
    fn attempted(&mut self, r: Result<Connection, ConnectFailure>) {
        let (host, now) = (self.attempt_host, clock());
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
        if matches!(self.core.phase(), Phase::Handshaking { .. }) && self.core.has_waiting() {
            // The end of the handshake sends the waiting requests: not those of callers who
            // gave up meanwhile.
            let Driver { core, callers, .. } = self;
            core.prune_waiting(|k| callers.take_if_gone(k));
        }
        self.in_span(|d| {
            let c = d.conn.as_mut().expect("connected");
            d.core.handle_input(&mut c.rbuf, now);
        });
        self.shared.zxid_seen(self.core.last_zxid());
    }

    /// Tells the core how a write ended.
    fn wrote(&mut self, r: std::io::Result<usize>) {
        let now = clock();
        match r {
            Ok(_) => self.in_span(|d| d.core.handle_written(now)),
            Err(e) => self.in_span(|d| d.core.handle_io_error(e, now)),
        }
    }
}

/// What the async part of the loop has to do after [`Driver::poll_step`].
enum Step {
    /// The core has actions, or the session is over.
    Again,
    HungUp(Instant),
    /// What the probe of [`Action::ProbeTls`] found for a host.
    TlsProbed(usize, Option<bool>),
    /// A SASL mechanism's call is over.
    #[cfg(feature = "sasl")]
    SaslDone(u64, crate::sasl::SaslDone),
    Attempted(Result<Connection, ConnectFailure>),
    Probed(usize),
}

/// What the timer is armed for: the core's deadline, and when the timer wakes for it (on the
/// grid for far deadlines).
#[derive(Clone, Copy)]
struct Armed {
    deadline: Instant,
    at: Instant,
}

/// The sources found pending in this call of `poll_step`: each holds the task's waker.
#[derive(Default)]
struct Registered {
    timer: bool,
    read: bool,
    commands: bool,
    write: bool,
}
