//! The command line, parsed by hand: a handful of flags need no parser crate.

use crate::check::Area;

/// Usage text.
pub const USAGE: &str = "\
usage: zk-spec HOST:PORT [--area AREA] [--check ID] [-v] [--json] [--junit FILE] [--io-timeout SECS]
               [--dangerous]
       zk-spec --list

Runs ZooKeeper protocol conformance checks against the server at HOST:PORT and prints a
report; exits with 1 when a check failed, 2 on a usage or connection error.

  --area AREA       only the checks of AREA (handshake, ops, ordering, watches, nodes,
                    multi, acl, limits, malformed)
  --check ID        only check ID, or the group of checks whose ids start with ID.
  -v, --verbose     show the frames of failed checks in hex
  --json            print the report as JSON instead of the tree
  --junit FILE      also write the report as JUnit XML to FILE
  --io-timeout SECS how long to wait for any one answer (default 3)
  --dangerous       also run the checks that can harm a server with a known bug
                    (only against a throwaway server)
  --list            list the checks and exit";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Args {
    /// The server, `HOST:PORT`.
    pub target: String,
    /// `--area`.
    pub area: Option<Area>,
    /// `--check`.
    pub check: Option<String>,
    /// `-v`.
    pub verbose: bool,
    /// `--json`.
    pub json: bool,
    /// `--junit`.
    pub junit: Option<String>,
    /// `--io-timeout`, in seconds.
    pub io_timeout_secs: Option<f64>,
    /// `--list`.
    pub list: bool,
    /// `--dangerous`.
    pub dangerous: bool,
}

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut out = Args::default();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--area" => {
                let v = value("--area")?;
                out.area = Some(Area::from_name(&v).ok_or_else(|| format!("no area {v:?}"))?);
            }
            "--check" => out.check = Some(value("--check")?),
            "-v" | "--verbose" => out.verbose = true,
            "--json" => out.json = true,
            "--junit" => out.junit = Some(value("--junit")?),
            "--io-timeout" => {
                let v = value("--io-timeout")?;
                let secs: f64 = v
                    .parse()
                    .map_err(|_| format!("--io-timeout {v:?} is not a number"))?;
                if !(secs > 0.0 && secs < 3600.0) {
                    return Err(format!("--io-timeout {v} out of range"));
                }
                out.io_timeout_secs = Some(secs);
            }
            "--list" => out.list = true,
            "--dangerous" => out.dangerous = true,
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            target if out.target.is_empty() => out.target = target.into(),
            extra => return Err(format!("unexpected argument {extra:?}")),
        }
    }
    if out.target.is_empty() && !out.list {
        return Err("HOST:PORT is missing".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Args, String> {
        parse(s.split_whitespace().map(String::from))
    }

    #[test]
    fn parses_every_option() {
        let a = p("127.0.0.1:2181 --area watches --check watches.persistent -v --json --junit out.xml --io-timeout 1.5 --dangerous").unwrap();
        assert!(a.dangerous);
        assert_eq!(a.target, "127.0.0.1:2181");
        assert_eq!(a.area, Some(Area::Watches));
        assert_eq!(a.check.as_deref(), Some("watches.persistent"));
        assert!(a.verbose && a.json);
        assert_eq!(a.junit.as_deref(), Some("out.xml"));
        assert_eq!(a.io_timeout_secs, Some(1.5));
    }

    #[test]
    fn refuses_bad_command_lines() {
        assert_eq!(p(""), Err("HOST:PORT is missing".into()));
        assert!(p("h:1 --area nope").unwrap_err().contains("no area"));
        assert!(p("h:1 --check").unwrap_err().contains("needs a value"));
        assert!(p("h:1 --bogus").unwrap_err().contains("unknown option"));
        assert!(p("h:1 h:2").unwrap_err().contains("unexpected"));
        assert!(p("h:1 --io-timeout -3").is_err());
        assert!(p("--list").unwrap().list);
    }
}
