//! Every example program, run against a real server from the test kit, so that none rots:
//! each must exit successfully and print what its doc comment promises.

use std::process::Command;

use zk_testkit::{shared_standalone, shared_tls_standalone, SaslServer, Standalone};

/// Runs program `bin` with `hosts` as its argument and `env`; returns its stdout.
fn run(bin: &str, hosts: &str, env: &[(&str, String)]) -> String {
    let out = Command::new(bin)
        .arg(hosts)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("start the example");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{bin}: {}\n{stdout}\n{stderr}",
        out.status
    );
    println!("{stdout}");
    stdout
}

#[test]
fn lock_with_fencing() {
    let hosts = shared_standalone().connect_string();
    let out = run(env!("CARGO_BIN_EXE_lock_with_fencing"), &hosts, &[]);
    let token: u64 = out
        .lines()
        .find_map(|l| l.split("with fencing token ").nth(1))
        .and_then(|t| t.trim().parse().ok())
        .expect("a fencing token");
    assert!(
        out.contains(&format!("wrote {token} under the lock")),
        "{out}"
    );
    assert!(out.ends_with("released\n"), "{out}");
}

#[test]
fn work_queue() {
    let hosts = shared_standalone().connect_string();
    let out = run(env!("CARGO_BIN_EXE_work_queue"), &hosts, &[]);
    assert!(out.contains("jobs done once each: 10"), "{out}");
    let done: usize = out
        .lines()
        .filter_map(|l| l.split(" did ").nth(1))
        .filter_map(|t| t.split(' ').next()?.parse::<usize>().ok())
        .sum();
    assert_eq!(done, 10, "no job twice: {out}");
}

#[test]
fn discovery() {
    let hosts = shared_standalone().connect_string();
    let out = run(env!("CARGO_BIN_EXE_discovery"), &hosts, &[]);
    assert!(out.contains("api-1 at http://127.0.0.1:8080"), "{out}");
    assert!(out.contains("api-2 at http://127.0.0.1:8081"), "{out}");
    assert!(
        out.contains("round robin: api-1 api-2 api-1 api-2"),
        "{out}"
    );
}

#[test]
fn leader_election() {
    let hosts = shared_standalone().connect_string();
    let out = run(env!("CARGO_BIN_EXE_leader_election"), &hosts, &[]);
    let order = out
        .lines()
        .find_map(|l| l.strip_prefix("leaders in order: "))
        .expect("the order of leaders");
    let mut leaders: Vec<&str> = order.split(" -> ").collect();
    leaders.sort();
    assert_eq!(leaders, ["alpha", "beta"], "each leads once: {out}");
}

#[test]
fn watch_node() {
    let hosts = shared_standalone().connect_string();
    let out = run(env!("CARGO_BIN_EXE_watch_node"), &hosts, &[]);
    assert!(out.contains("/examples/watched = v1 (version 0)"), "{out}");
    assert!(
        out.contains("event: NodeDataChanged on /examples/watched"),
        "{out}"
    );
}

#[test]
fn tls() {
    let env = shared_tls_standalone();
    let files = [
        ("ZK_TLS_CA", env.certs.ca().display().to_string()),
        (
            "ZK_TLS_CLIENT_PEM",
            env.certs.client_pem().display().to_string(),
        ),
    ];
    let hosts = env.zk.secure_connect_string();
    let out = run(env!("CARGO_BIN_EXE_tls"), &hosts, &files);
    assert!(out.contains("x509:CN=zk-client"), "{out}");
}

#[test]
fn sasl() {
    let zk = Standalone::builder()
        .sasl(SaslServer::digest_md5().user("bob", "bobsecret"))
        .start()
        .unwrap();
    let creds = [
        ("ZK_SASL_USER", "bob".to_owned()),
        ("ZK_SASL_PASSWORD", "bobsecret".to_owned()),
    ];
    let out = run(env!("CARGO_BIN_EXE_sasl"), &zk.connect_string(), &creds);
    assert!(out.contains("the server knows us as sasl:bob"), "{out}");
    assert!(out.contains("readable by sasl:bob only"), "{out}");
}
