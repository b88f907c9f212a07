//! Four-letter words (`srvr`, `mntr`, `cons`): a word sent on a fresh connection to a member's
//! client port, the answer read until the server closes it.

use std::time::Duration;

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

/// How a member answered one word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Text(String),
    /// The server does not allow this word (`4lw.commands.whitelist`).
    Refused,
    /// It is up but not serving (no quorum, or still starting).
    NotServing,
    /// Nothing within the timeout: a hung or paused process, or a partition.
    Silent,
    /// The connection failed: the member is down or unreachable.
    Down(String),
}

/// Sends `word` to `host:port` and classifies the answer.
pub async fn ask(server: &str, word: &str, timeout: Duration) -> Answer {
    let exchange = async {
        let mut stream = TcpStream::connect(server).await?;
        stream.write_all(word.as_bytes()).await?;
        let mut out = Vec::new();
        stream.read_to_end(&mut out).await?;
        Ok::<_, std::io::Error>(String::from_utf8_lossy(&out).into_owned())
    };
    match tokio::time::timeout(timeout, exchange).await {
        Err(_) => Answer::Silent,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionReset => Answer::Silent,
        Ok(Err(e)) => Answer::Down(e.to_string()),
        Ok(Ok(text)) => classify(text),
    }
}

fn classify(text: String) -> Answer {
    if text.contains("is not in the whitelist") || text.contains("is not executed because") {
        Answer::Refused
    } else if text.contains("not currently serving requests") {
        Answer::NotServing
    } else if text.is_empty() {
        Answer::Silent
    } else {
        Answer::Text(text)
    }
}

/// The value after `key` in `Key: value` lines (srvr).
pub fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .map(str::trim)
}

/// The value of `key` in tab-separated `key\tvalue` lines (mntr).
pub fn mntr<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('\t'))
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_and_fields() {
        let srvr = "Zookeeper version: 3.8.4\nLatency min/avg/max: 0/0.5/7\nMode: follower\nNode count: 12\n";
        assert_eq!(field(srvr, "Mode"), Some("follower"));
        assert_eq!(field(srvr, "Latency min/avg/max"), Some("0/0.5/7"));
        assert_eq!(field(srvr, "Zxid"), None);
        assert_eq!(
            mntr("zk_watch_count\t3\nzk_x\t1\n", "zk_watch_count"),
            Some("3")
        );
        assert_eq!(
            classify("srvr is not executed because it is not in the whitelist.\n".into()),
            Answer::Refused
        );
        assert_eq!(
            classify("This ZooKeeper instance is not currently serving requests\n".into()),
            Answer::NotServing
        );
    }
}
