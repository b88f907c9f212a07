//! Running the `zk` binary against the test kit's shared real server.

#![allow(dead_code)] // each test file uses its own part of this

use std::{
    ffi::OsStr,
    process::{Output, Stdio},
    sync::atomic::{AtomicU32, Ordering},
    time::Duration,
};

use tokio::{io::AsyncWriteExt, process::Command};
use zk_session::Client;
use zk_testkit::shared_standalone;

pub const ZK: &str = env!("CARGO_BIN_EXE_zk");
/// Generous bound for one zk run on a busy machine.
pub const SOON: Duration = Duration::from_secs(60);

/// A path no other test uses.
pub fn unique(tag: &str) -> String {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    format!(
        "/zk-cli-{tag}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

pub fn server() -> String {
    shared_standalone().connect_string()
}

/// `zk --server <shared> ARGS...`, ready to run.
pub fn command<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    command_at(&server(), args)
}

/// `zk --server SERVER ARGS...`, ready to run.
pub fn command_at<I, S>(server: &str, args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut c = Command::new(ZK);
    c.arg("--server")
        .arg(server)
        .args(args)
        .env_remove("ZK_SERVERS")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    c
}

/// Runs a command to its end within [`SOON`].
pub async fn finish(mut c: Command, stdin: Option<&[u8]>) -> Output {
    if stdin.is_some() {
        c.stdin(Stdio::piped());
    }
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("run zk");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(bytes).await.unwrap();
        drop(pipe);
    }
    tokio::time::timeout(SOON, child.wait_with_output())
        .await
        .expect("zk did not finish")
        .expect("wait for zk")
}

/// `zk --server <shared> ARGS...` and its output.
pub async fn zk<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    finish(command(args), None).await
}

/// The same with `input` on stdin.
pub async fn zk_stdin<I, S>(args: I, input: &[u8]) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    finish(command(args), Some(input)).await
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
pub fn assert_code(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout {:?} stderr {:?}",
        stdout(o),
        stderr(o)
    );
}

/// stdout parsed as one JSON document, whose keys all follow the README's naming scheme.
#[track_caller]
pub fn json(o: &Output) -> serde_json::Value {
    assert_code(o, 0);
    let doc = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {:?}", stdout(o)));
    assert_camel_case_keys(&doc);
    doc
}

/// Every key, at any depth, is lowerCamelCase: a lowercase ASCII letter, then letters and
/// digits (the README's one naming scheme for `--json`).
#[track_caller]
pub fn assert_camel_case_keys(v: &serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                let camel = key.starts_with(|c: char| c.is_ascii_lowercase())
                    && key.chars().all(|c| c.is_ascii_alphanumeric());
                assert!(camel, "JSON key {key:?} is not lowerCamelCase in {v}");
                assert_camel_case_keys(value);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(assert_camel_case_keys),
        _ => {}
    }
}

pub async fn admin() -> Client {
    Client::builder(&server()).connect().await.expect("connect")
}
