//! The ledgers as a server holds them: every fenced write is an entry in the bucket of its
//! fencing token, created in one transaction with a set of the ledger znode. Read here, checked
//! in [`crate::invariants`].

use std::time::{Duration, Instant};

use zk_session::Client;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub writer: String,
    pub seq: u64,
    /// The sequence number the server appended.
    pub n: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    pub token: u64,
    pub czxid: i64,
    pub pzxid: i64,
    /// In the server's order.
    pub entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ledger {
    pub name: String,
    pub root_data: String,
    pub root_version: i32,
    /// The ledger znode's mzxid when it was read.
    pub root_mzxid: i64,
    /// In token order.
    pub buckets: Vec<Bucket>,
    /// Every entry's czxid (with its writer and seq), in zxid order: read only when the
    /// ledger znode's version and the entries disagree, to find where.
    pub entry_zxids: Option<Vec<(i64, String, u64)>>,
}

fn parse_entry(name: &str) -> Option<Entry> {
    let mut parts = name.rsplitn(3, '_');
    let n = parts.next()?.parse().ok()?;
    let seq = parts.next()?.parse().ok()?;
    let writer = parts.next()?.to_owned();
    Some(Entry { writer, seq, n })
}

/// Reads a ledger as one state: the ledger znode, then its buckets, then the znode again. A
/// write lands on the znode and an entry in one transaction, so a write applied between the
/// first read and the listing (a worker's last request still in the ensemble's pipeline when
/// the check starts) shows as a changed mzxid, and the ledger is read again; `changed` counts
/// how often. Without this the checker itself could see one entry more than versions.
pub async fn read_ledger(
    client: &Client,
    name: &str,
    changed: &mut Vec<String>,
) -> Result<Ledger, String> {
    let root = crate::ledger_root(name);
    // At the end of a soak the writers have stopped, so this settles at once; the deadline
    // only bounds a checker that would otherwise spin.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let l = read_ledger_once(client, name).await?;
        let after = client
            .exists(&root)
            .await
            .map_err(|e| format!("{root}: {e}"))?
            .ok_or_else(|| format!("{root} vanished"))?;
        if after.mzxid == l.root_mzxid {
            return Ok(l);
        }
        changed.push(format!(
            "{name}: written while the checker read it (mzxid {:#x} then {:#x}); read again",
            l.root_mzxid, after.mzxid
        ));
        if Instant::now() > deadline {
            return Err(format!("{root}: still changing after 30 s of reads"));
        }
    }
}

async fn read_ledger_once(client: &Client, name: &str) -> Result<Ledger, String> {
    let root = crate::ledger_root(name);
    let (data, stat) = client
        .get_data(&root)
        .await
        .map_err(|e| format!("{root}: {e}"))?;
    let names = client
        .get_children(&root)
        .await
        .map_err(|e| format!("{root}: {e}"))?;
    let mut buckets = Vec::new();
    for chunk in names.chunks(64) {
        let mut set = tokio::task::JoinSet::new();
        for b in chunk {
            let (c, path, b) = (client.clone(), format!("{root}/{b}"), b.clone());
            set.spawn(async move {
                let r = c.get_children_with_stat(&path).await;
                (b, path, r)
            });
        }
        while let Some(joined) = set.join_next().await {
            let (b, path, r) = joined.map_err(|e| e.to_string())?;
            let (children, stat) = r.map_err(|e| format!("{path}: {e}"))?;
            let token = b
                .strip_prefix("h-")
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| format!("{path}: not a bucket name"))?;
            let mut entries = children
                .iter()
                .map(|c| parse_entry(c).ok_or_else(|| format!("{path}/{c}: not an entry name")))
                .collect::<Result<Vec<_>, _>>()?;
            entries.sort_by_key(|e| e.n);
            buckets.push(Bucket {
                token,
                czxid: stat.czxid,
                pzxid: stat.pzxid,
                entries,
            });
        }
    }
    buckets.sort_by_key(|b| b.token);
    Ok(Ledger {
        name: name.to_owned(),
        root_data: String::from_utf8_lossy(&data).into_owned(),
        root_version: stat.version,
        root_mzxid: stat.mzxid,
        buckets,
        entry_zxids: None,
    })
}

pub fn entries_of(l: &Ledger) -> usize {
    l.buckets.iter().map(|b| b.entries.len()).sum()
}

/// Every entry's czxid, in zxid order.
pub async fn entry_zxids(client: &Client, l: &Ledger) -> Result<Vec<(i64, String, u64)>, String> {
    let root = crate::ledger_root(&l.name);
    let mut paths = Vec::new();
    for b in &l.buckets {
        for e in &b.entries {
            let name = format!("{}_{}_{:010}", e.writer, e.seq, e.n);
            paths.push((
                format!("{root}/h-{:020}/{name}", b.token),
                e.writer.clone(),
                e.seq,
            ));
        }
    }
    let mut out = Vec::new();
    for chunk in paths.chunks(64) {
        let mut set = tokio::task::JoinSet::new();
        for (p, w, q) in chunk.iter().cloned() {
            let c = client.clone();
            set.spawn(async move { (c.exists(&p).await, p, w, q) });
        }
        while let Some(j) = set.join_next().await {
            let (r, p, w, q) = j.map_err(|e| e.to_string())?;
            match r {
                Ok(Some(st)) => out.push((st.czxid, w, q)),
                Ok(None) => return Err(format!("{p} vanished")),
                Err(e) => return Err(format!("{p}: {e}")),
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use zk_session::{CreateOptions, Op, Version};

    use super::*;

    /// A writer adds entries (each with its ledger znode set, in one multi, as the workers
    /// do) while the checker reads the ledger: every read must see as many versions as
    /// entries. Reading the znode and the buckets once each (as the checker did when the
    /// unexplained "version 4,746, 4,747 entries" was seen) fails this within a few reads.
    /// Writes of the test: about a second of them.
    const WRITES: u64 = 300;

    #[tokio::test]
    async fn a_ledger_written_while_it_is_read_is_read_as_one_state() {
        let server = conformance::shared_standalone();
        let client = Client::builder(&server.connect_string())
            .connect()
            .await
            .unwrap();
        let name = format!("race-{}", std::process::id());
        let root = crate::ledger_root(&name);
        client
            .create_with_parents(&root, b"", CreateOptions::persistent())
            .await
            .unwrap();
        // Another session writes, as the workers do.
        let other = Client::builder(&server.connect_string())
            .connect()
            .await
            .unwrap();
        let writer = {
            let (client, root) = (other, root.clone());
            tokio::spawn(async move {
                let bucket = format!("{root}/h-{:020}", 1);
                client
                    .create(&bucket, b"", CreateOptions::persistent())
                    .await
                    .unwrap();
                for n in 1..=WRITES {
                    let ops = [
                        Op::create(
                            format!("{bucket}/w_{n}_"),
                            b"",
                            CreateOptions::persistent_sequential(),
                        ),
                        Op::set_data(root.clone(), b"1", Version::Any),
                    ];
                    client.multi(ops).await.unwrap();
                    // Pauses let a read fit between writes now and then, as at the end of a
                    // soak, when the last writes trickle in.
                    tokio::time::sleep(Duration::from_millis(n % 3)).await;
                }
            })
        };
        let mut rereads: Vec<String> = Vec::new();
        let mut reads = 0;
        while !writer.is_finished() || reads == 0 {
            let l = read_ledger(&client, &name, &mut rereads).await.unwrap();
            assert_eq!(l.root_version as usize, entries_of(&l), "{rereads:?}");
            reads += 1;
        }
        writer.await.unwrap();
        client.delete_all(&root).await.unwrap();
    }
}
