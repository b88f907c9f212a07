//! Part 3 of the demo: lock contenders and election participants as separate processes,
//! with a leader process killed and then a ZooKeeper server killed.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    thread,
    time::{Duration, Instant},
};

use conformance::Ensemble;

use crate::transport::Transport;

struct Proc {
    name: String,
    child: Child,
}

/// Every line the children printed, with the time it arrived.
type Log = Arc<Mutex<Vec<(Duration, String, String)>>>;

fn spawn(
    transport: &Transport,
    kind: &str,
    hosts: &str,
    path: &str,
    name: &str,
    t0: Instant,
    log: &Log,
) -> Result<Proc, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .args([kind, hosts, path, name])
        .envs(transport.env())
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {name}: {e}"))?;
    let out = child.stdout.take().ok_or("no stdout")?;
    let log = log.clone();
    let who = name.to_owned();
    thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let at = t0.elapsed();
            println!("  +{:>6} ms  {line}", at.as_millis());
            let what = line
                .split_once(": ")
                .map(|(_, w)| w.to_owned())
                .unwrap_or(line);
            log.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((at, who.clone(), what));
        }
    });
    Ok(Proc {
        name: name.to_owned(),
        child,
    })
}

fn banner(t0: Instant, what: &str) {
    println!("  +{:>6} ms  ===== {what}", t0.elapsed().as_millis());
}

pub fn run(ens: &Ensemble, transport: &Transport) -> Result<(), String> {
    println!(
        "\n== 3. Three processes contend for a lock, three elect a leader (a session each, over {})",
        transport.name()
    );
    // Bring back the server part 2 killed, so the ensemble is whole again.
    for i in 0..ens.len() {
        if !ens.server(i).is_running() {
            ens.server(i).restart().map_err(|e| e.to_string())?;
        }
    }
    let hosts = transport.connect_string(ens);
    let t0 = Instant::now();
    let log: Log = Arc::default();
    let mut procs = Vec::new();
    for n in ["lock-A", "lock-B", "lock-C"] {
        procs.push(spawn(transport, "lock", &hosts, "/demo/lock", n, t0, &log)?);
    }
    for n in ["elect-1", "elect-2", "elect-3"] {
        procs.push(spawn(
            transport,
            "elect",
            &hosts,
            "/demo/election",
            n,
            t0,
            &log,
        )?);
    }
    thread::sleep(Duration::from_secs(5));

    let leader = log
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .rev()
        .find(|(_, _, w)| w.starts_with("LEADER"))
        .map(|(_, who, _)| who.clone());
    if let Some(leader) = leader {
        if let Some(p) = procs.iter_mut().find(|p| p.name == leader) {
            banner(t0, &format!("kill -9 {leader}, the leader: its session expires after the session timeout, then another process leads"));
            let _ = p.child.kill();
        }
    }
    thread::sleep(Duration::from_secs(6));

    if let Some(i) = ens.leader_index() {
        banner(t0, &format!("kill -9 ZooKeeper server {i}, the ensemble's leader: clients on it move to another server, the ensemble elects a new leader"));
        ens.server(i).kill9();
    }
    thread::sleep(Duration::from_secs(8));
    banner(t0, "stopping the processes");
    for p in procs.iter_mut() {
        let _ = p.child.kill();
        let _ = p.child.wait();
    }
    thread::sleep(Duration::from_millis(200));

    let log = log.lock().unwrap_or_else(|e| e.into_inner());
    let holds = log
        .iter()
        .filter(|(_, _, w)| w.starts_with("holds the lock"))
        .count();
    let last_counter = log
        .iter()
        .filter(|(_, _, w)| w.starts_with("holds the lock"))
        .filter_map(|(_, _, w)| w.rsplit("-> ").next()?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    let terms: Vec<&str> = log
        .iter()
        .filter(|(_, _, w)| w.starts_with("LEADER"))
        .map(|(_, who, _)| who.as_str())
        .collect();
    println!("\n  lock: {holds} fenced writes under the lock; the counter reached {last_counter} (equal: no write lost or doubled)");
    println!("  election: leaders in order: {}", terms.join(" -> "));
    if holds == 0 || holds as u64 != last_counter || terms.len() < 2 {
        return Err("the recipe demo did not show what it should".into());
    }
    Ok(())
}
