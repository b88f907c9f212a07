//! A new server list at run time ([`Client::update_server_list`](crate::Client)): the
//! connection moves only when [`rebalance`] says so; attempts under way are kept when their
//! server is still listed.

use rand::RngExt;
use std::time::Instant;

use super::{
    rebalance::{rebalance, Addr, Rebalance},
    Action, Drop_, Phase, SessionCore,
};
use crate::trace;

impl SessionCore {
    /// Replaces the server list with `hosts` (not empty).
    pub(super) fn update_hosts(&mut self, hosts: Vec<Addr>, now: Instant) {
        if hosts == self.cfg.hosts {
            return;
        }
        let old = std::mem::replace(&mut self.cfg.hosts, hosts);
        let n = self.cfg.hosts.len();
        let (draw, pick) = {
            let rng = self.reconnect.rng();
            (rng.random_range(0.0..1.0), rng.random_range(0..n))
        };
        trace::info!(servers = n, "new server list");
        self.actions
            .push_back(Action::ServerList(self.cfg.hosts.clone()));
        let index_of = |hosts: &[Addr], h: usize| hosts.iter().position(|a| *a == old[h]);
        match self.phase {
            Phase::Connected {
                host,
                since,
                read_only,
            } => match rebalance(&old, &self.cfg.hosts, &old[host], draw, pick) {
                Rebalance::Stay { index } => {
                    self.phase = Phase::Connected {
                        host: index,
                        since,
                        read_only,
                    };
                    self.reconnect.next_host = (index + 1) % n;
                }
                Rebalance::Move { index } => {
                    trace::info!(
                        from = %trace::Server(&old[host]),
                        to = %trace::Server(&self.cfg.hosts[index]),
                        "moving to another server of the new list"
                    );
                    // The connection's own index must stay valid until it has ended.
                    self.phase = Phase::Connected {
                        host: index,
                        since,
                        read_only,
                    };
                    self.connection_ended(Drop_::Reconnect, now);
                    // Not a quick drop that calls for a backoff; and connection_ended
                    // chose the next server, while this one was chosen.
                    self.reconnect.planned_move();
                    self.retarget_attempt(index, now);
                }
            },
            Phase::Backoff { host, until } => {
                let host = index_of(&self.cfg.hosts, host).unwrap_or(pick);
                self.phase = Phase::Backoff { host, until };
            }
            Phase::Connecting { host } | Phase::Handshaking { host } => {
                match index_of(&self.cfg.hosts, host) {
                    Some(index) => self.phase = remap(self.phase, index),
                    None => self.retarget_attempt(pick, now),
                }
            }
            Phase::Ended(_) => {}
        }
    }

    /// Gives up the attempt under way (if any) and starts one to `host`.
    fn retarget_attempt(&mut self, host: usize, now: Instant) {
        if let Phase::Connecting { .. } | Phase::Handshaking { .. } = self.phase {
            self.actions.push_back(Action::Disconnect);
            self.wbuf.clear();
            self.timers.attempt_until = None;
        }
        if !matches!(self.phase, Phase::Ended(_)) {
            self.reconnect.next_host = host;
            self.next_attempt(now);
        }
    }
}

fn remap(phase: Phase, index: usize) -> Phase {
    match phase {
        Phase::Connecting { .. } => Phase::Connecting { host: index },
        Phase::Handshaking { .. } => Phase::Handshaking { host: index },
        other => other,
    }
}
