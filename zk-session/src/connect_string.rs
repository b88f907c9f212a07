//! Parsing `host:port,host:port/chroot`.

use crate::{chroot::Chroot, ConfigError, Error};

/// The default client port.
const DEFAULT_PORT: u16 = 2181;

/// A parsed connect string: the servers of the ensemble and an optional chroot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConnectString {
    pub hosts: Vec<(String, u16)>,
    pub chroot: Chroot,
}

impl ConnectString {
    /// Parses `h1:2181,h2:2181/app`. A host without a port gets 2181; IPv6 hosts go in brackets.
    pub fn parse(s: &str) -> Result<ConnectString, Error> {
        let (hosts_part, chroot) = match s.find('/') {
            Some(i) => (&s[..i], Chroot::new(&s[i..])?),
            None => (s, Chroot::none()),
        };
        let mut hosts = Vec::new();
        for h in hosts_part
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
        {
            hosts.push(parse_host(h)?);
        }
        if hosts.is_empty() {
            let connect_string = s.to_owned();
            return Err(ConfigError::NoHosts { connect_string }.into());
        }
        Ok(ConnectString { hosts, chroot })
    }
}

fn parse_host(h: &str) -> Result<(String, u16), Error> {
    let bad = || Error::Config(ConfigError::BadHost { host: h.to_owned() });
    let (host, port) = if let Some(rest) = h.strip_prefix('[') {
        let end = rest.find(']').ok_or_else(bad)?;
        let host = &rest[..end];
        match &rest[end + 1..] {
            "" => (host, None),
            p => (host, Some(p.strip_prefix(':').ok_or_else(bad)?)),
        }
    } else {
        match h.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (h, None),
        }
    };
    if host.is_empty() {
        return Err(bad());
    }
    let port = match port {
        Some(p) => p.parse::<u16>().map_err(|_| bad())?,
        None => DEFAULT_PORT,
    };
    Ok((host.to_owned(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_ports_and_chroot() {
        let c = ConnectString::parse("a:1,b, [::1]:3/app/x").unwrap();
        assert_eq!(
            c.hosts,
            vec![("a".into(), 1), ("b".into(), 2181), ("::1".into(), 3)]
        );
        assert_eq!(c.chroot.to_server("/n"), "/app/x/n");
    }

    #[test]
    fn rejects_garbage() {
        assert!(ConnectString::parse("").is_err());
        assert!(ConnectString::parse("a:notaport").is_err());
        assert!(ConnectString::parse(":1").is_err());
        assert!(ConnectString::parse("a:1/bad/").is_err());
    }

    #[test]
    fn root_chroot_is_no_chroot() {
        let c = ConnectString::parse("a:1/").unwrap();
        assert_eq!(c.chroot, Chroot::none());
    }
}
