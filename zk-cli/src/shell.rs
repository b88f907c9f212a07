//! `zk shell`: the same commands, read from a terminal with line editing, history (in
//! `$ZK_HISTORY`, else `~/.zk_history`) and tab completion of commands and znode paths.

use std::{io::IsTerminal, path::PathBuf, time::Duration};

use clap::{CommandFactory, Parser};
use rustyline::{
    completion::{Completer, Pair},
    config::Config,
    error::ReadlineError,
    highlight::Highlighter,
    hint::Hinter,
    history::{FileHistory, History},
    validate::Validator,
    CompletionType, Context, Editor, Helper,
};
use tokio::runtime::Handle;
use zk_session::Client;

use crate::{cli::Cmd, dispatch, dispatch::Ctx, exit, shell_words, Failure};

/// How long a completion may wait for the server before offering nothing.
const COMPLETION_WAIT: Duration = Duration::from_secs(2);

/// One line of the shell: a command without the global options (the shell's apply).
#[derive(Parser, Debug)]
#[command(
    name = "",
    no_binary_name = true,
    disable_version_flag = true,
    after_help = "Also: exit, quit (or Ctrl-D). Ctrl-C stops a watch or a held ephemeral."
)]
struct ShellLine {
    #[command(subcommand)]
    cmd: Cmd,
}

/// Runs the shell until `exit` or end of input. The line editor blocks, so it runs on a
/// thread of its own and hands each command back to the runtime.
pub async fn run(ctx: Ctx) -> Result<i32, Failure> {
    let ctx = Ctx {
        interactive: true,
        ..ctx
    };
    let rt = Handle::current();
    tokio::task::spawn_blocking(move || repl(&rt, &ctx))
        .await
        .map_err(|e| Failure::new(exit::FAILED, format!("the shell failed: {e}")))?
}

fn repl(rt: &Handle, ctx: &Ctx) -> Result<i32, Failure> {
    let config = Config::builder()
        .auto_add_history(true)
        .history_ignore_space(true)
        .completion_type(CompletionType::List)
        .build();
    let mut history = FileHistory::with_config(&config);
    let file = history_file();
    if let Some(f) = &file {
        let _ = history.load(f);
    }
    let prompt = format!("zk {}> ", ctx.client.connected_server().unwrap_or_default());
    let mut status = BatchStatus::new(std::io::stdin().is_terminal());
    loop {
        let line = match read_line(rt, ctx, &config, &mut history, &prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(Failure::new(exit::FAILED, format!("terminal: {e}"))),
        };
        if let Some(f) = &file {
            let _ = history.save(f);
        }
        let words = match shell_words::split(&line) {
            Ok(w) if w.is_empty() => continue,
            Ok(w) => w,
            Err(why) => {
                eprintln!("zk: {why}");
                status.record(exit::USAGE);
                continue;
            }
        };
        if matches!(words[0].as_str(), "exit" | "quit") {
            break;
        }
        match ShellLine::try_parse_from(&words) {
            Ok(ShellLine { cmd }) => match rt.block_on(dispatch::execute(ctx, cmd)) {
                Ok(code) => status.record(code),
                Err(f) => {
                    eprintln!("zk: {}", f.message);
                    status.record(f.code);
                }
            },
            // Help goes to stdout, mistakes to stderr; the shell goes on either way.
            Err(e) => {
                let _ = e.print();
                status.record(if e.use_stderr() {
                    exit::USAGE
                } else {
                    exit::OK
                });
            }
        }
    }
    Ok(status.code())
}

/// The shell's exit status. At a terminal it is 0: the person saw each failure. Reading
/// commands from a pipe or file (batch mode), every command still runs, as in zkCli.sh and
/// sh without -e, but the status is the first failure's code, so that no failure is hidden
/// by the commands after it (sh would report only the last).
struct BatchStatus {
    interactive: bool,
    first_failure: Option<i32>,
}

impl BatchStatus {
    fn new(interactive: bool) -> Self {
        BatchStatus {
            interactive,
            first_failure: None,
        }
    }

    fn record(&mut self, code: i32) {
        if code != exit::OK && self.first_failure.is_none() {
            self.first_failure = Some(code);
        }
    }

    fn code(&self) -> i32 {
        match self.first_failure {
            Some(code) if !self.interactive => code,
            _ => exit::OK,
        }
    }
}

/// Reads one line with an editor made for it. The editor is dropped before the command runs:
/// while one exists, rustyline's own SIGINT handler replaces tokio's, and the Ctrl-C that
/// should stop a `watch` run from the shell would go unheard.
fn read_line(
    rt: &Handle,
    ctx: &Ctx,
    config: &Config,
    history: &mut FileHistory,
    prompt: &str,
) -> Result<String, ReadlineError> {
    let mut editor = Editor::with_history(config.clone(), std::mem::take(history))?;
    editor.set_helper(Some(PathCompleter {
        client: ctx.client.clone(),
        rt: rt.clone(),
    }));
    let line = editor.readline(prompt);
    *history = std::mem::take(editor.history_mut());
    line
}

fn history_file() -> Option<PathBuf> {
    std::env::var_os("ZK_HISTORY")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".zk_history")))
}

/// Completes the first word from the command names and any word starting with `/` from the
/// children of the znode it names so far.
struct PathCompleter {
    client: Client,
    rt: Handle,
}

impl PathCompleter {
    fn children(&self, dir: &str) -> Vec<String> {
        let asked = tokio::time::timeout(COMPLETION_WAIT, self.client.get_children(dir));
        match self.rt.block_on(asked) {
            Ok(Ok(mut children)) => {
                children.sort();
                children
            }
            _ => Vec::new(),
        }
    }
}

impl Completer for PathCompleter {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let start = line[..pos].rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let word = &line[start..pos];
        let pairs = if start == 0 {
            command_names()
                .into_iter()
                .filter(|n| n.starts_with(word))
                .map(|n| Pair {
                    display: n.clone(),
                    replacement: n + " ",
                })
                .collect()
        } else if let Some(slash) = word.rfind('/') {
            let (dir, partial) = (&word[..slash.max(1)], &word[slash + 1..]);
            let base = dir.trim_end_matches('/');
            self.children(dir)
                .into_iter()
                .filter(|c| c.starts_with(partial))
                .map(|c| Pair {
                    replacement: format!("{base}/{c}"),
                    display: c,
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok((start, pairs))
    }
}

fn command_names() -> Vec<String> {
    let mut names: Vec<String> = ShellLine::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .filter(|n| !matches!(n.as_str(), "shell" | "completions"))
        .collect();
    names.extend(["exit".into(), "quit".into()]);
    names.sort();
    names
}

impl Hinter for PathCompleter {
    type Hint = String;
}
impl Highlighter for PathCompleter {}
impl Validator for PathCompleter {}
impl Helper for PathCompleter {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_mode_reports_the_first_failure_and_a_terminal_none() {
        let mut batch = BatchStatus::new(false);
        assert_eq!(batch.code(), exit::OK);
        for code in [exit::OK, exit::FAILED, exit::OK, exit::USAGE] {
            batch.record(code);
        }
        assert_eq!(batch.code(), exit::FAILED);
        let mut terminal = BatchStatus::new(true);
        terminal.record(exit::FAILED);
        assert_eq!(terminal.code(), exit::OK);
    }
}
