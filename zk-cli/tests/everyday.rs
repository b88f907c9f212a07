//! The everyday commands of `zk` against a real ZooKeeper 3.8: ls, get, set, create, delete,
//! deleteall, stat, sync, config, whoami, getEphemerals; binary data through argument, stdin
//! and stdout; wrong versions and missing nodes.

mod support;

use std::{ffi::OsStr, os::unix::ffi::OsStrExt, time::Duration};

use conformance::Standalone;
use support::{admin, assert_code, command_at, finish, json, stderr, stdout, unique, zk, zk_stdin};
use zk_session::{Client, CreateOptions};

#[tokio::test]
async fn create_get_set_delete_with_versions_and_missing_nodes() {
    let base = unique("crud");
    assert_code(&zk(["create", &base]).await, 0);
    let node = format!("{base}/a");
    let o = zk(["create", &node, "hello"]).await;
    assert_code(&o, 0);
    assert_eq!(stdout(&o), format!("{node}\n"));
    // Raw to a pipe: no newline added.
    assert_eq!(zk(["get", &node]).await.stdout, b"hello");
    assert_code(&zk(["set", &node, "world"]).await, 0);
    assert_eq!(zk(["get", &node]).await.stdout, b"world");
    // A conditional set or delete at the wrong version fails as the server says.
    let o = zk(["set", "-v", "0", &node, "x"]).await;
    assert_code(&o, 1);
    assert!(stderr(&o).contains("bad version"), "{}", stderr(&o));
    let o = zk(["delete", "-v", "7", &node]).await;
    assert_code(&o, 1);
    assert!(stderr(&o).contains("bad version"), "{}", stderr(&o));
    assert_code(&zk(["set", "-v", "1", &node, "again"]).await, 0);
    // get -s: the data on its own line, then zkCli's Stat lines.
    let o = zk(["get", "-s", &node]).await;
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.starts_with("again\ncZxid = 0x"), "{out}");
    assert!(
        out.contains("dataVersion = 2\n") && out.contains("dataLength = 5\n"),
        "{out}"
    );
    // Existing and missing nodes.
    let o = zk(["create", &node]).await;
    assert_code(&o, 1);
    assert!(stderr(&o).contains("node exists"), "{}", stderr(&o));
    assert_code(&zk(["delete", "-v", "2", &node]).await, 0);
    for args in [
        vec!["get", node.as_str()],
        vec!["set", node.as_str(), "x"],
        vec!["delete", node.as_str()],
        vec!["stat", node.as_str()],
        vec!["ls", node.as_str()],
        vec!["getAcl", node.as_str()],
        vec!["deleteall", node.as_str()],
        vec!["create", &format!("{node}/child")],
    ] {
        let o = zk(&args).await;
        assert_code(&o, 1);
        assert!(stderr(&o).contains("no node"), "{args:?}: {}", stderr(&o));
    }
    // Invalid paths are usage errors, before anything is sent.
    assert_code(&zk(["get", "no-slash"]).await, 2);
    assert_code(&zk(["create", "/a/"]).await, 2);
    assert_code(&zk(["delete", &base]).await, 0);
}

#[tokio::test]
async fn binary_data_through_argument_stdin_and_stdout() {
    let base = unique("binary");
    let all: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
    // Through stdin (DATA left out, or '-'), byte for byte, NULs included.
    assert_code(&zk(["create", &base]).await, 0);
    assert_code(&zk_stdin(["set", &base], &all).await, 0);
    assert_eq!(zk(["get", &base]).await.stdout, all);
    let node = format!("{base}/n");
    assert_code(&zk_stdin(["create", &node, "-"], b"\xff\xfe\x00x").await, 0);
    assert_eq!(zk(["get", &node]).await.stdout, b"\xff\xfe\x00x");
    // A non-UTF-8 argument is data as it is (it used to panic).
    let raw = OsStr::from_bytes(b"\x01\x02\xff");
    let o = zk([OsStr::new("set"), OsStr::new(&node), raw]).await;
    assert_code(&o, 0);
    assert_eq!(zk(["get", &node]).await.stdout, b"\x01\x02\xff");
    let c = admin().await;
    assert_eq!(&c.get_data(&node).await.unwrap().0[..], b"\x01\x02\xff");
    // A non-UTF-8 path is a clear usage error.
    let bad = OsStr::from_bytes(b"/zk-cli-\xff");
    let o = zk([OsStr::new("get"), bad]).await;
    assert_code(&o, 2);
    assert!(stderr(&o).contains("not UTF-8"), "{}", stderr(&o));
    // Data that looks like a flag is data.
    assert_code(&zk(["set", &node, "-v"]).await, 2);
    assert_code(&zk(["set", &node, "--", "-v"]).await, 0);
    assert_eq!(zk(["get", &node]).await.stdout, b"-v");
    assert_code(&zk(["deleteall", &base]).await, 0);
}

#[tokio::test]
async fn ls_recursive_with_stat_and_deleteall() {
    let base = unique("tree");
    for p in ["b/y", "a/x/deep", "a/w"] {
        let o = zk(["create", "-p", &format!("{base}/{p}"), "d"]).await;
        assert_code(&o, 0);
    }
    let o = zk(["ls", &base]).await;
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "a\nb\n");
    // -R: PATH then every descendant as a full path, breadth first, each level sorted.
    let o = zk(["ls", "-R", &base]).await;
    assert_code(&o, 0);
    let expected: Vec<String> = ["", "/a", "/b", "/a/w", "/a/x", "/b/y", "/a/x/deep"]
        .iter()
        .map(|s| format!("{base}{s}"))
        .collect();
    assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), expected);
    let o = zk(["ls", "-s", &base]).await;
    assert_code(&o, 0);
    assert!(stdout(&o).starts_with("a\nb\ncZxid = 0x"), "{}", stdout(&o));
    assert!(stdout(&o).contains("numChildren = 2\n"), "{}", stdout(&o));
    // Parents made by -p are empty; the leaf has the data.
    assert_eq!(zk(["get", &format!("{base}/a/x")]).await.stdout, b"");
    assert_eq!(zk(["get", &format!("{base}/a/x/deep")]).await.stdout, b"d");
    let o = zk(["delete", &base]).await;
    assert_code(&o, 1);
    assert!(stderr(&o).contains("not empty"), "{}", stderr(&o));
    assert_code(&zk(["deleteall", &format!("{base}/a")]).await, 0);
    assert_eq!(stdout(&zk(["ls", &base]).await), "b\n");
    assert_code(&zk(["deleteall", &base]).await, 0);
    assert_code(&zk(["stat", &base]).await, 1);
    assert_code(&zk(["deleteall", "/"]).await, 2);
}

#[tokio::test]
async fn stat_shows_iso_times_and_hex_zxids() {
    let base = unique("stat");
    let c = admin().await;
    let (_, st) = c
        .create_with_stat(&base, b"12345", CreateOptions::persistent())
        .await
        .unwrap();
    let o = zk(["stat", &base]).await;
    assert_code(&o, 0);
    let out = stdout(&o);
    let field = |name: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} = ")))
            .unwrap_or_else(|| panic!("no {name} in {out}"))
            .to_owned()
    };
    assert_eq!(field("cZxid"), format!("{:#x}", st.czxid));
    assert_eq!(field("mZxid"), format!("{:#x}", st.mzxid));
    assert_eq!(field("ephemeralOwner"), "0x0");
    assert_eq!(field("dataLength"), "5");
    // ISO 8601 in UTC, to the millisecond, and the same instant as the Stat's.
    let ctime = field("ctime");
    assert_eq!(ctime.len(), 24, "{ctime}");
    assert!(
        ctime.ends_with('Z') && ctime.as_bytes()[10] == b'T',
        "{ctime}"
    );
    let millis = format!(".{:03}Z", st.ctime % 1000);
    assert!(ctime.ends_with(&millis), "{ctime} vs {}", st.ctime);
    let doc = json(&zk(["--json", "stat", &base]).await);
    assert_eq!(doc["czxid"], st.czxid);
    assert_eq!(doc["ctime_ms"], st.ctime);
    assert_eq!(doc["ctime"], ctime);
    c.delete_all(&base).await.unwrap();
}

/// -c and -t make nodes the server reaps; checked on a server of our own whose reaper runs
/// every 100 ms (60 s by default).
#[tokio::test]
async fn container_ttl_and_sequential_creates() {
    let zk_server = Standalone::builder()
        .extended_types(true)
        .system_property("znode.container.checkIntervalMs", "100")
        .start()
        .unwrap();
    let at = zk_server.connect_string();
    let run = |args: Vec<String>| finish(command_at(&at, args), None);
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let c = Client::builder(&at).connect().await.unwrap();
    assert_code(&run(s(&["create", "/base"])).await, 0);
    // -c: a container; -t: a TTL node; and a plain node that must stay.
    assert_code(&run(s(&["create", "-c", "/base/cont"])).await, 0);
    assert_code(&run(s(&["create", "-t", "100", "/base/ttl", "v"])).await, 0);
    assert_code(&run(s(&["create", "/base/plain"])).await, 0);
    // -s -t: a sequential TTL node, numbered by the parent's child changes so far.
    let o = run(s(&["create", "-s", "-t", "600000", "/base/tseq-"])).await;
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "/base/tseq-0000000003\n");
    assert_code(&run(s(&["create", "-t", "0", "/base/t0"])).await, 2);
    assert_code(&run(s(&["create", "-e", "-c", "/base/x"])).await, 2);
    assert_code(&run(s(&["create", "-c", "-t", "5", "/base/x"])).await, 2);
    // -s: the sequence suffix, printed as created.
    let o = run(s(&["create", "-s", "/base/s-", "x"])).await;
    assert_eq!(stdout(&o), "/base/s-0000000004\n");
    assert_code(&run(s(&["create", "/base/cont/item"])).await, 0);
    assert_code(&run(s(&["delete", "/base/cont/item"])).await, 0);
    let reaped = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let ttl = c.exists("/base/ttl").await.unwrap();
            let cont = c.exists("/base/cont").await.unwrap();
            if ttl.is_none() && cont.is_none() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(
        reaped.is_ok(),
        "the TTL node or the container outlived its time"
    );
    assert!(c.exists("/base/plain").await.unwrap().is_some());
    assert!(c.exists("/base/tseq-0000000003").await.unwrap().is_some());
}

#[tokio::test]
async fn sync_config_whoami_and_get_ephemerals() {
    let base = unique("misc");
    assert_code(&zk(["create", &base]).await, 0);
    let o = zk(["sync", &base]).await;
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "");
    assert_code(&zk(["sync", "/zk-cli-no-such-node"]).await, 0);
    // A standalone server without reconfig has an empty (or version-only) dynamic config,
    // and its Stat.
    let o = zk(["config"]).await;
    assert_code(&o, 0);
    let doc = json(&zk(["--json", "config"]).await);
    assert_eq!(doc["encoding"], "utf8");
    assert!(doc["stat"]["czxid"].is_i64(), "{doc}");
    let o = zk(["whoami"]).await;
    assert_code(&o, 0);
    assert!(stdout(&o).contains("ip: 127.0.0.1"), "{}", stdout(&o));
    let o = zk(["--auth", "digest:carol:pw", "whoami"]).await;
    assert!(stdout(&o).contains("digest: carol"), "{}", stdout(&o));
    // A new session has no ephemeral nodes (the shell test shows one that has).
    let o = zk(["getEphemerals", &base]).await;
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "");
    let doc = json(&zk(["--json", "getEphemerals"]).await);
    assert_eq!(doc["ephemerals"], serde_json::json!([]));
    assert_code(&zk(["delete", &base]).await, 0);
}
