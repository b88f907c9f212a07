//! `zk-local`: a ZooKeeper of your own on 127.0.0.1, in the foreground, gone on Ctrl-C.
//!
//! ```text
//! cargo run --release -p zk-testkit --bin zk-local                 # one standalone server
//! cargo run --release -p zk-testkit --bin zk-local -- --ensemble 3 # a 3-server quorum
//! cargo run --release -p zk-testkit --bin zk-local -- --tls --sasl
//! ```
//!
//! It starts the servers with the test kit's launcher (the one the tests and the demo use):
//! no AdminServer, server output in a log file, ports picked free. It prints the connect
//! string and an `export ZK_SERVERS=...` line (and the certificates or credentials), then
//! waits for Ctrl-C or SIGTERM and removes the servers and every file they wrote.

mod args;
mod launch;

use std::{process::ExitCode, time::Duration};

use args::Parsed;
use launch::Local;
use tokio::signal::unix::{signal, SignalKind};

/// How often the servers are checked for having died on their own.
const CHECK_EVERY: Duration = Duration::from_secs(1);

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match args::parse(std::env::args().skip(1)) {
        Ok(Parsed::Run(args)) => args,
        Ok(Parsed::Help) => {
            println!("{}", args::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("zk-local: {e}\n{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    // Taken over before anything starts, so that a Ctrl-C while the servers start is not
    // lost, and never kills this process half-way: the servers start, then go at once.
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        eprintln!("zk-local: cannot handle Ctrl-C; not starting");
        return ExitCode::FAILURE;
    };
    let local = match tokio::task::spawn_blocking(move || Local::start(&args)).await {
        Ok(Ok(local)) => local,
        Ok(Err(e)) => {
            eprintln!("zk-local: could not start ZooKeeper: {e}");
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("zk-local: the start-up failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("{}", local.describe());
    eprintln!("zk-local: serving; Ctrl-C stops the servers and removes their files");
    let mut check = tokio::time::interval(CHECK_EVERY);
    let code = loop {
        tokio::select! {
            _ = interrupt.recv() => break ExitCode::SUCCESS,
            _ = terminate.recv() => break ExitCode::SUCCESS,
            _ = check.tick() => {
                if let Some(dead) = local.dead_server() {
                    eprintln!("zk-local: {dead}");
                    break ExitCode::FAILURE;
                }
            }
        }
    };
    let files = local.files();
    // Kills every JVM, waits for it, and removes its directory and the certificates. Blocking
    // is fine here: nothing else runs any more.
    drop(local);
    eprintln!("zk-local: stopped; removed {files}");
    code
}
