//! The demo's child processes: each is this same program started as `demo lock …` or
//! `demo elect …`, one ZooKeeper session per process, printing one line per event.

use std::{
    io::Write,
    time::{Duration, Instant},
};

use zk_recipes::{InterProcessMutex, LeaderSelector};
use zk_session::{Client, CreateOptions, Op, Version};

use crate::transport::Transport;

fn say(name: &str, what: &str) {
    println!("{name}: {what}");
    let _ = std::io::stdout().flush();
}

async fn connect(transport: &Transport, hosts: &str, name: &str) -> Client {
    let connected = match transport.builder(hosts) {
        // A short session, so that failovers show quickly; but the first connection (a TLS
        // handshake with a JVM, on a loaded machine) may take longer than the third of it
        // that each server would get by default.
        Ok(b) => b
            .session_timeout(Duration::from_secs(2))
            .connect_attempt_timeout(Duration::from_secs(2))
            .first_connection_timeout(Duration::from_secs(20))
            .connect()
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e),
    };
    let c = connected.unwrap_or_else(|e| {
        say(name, &format!("cannot connect: {e}"));
        std::process::exit(3)
    });
    let mut events = c.session_events();
    let n = name.to_owned();
    tokio::spawn(async move {
        while let Some(ev) = events.next().await {
            say(&n, &format!("session {ev:?}"));
        }
    });
    c
}

/// Takes the lock over and over; under it, bumps a counter znode with a fenced write, so a
/// write by a holder that lost the lock would fail on the server.
pub async fn lock_loop(transport: &Transport, hosts: &str, path: &str, name: &str) {
    let c = connect(transport, hosts, name).await;
    let counter = format!("{path}-counter");
    // The counter's parent may not exist yet (the lock path's is made by the first acquire).
    let mut at = 0;
    while let Some(i) = counter[at + 1..].find('/') {
        at += i + 1;
        let _ = c
            .create(&counter[..at], b"", CreateOptions::persistent())
            .await;
    }
    let _ = c.create(&counter, b"0", CreateOptions::persistent()).await;
    let mutex = InterProcessMutex::new(c.clone(), path);
    loop {
        let guard = match mutex.acquire().await {
            Ok(g) => g,
            Err(e) => {
                say(name, &format!("acquire failed: {e}; retrying"));
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        let token = guard.fencing_token();
        let (data, stat) = match c.get_data(&counter).await {
            Ok(x) => x,
            Err(e) => {
                say(name, &format!("cannot read the counter: {e}"));
                continue;
            }
        };
        let n: u64 = std::str::from_utf8(&data)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let write = Op::set_data(
            counter.clone(),
            (n + 1).to_string().as_bytes(),
            Version::Exact(stat.version),
        );
        match guard.fenced_multi([write]).await {
            Ok(_) => say(
                name,
                &format!(
                    "holds the lock (fencing token {token}), counter {} -> {}",
                    n,
                    n + 1
                ),
            ),
            Err(e) => say(name, &format!("fenced write refused: {e}")),
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(300)) => {}
            reason = guard.lost() => say(name, &format!("LOST the lock: {}", reason.as_str())),
        }
        let _ = guard.release().await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Joins the election with auto-requeue; while leader, prints a heartbeat.
pub async fn elect_loop(transport: &Transport, hosts: &str, path: &str, name: &str) {
    let c = connect(transport, hosts, name).await;
    let who = name.to_owned();
    let _selector = LeaderSelector::builder(c, path)
        .task(move |lead| {
            let who = who.clone();
            async move {
                let started = Instant::now();
                say(
                    &who,
                    &format!(
                        "LEADER (term {}, fencing token {})",
                        lead.term(),
                        lead.fencing_token()
                    ),
                );
                // Cancelled (dropped) by the selector as soon as leadership is lost.
                let _bye = Bye(who.clone());
                loop {
                    tokio::time::sleep(Duration::from_millis(700)).await;
                    say(
                        &who,
                        &format!("leading for {} ms", started.elapsed().as_millis()),
                    );
                }
            }
        })
        .id(name)
        .auto_requeue(true)
        .start()
        .await
        .expect("the selector starts");
    std::future::pending::<()>().await;
}

struct Bye(String);

impl Drop for Bye {
    fn drop(&mut self) {
        say(&self.0, "leadership over");
    }
}
