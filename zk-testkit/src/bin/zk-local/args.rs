//! zk-local's command line, parsed into plain values (no parser crate: four options).

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// How many servers: 1 is a standalone server, more an ensemble.
    pub servers: usize,
    /// A secure client port beside the plain one, with throwaway certificates.
    pub tls: bool,
    /// SASL DIGEST-MD5 with a generated user.
    pub sasl: bool,
}

pub const USAGE: &str = "\
usage: zk-local [--ensemble N] [--tls] [--sasl]

Runs ZooKeeper 3.8 on 127.0.0.1 in the foreground until Ctrl-C, then removes it and its files.
  --ensemble N   N servers in a quorum (N >= 1; default: one standalone server)
  --tls          also a TLS client port, client certificates required (throwaway certificates)
  --sasl         SASL DIGEST-MD5 with a generated user and password (not enforced)
  -h, --help     this text";

/// What the command line means: run, or print the usage.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    Run(Args),
    Help,
}

/// Parses the arguments after the program name; the error is a line for the user.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Parsed, String> {
    let mut out = Args {
        servers: 1,
        tls: false,
        sasl: false,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--tls" => out.tls = true,
            "--sasl" => out.sasl = true,
            "-h" | "--help" => return Ok(Parsed::Help),
            "--ensemble" => {
                let n = args.next().ok_or("--ensemble needs a number of servers")?;
                out.servers = servers(&n)?;
            }
            other => match other.strip_prefix("--ensemble=") {
                Some(n) => out.servers = servers(n)?,
                None => return Err(format!("unknown argument `{other}`")),
            },
        }
    }
    Ok(Parsed::Run(out))
}

fn servers(n: &str) -> Result<usize, String> {
    match n.parse::<usize>() {
        Ok(n) if (1..=9).contains(&n) => Ok(n),
        _ => Err(format!("--ensemble wants 1 to 9 servers, not `{n}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Parsed, String> {
        parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn standalone_by_default_and_options_on_request() {
        let plain = Args {
            servers: 1,
            tls: false,
            sasl: false,
        };
        assert_eq!(run(&[]), Ok(Parsed::Run(plain.clone())));
        let all = Args {
            servers: 3,
            tls: true,
            sasl: true,
        };
        assert_eq!(
            run(&["--ensemble", "3", "--tls", "--sasl"]),
            Ok(Parsed::Run(all.clone()))
        );
        assert_eq!(
            run(&["--sasl", "--ensemble=3", "--tls"]),
            Ok(Parsed::Run(all))
        );
        assert_eq!(run(&["--tls", "-h"]), Ok(Parsed::Help));
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        assert!(run(&["--ensemble"]).unwrap_err().contains("needs a number"));
        assert!(run(&["--ensemble", "0"]).unwrap_err().contains("not `0`"));
        assert!(run(&["--ensemble", "x"]).unwrap_err().contains("not `x`"));
        assert!(run(&["--port"]).unwrap_err().contains("`--port`"));
    }
}
