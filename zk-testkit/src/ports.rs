//! Picking free TCP ports on 127.0.0.1.
//!
//! Ports are chosen at random *below* the kernel's ephemeral range when there is room: the
//! kernel hands ephemeral ports to outgoing connections (every client socket in the tests),
//! and one of those could otherwise take the port of a server that is down and about to be
//! restarted on the same port. A port is checked by binding it, and never handed out twice in
//! one process. Another process can still take it before the server binds it; the server
//! types detect that (`HarnessError::PortInUse`) and start again with new ports.

use std::{
    collections::{hash_map::RandomState, HashSet},
    fs,
    hash::{BuildHasher, Hasher},
    net::{Ipv4Addr, TcpListener},
    sync::{Mutex, OnceLock},
};

use crate::{HarnessError, Result};

const LOWEST: u16 = 10_000;

/// Returns `n` distinct ports that were free on 127.0.0.1 a moment ago.
pub fn free_ports(n: usize) -> Result<Vec<u16>> {
    static HANDED_OUT: OnceLock<Mutex<HashSet<u16>>> = OnceLock::new();
    let mut handed = HANDED_OUT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let (lo, hi) = candidate_range();
    let mut out = Vec::with_capacity(n);
    let mut attempts = 0;
    while out.len() < n {
        attempts += 1;
        if attempts > 10_000 {
            return Err(HarnessError::io(
                "looking for free ports",
                std::io::Error::from(std::io::ErrorKind::AddrInUse),
            ));
        }
        let port = if lo < hi {
            lo + (random() % u64::from(hi - lo)) as u16
        } else {
            match TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).and_then(|l| l.local_addr()) {
                Ok(a) => a.port(),
                Err(_) => continue,
            }
        };
        if handed.contains(&port) || TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_err() {
            continue;
        }
        handed.insert(port);
        out.push(port);
    }
    Ok(out)
}

/// Returns one free port; see [`free_ports`].
pub fn free_port() -> Result<u16> {
    Ok(free_ports(1)?[0])
}

/// `[lo, hi)` to draw from: below the ephemeral range when it leaves at least 2000 ports,
/// else empty (then the kernel picks, with `bind(0)`).
fn candidate_range() -> (u16, u16) {
    let ephemeral_low = fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    if ephemeral_low >= LOWEST + 2_000 {
        (LOWEST, ephemeral_low)
    } else {
        (0, 0)
    }
}

fn random() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}
