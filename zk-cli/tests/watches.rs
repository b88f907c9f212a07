//! `get -w`, `ls -w` (one change, then exit), `addWatch -m` and `watch -r` (every change until
//! interrupted), as text and as JSON lines.

mod support;

use std::{process::Stdio, time::Duration};

use serde_json::json;
use support::{admin, assert_code, command, unique, SOON};
use tokio::{
    io::{AsyncBufReadExt, BufReader, Lines},
    process::{Child, ChildStdout},
};
use zk_session::{Client, CreateOptions, Version};

type Out = Lines<BufReader<ChildStdout>>;

/// `zk ARGS` running, and its stdout by lines.
fn spawn(args: &[&str]) -> (Child, Out) {
    let mut cmd = command(args);
    cmd.stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    (child, lines)
}

async fn next_line(lines: &mut Out) -> String {
    let line = tokio::time::timeout(SOON, lines.next_line()).await;
    line.expect("a line in time").unwrap().expect("a line")
}

/// Makes the `writes` again and again (the watch is set only once zk has connected) until zk
/// prints a line, and returns it.
async fn poke_until_line(c: &Client, lines: &mut Out, writes: &[(&str, &[u8])]) -> String {
    tokio::time::timeout(SOON, async {
        loop {
            for (path, data) in writes {
                c.set_data(path, data, Version::Any).await.unwrap();
            }
            let next = tokio::time::timeout(Duration::from_millis(300), lines.next_line()).await;
            if let Ok(line) = next {
                return line.unwrap().expect("a line");
            }
        }
    })
    .await
    .expect("zk reports a change")
}

async fn exit_code(mut child: Child) -> Option<i32> {
    let status = tokio::time::timeout(SOON, child.wait()).await.unwrap();
    status.unwrap().code()
}

#[tokio::test]
async fn get_w_and_ls_w_print_the_next_change_and_exit() {
    let base = unique("w");
    let c = admin().await;
    c.create(&base, b"v0", CreateOptions::persistent())
        .await
        .unwrap();
    // get -w -s: the data and the Stat (12 lines), then the event, then exit 0.
    let (child, mut lines) = spawn(&["get", "-w", "-s", &base]);
    assert_eq!(next_line(&mut lines).await, "v0");
    for _ in 0..11 {
        next_line(&mut lines).await;
    }
    let line = poke_until_line(&c, &mut lines, &[(&base, b"v1")]).await;
    assert_eq!(line, format!("NodeDataChanged {base}"));
    assert_eq!(exit_code(child).await, Some(0));
    // ls -w --json: the listing, then the event as a JSON line.
    let (child, mut lines) = spawn(&["--json", "ls", "-w", &base]);
    let doc: serde_json::Value = serde_json::from_str(&next_line(&mut lines).await).unwrap();
    assert_eq!(doc["children"], json!([]));
    c.create(&format!("{base}/kid"), b"", CreateOptions::persistent())
        .await
        .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&next_line(&mut lines).await).unwrap();
    assert_eq!(doc, json!({"event": "NodeChildrenChanged", "path": base}));
    assert_eq!(exit_code(child).await, Some(0));
    c.delete_all(&base).await.unwrap();
}

#[tokio::test]
async fn add_watch_modes_and_json_events() {
    let base = unique("aw");
    let c = admin().await;
    let deep = format!("{base}/a/deep");
    c.create_with_parents(&deep, b"", CreateOptions::persistent())
        .await
        .unwrap();
    // persistent_recursive (the default, as in zkCli) sees changes below PATH.
    let (mut child, mut lines) = spawn(&["--json", "addWatch", &base]);
    let line = poke_until_line(&c, &mut lines, &[(&deep, b"x")]).await;
    let doc: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(doc, json!({"event": "NodeDataChanged", "path": deep}));
    child.start_kill().unwrap();
    // -m persistent: a change below the children is not reported; one of PATH is.
    let (mut child, mut lines) = spawn(&["addWatch", "-m", "persistent", &base]);
    let line = poke_until_line(&c, &mut lines, &[(&deep, b"y"), (&base, b"z")]).await;
    assert_eq!(line, format!("NodeDataChanged {base}"));
    child.start_kill().unwrap();
    // watch -r is the recursive one too.
    let (mut child, mut lines) = spawn(&["watch", "-r", &base]);
    let line = poke_until_line(&c, &mut lines, &[(&deep, b"w")]).await;
    assert_eq!(line, format!("NodeDataChanged {deep}"));
    child.start_kill().unwrap();
    // A bad mode is a usage error.
    assert_code(
        &support::zk(["addWatch", "-m", "sometimes", &base]).await,
        2,
    );
    c.delete_all(&base).await.unwrap();
}

/// `watch --cache -R --json`: the load (each znode created, then initialized), then each
/// change with its data and version, as JSON lines; `--depth` limits the levels.
#[tokio::test]
async fn watch_through_the_cache_prints_the_load_then_changes_as_json() {
    let base = unique("wc");
    let c = admin().await;
    let deep = format!("{base}/a/deep");
    c.create_with_parents(&deep, b"d0", CreateOptions::persistent())
        .await
        .unwrap();
    let (mut child, mut lines) = spawn(&["--json", "watch", "--cache", "-R", &base]);
    let mut loaded = Vec::new();
    loop {
        let doc: serde_json::Value = serde_json::from_str(&next_line(&mut lines).await).unwrap();
        if doc["event"] == "initialized" {
            break;
        }
        assert_eq!(doc["event"], "created", "{doc}");
        loaded.push(doc["path"].as_str().unwrap().to_owned());
    }
    loaded.sort();
    assert_eq!(loaded, [base.clone(), format!("{base}/a"), deep.clone()]);
    c.set_data(&deep, b"d1", Version::Any).await.unwrap();
    let doc: serde_json::Value = serde_json::from_str(&next_line(&mut lines).await).unwrap();
    assert_eq!(doc["event"], "changed");
    assert_eq!(doc["path"], json!(deep));
    assert_eq!(doc["data"], "d1");
    assert_eq!(doc["version"], 1);
    c.delete(&deep, Version::Any).await.unwrap();
    let doc: serde_json::Value = serde_json::from_str(&next_line(&mut lines).await).unwrap();
    assert_eq!(
        (doc["event"].clone(), doc["path"].clone()),
        (json!("deleted"), json!(deep))
    );
    child.start_kill().unwrap();

    // Text, one level: the deep znode is not followed.
    c.create(&deep, b"", CreateOptions::persistent())
        .await
        .unwrap();
    let (mut child, mut lines) = spawn(&["watch", "--cache", "--depth", "1", &base]);
    let mut shown = Vec::new();
    loop {
        let line = next_line(&mut lines).await;
        if line == "initialized" {
            break;
        }
        shown.push(line);
    }
    shown.sort();
    assert_eq!(
        shown,
        [format!("created {base}"), format!("created {base}/a")]
    );
    c.set_data(&deep, b"unseen", Version::Any).await.unwrap();
    c.set_data(&base, b"seen", Version::Any).await.unwrap();
    assert_eq!(next_line(&mut lines).await, format!("changed {base}"));
    child.start_kill().unwrap();
    // --depth needs --cache.
    assert_code(&support::zk(["watch", "--depth", "1", &base]).await, 2);
    c.delete_all(&base).await.unwrap();
}
