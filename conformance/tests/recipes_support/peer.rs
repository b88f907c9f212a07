//! A peer process of another client library (Curator, kazoo), driven over stdin and
//! followed line by line on stdout: it says READY once connected and ERROR when something
//! fails.

use std::{
    io::Write,
    process::{Child, ChildStdin, Command, Stdio},
    time::{Duration, Instant},
};

use conformance::peers::Lines;

use super::SOON;

/// A running peer; killed when dropped.
pub struct Peer {
    label: String,
    child: Child,
    stdin: Option<ChildStdin>,
    /// Everything the peer printed so far.
    pub stdout: Lines,
    /// How many stdout lines [`Peer::expect`] has gone past.
    read: usize,
    stderr: Lines,
}

impl Peer {
    /// Runs `cmd` (the program and its arguments) with piped stdio and waits until it says
    /// READY. `label` names it in failures.
    pub async fn start(label: &str, mut cmd: Command) -> Peer {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the {label} peer (install it): {e}"));
        let mut peer = Peer {
            label: label.to_owned(),
            stdin: child.stdin.take(),
            stdout: Lines::follow(child.stdout.take().unwrap()),
            read: 0,
            stderr: Lines::follow(child.stderr.take().unwrap()),
            child,
        };
        peer.expect("READY").await;
        peer
    }

    /// Waits for a line starting with `want` after those already expected and returns it;
    /// fails with the peer's output if it ends first or says ERROR.
    pub async fn expect(&mut self, want: &str) -> String {
        let from = self.read;
        let found = self
            .stdout
            .wait_for(SOON, |lines, ended| {
                for (i, line) in lines.iter().enumerate().skip(from) {
                    if line.starts_with("ERROR") {
                        return Some(Err(line.clone()));
                    }
                    if line.starts_with(want) {
                        return Some(Ok((i + 1, line.clone())));
                    }
                }
                ended.then(|| Err("the process ended".to_owned()))
            })
            .await;
        match found {
            Some(Ok((read, line))) => {
                self.read = read;
                line
            }
            Some(Err(why)) => self.fail(&format!("waiting for {want}: {why}")).await,
            None => self.fail(&format!("no {want} within {SOON:?}")).await,
        }
    }

    /// What follows `want ` on the next line starting with it (see [`expect`](Self::expect)).
    pub async fn answer(&mut self, want: &str) -> String {
        let line = self.expect(want).await;
        line[want.len()..].trim().to_owned()
    }

    /// Whether the peer has said `what` by now (without waiting).
    pub fn has_said(&self, what: &str) -> bool {
        self.stdout.snapshot().iter().any(|l| l.starts_with(what))
    }

    /// Sends one line to the peer.
    pub async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Closes its stdin and waits for a successful exit.
    pub async fn finish(mut self) {
        self.stdin.take();
        let deadline = Instant::now() + SOON;
        let exit = loop {
            match self.child.try_wait() {
                Ok(None) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(20)).await
                }
                Ok(None) => break Err("still running".to_owned()),
                Ok(Some(s)) => break Ok(s),
                Err(e) => break Err(e.to_string()),
            }
        };
        match exit {
            Ok(s) if s.success() => {}
            other => self.fail(&format!("exit: {other:?}")).await,
        }
    }

    /// SIGKILLs the peer (a crash: it releases nothing and does not close its session) and
    /// reaps it.
    pub fn kill9(&mut self) {
        self.child.kill().expect("SIGKILL the peer");
        let _ = self.child.wait();
    }

    /// Kills the peer and fails the test with `why` and what the peer printed.
    pub async fn fail(&mut self, why: &str) -> ! {
        let _ = self.child.kill();
        tokio::time::sleep(Duration::from_millis(200)).await;
        panic!(
            "{} peer: {why}\nstdout: {:?}\nstderr: {}",
            self.label,
            self.stdout.snapshot(),
            self.stderr.snapshot().join("\n")
        );
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
