//! The worker processes as the driver sees them: started (in the partition namespace for the
//! last one, where there is one), watched for live events, told to stop and waited for.

use std::{
    fs,
    io::{BufRead, BufReader, Write},
    path::PathBuf,
    process::{Child, ChildStdin, ExitStatus, Stdio},
    sync::{Arc, Mutex as StdMutex},
    thread,
    time::{Duration, Instant},
};

use conformance::spawner::TiedCommand;

use crate::{
    faults::{Live, WorkerView},
    netns, worker, Opts, SESSION_TIMEOUT, STOP_DEADLINE,
};

pub struct WorkerProc {
    pub id: usize,
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub view: WorkerView,
    pub log: PathBuf,
    pub err: PathBuf,
    pub died: Option<ExitStatus>,
    pub reader: Option<thread::JoinHandle<()>>,
}

impl WorkerProc {
    pub fn stderr_tail(&self) -> String {
        let text = fs::read_to_string(&self.err).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(8)..].join(" | ")
    }
}

impl Drop for WorkerProc {
    fn drop(&mut self) {
        if self.died.is_none() && matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn spawn_worker(
    o: &Opts,
    id: usize,
    hosts: &str,
    dir: &std::path::Path,
    netns: Option<&netns::Netns>,
) -> Result<WorkerProc, String> {
    let args = worker::Args {
        id,
        hosts: hosts.to_owned(),
        seed: o.seed,
        sessions: o.sessions,
        log: dir.join(format!("worker-{id}.log")),
        session_timeout: SESSION_TIMEOUT,
    };
    let err = dir.join(format!("worker-{id}.stderr"));
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = match netns {
        Some(ns) => ns.command(&exe),
        None => TiedCommand::new(exe),
    };
    cmd.args(args.to_argv())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(
            fs::File::create(&err).map_err(|e| format!("{}: {e}", err.display()))?,
        ));
    // Tied to this process: a worker never outlives the driver, even a frozen one.
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start worker {id}: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let stdin = child.stdin.take();
    let live = Arc::new(StdMutex::new(Live::default()));
    let reader = {
        let live = live.clone();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let mut l = live.lock().unwrap_or_else(|e| e.into_inner());
                let f: Vec<&str> = line.split_whitespace().collect();
                let num = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok());
                match f.first().copied() {
                    Some("READY") => l.ready = true,
                    Some("DONE") => l.done = true,
                    Some("HOLD") => {
                        if let (Some(ledger), Some(t)) = (f.get(1), num(2)) {
                            l.holds.insert((ledger.to_string(), t));
                        }
                    }
                    Some("FREE") => {
                        if let (Some(ledger), Some(t)) = (f.get(1), num(2)) {
                            l.holds.remove(&(ledger.to_string(), t));
                        }
                    }
                    Some("LEAD") => {
                        if let Some(t) = num(1) {
                            l.leading.insert(t);
                        }
                    }
                    Some("UNLEAD") => {
                        if let Some(t) = num(1) {
                            l.leading.remove(&t);
                        }
                    }
                    Some("RSS") => l.last_rss_kb = num(1).unwrap_or(0),
                    _ => {}
                }
            }
        })
    };
    Ok(WorkerProc {
        id,
        view: WorkerView {
            id,
            pid: child.id(),
            live,
        },
        child,
        stdin,
        log: args.log,
        err,
        died: None,
        reader: Some(reader),
    })
}

/// Tells every worker to stop and waits for them; returns (clean, note, seconds) per worker.
pub fn stop_workers(procs: &mut [WorkerProc]) -> Vec<(bool, String, f64)> {
    let asked = Instant::now();
    for p in procs.iter_mut() {
        if let Some(mut stdin) = p.stdin.take() {
            let _ = stdin.write_all(b"stop\n");
            // Dropped: end of input, which also means stop.
        }
    }
    let mut out: Vec<Option<(bool, String, f64)>> = vec![None; procs.len()];
    while out.iter().any(Option::is_none) && asked.elapsed() < STOP_DEADLINE {
        for (i, p) in procs.iter_mut().enumerate() {
            if out[i].is_some() {
                continue;
            }
            if let Some(st) = p.died {
                out[i] = Some((false, format!("died before the stop: {st}"), 0.0));
                continue;
            }
            match p.child.try_wait() {
                Ok(Some(st)) => {
                    let secs = asked.elapsed().as_secs_f64();
                    out[i] = Some(if st.success() {
                        (true, String::new(), secs)
                    } else {
                        (
                            false,
                            format!("exited with {st}: {}", p.stderr_tail()),
                            secs,
                        )
                    });
                }
                Ok(None) => {}
                Err(e) => out[i] = Some((false, format!("cannot wait: {e}"), 0.0)),
            }
        }
        thread::sleep(Duration::from_millis(50));
    }
    for (i, p) in procs.iter_mut().enumerate() {
        if out[i].is_none() {
            let _ = p.child.kill();
            let _ = p.child.wait();
            out[i] = Some((
                false,
                format!(
                    "did not exit within {STOP_DEADLINE:?} of being told to stop (killed); \
                     stderr: {}",
                    p.stderr_tail()
                ),
                STOP_DEADLINE.as_secs_f64(),
            ));
        }
        if let Some(r) = p.reader.take() {
            let _ = r.join();
        }
    }
    out.into_iter().map(Option::unwrap_or_default).collect()
}
