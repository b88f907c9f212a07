//! The client addresses in the ensemble's dynamic configuration (`/zookeeper/config`), as a
//! pure function of its text.
//!
//! Each member is a line `server.N=host:quorumPort:electionPort[:role][;[clientHost:]clientPort]`
//! (then `version=…`). A member without the part after `;` takes no clients and is left out;
//! a wildcard client host (`0.0.0.0`, `::`, `[::]` or none) means the member's own host.

/// The `(host, clientPort)` of every member that takes clients, in the order of the lines.
/// `None` when the text names none (an empty or foreign config: keep the list in use).
pub(crate) fn client_addresses(config: &str) -> Option<Vec<(String, u16)>> {
    let hosts: Vec<(String, u16)> = config.lines().filter_map(member).collect();
    (!hosts.is_empty()).then_some(hosts)
}

/// One `server.N=` line's client address.
fn member(line: &str) -> Option<(String, u16)> {
    let (key, value) = line.trim().split_once('=')?;
    key.strip_prefix("server.")?.parse::<u64>().ok()?;
    let (quorum, client) = value.split_once(';')?;
    let quorum_host = split_host(quorum)?.0;
    let client = client.trim();
    let (host, port) = match client.rsplit_once(':') {
        Some(_) => {
            let (h, p) = split_host(client)?;
            (h, p.parse().ok()?)
        }
        None => (String::new(), client.parse().ok()?),
    };
    let wildcard = matches!(host.as_str(), "" | "0.0.0.0" | "::" | "0:0:0:0:0:0:0:0");
    Some((if wildcard { quorum_host } else { host }, port))
}

/// Splits `host:rest` (an IPv6 host in brackets) into the host without brackets and the rest.
fn split_host(s: &str) -> Option<(String, &str)> {
    if let Some(r) = s.strip_prefix('[') {
        let (h, rest) = r.split_once(']')?;
        return Some((h.to_owned(), rest.strip_prefix(':').unwrap_or(rest)));
    }
    match s.split_once(':') {
        Some((h, rest)) => Some((h.to_owned(), rest)),
        None => Some((s.to_owned(), "")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(v: &[(&str, u16)]) -> Option<Vec<(String, u16)>> {
        Some(v.iter().map(|(h, p)| (h.to_string(), *p)).collect())
    }

    #[test]
    fn every_member_with_a_client_port_in_line_order() {
        let config = "server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181\n\
                      server.2=zk2.example:2888:3888:participant;zk2-client.example:2182\n\
                      server.3=10.0.0.3:2888:3888:observer;2183\n\
                      server.4=10.0.0.4:2888:3888:participant\n\
                      version=100000000\n";
        assert_eq!(
            client_addresses(config),
            hosts(&[
                ("10.0.0.1", 2181),
                ("zk2-client.example", 2182),
                ("10.0.0.3", 2183)
            ])
        );
    }

    #[test]
    fn ipv6_hosts_lose_their_brackets() {
        let config = "server.1=[2001:db8::1]:2888:3888;[2001:db8::1]:2181\n\
                      server.2=[2001:db8::2]:2888:3888;[::]:2181\n";
        assert_eq!(
            client_addresses(config),
            hosts(&[("2001:db8::1", 2181), ("2001:db8::2", 2181)])
        );
    }

    #[test]
    fn nothing_usable_is_none() {
        assert_eq!(client_addresses(""), None);
        assert_eq!(client_addresses("version=1\n"), None);
        assert_eq!(
            client_addresses("server.x=h:1:2;3\nserver.1=h:1:2;port\nserver.2=h:1:2;70000\n"),
            None
        );
    }
}
