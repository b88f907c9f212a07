//! The command line, parsed by hand: a handful of flags need no parser crate.

use std::net::SocketAddr;

use crate::{
    check::Area,
    setup::{Credentials, Setup, TlsTarget},
};

/// Usage text.
pub const USAGE: &str = "\
usage: zk-spec HOST:PORT [--area AREA] [--check ID] [-v] [--json] [--junit FILE] [--io-timeout SECS]
               [--dangerous] [SETUP...]
       zk-spec --list
       zk-spec fuzz HOST:PORT [--duration D] [--sessions N] [--rate R] [--seed S] [--out DIR]
       zk-spec fuzz HOST:PORT --replay FILE

Runs ZooKeeper protocol conformance checks against the server at HOST:PORT and prints a
report; exits with 1 when a check failed, 2 on a usage or connection error.

  --area AREA       only the checks of AREA (handshake, ops, ordering, watches, nodes,
                    multi, acl, limits, malformed, 4lw, sessions, read-only, reconfig,
                    x509, sasl)
  --check ID        only check ID, or the group of checks whose ids start with ID.
  -v, --verbose     show the frames of failed checks in hex
  --json            print the report as JSON instead of the tree
  --junit FILE      also write the report as JUnit XML to FILE
  --io-timeout SECS how long to wait for any one answer (default 3)
  --dangerous       also run the checks that can harm a server with a known bug
                    (only against a throwaway server)
  --list            list the checks and exit

SETUP: what the server is set up for; the areas that need it skip without it.
  --ensemble H:P,H:P,...  the ensemble's members' client ports (sessions)
  --read-only H:P         a member with readonlymode.enabled that has lost its quorum
  --reconfig              reconfigEnabled: a member may be removed and added back (reconfig)
  --super USER:PASSWORD   the superuser's digest credentials, for reconfig with ACLs
  --tls H:P               the secure client port (x509), with:
    --tls-ca FILE --tls-cert FILE --tls-key FILE   PEM CA, client certificate and key
    --tls-name NAME       the name the server's certificate carries (default: the --tls host)
    --tls-subject DN      the client certificate's subject as the server writes it
  --sasl USER:PASSWORD    a DIGEST-MD5 user of the server's JAAS Server section (sasl)

fuzz: several sessions send valid and mutated requests for D (30s, 10m, 1h; default 60s)
at R requests/s (default 200) over N sessions (default 4); a probe session checks the server
every half second. A failure is shrunk and saved in DIR (default .) as a .case file, which
--replay FILE sends again. Loopback addresses only.";

/// What `zk-spec fuzz` is asked for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FuzzArgs {
    /// The server, `HOST:PORT`.
    pub target: String,
    /// `--duration`.
    pub duration: Option<std::time::Duration>,
    /// `--sessions`.
    pub sessions: Option<usize>,
    /// `--rate`.
    pub rate: Option<u32>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--out`.
    pub out: Option<String>,
    /// `--replay`.
    pub replay: Option<String>,
}

/// Parses `30s`, `10m`, `1h` or plain seconds.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let (num, unit) = match s.char_indices().last() {
        Some((i, 's')) => (&s[..i], 1),
        Some((i, 'm')) => (&s[..i], 60),
        Some((i, 'h')) => (&s[..i], 3600),
        _ => (s, 1),
    };
    let n: u64 = num.parse().map_err(|_| format!("bad duration {s:?}"))?;
    if n == 0 {
        return Err(format!("bad duration {s:?}"));
    }
    Ok(std::time::Duration::from_secs(n * unit))
}

/// Parses the arguments after `fuzz`.
pub fn parse_fuzz(args: impl IntoIterator<Item = String>) -> Result<FuzzArgs, String> {
    let mut out = FuzzArgs::default();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        let number = |name: &str, v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{name} {v:?} is not a number"))
        };
        match a.as_str() {
            "--duration" => out.duration = Some(parse_duration(&value("--duration")?)?),
            "--sessions" => {
                let n = number("--sessions", value("--sessions")?)?;
                out.sessions = Some(
                    usize::try_from(n)
                        .ok()
                        .filter(|n| (1..=64).contains(n))
                        .ok_or("--sessions: 1 to 64")?,
                );
            }
            "--rate" => {
                let n = number("--rate", value("--rate")?)?;
                out.rate = Some(
                    u32::try_from(n)
                        .ok()
                        .filter(|n| (1..=10_000).contains(n))
                        .ok_or("--rate: 1 to 10000")?,
                );
            }
            "--seed" => out.seed = Some(number("--seed", value("--seed")?)?),
            "--out" => out.out = Some(value("--out")?),
            "--replay" => out.replay = Some(value("--replay")?),
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            target if out.target.is_empty() => out.target = target.into(),
            extra => return Err(format!("unexpected argument {extra:?}")),
        }
    }
    if out.target.is_empty() {
        return Err("HOST:PORT is missing".into());
    }
    Ok(out)
}

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
    /// The setup options, as given (see [`SetupArgs::to_setup`]).
    pub setup: SetupArgs,
}

/// The setup options before their addresses are resolved.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SetupArgs {
    /// `--ensemble`, split at commas.
    pub ensemble: Vec<String>,
    /// `--read-only`.
    pub read_only: Option<String>,
    /// `--reconfig`.
    pub reconfig: bool,
    /// `--super`.
    pub super_user: Option<Credentials>,
    /// `--tls`.
    pub tls: Option<String>,
    /// `--tls-ca`, `--tls-cert`, `--tls-key`.
    pub tls_files: [Option<String>; 3],
    /// `--tls-name`.
    pub tls_name: Option<String>,
    /// `--tls-subject`.
    pub tls_subject: Option<String>,
    /// `--sasl`.
    pub sasl: Option<Credentials>,
}

impl SetupArgs {
    /// The [`Setup`], with addresses resolved by `resolve`.
    pub fn to_setup(
        &self,
        resolve: impl Fn(&str) -> Result<SocketAddr, String>,
    ) -> Result<Setup, String> {
        let mut setup = Setup::default().ensemble(
            self.ensemble
                .iter()
                .map(|m| resolve(m))
                .collect::<Result<_, _>>()?,
        );
        if let Some(ro) = &self.read_only {
            setup = setup.read_only(resolve(ro)?);
        }
        if self.reconfig {
            setup = setup.reconfig(self.super_user.clone());
        }
        setup.sasl = self.sasl.clone();
        if let Some(addr) = &self.tls {
            let [Some(ca), Some(cert), Some(key)] = &self.tls_files else {
                return Err("--tls needs --tls-ca, --tls-cert and --tls-key".into());
            };
            setup = setup.tls(TlsTarget {
                addr: resolve(addr)?,
                ca: ca.into(),
                cert: cert.into(),
                key: key.into(),
                server_name: self.tls_name.clone().unwrap_or_else(|| host_of(addr)),
                subject: self.tls_subject.clone(),
            });
        } else if self.tls_files.iter().any(Option::is_some) {
            return Err("--tls-ca, --tls-cert and --tls-key go with --tls HOST:PORT".into());
        }
        Ok(setup)
    }

    /// Takes option `flag` if it is a setup option, reading its value with `value`.
    fn take(
        &mut self,
        flag: &str,
        mut value: impl FnMut(&str) -> Result<String, String>,
    ) -> Result<bool, String> {
        let credentials = |name: &str, v: String| {
            Credentials::parse(&v).ok_or_else(|| format!("{name} wants USER:PASSWORD"))
        };
        match flag {
            "--ensemble" => {
                self.ensemble = value(flag)?.split(',').map(String::from).collect();
            }
            "--read-only" => self.read_only = Some(value(flag)?),
            "--reconfig" => self.reconfig = true,
            "--super" => self.super_user = Some(credentials(flag, value(flag)?)?),
            "--tls" => self.tls = Some(value(flag)?),
            "--tls-ca" => self.tls_files[0] = Some(value(flag)?),
            "--tls-cert" => self.tls_files[1] = Some(value(flag)?),
            "--tls-key" => self.tls_files[2] = Some(value(flag)?),
            "--tls-name" => self.tls_name = Some(value(flag)?),
            "--tls-subject" => self.tls_subject = Some(value(flag)?),
            "--sasl" => self.sasl = Some(credentials(flag, value(flag)?)?),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// The host of `HOST:PORT` (`[v6]:PORT` too).
fn host_of(target: &str) -> String {
    let host = target.rsplit_once(':').map_or(target, |(h, _)| h);
    host.trim_start_matches('[').trim_end_matches(']').into()
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
            flag if out.setup.take(flag, &mut value)? => {}
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

    #[test]
    fn parses_the_setup_options() {
        let a = p(
            "h:1 --ensemble a:1,b:2 --read-only c:3 --reconfig --super su:pw --sasl bob:s \
                   --tls d:4 --tls-ca ca --tls-cert c --tls-key k --tls-name n --tls-subject CN=x",
        )
        .unwrap();
        let resolve = |s: &str| -> Result<SocketAddr, String> {
            let port = s.rsplit(':').next().unwrap().parse::<u16>().unwrap();
            Ok(SocketAddr::from(([127, 0, 0, 1], port)))
        };
        let setup = a.setup.to_setup(resolve).unwrap();
        assert_eq!(
            setup.ensemble,
            vec![resolve("a:1").unwrap(), resolve("b:2").unwrap()]
        );
        assert_eq!(setup.read_only, Some(resolve("c:3").unwrap()));
        assert!(setup.reconfig);
        assert_eq!(setup.super_user.unwrap().user, "su");
        assert_eq!(setup.sasl.unwrap().password, "s");
        let tls = setup.tls.unwrap();
        assert_eq!((tls.addr.port(), tls.server_name.as_str()), (4, "n"));
        assert_eq!(tls.subject.as_deref(), Some("CN=x"));
        assert!(p("h:1 --sasl nopassword")
            .unwrap_err()
            .contains("USER:PASSWORD"));
        assert_eq!(host_of("[::1]:2281"), "::1");
        assert_eq!(host_of("zk1.example:2281"), "zk1.example");
        let half = p("h:1 --tls d:4 --tls-ca ca").unwrap();
        assert!(half.setup.to_setup(resolve).is_err());
        let stray = p("h:1 --tls-key k").unwrap();
        assert!(stray.setup.to_setup(resolve).is_err());
    }

    #[test]
    fn parses_fuzz_options_and_durations() {
        let f = parse_fuzz(
            "127.0.0.1:1 --duration 10m --sessions 3 --rate 50 --seed 9 --out /tmp"
                .split_whitespace()
                .map(String::from),
        )
        .unwrap();
        assert_eq!(f.duration, Some(std::time::Duration::from_secs(600)));
        assert_eq!((f.sessions, f.rate, f.seed), (Some(3), Some(50), Some(9)));
        assert_eq!(f.out.as_deref(), Some("/tmp"));
        assert_eq!(parse_duration("45"), Ok(std::time::Duration::from_secs(45)));
        assert_eq!(
            parse_duration("2h"),
            Ok(std::time::Duration::from_secs(7200))
        );
        assert!(parse_duration("0s").is_err() && parse_duration("x").is_err());
        assert!(parse_fuzz(["h:1".into(), "--sessions".into(), "0".into()]).is_err());
        assert!(parse_fuzz(Vec::<String>::new()).is_err());
    }
}
