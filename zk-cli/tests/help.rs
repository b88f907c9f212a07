//! What needs no server: --version, --help and each command's help, shell completions,
//! usage errors.

mod support;

use support::{assert_code, stderr, stdout, ZK};
use tokio::process::Command;

async fn zk_alone(args: &[&str]) -> std::process::Output {
    Command::new(ZK)
        .args(args)
        .env("ZK_SERVERS", "127.0.0.1:1")
        .output()
        .await
        .unwrap()
}

const COMMANDS: [&str; 26] = [
    "ls",
    "get",
    "set",
    "create",
    "delete",
    "deleteall",
    "stat",
    "getAcl",
    "setAcl",
    "sync",
    "config",
    "whoami",
    "getEphemerals",
    "addWatch",
    "watch",
    "lock",
    "elect",
    "cp",
    "diff",
    "du",
    "tree",
    "find",
    "grep",
    "health",
    "shell",
    "completions",
];

#[tokio::test]
async fn version_and_help() {
    let o = zk_alone(&["--version"]).await;
    assert_code(&o, 0);
    assert_eq!(stdout(&o), format!("zk {}\n", env!("CARGO_PKG_VERSION")));
    let o = zk_alone(&["--help"]).await;
    assert_code(&o, 0);
    let help = stdout(&o);
    for cmd in COMMANDS {
        assert!(
            help.contains(&format!("\n  {cmd} ")),
            "{cmd} missing from:\n{help}"
        );
    }
    assert!(
        help.contains("Exit status:") && help.contains("ZK_SERVERS"),
        "{help}"
    );
    for cmd in COMMANDS {
        let o = zk_alone(&[cmd, "--help"]).await;
        assert_code(&o, 0);
        assert!(
            stdout(&o).contains(&format!("Usage: zk {cmd}")),
            "{}",
            stdout(&o)
        );
    }
    let o = zk_alone(&["create", "--help"]).await;
    for flag in ["-e", "-s", "-c", "-t <TTL_MS>", "-p", "[DATA]", "[ACL]"] {
        assert!(stdout(&o).contains(flag), "{flag}: {}", stdout(&o));
    }
}

#[tokio::test]
async fn completions_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef zk"),
        ("fish", "complete -c zk"),
    ] {
        let o = zk_alone(&["completions", shell]).await;
        assert_code(&o, 0);
        let script = stdout(&o);
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(script.contains("getEphemerals"), "{shell}");
    }
    assert_code(&zk_alone(&["completions", "tcsh"]).await, 2);
}

/// A reader that goes away early (`zk completions bash | head -1`) is not an error: the
/// script used to be written by a call that panicked on the closed pipe (exit 101).
#[tokio::test]
async fn completions_into_a_closed_pipe_exit_0() {
    let o = Command::new("bash")
        .args(["-o", "pipefail", "-c"])
        .arg(format!("'{ZK}' completions bash | head -1"))
        .output()
        .await
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(stdout(&o).lines().count(), 1, "{}", stdout(&o));
    // The reader closed before anything is written: no race with the pipe's buffer.
    let mut child = Command::new(ZK)
        .args(["completions", "bash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().await.unwrap();
    assert_code(&o, 0);
    assert_eq!(stderr(&o), "");
}

#[tokio::test]
async fn usage_errors_exit_2() {
    for args in [
        &["frobnicate", "/"][..],
        &["ls"],
        &["ls", "/", "extra"],
        &["get", "-e", "/"],
        &["lock", "/x"],
        &["--connect-timeout", "soon", "ls", "/"],
        &["set", "-v", "x", "/a", "d"],
    ] {
        let o = zk_alone(args).await;
        assert_code(&o, 2);
        assert!(stderr(&o).contains("error:"), "{args:?}: {}", stderr(&o));
    }
    // $ZK_SERVERS is set (zk_alone): the usage line still shows only what is required.
    let o = zk_alone(&["stat"]).await;
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("Usage: zk stat <PATH>\n"),
        "{}",
        stderr(&o)
    );
    // No command and no terminal: a usage error rather than a shell.
    let o = zk_alone(&[]).await;
    assert_code(&o, 2);
    assert!(stderr(&o).contains("no command"), "{}", stderr(&o));
}
