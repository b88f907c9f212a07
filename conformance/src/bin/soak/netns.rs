//! A network partition between one client process and the whole ensemble.
//!
//! The client process runs in a network namespace of its own (`ip netns exec`), joined to
//! the host by a veth pair; the servers bind their client ports to 0.0.0.0 so that the host
//! end's address reaches every member. A partition takes the host end of the pair down: from
//! then on the client's packets go nowhere and nothing comes back — no RST, no FIN, unlike a
//! killed server or a reset connection — which is the case that only timeouts can detect.
//! Bringing the link up again heals it; TCP connections that outlived the cut carry on.
//!
//! Needs root and iproute2. Where either is missing, [`Netns::create`] says why and the soak
//! skips partition faults.

use std::{net::Ipv4Addr, process::Command};

use conformance::spawner::TiedCommand;

/// One namespace, its veth pair and their addresses; removed on drop.
#[derive(Debug)]
pub struct Netns {
    name: String,
    host_if: String,
    /// The host end's address: what the client in the namespace connects to.
    pub host_addr: Ipv4Addr,
}

/// Runs `ip ARGS…`; the error says which command failed and what ip printed.
fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Netns {
    /// Creates namespace and veth pair named after `tag` (the driver's pid, so that
    /// concurrent soaks do not collide), in 10.128.0.0/9.
    pub fn create(tag: u32) -> Result<Netns, String> {
        let (b, c) = (128 + ((tag >> 8) & 0x7f) as u8, (tag & 0xff) as u8);
        let ns = Netns {
            name: format!("zksoak-{tag}"),
            host_if: format!("zkh{tag}"),
            host_addr: Ipv4Addr::new(10, b, c, 1),
        };
        let peer_if = format!("zkn{tag}");
        let peer_addr = Ipv4Addr::new(10, b, c, 2);
        // Each step undone by Drop if a later one fails.
        ip(&["netns", "add", &ns.name])?;
        ip(&[
            "link",
            "add",
            &ns.host_if,
            "type",
            "veth",
            "peer",
            "name",
            &peer_if,
        ])?;
        ip(&["link", "set", &peer_if, "netns", &ns.name])?;
        ip(&[
            "addr",
            "add",
            &format!("{}/24", ns.host_addr),
            "dev",
            &ns.host_if,
        ])?;
        ip(&["link", "set", &ns.host_if, "up"])?;
        let in_ns = |args: &[&str]| {
            let mut all = vec!["netns", "exec", &ns.name, "ip"];
            all.extend_from_slice(args);
            ip(&all)
        };
        in_ns(&["addr", "add", &format!("{peer_addr}/24"), "dev", &peer_if])?;
        in_ns(&["link", "set", &peer_if, "up"])?;
        in_ns(&["link", "set", "lo", "up"])?;
        // `ip netns exec` also needs a private mount namespace and /sys: try it once here,
        // so that a machine that cannot skips the partitions instead of losing a worker.
        let exec = Command::new("ip")
            .args(["netns", "exec", &ns.name, "true"])
            .output()
            .map_err(|e| format!("cannot run ip: {e}"))?;
        if !exec.status.success() {
            return Err(format!(
                "`ip netns exec` failed: {}",
                String::from_utf8_lossy(&exec.stderr).trim()
            ));
        }
        Ok(ns)
    }

    /// A command that runs `program` inside the namespace. `ip netns exec` execs in place, so
    /// the child's pid is the program's (signals and waits reach it). Tied to this process,
    /// like every worker.
    pub fn command(&self, program: &std::path::Path) -> TiedCommand {
        let mut cmd = TiedCommand::new("ip");
        cmd.args(["netns", "exec", &self.name]).arg(program);
        cmd
    }

    /// Cuts the namespace off: the host end of the veth pair goes down.
    pub fn cut(&self) -> Result<(), String> {
        ip(&["link", "set", &self.host_if, "down"])
    }

    /// Heals a cut (the host end up again; the kernel restores its route).
    pub fn heal(&self) -> Result<(), String> {
        ip(&["link", "set", &self.host_if, "up"])
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Deleting the namespace destroys the peer end, and with it the host end.
        let _ = ip(&["netns", "del", &self.name]);
        let _ = ip(&["link", "del", &self.host_if]);
    }
}
