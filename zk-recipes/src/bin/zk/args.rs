//! Hand-written argument parsing for `zk` (the crate takes no argument-parsing dependency).

use std::time::Duration;

/// Options that apply to every command.
#[derive(Debug, Clone, PartialEq)]
pub struct Global {
    pub server: String,
    pub session_timeout: Duration,
}

impl Default for Global {
    fn default() -> Self {
        Global {
            server: "127.0.0.1:2181".to_owned(),
            session_timeout: Duration::from_secs(10),
        }
    }
}

/// What to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Help,
    Lock {
        path: String,
        timeout: Option<Duration>,
        cmd: Vec<String>,
    },
    Elect {
        path: String,
        id: Option<String>,
        timeout: Option<Duration>,
        cmd: Vec<String>,
    },
    Ls {
        path: String,
    },
    Get {
        path: String,
    },
    Set {
        path: String,
        data: String,
        version: Option<i32>,
    },
    Create {
        path: String,
        data: String,
        ephemeral: bool,
        sequential: bool,
    },
    Delete {
        path: String,
        version: Option<i32>,
    },
    Stat {
        path: String,
    },
    Watch {
        path: String,
        recursive: bool,
    },
}

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<(Global, Command), String> {
    let mut global = Global::default();
    let mut words: Vec<String> = Vec::new();
    let mut flags: Vec<(String, Option<String>)> = Vec::new();
    let mut cmd: Option<Vec<String>> = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--" => {
                cmd = Some(it.by_ref().collect());
                break;
            }
            "-h" | "--help" => return Ok((global, Command::Help)),
            "--server" => global.server = value(&mut it, &a)?,
            "--session-timeout" => global.session_timeout = seconds(&value(&mut it, &a)?, &a)?,
            "--timeout" | "--id" | "--version" => {
                let v = value(&mut it, &a)?;
                flags.push((a, Some(v)));
            }
            "-e" | "-s" | "-es" | "-se" | "-r" | "--recursive" => flags.push((a, None)),
            s if s.starts_with("--server=") => global.server = s["--server=".len()..].to_owned(),
            s if s.starts_with('-') && s.len() > 1 => return Err(format!("unknown option {s}")),
            _ => words.push(a),
        }
    }
    if global.server.is_empty() {
        return Err("--server needs a host list".into());
    }
    let has_cmd = cmd.is_some();
    let Some(name) = words.first().cloned() else {
        return Err("no command given".into());
    };
    let rest = &words[1..];
    let mut p = Flags { flags };
    let command = match name.as_str() {
        "help" => Command::Help,
        "lock" => Command::Lock {
            path: one(rest, "lock PATH")?,
            timeout: p.seconds("--timeout")?,
            cmd: command_line(cmd, "lock")?,
        },
        "elect" => Command::Elect {
            path: one(rest, "elect PATH")?,
            id: p.value("--id"),
            timeout: p.seconds("--timeout")?,
            cmd: command_line(cmd, "elect")?,
        },
        "ls" => Command::Ls {
            path: one(rest, "ls PATH")?,
        },
        "get" => Command::Get {
            path: one(rest, "get PATH")?,
        },
        "stat" => Command::Stat {
            path: one(rest, "stat PATH")?,
        },
        "set" => {
            let [path, data] = rest else {
                return Err("usage: zk set PATH DATA [--version N]".into());
            };
            Command::Set {
                path: path.clone(),
                data: data.clone(),
                version: p.version()?,
            }
        }
        "create" => {
            let (path, data) = match rest {
                [path] => (path.clone(), String::new()),
                [path, data] => (path.clone(), data.clone()),
                _ => return Err("usage: zk create [-e] [-s] PATH [DATA]".into()),
            };
            let (mut ephemeral, mut sequential) = (false, false);
            for f in ["-e", "-s", "-es", "-se"] {
                if p.switch(f) {
                    ephemeral |= f.contains('e');
                    sequential |= f.contains('s');
                }
            }
            Command::Create {
                path,
                data,
                ephemeral,
                sequential,
            }
        }
        "delete" => Command::Delete {
            path: one(rest, "delete PATH [--version N]")?,
            version: p.version()?,
        },
        "watch" => Command::Watch {
            path: one(rest, "watch PATH [-r]")?,
            recursive: p.switch("-r") | p.switch("--recursive"),
        },
        other => return Err(format!("unknown command {other:?}")),
    };
    if let Some((f, _)) = p.flags.first() {
        return Err(format!("option {f} does not apply to {name}"));
    }
    if has_cmd && !matches!(command, Command::Lock { .. } | Command::Elect { .. }) {
        return Err(format!("{name} takes no command after --"));
    }
    Ok((global, command))
}

/// The flags given, taken out one by one as the command asks for them; what is left over
/// did not apply.
struct Flags {
    flags: Vec<(String, Option<String>)>,
}

impl Flags {
    fn take(&mut self, name: &str) -> Option<Option<String>> {
        let pos = self.flags.iter().position(|(f, _)| f == name)?;
        Some(self.flags.remove(pos).1)
    }

    fn switch(&mut self, name: &str) -> bool {
        self.take(name).is_some()
    }

    fn value(&mut self, name: &str) -> Option<String> {
        self.take(name).flatten()
    }

    fn seconds(&mut self, name: &str) -> Result<Option<Duration>, String> {
        self.value(name).map(|v| seconds(&v, name)).transpose()
    }

    fn version(&mut self) -> Result<Option<i32>, String> {
        self.value("--version")
            .map(|v| {
                v.parse::<i32>()
                    .map_err(|_| format!("--version needs a number, not {v:?}"))
            })
            .transpose()
    }
}

fn value(it: &mut impl Iterator<Item = String>, flag: &str) -> Result<String, String> {
    it.next().ok_or_else(|| format!("{flag} needs a value"))
}

fn seconds(v: &str, flag: &str) -> Result<Duration, String> {
    match v.parse::<f64>() {
        Ok(s) if (0.0..1e9).contains(&s) => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!("{flag} needs a number of seconds, not {v:?}")),
    }
}

fn one(rest: &[String], usage: &str) -> Result<String, String> {
    match rest {
        [path] => Ok(path.clone()),
        _ => Err(format!("usage: zk {usage}")),
    }
}

fn command_line(cmd: Option<Vec<String>>, name: &str) -> Result<Vec<String>, String> {
    match cmd {
        Some(c) if !c.is_empty() => Ok(c),
        _ => Err(format!("usage: zk {name} PATH ... -- CMD [ARGS...]")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<(Global, Command), String> {
        parse(s.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn lock_and_elect() {
        let (g, c) = p("--server h:1,h:2 lock /l --timeout 2.5 -- sh -c true").unwrap();
        assert_eq!(g.server, "h:1,h:2");
        assert_eq!(
            c,
            Command::Lock {
                path: "/l".into(),
                timeout: Some(Duration::from_millis(2500)),
                cmd: vec!["sh".into(), "-c".into(), "true".into()],
            }
        );
        // Options of the command after `--` are the command's.
        let (_, c) = p("elect /e --id me -- prog --id x").unwrap();
        assert_eq!(
            c,
            Command::Elect {
                path: "/e".into(),
                id: Some("me".into()),
                timeout: None,
                cmd: vec!["prog".into(), "--id".into(), "x".into()],
            }
        );
        assert!(p("lock /l").is_err());
        assert!(p("lock /l --").is_err());
        assert!(p("lock /l --timeout x -- a").is_err());
    }

    #[test]
    fn everyday_commands() {
        assert_eq!(p("ls /").unwrap().1, Command::Ls { path: "/".into() });
        assert_eq!(
            p("create -e -s /a/n- hi").unwrap().1,
            Command::Create {
                path: "/a/n-".into(),
                data: "hi".into(),
                ephemeral: true,
                sequential: true
            }
        );
        assert_eq!(
            p("set /a x --version 3").unwrap().1,
            Command::Set {
                path: "/a".into(),
                data: "x".into(),
                version: Some(3)
            }
        );
        assert_eq!(
            p("watch -r /a").unwrap().1,
            Command::Watch {
                path: "/a".into(),
                recursive: true
            }
        );
        assert_eq!(p("--help").unwrap().1, Command::Help);
        assert_eq!(p("help").unwrap().1, Command::Help);
        assert_eq!(Global::default().server, "127.0.0.1:2181");
    }

    #[test]
    fn mistakes_are_reported() {
        assert!(p("").is_err());
        assert!(p("frobnicate /").is_err());
        assert!(p("ls").is_err());
        assert!(p("ls / extra").is_err());
        assert!(p("ls / --timeout 3").is_err());
        assert!(p("get / -e").is_err());
        assert!(p("ls / -x").is_err());
        assert!(p("ls / -- cmd").is_err());
        assert!(p("--server").is_err());
    }
}
