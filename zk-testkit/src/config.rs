//! What a server is started with: its zoo.cfg and its JVM command line.

use std::{fmt::Write as _, path::Path};

use crate::{install, options::ClientAuth, spawner::TiedCommand, Installation, ServerOptions};

/// The server's main class; it runs standalone when zoo.cfg has no `server.N` lines.
pub const MAIN_CLASS: &str = "org.apache.zookeeper.server.quorum.QuorumPeerMain";

/// One ensemble member's identity and ports, as written in every member's `server.N` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// The member's `myid`.
    pub id: u32,
    /// The quorum port followers connect to the leader on.
    pub peer_port: u16,
    /// The leader-election port.
    pub election_port: u16,
    /// The client port.
    pub client_port: u16,
}

impl Peer {
    /// `server.N=127.0.0.1:peer:election;CLIENT_ADDRESS:client`.
    pub fn server_line(&self, client_address: std::net::IpAddr) -> String {
        format!(
            "server.{}=127.0.0.1:{}:{};{client_address}:{}",
            self.id, self.peer_port, self.election_port, self.client_port
        )
    }
}

/// Renders zoo.cfg. `peers` is empty for a standalone server; `secure_port` is used when
/// `opts.tls` is set.
pub fn zoo_cfg(
    opts: &ServerOptions,
    data_dir: &Path,
    client_port: u16,
    secure_port: Option<u16>,
    peers: &[Peer],
) -> String {
    let mut cfg = String::new();
    let mut line = |k: &str, v: &dyn std::fmt::Display| {
        let _ = writeln!(cfg, "{k}={v}");
    };
    line("tickTime", &opts.tick_time_ms);
    line("initLimit", &opts.init_limit);
    line("syncLimit", &opts.sync_limit);
    line("dataDir", &data_dir.display());
    line("clientPort", &client_port);
    line("clientPortAddress", &opts.client_address);
    line("admin.enableServer", &false);
    line("4lw.commands.whitelist", &"*");
    if let Some(min) = opts.min_session_timeout {
        line("minSessionTimeout", &min.as_millis());
    }
    line("maxSessionTimeout", &opts.max_session_timeout.as_millis());
    line("reconfigEnabled", &opts.reconfig_enabled);
    if let Some(on) = opts.standalone_enabled {
        line("standaloneEnabled", &on);
    }
    for (k, v) in opts.sasl.iter().flat_map(|s| s.zoo_cfg_lines()) {
        line(k, &v);
    }
    if let (Some(tls), Some(port)) = (&opts.tls, secure_port) {
        line("secureClientPort", &port);
        // clientPortAddress does not cover the secure port: it would bind 0.0.0.0.
        line("secureClientPortAddress", &opts.client_address);
        line(
            "serverCnxnFactory",
            &"org.apache.zookeeper.server.NettyServerCnxnFactory",
        );
        line("ssl.keyStore.location", &tls.key_store.display());
        line("ssl.keyStore.type", &"PEM");
        line("ssl.trustStore.location", &tls.trust_store.display());
        line("ssl.trustStore.type", &"PEM");
        let auth = match tls.client_auth {
            ClientAuth::Need => "need",
            ClientAuth::Want => "want",
            ClientAuth::None => "none",
        };
        line("ssl.clientAuth", &auth);
    }
    for (k, v) in &opts.extra_config {
        line(k, v);
    }
    for p in peers {
        let _ = writeln!(cfg, "{}", p.server_line(opts.client_address));
    }
    cfg
}

/// The `java … QuorumPeerMain <cfg>` command, without stdio or working directory; the JVM
/// dies with this process (see [`crate::spawner`]).
pub fn jvm_command(install: &Installation, opts: &ServerOptions, cfg: &Path) -> TiedCommand {
    let mut cmd = TiedCommand::new(&install.java);
    cmd.arg(format!("-Xmx{}m", opts.max_heap_mb))
        // Fastest startup measured: C1 only, serial GC, no hsperfdata files in /tmp.
        .args([
            "-Xms16m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-XX:-UsePerfData",
            "-XX:+ExitOnOutOfMemoryError",
            "-Djava.net.preferIPv4Stack=true",
            "-Djava.awt.headless=true",
            "-Dzookeeper.jmx.log4j.disable=true",
            // Transaction logs are preallocated in 64 MiB steps by default.
            "-Dzookeeper.preAllocSize=1024",
            "-Dorg.slf4j.simpleLogger.showDateTime=true",
            "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
        ])
        .arg(format!(
            "-Dzookeeper.forceSync={}",
            if opts.force_sync { "yes" } else { "no" }
        ));
    if opts.extended_types {
        cmd.arg("-Dzookeeper.extendedTypesEnabled=true");
    }
    if opts.read_only_mode {
        cmd.arg("-Dreadonlymode.enabled=true");
    }
    if opts.skip_acl {
        cmd.arg("-Dzookeeper.skipACL=yes");
    }
    if opts.sasl.is_some() {
        // The server's JAAS file is written beside zoo.cfg (ZkServer::prepare).
        cmd.arg(crate::SaslServer::jvm_property(
            cfg.parent().unwrap_or(Path::new(".")),
        ));
    }
    for (k, v) in &opts.system_properties {
        cmd.arg(format!("-D{k}={v}"));
    }
    let mut classpath = install.classpath.clone();
    if opts.tls.is_some() {
        for jar in install::TLS_JARS {
            classpath.push_str(&format!(":{}/{jar}", install::JAR_DIR));
        }
    }
    cmd.args(&opts.jvm_args)
        .arg("-cp")
        .arg(classpath)
        .arg(MAIN_CLASS)
        .arg(cfg);
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ensemble_cfg_lists_every_member() {
        let peers = [
            Peer {
                id: 1,
                peer_port: 11,
                election_port: 12,
                client_port: 13,
            },
            Peer {
                id: 2,
                peer_port: 21,
                election_port: 22,
                client_port: 23,
            },
        ];
        let cfg = zoo_cfg(&ServerOptions::default(), Path::new("/d"), 13, None, &peers);
        assert!(cfg.contains("tickTime=200\n"));
        assert!(cfg.contains("dataDir=/d\n"));
        assert!(cfg.contains("clientPort=13\n"));
        assert!(cfg.contains("admin.enableServer=false\n"));
        assert!(cfg.contains("server.2=127.0.0.1:21:22;127.0.0.1:23\n"));
        assert!(cfg.contains("clientPortAddress=127.0.0.1\n"));
        let any = ServerOptions::default().client_address([0, 0, 0, 0].into());
        let cfg = zoo_cfg(&any, Path::new("/d"), 13, None, &peers);
        assert!(cfg.contains("clientPortAddress=0.0.0.0\n"));
        assert!(
            cfg.contains("server.2=127.0.0.1:21:22;0.0.0.0:23\n"),
            "{cfg}"
        );
        assert!(!cfg.contains("secureClientPort"), "{cfg}");
    }

    #[test]
    fn tls_adds_a_secure_port_on_the_client_address() {
        let tls = crate::ServerTls::new("/c/server.pem", "/c/ca.pem").client_auth(ClientAuth::Want);
        let opts = ServerOptions::default().tls(tls);
        let cfg = zoo_cfg(&opts, Path::new("/d"), 13, Some(14), &[]);
        assert!(cfg.contains("clientPort=13\n"), "{cfg}");
        assert!(cfg.contains("secureClientPort=14\n"), "{cfg}");
        assert!(cfg.contains("secureClientPortAddress=127.0.0.1\n"), "{cfg}");
        assert!(cfg.contains("NettyServerCnxnFactory"), "{cfg}");
        assert!(
            cfg.contains("ssl.keyStore.location=/c/server.pem\n"),
            "{cfg}"
        );
        assert!(cfg.contains("ssl.clientAuth=want\n"), "{cfg}");
    }
}
