//! SetPartitioner beside kazoo's SetPartitioner processes (kazoo 2.11, in the project's
//! venv) on one path: both sides compute the same slices (kazoo's partition function over
//! the identifiers of all four members), no item is claimed by two members at any sampled
//! moment, and after a kazoo member and one of ours leave the two left split the whole set.

mod recipes_partitioner_support;
mod recipes_support;

use std::{
    collections::BTreeMap,
    path::Path,
    sync::OnceLock,
    time::{Duration, Instant},
};

use conformance::peers::KazooProgram;
use recipes_partitioner_support::kazoo_slice;
use recipes_support::{client, peer::Peer, shared, unique, SOON};
use zk_recipes::{ReleaseMode, SetPartitioner};

const SETTLE: Duration = Duration::from_millis(400);

fn kazoo() -> &'static KazooProgram {
    static PROGRAM: OnceLock<Result<KazooProgram, String>> = OnceLock::new();
    let program = PROGRAM.get_or_init(|| {
        KazooProgram::prepare(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("python/kazoo_partitioner.py"),
        )
    });
    match program {
        Ok(p) => p,
        Err(e) => panic!("kazoo interop cannot run: {e}"),
    }
}

async fn kazoo_member(path: &str, id: &str, items: &[String]) -> Peer {
    let mut cmd = kazoo().command();
    let boundary = format!("{}", SETTLE.as_secs_f64());
    cmd.args([&shared(), path, id, &boundary, &items.join(",")]);
    Peer::start(&format!("kazoo {id}"), cmd).await
}

/// A kazoo peer's items now: those of its last ACQUIRED line, none after a RELEASE (it
/// prints RELEASE before it lets go, so its locks are held while this says it owns them).
fn kazoo_items(peer: &Peer) -> Vec<String> {
    let lines = peer.stdout.snapshot();
    match lines
        .iter()
        .rev()
        .find(|l| l.starts_with("ACQUIRED") || l == &"RELEASE")
    {
        Some(l) if l.starts_with("ACQUIRED") => l["ACQUIRED".len()..]
            .trim()
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// Samples every member until each owns exactly kazoo's slice over `ids`; fails on an item
/// claimed twice in one sample.
async fn until_split(
    items: &[String],
    ids: &[&str],
    kazoos: &[(&str, &Peer)],
    ours: &[&SetPartitioner],
) {
    let deadline = Instant::now() + SOON;
    loop {
        let mut owners: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut all_right = true;
        for (id, peer) in kazoos {
            let got = kazoo_items(peer);
            all_right &= got == kazoo_slice(items, ids, id);
            for i in got {
                owners.entry(i).or_default().push(id.to_string());
            }
        }
        for p in ours {
            let got = p.items();
            all_right &= got == kazoo_slice(items, ids, p.identifier());
            for i in got {
                owners.entry(i).or_default().push(p.identifier().to_owned());
            }
        }
        let twice: Vec<_> = owners.iter().filter(|(_, o)| o.len() > 1).collect();
        assert!(twice.is_empty(), "items owned twice: {twice:?}");
        if all_right && owners.len() == items.len() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no split over {ids:?} within {SOON:?}: {owners:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ours_and_kazoos_split_one_set() {
    let path = unique("partition-kazoo");
    let items: Vec<String> = (0..9).map(|i| format!("q{i}")).collect();
    let mut ka = kazoo_member(&path, "ka", &items).await;
    let kc = kazoo_member(&path, "kc", &items).await;
    let (cb, cd) = (client(&shared()).await, client(&shared()).await);
    let start = |c: zk_session::Client, id: &'static str| {
        SetPartitioner::builder(c, &path)
            .items(items.clone())
            .identifier(id)
            .time_boundary(SETTLE)
            .release_mode(ReleaseMode::Immediately)
            .start()
    };
    let rb = start(cb, "rb").await.unwrap();
    let rd = start(cd, "rd").await.unwrap();
    until_split(
        &items,
        &["ka", "kc", "rb", "rd"],
        &[("ka", &ka), ("kc", &kc)],
        &[&rb, &rd],
    )
    .await;

    // One of each side leaves: the two left take the whole set between them.
    ka.send("finish").await;
    ka.expect("FINISHED").await;
    rd.close().await.unwrap();
    until_split(&items, &["kc", "rb"], &[("kc", &kc)], &[&rb]).await;

    rb.close().await.unwrap();
    kc.finish().await;
    ka.finish().await;
}
