//! [`ZkServer`]: one ZooKeeper server process (standalone or an ensemble member).

use std::{
    fmt,
    fs::{self, File, OpenOptions},
    io::{Read, Seek, SeekFrom, Write},
    net::{Ipv4Addr, SocketAddr},
    path::{Path, PathBuf},
    process::{Child, ExitStatus, Stdio},
    sync::{Arc, Mutex, MutexGuard},
    thread,
    time::{Duration, Instant},
};

use crate::{
    config::{self, Peer},
    four_letter_word, install,
    scratch::ScratchDir,
    sys::{self, Signal},
    HarnessError, Installation, Mode, Result, ServerOptions,
};

/// How long a graceful [`ZkServer::stop`] waits before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// How long pause() waits for every thread to stop.
const PAUSE_WITHIN: Duration = Duration::from_secs(10);
/// Timeout of one `srvr` while polling for health.
const POLL_SRVR_TIMEOUT: Duration = Duration::from_millis(500);
/// Default timeout of [`ZkServer::srvr`].
pub const SRVR_TIMEOUT: Duration = Duration::from_secs(2);

/// One ZooKeeper server process with its own scratch directory (zoo.cfg, `data/`,
/// `server.log`) and fixed ports on 127.0.0.1.
///
/// All methods take `&self` (the process handle is behind a mutex), so a server can be shared
/// between threads and tasks. Dropping it kills the process (SIGKILL) and removes the
/// directory. The process also dies with the test process if that is killed; see
/// [`crate::spawner`].
///
/// Usually obtained from [`crate::Standalone`] or [`crate::Ensemble`].
pub struct ZkServer {
    name: String,
    install: &'static Installation,
    opts: Arc<ServerOptions>,
    client_port: u16,
    secure_client_port: Option<u16>,
    peer: Option<Peer>,
    cfg_path: PathBuf,
    log_path: PathBuf,
    proc: Mutex<Option<Proc>>,
    // Dropped last: the process must be dead before its directory goes.
    dir: ScratchDir,
}

struct Proc {
    child: Child,
    paused: bool,
    /// Length of the log when this process was started, to look only at its own lines.
    log_start: u64,
}

impl fmt::Debug for ZkServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZkServer")
            .field("name", &self.name)
            .field("client_port", &self.client_port)
            .field("peer", &self.peer)
            .field("dir", &self.dir.path())
            .field("pid", &self.pid())
            .finish()
    }
}

impl ZkServer {
    /// Prepares (does not start) a server: scratch dir, zoo.cfg, and `myid` for ensemble
    /// members. `peers` lists every member including this one (`me`), or is empty.
    pub(crate) fn prepare(
        opts: Arc<ServerOptions>,
        client_port: u16,
        me: Option<Peer>,
        peers: &[Peer],
    ) -> Result<ZkServer> {
        let install = install::ensure_installed()?;
        let (name, tag) = match me {
            Some(p) => (
                format!("ensemble member {} (127.0.0.1:{client_port})", p.id),
                format!("member{}", p.id),
            ),
            None => (
                format!("standalone server 127.0.0.1:{client_port}"),
                "standalone".to_string(),
            ),
        };
        let dir = ScratchDir::new(&tag)?;
        let data_dir = dir.path().join("data");
        fs::create_dir_all(&data_dir)
            .map_err(|e| HarnessError::io(format!("creating {}", data_dir.display()), e))?;
        if let Some(p) = me {
            write_file(&data_dir.join("myid"), &format!("{}\n", p.id))?;
        }
        if let Some(sasl) = &opts.sasl {
            let member = me.map_or(0, |p| p.id as usize - 1);
            write_file(&dir.path().join(crate::sasl::JAAS_FILE), &sasl.jaas(member))?;
        }
        let cfg_path = dir.path().join("zoo.cfg");
        let secure_client_port = match opts.tls {
            Some(_) => Some(crate::ports::free_port()?),
            None => None,
        };
        write_file(
            &cfg_path,
            &config::zoo_cfg(&opts, &data_dir, client_port, secure_client_port, peers),
        )?;
        Ok(ZkServer {
            name,
            install,
            opts,
            client_port,
            secure_client_port,
            peer: me,
            cfg_path,
            log_path: dir.path().join("server.log"),
            proc: Mutex::new(None),
            dir,
        })
    }

    /// The client address, `127.0.0.1:port`.
    pub fn client_addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.client_port))
    }

    /// The client port.
    pub fn client_port(&self) -> u16 {
        self.client_port
    }

    /// `127.0.0.1:port`, for a client's connect string.
    pub fn connect_string(&self) -> String {
        self.client_addr().to_string()
    }

    /// The secure (TLS) client port, when the options have [`tls`](ServerOptions::tls).
    pub fn secure_client_port(&self) -> Option<u16> {
        self.secure_client_port
    }

    /// `127.0.0.1:secure-port`, for a TLS client's connect string. Panics without
    /// [`tls`](ServerOptions::tls) in the options.
    pub fn secure_connect_string(&self) -> String {
        let port = self
            .secure_client_port
            .expect("the server has no secure client port: set ServerOptions::tls");
        SocketAddr::from((Ipv4Addr::LOCALHOST, port)).to_string()
    }

    /// The member's `myid`, `None` for a standalone server.
    pub fn myid(&self) -> Option<u32> {
        self.peer.map(|p| p.id)
    }

    /// The member's quorum identity and ports, `None` for a standalone server.
    pub fn peer(&self) -> Option<Peer> {
        self.peer
    }

    /// The scratch directory (zoo.cfg, `data/`, `server.log`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The server's stdout/stderr log (appended across restarts).
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// The options the server runs with.
    pub fn options(&self) -> &ServerOptions {
        &self.opts
    }

    /// The last `lines` lines of the server log.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = read_log_from(&self.log_path, 0, 256 * 1024);
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// The JVM's process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.lock().as_ref().map(|p| p.child.id())
    }

    /// Whether the process is alive (a paused process counts as alive).
    pub fn is_running(&self) -> bool {
        let mut guard = self.lock();
        reap_if_exited(&mut guard);
        guard.is_some()
    }

    /// Whether the process is alive and frozen by [`pause`](Self::pause).
    pub fn is_paused(&self) -> bool {
        let mut guard = self.lock();
        reap_if_exited(&mut guard);
        guard.as_ref().is_some_and(|p| p.paused)
    }

    /// Starts the process if it is not running and waits until it serves (see
    /// [`wait_healthy`](Self::wait_healthy)). Same ports and data directory as before.
    pub fn start(&self) -> Result<Mode> {
        self.start_no_wait()?;
        self.wait_healthy(self.opts.startup_timeout)
    }

    /// Starts the process if it is not running, without waiting. Use this for an ensemble
    /// member that cannot serve until others are up.
    pub fn start_no_wait(&self) -> Result<()> {
        let mut guard = self.lock();
        reap_if_exited(&mut guard);
        if guard.is_some() {
            return Ok(());
        }
        let mut log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_path)
            .map_err(|e| HarnessError::io(format!("opening {}", self.log_path.display()), e))?;
        let log_start = log.seek(SeekFrom::End(0)).unwrap_or(0);
        let _ = writeln!(log, "=== zk-testkit: starting {} ===", self.name);
        let log_err = log
            .try_clone()
            .map_err(|e| HarnessError::io("duplicating the log handle", e))?;
        let mut cmd = config::jvm_command(self.install, &self.opts, &self.cfg_path);
        cmd.current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log_err));
        let child = cmd.spawn().map_err(|e| {
            HarnessError::io(
                format!("starting {} ({})", self.name, self.install.java.display()),
                e,
            )
        })?;
        *guard = Some(Proc {
            child,
            paused: false,
            log_start,
        });
        Ok(())
    }

    /// Stops the process if running, then [`start`](Self::start)s it again with the same
    /// ports and data directory, waiting until it serves.
    pub fn restart(&self) -> Result<Mode> {
        self.stop()?;
        self.start()
    }

    /// Kills the process with SIGKILL (no clean shutdown) and reaps it. No-op if not running.
    pub fn kill9(&self) {
        let mut guard = self.lock();
        if let Some(mut p) = guard.take() {
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }

    /// Stops the process with SIGTERM (after SIGCONT if paused) and waits for it to exit;
    /// SIGKILL after 10 s. No-op if not running.
    pub fn stop(&self) -> Result<()> {
        let mut guard = self.lock();
        let Some(mut p) = guard.take() else {
            return Ok(());
        };
        let pid = p.child.id();
        if matches!(p.child.try_wait(), Ok(Some(_))) {
            return Ok(());
        }
        let _ = sys::send_signal(pid, Signal::Term);
        if p.paused {
            let _ = sys::send_signal(pid, Signal::Cont);
        }
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline {
            match p.child.try_wait() {
                Ok(Some(_)) => return Ok(()),
                Ok(None) => thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(HarnessError::io(format!("waiting for {}", self.name), e)),
            }
        }
        let _ = p.child.kill();
        let _ = p.child.wait();
        Ok(())
    }

    /// Freezes the process (SIGSTOP): its sockets stay open but nothing answers, like a hung
    /// or partitioned server. Returns once every thread of it has stopped (a loaded machine
    /// can take a while), so that nothing answers after this returns. Errors if not running,
    /// or if it has not stopped within 10 s.
    pub fn pause(&self) -> Result<()> {
        self.signal_running(Signal::Stop, true)?;
        let Some(pid) = self.pid() else {
            return Err(HarnessError::NotRunning {
                what: self.name.clone(),
            });
        };
        match sys::wait_stopped(pid, PAUSE_WITHIN) {
            Ok(true) => Ok(()),
            Ok(false) => Err(HarnessError::io(
                format!("pausing {}", self.name),
                std::io::Error::other(format!("not stopped after {PAUSE_WITHIN:?}")),
            )),
            Err(e) => Err(HarnessError::io(format!("pausing {}", self.name), e)),
        }
    }

    /// Thaws a paused process (SIGCONT). Errors if not running.
    pub fn resume(&self) -> Result<()> {
        self.signal_running(Signal::Cont, false)
    }

    fn signal_running(&self, sig: Signal, paused: bool) -> Result<()> {
        let mut guard = self.lock();
        reap_if_exited(&mut guard);
        let p = guard.as_mut().ok_or_else(|| HarnessError::NotRunning {
            what: self.name.clone(),
        })?;
        sys::send_signal(p.child.id(), sig)
            .map_err(|e| HarnessError::io(format!("sending {sig:?} to {}", self.name), e))?;
        p.paused = paused;
        Ok(())
    }

    /// The answer to the four-letter word `srvr` (2 s timeout).
    pub fn srvr(&self) -> Result<String> {
        self.four_letter(self::SRVR_TIMEOUT, "srvr")
    }

    /// Sends any four-letter word (`stat`, `cons`, `wchs`, `dump`, `conf`, …).
    pub fn four_letter(&self, timeout: Duration, word: &str) -> Result<String> {
        four_letter_word(self.client_addr(), word, timeout)
            .map_err(|e| HarnessError::io(format!("sending `{word}` to {}", self.name), e))
    }

    /// The server's current role, `None` when it does not answer or is not serving.
    pub fn mode(&self) -> Option<Mode> {
        self.mode_within(SRVR_TIMEOUT)
    }

    pub(crate) fn mode_within(&self, timeout: Duration) -> Option<Mode> {
        four_letter_word(self.client_addr(), "srvr", timeout)
            .ok()
            .and_then(|s| Mode::from_srvr(&s))
    }

    /// Waits until `srvr` reports a `Mode:` (the server serves clients).
    ///
    /// Fails early, with the tail of the server log, when the process exits; with
    /// [`HarnessError::PortInUse`] when it could not bind a port.
    pub fn wait_healthy(&self, timeout: Duration) -> Result<Mode> {
        let deadline = Instant::now() + timeout;
        let mut next_log_check = Instant::now() + Duration::from_millis(500);
        loop {
            self.check_alive()?;
            let left = deadline.saturating_duration_since(Instant::now());
            if let Some(mode) = self.mode_within(POLL_SRVR_TIMEOUT.min(left)) {
                return Ok(mode);
            }
            if Instant::now() >= next_log_check {
                next_log_check = Instant::now() + Duration::from_millis(500);
                if self.current_log().contains("Address already in use") {
                    self.kill9();
                    return Err(self.port_in_use());
                }
            }
            if Instant::now() >= deadline {
                return Err(HarnessError::StartTimeout {
                    what: self.name.clone(),
                    timeout,
                    log: self.log_path.clone(),
                    log_tail: self.log_tail(40),
                });
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Errors when the process is not running, telling why it exited.
    fn check_alive(&self) -> Result<()> {
        let mut guard = self.lock();
        let Some(p) = guard.as_mut() else {
            return Err(HarnessError::NotRunning {
                what: self.name.clone(),
            });
        };
        let status: ExitStatus = match p.child.try_wait() {
            Ok(None) => return Ok(()),
            Ok(Some(status)) => status,
            Err(e) => return Err(HarnessError::io(format!("waiting for {}", self.name), e)),
        };
        let log_start = p.log_start;
        *guard = None;
        drop(guard);
        if read_log_from(&self.log_path, log_start, 1 << 20).contains("Address already in use") {
            return Err(self.port_in_use());
        }
        Err(HarnessError::Exited {
            what: self.name.clone(),
            status: status.to_string(),
            log: self.log_path.clone(),
            log_tail: self.log_tail(40),
        })
    }

    fn port_in_use(&self) -> HarnessError {
        let mut ports = vec![self.client_port];
        ports.extend(self.secure_client_port);
        if let Some(p) = self.peer {
            ports.extend([p.peer_port, p.election_port]);
        }
        HarnessError::PortInUse {
            what: self.name.clone(),
            ports,
            log_tail: self.log_tail(20),
        }
    }

    /// The log written by the current process.
    fn current_log(&self) -> String {
        let start = self.lock().as_ref().map_or(0, |p| p.log_start);
        read_log_from(&self.log_path, start, 1 << 20)
    }

    fn lock(&self) -> MutexGuard<'_, Option<Proc>> {
        self.proc.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for ZkServer {
    fn drop(&mut self) {
        self.kill9();
    }
}

fn reap_if_exited(guard: &mut Option<Proc>) {
    if let Some(p) = guard.as_mut() {
        if !matches!(p.child.try_wait(), Ok(None)) {
            *guard = None;
        }
    }
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    fs::write(path, text).map_err(|e| HarnessError::io(format!("writing {}", path.display()), e))
}

/// Reads at most `max` bytes of the end of `path`, starting no earlier than `from`.
fn read_log_from(path: &Path, from: u64, max: u64) -> String {
    let Ok(mut f) = File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = from.max(len.saturating_sub(max));
    if f.seek(SeekFrom::Start(start)).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use super::*;
    use crate::ports;

    fn taken_port() -> (TcpListener, u16) {
        let port = ports::free_port().unwrap();
        (
            TcpListener::bind((Ipv4Addr::LOCALHOST, port)).unwrap(),
            port,
        )
    }

    #[test]
    fn a_taken_client_port_is_reported_as_port_in_use() {
        let (_hold, port) = taken_port();
        let opts = Arc::new(ServerOptions::default());
        let server = ZkServer::prepare(opts, port, None, &[]).unwrap();
        server.start_no_wait().unwrap();
        let t = Instant::now();
        let err = server.wait_healthy(Duration::from_secs(30)).unwrap_err();
        assert!(
            matches!(err, HarnessError::PortInUse { ref ports, .. } if ports == &[port]),
            "{err}"
        );
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(!server.is_running());
    }

    #[test]
    fn a_taken_election_port_is_reported_as_port_in_use() {
        let (_hold, election_port) = taken_port();
        let ports = ports::free_ports(5).unwrap();
        let me = Peer {
            id: 1,
            peer_port: ports[0],
            election_port,
            client_port: ports[1],
        };
        let other = Peer {
            id: 2,
            peer_port: ports[2],
            election_port: ports[3],
            client_port: ports[4],
        };
        let opts = Arc::new(ServerOptions::default());
        let server = ZkServer::prepare(opts, me.client_port, Some(me), &[me, other]).unwrap();
        server.start_no_wait().unwrap();
        let t = Instant::now();
        let err = server.wait_healthy(Duration::from_secs(30)).unwrap_err();
        assert!(matches!(err, HarnessError::PortInUse { .. }), "{err}");
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }
}
