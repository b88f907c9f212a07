//! `zk health` against a real three-member ensemble: ok with everyone up; degraded naming a
//! paused member; no quorum with two of three paused. And a member that does not allow the
//! four-letter words, shown as such.

mod support;

use std::time::Duration;

use support::{assert_code, command_at, finish, stdout};
use zk_testkit::{Ensemble, Standalone};

async fn health(server: &str, json: bool) -> std::process::Output {
    let mut args = vec!["health", "--timeout", "2"];
    if json {
        args.insert(0, "--json");
    }
    finish(command_at(server, args), None).await
}

/// Asks until the verdict is `want` (a member's state takes a few ticks to follow a pause).
async fn until_verdict(server: &str, want: &str) -> serde_json::Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    loop {
        let o = health(server, true).await;
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        if doc["verdict"] == want {
            let code = match want {
                "ok" => 0,
                "degraded" => 1,
                _ => 3,
            };
            assert_code(&o, code);
            support::assert_camel_case_keys(&doc);
            return doc;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never {want}: {doc}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test]
async fn ok_degraded_and_no_quorum() {
    let ensemble = Ensemble::start(3).unwrap();
    let server = ensemble.connect_string();
    let leader = ensemble.leader_index().unwrap();
    let followers = ensemble.follower_indices();
    let o = health(&server, false).await;
    assert_code(&o, 0);
    let table = stdout(&o);
    assert!(table.starts_with("MEMBER"), "{table}");
    assert!(
        table.contains("leader *") && table.ends_with("verdict: ok\n"),
        "{table}"
    );
    assert_eq!(table.matches("follower").count(), 2, "{table}");
    let doc = until_verdict(&server, "ok").await;
    let members = doc["members"].as_array().unwrap();
    assert_eq!(members.len(), 3);
    assert_eq!(members[leader]["leader"], true);
    for m in members {
        assert_eq!(m["state"], "serving");
        assert!(m["znodes"].as_u64().unwrap() >= 4, "{m}");
        assert!(m["connections"].as_u64().is_some() && m["watches"].as_u64().is_some());
        assert!(m["zxid"].as_str().unwrap().starts_with("0x"));
    }

    let paused = ensemble.server(followers[0]);
    let name = paused.client_addr().to_string();
    paused.pause().unwrap();
    let doc = until_verdict(&server, "degraded").await;
    assert_eq!(doc["members"][followers[0]]["state"], "no answer");
    assert_eq!(
        doc["reasons"],
        serde_json::json!([format!("{name} no answer")])
    );
    let o = health(&server, false).await;
    assert!(
        stdout(&o).contains(&format!("verdict: degraded ({name} no answer)")),
        "{}",
        stdout(&o)
    );

    ensemble.server(followers[1]).pause().unwrap();
    let doc = until_verdict(&server, "no quorum").await;
    assert_eq!(doc["members"][leader]["state"], "not serving");
    paused.resume().unwrap();
    ensemble.server(followers[1]).resume().unwrap();
}

/// ZooKeeper answers srvr whatever the whitelist says; the words it refuses are listed, and
/// their fields left empty, without counting against the verdict.
#[tokio::test]
async fn words_a_member_refuses_are_reported_not_failed() {
    let zk = Standalone::builder()
        .config("4lw.commands.whitelist", "ruok")
        .start()
        .unwrap();
    let o = health(&zk.connect_string(), true).await;
    assert_code(&o, 0);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let member = &doc["members"][0];
    assert_eq!(member["refusedWords"], serde_json::json!(["mntr", "cons"]));
    assert_eq!(member["watches"], serde_json::Value::Null);
    assert_eq!(member["mode"], "standalone");
    assert_eq!(doc["verdict"], "ok");
    let o = health(&zk.connect_string(), false).await;
    assert!(
        stdout(&o).contains("serving (mntr, cons not allowed)"),
        "{}",
        stdout(&o)
    );
}
