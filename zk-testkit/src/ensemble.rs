//! [`Ensemble`]: a quorum of ZooKeeper servers on 127.0.0.1.

use std::{
    fmt::Write as _,
    net::SocketAddr,
    sync::Arc,
    thread,
    time::{Duration, Instant},
};

use crate::{
    config::Peer, options::forward_option_setters, ports, standalone::PORT_ATTEMPTS, HarnessError,
    Mode, Result, ServerOptions, ZkServer,
};

/// `srvr` timeout while polling members.
const POLL_TIMEOUT: Duration = Duration::from_millis(500);

/// A ZooKeeper ensemble (`server.N=127.0.0.1:peer:election;127.0.0.1:client` lines, a
/// `myid` per member), serving with one leader when returned.
///
/// Members are indexed from 0; member `i` has `myid` `i + 1`. Dropping the ensemble kills
/// every member and removes their files.
///
/// ```no_run
/// use zk_testkit::{Ensemble, Mode};
/// let ens = Ensemble::start(3).unwrap();
/// let leader = ens.leader_index().unwrap();
/// ens.server(leader).stop().unwrap();
/// let new_leader = ens.wait_healthy(std::time::Duration::from_secs(30)).unwrap();
/// assert_ne!(leader, new_leader);
/// ```
#[derive(Debug)]
pub struct Ensemble {
    servers: Vec<ZkServer>,
    opts: Arc<ServerOptions>,
}

impl Ensemble {
    /// Starts `size` members with the default [`ServerOptions`] (tickTime 200).
    pub fn start(size: usize) -> Result<Ensemble> {
        Ensemble::builder().size(size).start()
    }

    /// A builder for non-default options (default size 3).
    pub fn builder() -> EnsembleBuilder {
        EnsembleBuilder::default()
    }

    /// `127.0.0.1:p1,127.0.0.1:p2,…` for every member, in index order.
    pub fn connect_string(&self) -> String {
        self.servers
            .iter()
            .map(ZkServer::connect_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `127.0.0.1:s1,127.0.0.1:s2,…`: every member's secure client port, in index order.
    /// Panics without [`tls`](ServerOptions::tls) in the options.
    pub fn secure_connect_string(&self) -> String {
        self.servers
            .iter()
            .map(ZkServer::secure_connect_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Every member's client address, in index order.
    pub fn client_addrs(&self) -> Vec<SocketAddr> {
        self.servers.iter().map(ZkServer::client_addr).collect()
    }

    /// The members.
    pub fn servers(&self) -> &[ZkServer] {
        &self.servers
    }

    /// Member `i` (0-based; its `myid` is `i + 1`). Panics when out of range.
    pub fn server(&self, i: usize) -> &ZkServer {
        &self.servers[i]
    }

    /// Member `i`, mutably (all [`ZkServer`] operations also work through `&`).
    pub fn server_mut(&mut self, i: usize) -> &mut ZkServer {
        &mut self.servers[i]
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// Always false: an ensemble has at least one member.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The options every member runs with.
    pub fn options(&self) -> &ServerOptions {
        &self.opts
    }

    /// The index of the member that currently reports `Mode: leader`.
    pub fn leader_index(&self) -> Option<usize> {
        self.modes().iter().position(|m| *m == Some(Mode::Leader))
    }

    /// Indices of members that currently report `Mode: follower`.
    pub fn follower_indices(&self) -> Vec<usize> {
        self.modes()
            .iter()
            .enumerate()
            .filter(|(_, m)| **m == Some(Mode::Follower))
            .map(|(i, _)| i)
            .collect()
    }

    /// Every member's mode (`None`: not answering or not serving), asked in parallel.
    pub fn modes(&self) -> Vec<Option<Mode>> {
        thread::scope(|s| {
            let asks: Vec<_> = self
                .servers
                .iter()
                .map(|srv| s.spawn(move || srv.is_running().then(|| srv.mode()).flatten()))
                .collect();
            asks.into_iter().map(|h| h.join().ok().flatten()).collect()
        })
    }

    /// Waits until every running, non-paused member serves and exactly one of them is the
    /// leader; returns the leader's index. Members that were stopped, killed or paused by the
    /// test are not waited for.
    pub fn wait_healthy(&self, timeout: Duration) -> Result<usize> {
        let deadline = Instant::now() + timeout;
        loop {
            let states: Vec<(bool, Option<Mode>)> = thread::scope(|s| {
                let asks: Vec<_> = self
                    .servers
                    .iter()
                    .map(|srv| {
                        s.spawn(move || {
                            let active = srv.is_running() && !srv.is_paused();
                            (
                                active,
                                active.then(|| srv.mode_within(POLL_TIMEOUT)).flatten(),
                            )
                        })
                    })
                    .collect();
                asks.into_iter()
                    .map(|h| h.join().unwrap_or((false, None)))
                    .collect()
            });
            let active = states.iter().filter(|(a, _)| *a).count();
            let serving = states.iter().filter(|(a, m)| *a && m.is_some()).count();
            let leaders: Vec<usize> = states
                .iter()
                .enumerate()
                .filter(|(_, (_, m))| *m == Some(Mode::Leader))
                .map(|(i, _)| i)
                .collect();
            if active > 0 && serving == active && leaders.len() == 1 {
                return Ok(leaders[0]);
            }
            if Instant::now() >= deadline {
                let mut detail = String::new();
                for (i, (srv, (a, m))) in self.servers.iter().zip(&states).enumerate() {
                    let state = match (a, m) {
                        (false, _) if srv.is_paused() => "paused".to_string(),
                        (false, _) => "not running".to_string(),
                        (true, None) => "not serving".to_string(),
                        (true, Some(m)) => format!("{m:?}"),
                    };
                    let _ = write!(detail, "\n  member {i} ({}): {state}", srv.connect_string());
                }
                if let Some(i) = states.iter().position(|(a, m)| *a && m.is_none()) {
                    let _ = write!(
                        detail,
                        "\n--- last lines of {} ---\n{}",
                        self.servers[i].log_path().display(),
                        self.servers[i].log_tail(30)
                    );
                }
                return Err(HarnessError::EnsembleUnhealthy { timeout, detail });
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Options for [`Ensemble`]; see [`ServerOptions`] for each setting.
#[derive(Debug, Clone)]
pub struct EnsembleBuilder {
    size: usize,
    options: ServerOptions,
}

impl Default for EnsembleBuilder {
    fn default() -> Self {
        EnsembleBuilder {
            size: 3,
            options: ServerOptions::default(),
        }
    }
}

impl EnsembleBuilder {
    forward_option_setters!(options);

    /// The number of members (default 3).
    pub fn size(mut self, size: usize) -> Self {
        self.size = size;
        self
    }

    /// Starts every member and waits until the ensemble is healthy (one leader, everyone
    /// serving).
    pub fn start(self) -> Result<Ensemble> {
        assert!(self.size > 0, "an ensemble needs at least one member");
        let opts = Arc::new(self.options);
        let mut attempt = 0;
        loop {
            attempt += 1;
            match start_once(self.size, &opts) {
                Err(HarnessError::PortInUse { .. }) if attempt < PORT_ATTEMPTS => continue,
                other => return other,
            }
        }
    }
}

fn start_once(size: usize, opts: &Arc<ServerOptions>) -> Result<Ensemble> {
    let ports = ports::free_ports(size * 3)?;
    let peers: Vec<Peer> = (0..size)
        .map(|i| Peer {
            id: i as u32 + 1,
            peer_port: ports[3 * i],
            election_port: ports[3 * i + 1],
            client_port: ports[3 * i + 2],
        })
        .collect();
    let servers = peers
        .iter()
        .map(|p| ZkServer::prepare(opts.clone(), p.client_port, Some(*p), &peers))
        .collect::<Result<Vec<_>>>()?;
    for s in &servers {
        s.start_no_wait()?;
    }
    // A member that exits (for example on a taken port) fails its own wait at once.
    let deadline = Instant::now() + opts.startup_timeout;
    thread::scope(|s| {
        let waits: Vec<_> = servers
            .iter()
            .map(|srv| s.spawn(move || srv.wait_healthy(opts.startup_timeout)))
            .collect();
        waits
            .into_iter()
            .map(|h| h.join().expect("wait_healthy panicked"))
            .collect::<Result<Vec<_>>>()
    })?;
    let ensemble = Ensemble {
        servers,
        opts: opts.clone(),
    };
    ensemble.wait_healthy(
        deadline
            .saturating_duration_since(Instant::now())
            .max(POLL_TIMEOUT),
    )?;
    Ok(ensemble)
}
