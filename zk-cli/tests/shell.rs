//! `zk shell` (and `zk` with no command on a terminal) in a real terminal: tmux runs it,
//! send-keys types, capture-pane reads the screen.

mod support;

use std::{path::PathBuf, time::Duration};

use support::{admin, assert_code, server, stderr, stdout, unique, zk, zk_stdin, SOON, ZK};
use tokio::process::Command;

/// A tmux server of our own (its own socket), killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    async fn start(cmd: &str) -> Tmux {
        let t = Tmux {
            socket: format!("zk-cli-test-{}", unique("tmux").replace('/', "")),
        };
        t.run(&["new-session", "-d", "-s", "t", "-x", "160", "-y", "50", cmd])
            .await;
        t
    }

    async fn run(&self, args: &[&str]) -> String {
        let o = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .await
            .expect("tmux is installed");
        assert!(o.status.success(), "tmux {args:?}: {:?}", o);
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Types `text` literally.
    async fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "t", "-l", text]).await;
    }

    /// Presses a key: Enter, Tab, Up, C-d.
    async fn key(&self, key: &str) {
        self.run(&["send-keys", "-t", "t", key]).await;
    }

    async fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "t"]).await
    }

    /// Waits until the screen shows what `ok` looks for, and returns the screen.
    async fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let mut last = String::new();
        let found = tokio::time::timeout(SOON, async {
            loop {
                last = self.screen().await;
                if ok(&last) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
        assert!(found.is_ok(), "never saw {what}; the screen:\n{last}");
        last
    }

    async fn wait_for_text(&self, text: &str) -> String {
        self.wait_for(text, |s| s.contains(text)).await
    }

    /// Waits for an empty prompt (as a person would, rather than typing ahead), then types.
    async fn at_prompt(&self, text: &str) {
        let idle = |s: &str| {
            let last = s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
            last.starts_with("zk ") && last.ends_with('>')
        };
        self.wait_for("an empty prompt", idle).await;
        self.type_text(text).await;
    }

    /// Types a line at the prompt and presses Enter.
    async fn line(&self, text: &str) {
        self.at_prompt(text).await;
        self.key("Enter").await;
    }

    /// The last non-empty line on the screen.
    async fn current_line(&self) -> String {
        let s = self.screen().await;
        s.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .to_owned()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

#[tokio::test]
async fn the_shell_edits_completes_and_remembers() {
    let base = unique("shell");
    let dir = std::env::temp_dir().join(base.trim_start_matches('/'));
    std::fs::create_dir_all(&dir).unwrap();
    let history: PathBuf = dir.join("history");
    // No command on a terminal starts the shell.
    let cmd = format!(
        "env ZK_HISTORY={} {ZK} --server {}",
        history.display(),
        server()
    );
    let t = Tmux::start(&cmd).await;
    t.wait_for_text("zk 127.0.0.1:").await;

    t.line(&format!("create -p {base}/alpha-node 'hello world'"))
        .await;
    t.wait_for_text(&format!("\n{base}/alpha-node")).await;

    // Tab completes a znode path from the server...
    t.at_prompt(&format!("get {base}/al")).await;
    t.key("Tab").await;
    let line = format!("get {base}/alpha-node");
    t.wait_for(&line, |s| s.contains(&line)).await;
    t.key("Enter").await;
    t.wait_for_text("\nhello world").await;
    // ... and a command name.
    t.at_prompt("getE").await;
    t.key("Tab").await;
    t.wait_for("getEphemerals", |s| s.contains("getEphemerals"))
        .await;
    t.type_text(&base).await;
    t.key("Enter").await;

    // An ephemeral made in the shell lives with the shell's session, without holding it.
    t.line(&format!("create -e {base}/eph")).await;
    t.wait_for_text(&format!("\n{base}/eph")).await;
    t.line(&format!("getEphemerals {base}")).await;
    let eph_line = format!("\n{base}/eph\n");
    t.wait_for(&eph_line, |s| s.matches(&eph_line).count() >= 2)
        .await;

    // A watch runs until Ctrl-C, which ends it and not the shell; `set` without DATA in
    // the shell sets empty data rather than reading the terminal.
    t.line(&format!("watch {base}/alpha-node")).await;
    let c = admin().await;
    let changed = format!("NodeDataChanged {base}/alpha-node");
    let seen = tokio::time::timeout(SOON, async {
        while !t.screen().await.contains(&changed) {
            c.set_data(
                &format!("{base}/alpha-node"),
                b"x",
                zk_session::Version::Any,
            )
            .await
            .unwrap();
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    assert!(
        seen.is_ok(),
        "the watch printed nothing:\n{}",
        t.screen().await
    );
    t.key("C-c").await;
    t.line(&format!("set {base}/alpha-node")).await;
    t.line(&format!("stat {base}/alpha-node")).await;
    t.wait_for_text("dataLength = 0").await;

    // Mistakes are reported and the shell goes on.
    t.line("frobnicate /x").await;
    t.wait_for_text("unrecognized subcommand").await;
    t.line(&format!("get {base}/missing")).await;
    t.wait_for_text("no node").await;

    // Up recalls the last line.
    t.key("Up").await;
    let recalled = format!("get {base}/missing");
    let ok = tokio::time::timeout(SOON, async {
        while !t.current_line().await.ends_with(&recalled) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(ok.is_ok(), "Up did not recall:\n{}", t.screen().await);
    t.key("C-u").await;

    assert!(c.exists(&format!("{base}/eph")).await.unwrap().is_some());
    t.line("exit").await;
    // The shell's session closes with it: its ephemeral goes at once.
    let gone = tokio::time::timeout(SOON, async {
        while c.exists(&format!("{base}/eph")).await.unwrap().is_some() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(gone.is_ok(), "the shell's ephemeral outlived it");
    let saved = std::fs::read_to_string(&history).unwrap();
    assert!(
        saved.contains(&format!("create -p {base}/alpha-node 'hello world'")),
        "{saved}"
    );
    assert!(saved.contains("frobnicate /x"), "{saved}");
    c.delete_all(&base).await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Commands piped into the shell all run; the exit status is the first failure's.
#[tokio::test]
async fn batch_mode_exits_with_the_first_failing_commands_code() {
    let base = unique("batch");
    let ok = format!("create {base} a\ncreate {base}/x b\nget {base}/x\n");
    let o = zk_stdin(["shell"], ok.as_bytes()).await;
    assert_code(&o, 0);
    assert!(stdout(&o).contains('b'), "{}", stdout(&o));
    // Data ends with a newline when more output follows, and byte for byte at the end.
    let two = format!("get {base}\nget {base}/x\n");
    let o = zk_stdin(["shell"], two.as_bytes()).await;
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "a\nb");
    // A missing node (1), then a usage error (2), then a command that works: all run.
    let failing = format!("get {base}/none\nset -v x {base} y\ncreate {base}/after c\n");
    let o = zk_stdin(["shell"], failing.as_bytes()).await;
    assert_code(&o, 1);
    assert!(stderr(&o).contains("no node"), "{}", stderr(&o));
    let after = zk(["get", &format!("{base}/after")]).await;
    assert_code(&after, 0);
    assert_eq!(after.stdout, b"c");
    let o = zk_stdin(["shell"], b"bogus\n").await;
    assert_code(&o, 2);
    admin().await.delete_all(&base).await.unwrap();
}
