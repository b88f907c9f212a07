//! Growing an [`Ensemble`] by dynamic reconfiguration: new members that know the current
//! ones and themselves, started and ready for a `reconfig` that adds them.

use std::{sync::Arc, time::Duration};

use crate::{config::Peer, ports, Ensemble, Result, ZkServer};

/// A server started to join an ensemble; its `server.N` line is what `reconfig` adds.
#[derive(Debug)]
pub struct Joiner {
    /// The new member (killed when dropped, like the ensemble's own).
    pub server: ZkServer,
    /// Its identity and ports.
    pub peer: Peer,
}

impl Joiner {
    /// `server.N=127.0.0.1:peer:election:participant;127.0.0.1:client`, for `reconfig`.
    pub fn server_line(&self, client_address: std::net::IpAddr) -> String {
        let line = self.peer.server_line(client_address);
        let (quorum, client) = line.split_once(';').unwrap_or((&line, ""));
        format!("{quorum}:participant;{client}")
    }
}

impl Ensemble {
    /// Starts `size` members with `reconfigEnabled=true` and ACLs skipped, so that any
    /// client may `reconfig`.
    pub fn start_reconfigurable(size: usize) -> Result<Ensemble> {
        Ensemble::builder()
            .size(size)
            .reconfig_enabled(true)
            .skip_acl(true)
            .start()
    }

    /// Starts a member with `myid` `id` whose configuration lists every current member and
    /// itself, and waits until it serves (it follows the leader as a non-voting member until
    /// a `reconfig` adds it). The ensemble needs `reconfig_enabled`.
    pub fn start_joiner(&self, id: u32, within: Duration) -> Result<Joiner> {
        let ports = ports::free_ports(3)?;
        let peer = Peer {
            id,
            peer_port: ports[0],
            election_port: ports[1],
            client_port: ports[2],
        };
        let mut peers: Vec<Peer> = self.servers().iter().filter_map(ZkServer::peer).collect();
        peers.push(peer);
        let opts = Arc::new(self.options().clone());
        let server = ZkServer::prepare(opts, peer.client_port, Some(peer), &peers)?;
        server.start_no_wait()?;
        server.wait_healthy(within)?;
        Ok(Joiner { server, peer })
    }
}
