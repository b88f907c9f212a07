//! The server's record at the end of a run: the ledgers (each member's copy, compared), and
//! the nodes and watches the closed clients left behind.

use std::{
    net::SocketAddr,
    time::{Duration, Instant},
};

use conformance::{four_letter_word, Ensemble};
use zk_session::{Client, Error, ErrorCode};

use crate::{
    ledger::{entries_of, entry_zxids, Ledger},
    replicas,
};

#[derive(Debug, Default)]
pub struct Snapshot {
    pub ledgers: Vec<Ledger>,
    pub leftover_nodes: Vec<String>,
    pub leftover_watches: Vec<String>,
    /// Each server's `wchs` summary at the end.
    pub watch_summaries: Vec<String>,
    pub errors: Vec<String>,
    /// What was gathered about a ledger whose znode version and entries disagree.
    pub diagnostics: Vec<String>,
    /// Members whose copy of a ledger differs from the quorum's: a server fault, see
    /// [`crate::replicas`].
    pub server_faults: Vec<String>,
    /// How many members' copies of the ledgers were read and compared, in one line.
    pub replicas_compared: String,
    /// How long the leftovers took to go (ephemerals of a session that could not close
    /// politely go with its expiry).
    pub leftovers_cleared_after: Option<Duration>,
}

async fn children_or_empty(client: &Client, path: &str) -> Result<Vec<String>, Error> {
    match client.get_children(path).await {
        Ok(c) => Ok(c),
        Err(Error::Code(ErrorCode::NoNode)) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Sessions with watches on a server, from `wchc` (`0x<session>` lines, then its paths).
fn watches_on(addr: SocketAddr) -> Result<(Vec<String>, String), String> {
    let wchc = four_letter_word(addr, "wchc", Duration::from_secs(10))
        .map_err(|e| format!("wchc on {addr}: {e}"))?;
    let wchs = four_letter_word(addr, "wchs", Duration::from_secs(10))
        .map_err(|e| format!("wchs on {addr}: {e}"))?;
    let mut found = Vec::new();
    let mut session = String::new();
    for line in wchc.lines() {
        let t = line.trim();
        if t.starts_with("0x") {
            session = t.to_owned();
        } else if t.starts_with('/') {
            found.push(format!("{addr}: session {session} watches {t}"));
        }
    }
    Ok((found, wchs.split_whitespace().collect::<Vec<_>>().join(" ")))
}

/// Reads the ledgers (each member's copy, judged on the quorum's), then waits (up to twice the session timeout and some) for the
/// ensemble to show no node and no watch of the closed clients.
pub async fn snapshot(ens: &Ensemble, session_timeout: Duration) -> Snapshot {
    let mut snap = Snapshot::default();
    let mut client = None;
    for _ in 0..5 {
        match Client::builder(&ens.connect_string())
            .session_timeout(Duration::from_secs(20))
            .operation_timeout(Duration::from_secs(30))
            .connect()
            .await
        {
            Ok(c) => {
                client = Some(c);
                break;
            }
            Err(e) => snap.errors.push(format!("checker cannot connect: {e}")),
        }
    }
    let Some(client) = client else {
        return snap;
    };
    snap.errors.clear();
    read_ledgers(ens, &client, &mut snap).await;
    let mut watched: Vec<String> = (0..crate::LOCK_COUNT).map(crate::lock_path).collect();
    watched.push(crate::ELECTION.to_owned());
    watched.push(crate::KV_DIR.to_owned());
    let started = Instant::now();
    let deadline = started + 2 * session_timeout + Duration::from_secs(15);
    loop {
        let mut nodes = Vec::new();
        for p in &watched {
            match children_or_empty(&client, p).await {
                Ok(c) => nodes.extend(c.into_iter().map(|c| format!("{p}/{c}"))),
                Err(e) => nodes.push(format!("{p}: cannot list: {e}")),
            }
        }
        let addrs = ens.client_addrs();
        let (watches, summaries) = tokio::task::spawn_blocking(move || {
            let mut watches = Vec::new();
            let mut summaries = Vec::new();
            for a in addrs {
                match watches_on(a) {
                    Ok((w, s)) => {
                        watches.extend(w);
                        summaries.push(format!("{a}: {s}"));
                    }
                    Err(e) => watches.push(e),
                }
            }
            (watches, summaries)
        })
        .await
        .unwrap_or_default();
        snap.leftover_nodes = nodes;
        snap.leftover_watches = watches;
        snap.watch_summaries = summaries;
        if snap.leftover_nodes.is_empty() && snap.leftover_watches.is_empty() {
            snap.leftovers_cleared_after = Some(started.elapsed());
            break;
        }
        if Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let _ = client.close().await;
    snap
}

/// Every ledger as a majority of the members holds it; a member that differs goes to
/// `server_faults`. Where the quorum's copy has a ledger znode version other than its entry
/// count, each member's summary and the entries' zxids go to `diagnostics`.
async fn read_ledgers(ens: &Ensemble, client: &Client, snap: &mut Snapshot) {
    let names = crate::ledger_names();
    let addrs = ens.client_addrs();
    let mut reads = Vec::new();
    for a in &addrs {
        let (a, names) = (*a, names.clone());
        reads.push(tokio::spawn(async move {
            replicas::read_member(a, &names).await
        }));
    }
    let mut by_member = Vec::new();
    for (a, r) in addrs.iter().zip(reads) {
        let ledgers = r
            .await
            .unwrap_or_else(|e| vec![Err(e.to_string()); names.len()]);
        by_member.push((*a, ledgers));
    }
    let mut copies_read = 0;
    for (i, name) in names.iter().enumerate() {
        let copies: Vec<(SocketAddr, Result<Ledger, String>)> = by_member
            .iter()
            .map(|(a, ls)| (*a, ls[i].clone()))
            .collect();
        let agreed = match replicas::agree(addrs.len(), &copies) {
            Ok(a) => a,
            Err(e) => {
                snap.errors.push(format!("reading ledger {name}: {e}"));
                continue;
            }
        };
        copies_read += copies.len() - agreed.unread.len();
        snap.server_faults.extend(agreed.divergent);
        snap.diagnostics.extend(
            agreed
                .unread
                .into_iter()
                .map(|e| format!("{name}: a member's copy was not read: {e}")),
        );
        let mut l = agreed.quorum;
        if l.root_version as usize != entries_of(&l) {
            snap.diagnostics.push(format!(
                "{}: znode version {} but {} entries; as each server has it:",
                l.name,
                l.root_version,
                entries_of(&l)
            ));
            for (a, c) in &copies {
                snap.diagnostics.push(match c {
                    Ok(c) => format!("  {}", replicas::summary(*a, c)),
                    Err(e) => format!("  {e}"),
                });
            }
            match entry_zxids(client, &l).await {
                Ok(z) => l.entry_zxids = Some(z),
                Err(e) => snap
                    .diagnostics
                    .push(format!("  cannot read the entries' zxids: {e}")),
            }
        }
        snap.ledgers.push(l);
    }
    snap.replicas_compared = format!(
        "{copies_read} copies of {} ledgers read from {} members, {}",
        names.len(),
        addrs.len(),
        match snap.server_faults.len() {
            0 => "every copy the same".to_string(),
            n => format!("{n} differ from the quorum's"),
        }
    );
}
