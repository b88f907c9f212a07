//! `zk`: everything zkCli does, scriptable and binary-safe; commands run under a ZooKeeper
//! lock or as an elected leader; an interactive shell. `zk --help` tells how.

mod acl;
mod backup;
mod cache_watch;
mod cli;
mod connect;
mod copy;
mod diff;
mod discovery;
mod dispatch;
mod explore;
mod four_letter;
mod health;
mod input;
mod kerberos;
mod output;
mod progress;
mod reads;
mod run;
mod security;
mod shell;
mod shell_words;
mod side;
mod stat_format;
mod tree;
mod tree_read;
mod watching;
mod writes;

use std::io::IsTerminal;

use clap::{CommandFactory, Parser};
use tokio::signal::unix::{signal, SignalKind};
use zk_session::{Error, ErrorCode};

use cli::{Cli, Cmd};

/// zk's exit codes; `cli::EXIT_STATUS` documents them.
pub mod exit {
    pub const OK: i32 = 0;
    pub const FAILED: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const CONNECTION: i32 = 3;
    pub const TIMEOUT: i32 = 4;
    pub const LOST: i32 = 5;
    pub const CANNOT_RUN: i32 = 126;
    pub const NOT_FOUND: i32 = 127;
}

/// Why zk stops unsuccessfully: an exit code and what to tell the user.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    pub fn new(code: i32, message: String) -> Self {
        Failure { code, message }
    }

    pub fn usage(message: String) -> Self {
        Failure::new(exit::USAGE, message)
    }
}

/// The exit code and message for a failed client operation.
pub fn session_failure(what: &str, e: &Error) -> Failure {
    let code = match e {
        Error::InvalidPath { .. } | Error::InvalidArgument(_) | Error::Config(_) => exit::USAGE,
        Error::ConnectTimeout { .. } | Error::Tls(_) | Error::AuthFailed(_) | Error::Closed => {
            exit::CONNECTION
        }
        Error::Code(
            ErrorCode::ConnectionLoss
            | ErrorCode::SessionExpired
            | ErrorCode::RequestTimeout
            | ErrorCode::AuthFailed,
        ) => exit::CONNECTION,
        _ => exit::FAILED,
    };
    Failure::new(code, format!("{what}: {e}"))
}

/// Completes with the signal number at the next SIGINT or SIGTERM.
pub async fn interrupted() -> i32 {
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => 2,
        _ = term.recv() => 15,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // Take over SIGINT/SIGTERM from the start, so that one arriving early is not fatal
    // before a listener exists (tokio keeps the handler installed once registered).
    let _early = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    );
    // Arguments stay OS strings: one that is not UTF-8 is data or a clear error, never a panic.
    let cli = match Cli::try_parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        // Help and --version exit 0, mistakes 2 (exit::USAGE).
        Err(e) => e.exit(),
    };
    let code = match run_cli(cli).await {
        Ok(code) => code,
        Err(f) => {
            eprintln!("zk: {}", f.message);
            f.code
        }
    };
    std::process::exit(code);
}

async fn run_cli(cli: Cli) -> Result<i32, Failure> {
    let cmd = match cli.command {
        Some(Cmd::Completions { shell }) => {
            // Into memory first: `generate` panics when the writer fails, and a reader that
            // went away (`| head`) is no error (output::raw says so).
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "zk", &mut script);
            output::raw(&script)?;
            return Ok(exit::OK);
        }
        // Each side of cp and diff makes its own session; health asks without one.
        Some(Cmd::Cp {
            overwrite,
            kind,
            src,
            dst,
        }) => {
            let how = copy::How {
                existing: match overwrite {
                    true => copy::Existing::Overwrite,
                    false => copy::Existing::Stop,
                },
                kinds: kind
                    .iter()
                    .map(|k| copy::KindRule::parse(k))
                    .collect::<Result<_, _>>()?,
            };
            return copy::cp(&cli.global, &src, &dst, how).await;
        }
        Some(Cmd::Diff { a, b }) => return diff::diff(&cli.global, &a, &b).await,
        Some(Cmd::Health { timeout }) => return health::health(&cli.global, timeout).await,
        Some(cmd) => cmd,
        None if std::io::stdin().is_terminal() => Cmd::Shell,
        None => {
            return Err(Failure::usage(
                "no command given (and no terminal for the shell); try 'zk --help'".into(),
            ))
        }
    };
    let client = connect::connect(&cli.global).await?;
    let ctx = dispatch::Ctx {
        client: client.clone(),
        json: cli.global.json,
        interactive: false,
    };
    let result = match cmd {
        Cmd::Shell => shell::run(ctx).await,
        cmd => dispatch::execute(&ctx, cmd).await,
    };
    // Closing ends the session now, so its ephemeral nodes go at once rather than after
    // the session timeout.
    let _ = client.close().await;
    result
}
