//! Connecting: a malformed connect string is a usage error, refusing servers and silent ones
//! end within the connect timeout with exit 3, ZK_SERVERS is the default, and watches say on
//! stderr when the connection is suspended and when it comes back.

mod support;

use std::{
    process::Stdio,
    time::{Duration, Instant},
};

use support::{admin, assert_code, command_at, server, stderr, unique, SOON, ZK};
use tokio::{
    io::{AsyncBufReadExt, BufReader, Lines},
    process::{ChildStderr, ChildStdout, Command},
};
use zk_session::{Client, CreateOptions, Version};
use zk_testkit::Standalone;

/// Slack for a busy machine on top of the connect timeout: the bound is the timeout, the
/// slack only keeps a loaded CI from failing the test.
const SLACK: Duration = Duration::from_secs(5);

async fn run_at(server: &str, args: &[&str]) -> (std::process::Output, Duration) {
    let started = Instant::now();
    let o = support::finish(command_at(server, args), None).await;
    (o, started.elapsed())
}

#[tokio::test]
async fn malformed_connect_string_is_a_usage_error() {
    for bad in [
        "h:notaport",
        "/chroot-only",
        "a:1,b:99999",
        ":1",
        "",
        "a:1/bad/",
    ] {
        let (o, _) = run_at(bad, &["ls", "/"]).await;
        assert_code(&o, 2);
        assert!(stderr(&o).contains("--server"), "{}", stderr(&o));
    }
}

#[tokio::test]
async fn refused_connections_end_within_the_connect_timeout() {
    // Nothing listens on ports 1 and 2.
    let (o, took) = run_at(
        "127.0.0.1:1,127.0.0.1:2",
        &["--connect-timeout", "2", "ls", "/"],
    )
    .await;
    assert_code(&o, 3);
    let err = stderr(&o);
    assert!(
        err.contains("127.0.0.1:1") && err.contains("127.0.0.1:2"),
        "{err}"
    );
    assert!(err.contains("refused"), "{err}");
    println!("refused, --connect-timeout 2: exit 3 after {took:?}");
    assert!(took < Duration::from_secs(2) + SLACK, "{took:?}");
    // The default connect timeout is 5 s, whatever the session timeout.
    let (o, took) = run_at("127.0.0.1:1", &["--session-timeout", "30", "ls", "/"]).await;
    assert_code(&o, 3);
    println!("refused, default timeout: exit 3 after {took:?}");
    assert!(took < Duration::from_secs(5) + SLACK, "{took:?}");
}

/// Every server refusing is known at once: `zk` does not wait out its connect timeout (10
/// minutes here) but says that each refused.
#[tokio::test]
async fn every_server_refusing_fails_at_once_not_at_the_timeout() {
    let run = run_at(
        "127.0.0.1:1,127.0.0.1:2",
        &["--connect-timeout", "600", "ls", "/"],
    );
    let (o, took) = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("zk waited for its connect timeout");
    assert_code(&o, 3);
    let err = stderr(&o);
    assert!(err.contains("every server refused"), "{err}");
    assert!(
        err.contains("127.0.0.1:1") && err.contains("127.0.0.1:2"),
        "{err}"
    );
    println!("refused, --connect-timeout 600: exit 3 after {took:?}");
}

/// A server that accepts and never answers is no better than one that refuses.
#[tokio::test]
async fn a_silent_server_ends_within_the_connect_timeout() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap().to_string();
    let (o, took) = run_at(&addr, &["--connect-timeout", "1.5", "get", "/"]).await;
    assert_code(&o, 3);
    assert!(stderr(&o).contains(&addr), "{}", stderr(&o));
    println!("silent server, --connect-timeout 1.5: exit 3 after {took:?}");
    assert!(took < Duration::from_millis(1500) + SLACK, "{took:?}");
    drop(silent);
}

#[tokio::test]
async fn zk_servers_is_the_default_server() {
    let base = unique("env");
    let o = Command::new(ZK)
        .args(["create", &base, "from-env"])
        .env("ZK_SERVERS", server())
        .output()
        .await
        .unwrap();
    assert_code(&o, 0);
    let c = admin().await;
    assert_eq!(&c.get_data(&base).await.unwrap().0[..], b"from-env");
    // --server wins over the environment.
    let o = Command::new(ZK)
        .args([
            "--server",
            &server(),
            "--connect-timeout",
            "1",
            "delete",
            &base,
        ])
        .env("ZK_SERVERS", "127.0.0.1:1")
        .output()
        .await
        .unwrap();
    assert_code(&o, 0);
}

fn spawn_at(
    server: &str,
    args: &[&str],
) -> (
    tokio::process::Child,
    Lines<BufReader<ChildStdout>>,
    Lines<BufReader<ChildStderr>>,
) {
    let mut c = command_at(server, args);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let out = BufReader::new(child.stdout.take().unwrap()).lines();
    let err = BufReader::new(child.stderr.take().unwrap()).lines();
    (child, out, err)
}

/// The next line containing `what`, within SOON.
async fn line_with<R: tokio::io::AsyncBufRead + Unpin>(lines: &mut Lines<R>, what: &str) -> String {
    tokio::time::timeout(SOON, async {
        loop {
            let line = lines.next_line().await.unwrap().expect("output ended");
            if line.contains(what) {
                return line;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no line with {what:?}"))
}

/// The server is killed and started again under `zk watch` and `zk ls -w`: both say the
/// connection is suspended, then that it is back, and go on with the same session.
#[tokio::test]
async fn watches_report_suspension_and_reconnection() {
    let zk_server = Standalone::start().unwrap();
    let at = zk_server.connect_string();
    let c = Client::builder(&at).connect().await.unwrap();
    c.create("/w", b"", CreateOptions::persistent())
        .await
        .unwrap();
    let long = ["--session-timeout", "30"];
    let (mut watch, mut w_out, mut w_err) = spawn_at(&at, &[&long[..], &["watch", "/w"]].concat());
    let (mut ls, mut ls_out, mut ls_err) =
        spawn_at(&at, &[&long[..], &["ls", "-w", "/w"]].concat());
    // Both are set once ls -w has listed (nothing) and watch reports a first change.
    let first = tokio::time::timeout(SOON, async {
        let mut n = 0u32;
        loop {
            n += 1;
            c.set_data("/w", n.to_string().as_bytes(), Version::Any)
                .await
                .unwrap();
            let next = tokio::time::timeout(Duration::from_millis(300), w_out.next_line()).await;
            if let Ok(line) = next {
                return line.unwrap().expect("a line");
            }
        }
    })
    .await
    .expect("zk watch reports a change");
    assert_eq!(first, "NodeDataChanged /w");
    drop(c);
    zk_server.kill9();
    let said = line_with(&mut w_err, "suspended").await;
    assert!(said.starts_with("zk: "), "{said}");
    line_with(&mut ls_err, "suspended").await;
    zk_server.start().unwrap();
    line_with(&mut w_err, "connection back").await;
    line_with(&mut ls_err, "connection back").await;
    // Same session: the watches still fire.
    let c = Client::builder(&at).connect().await.unwrap();
    c.create("/w/child", b"", CreateOptions::persistent())
        .await
        .unwrap();
    assert_eq!(
        line_with(&mut ls_out, "Node").await,
        "NodeChildrenChanged /w"
    );
    let ls_status = tokio::time::timeout(SOON, ls.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ls_status.code(), Some(0));
    assert_eq!(
        line_with(&mut w_out, "Node").await,
        "NodeChildrenChanged /w"
    );
    watch.start_kill().unwrap();
    let _ = watch.wait().await;
}
