//! `zk du`, `zk tree`, `zk find` and `zk grep` on a real server, in text and `--json`, with
//! `--depth`.

mod support;

use support::{admin, assert_code, json, stdout, unique, zk};
use zk_session::CreateOptions;

/// base (4 bytes) / a (10) / a/x (100) / a/x/y (1000 bytes, one line "needle") ; base / b (5)
async fn sample() -> String {
    let base = unique("explore");
    let c = admin().await;
    let mut big = vec![b'.'; 993];
    big.extend_from_slice(b"\nneedle");
    for (rel, data) in [
        ("", b"root".to_vec()),
        ("/a", b"0123456789".to_vec()),
        ("/a/x", vec![b'x'; 100]),
        ("/a/x/y", big),
        ("/b", b"hay\xff\xfe".to_vec()),
    ] {
        c.create(&format!("{base}{rel}"), &data, CreateOptions::persistent())
            .await
            .unwrap();
    }
    base
}

#[tokio::test]
async fn du_sums_each_subtree() {
    let base = sample().await;
    let o = zk(["du", &base]).await;
    assert_code(&o, 0);
    assert_eq!(
        stdout(&o),
        format!("bytes\tznodes\tpath\n1119\t5\t{base}\n1110\t3\t{base}/a\n5\t1\t{base}/b\n")
    );
    let doc = json(&zk(["--json", "du", "--depth", "2", &base]).await);
    let usage = doc["usage"].as_array().unwrap();
    assert_eq!(usage.len(), 4);
    assert_eq!(usage[2]["path"], format!("{base}/a/x"));
    assert_eq!(usage[2]["bytes"], 1100);
    assert_eq!(usage[2]["znodes"], 2);
}

#[tokio::test]
async fn tree_draws_down_to_a_depth() {
    let base = sample().await;
    let o = zk(["tree", &base]).await;
    assert_code(&o, 0);
    assert_eq!(
        stdout(&o),
        format!("{base}\n├── a\n│   └── x\n│       └── y\n└── b\n")
    );
    let o = zk(["tree", "--depth", "1", &base]).await;
    assert_eq!(stdout(&o), format!("{base}\n├── a\n└── b\n"));
    let doc = json(&zk(["--json", "tree", "--depth", "1", &base]).await);
    assert_eq!(
        doc["nodes"],
        serde_json::json!([base.clone(), format!("{base}/a"), format!("{base}/b")])
    );
}

#[tokio::test]
async fn find_and_grep_match_paths_and_data() {
    let base = sample().await;
    let o = zk(["find", "/(x|b)$", &base]).await;
    assert_code(&o, 0);
    assert_eq!(stdout(&o), format!("{base}/a/x\n{base}/b\n"));
    assert_code(&zk(["find", "nothing-such", &base]).await, 1);
    assert_code(&zk(["find", "(", &base]).await, 2);
    // --depth 1 stops above a/x.
    assert_code(&zk(["find", "--depth", "1", "/x$", &base]).await, 1);
    let doc = json(&zk(["--json", "find", "--depth", "1", "/[ab]$", &base]).await);
    assert_eq!(
        doc["matches"],
        serde_json::json!([format!("{base}/a"), format!("{base}/b")])
    );

    let o = zk(["grep", "^need", &base]).await;
    assert_code(&o, 0);
    assert_eq!(stdout(&o), format!("{base}/a/x/y: needle\n"));
    // Data that is not UTF-8 is matched as bytes.
    let o = zk(["grep", "hay", &base]).await;
    assert_eq!(stdout(&o), format!("{base}/b: hay\u{fffd}\u{fffd}\n"));
    assert_code(&zk(["grep", "--depth", "2", "needle", &base]).await, 1);
    let doc = json(&zk(["--json", "grep", "[0-9]{10}", &base]).await);
    assert_eq!(
        doc["matches"],
        serde_json::json!([{"path": format!("{base}/a"), "line": "0123456789"}])
    );
}
