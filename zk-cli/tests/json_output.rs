//! `zk --json`: every read command's output parsed back with serde_json.

mod support;

use serde_json::json;
use support::{admin, assert_code, json, stdout, unique, zk, zk_stdin};
use zk_session::CreateOptions;

#[tokio::test]
async fn reads_give_one_json_document_each() {
    let base = unique("json");
    let c = admin().await;
    c.create_with_parents(
        &format!("{base}/kid/grandkid"),
        b"",
        CreateOptions::persistent(),
    )
    .await
    .unwrap();
    c.create(
        &format!("{base}/text"),
        "héllo\n".as_bytes(),
        CreateOptions::persistent(),
    )
    .await
    .unwrap();
    c.create(
        &format!("{base}/bin"),
        b"\x00\x01\xff",
        CreateOptions::persistent(),
    )
    .await
    .unwrap();

    // get: UTF-8 data as text, anything else as base64, "encoding" telling which, and the Stat.
    let doc = json(&zk(["--json", "get", &format!("{base}/text")]).await);
    assert_eq!(doc["data"], "héllo\n");
    assert_eq!(doc["encoding"], "utf8");
    assert_eq!(doc["path"], format!("{base}/text"));
    assert_eq!(doc["stat"]["dataLength"], 7);
    let doc = json(&zk(["get", "--json", &format!("{base}/bin")]).await);
    assert_eq!(doc["data"], "AAH/");
    assert_eq!(doc["encoding"], "base64");

    // ls, ls -R, ls -s.
    let doc = json(&zk(["--json", "ls", &base]).await);
    assert_eq!(doc["children"], json!(["bin", "kid", "text"]));
    assert!(doc.get("stat").is_none());
    let doc = json(&zk(["--json", "ls", "-R", "-s", &base]).await);
    let nodes: Vec<String> = ["", "/bin", "/kid", "/text", "/kid/grandkid"]
        .iter()
        .map(|s| format!("{base}{s}"))
        .collect();
    assert_eq!(doc["nodes"], json!(nodes));
    assert_eq!(doc["stat"]["numChildren"], 3);

    // stat, getAcl, whoami, create.
    let (_, st) = c.get_data(&base).await.unwrap();
    let doc = json(&zk(["--json", "stat", &base]).await);
    assert_eq!(doc["czxid"], st.czxid);
    assert_eq!(doc["pzxid"], st.pzxid);
    assert_eq!(doc["numChildren"], 3);
    let doc = json(&zk(["--json", "getAcl", &base]).await);
    assert_eq!(
        doc["acl"],
        json!([{"scheme": "world", "id": "anyone", "perms": "cdrwa"}])
    );
    let doc = json(&zk(["--json", "whoami"]).await);
    assert_eq!(doc["identities"][0]["scheme"], "ip");
    let o = zk_stdin(["--json", "create", &format!("{base}/new"), "-"], b"\xfe").await;
    assert_eq!(json(&o), json!({"path": format!("{base}/new")}));
    // Exactly one line per document.
    let o = zk(["--json", "ls", &base]).await;
    assert_code(&o, 0);
    assert_eq!(stdout(&o).lines().count(), 1);
    c.delete_all(&base).await.unwrap();
}
