//! zk-recipes' Cache watching a tree that Curator writes (conformance/java/CuratorTreeWriter.java,
//! compiled here with javac against Debian's libcurator-recipes-java): containers made as
//! parents, protected ephemeral-sequential members, quick successive setData, a recursive
//! delete and a transaction. The view ends equal to the server's tree, and the members leave
//! it when Curator's session closes.

mod cache_support;
mod recipes_support;

use std::{
    io::Write,
    path::Path,
    process::{Command, Stdio},
    time::Duration,
};

use cache_support::*;
use conformance::peers::{self, JavaProgram, Lines};
use recipes_support::{client, shared, soon, unique};
use zk_recipes::CacheEvent;

fn writer() -> JavaProgram {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("java/CuratorTreeWriter.java");
    JavaProgram::compile(
        &src,
        &peers::process_dir(&std::env::temp_dir(), "zk-cache-curator"),
        peers::CURATOR_JARS,
        "libcurator-recipes-java (scripts/test does)",
    )
    .unwrap_or_else(|e| panic!("Curator interop cannot run: {e}"))
}

async fn said(lines: &Lines, what: &str) {
    let seen = lines
        .wait_for(Duration::from_secs(60), |ls, ended| {
            if ls.iter().any(|l| l == what) {
                Some(true)
            } else {
                ended.then_some(false)
            }
        })
        .await;
    assert_eq!(seen, Some(true), "Curator said {:?}", lines.snapshot());
}

#[tokio::test]
async fn our_cache_follows_a_tree_that_curator_writes() {
    let admin = client(&shared()).await;
    let root = unique("cache-curator");
    mk(&admin, &root, b"").await;
    let (cache, mut events) = loaded(client(&shared()).await, &root).await;

    let mut cmd: Command = writer().command();
    cmd.args([&shared(), &root])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = cmd.spawn().expect("start the Curator writer");
    let lines = Lines::follow(child.stdout.take().unwrap());
    said(&lines, "DONE").await;

    let svc = format!("{root}/svc");
    view_matches_server(&admin, &cache, &root).await;
    let x = cache.get(&format!("{svc}/a/x")).expect("x is cached");
    assert_eq!(x.data(), Some(&b"x49"[..]));
    assert_eq!(x.stat().version, 50);
    assert_eq!(
        cache.get(&format!("{svc}/a")).unwrap().data(),
        Some(&b"a1"[..])
    );
    assert!(cache.get(&format!("{svc}/b")).is_none());
    let members = cache.children(&format!("{svc}/members")).unwrap();
    assert_eq!(members.len(), 3, "{members:?}");
    assert!(members
        .iter()
        .all(|m| m.starts_with("_c_") && m.contains("-m-")));

    // Curator's session ends: its members leave the view.
    child.stdin.take().unwrap().write_all(b"close\n").unwrap();
    said(&lines, "CLOSED").await;
    let members_path = format!("{svc}/members");
    soon("the members leave", async {
        while cache.children(&members_path).is_some_and(|m| !m.is_empty()) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let _ = child.wait();
    view_matches_server(&admin, &cache, &root).await;

    // What the subscriber heard, in order per znode.
    let mut heard = Vec::new();
    while let Some(Some(e)) = events.try_next() {
        heard.push(e);
    }
    let shown = described(&heard);
    let y = format!("{svc}/b/y");
    let created_y = shown.iter().position(|s| *s == format!("created {y}"));
    let deleted_y = shown.iter().position(|s| *s == format!("deleted {y}"));
    assert!(
        matches!((created_y, deleted_y), (Some(c), Some(d)) if c < d),
        "{shown:?}"
    );
    let x_changes = heard
        .iter()
        .filter(|e| matches!(e, CacheEvent::Changed { path, .. } if path.ends_with("/a/x")))
        .count();
    assert!((1..=50).contains(&x_changes), "{x_changes} changes of x");
    let members_deleted = shown
        .iter()
        .filter(|s| s.starts_with(&format!("deleted {members_path}/")))
        .count();
    assert_eq!(members_deleted, 3, "{shown:?}");
}
