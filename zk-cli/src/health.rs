//! `zk health`: every member of the connect string asked `srvr`, `mntr` and `cons`; a table
//! (or `--json`) of mode, zxid, latency, outstanding requests, connections, watches and
//! znodes, the leader marked; a verdict with an exit code to match.

use std::time::Duration;

use serde_json::{json, Value};

use crate::{
    cli::Global,
    connect, exit,
    four_letter::{self, field, mntr, Answer},
    input, output, Failure,
};

/// One member as it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub server: String,
    /// `serving`, or why not: `not serving`, `no answer`, `down: ...`, `4lw not allowed`.
    pub state: String,
    pub mode: Option<String>,
    pub zxid: Option<String>,
    pub latency: Option<String>,
    pub outstanding: Option<u64>,
    pub connections: Option<u64>,
    pub watches: Option<u64>,
    pub znodes: Option<u64>,
    /// The words it answered with a refusal (`4lw.commands.whitelist`).
    pub refused_words: Vec<&'static str>,
}

impl Member {
    fn serving(&self) -> bool {
        self.state == "serving"
    }

    fn refused(&self) -> bool {
        self.state == REFUSED
    }

    fn leads(&self) -> bool {
        matches!(self.mode.as_deref(), Some("leader" | "standalone"))
    }
}

const REFUSED: &str = "4lw not allowed";

/// What the members add up to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    Degraded,
    NoQuorum,
    /// No member allows the four-letter words.
    Unknown,
}

impl Verdict {
    fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Degraded => "degraded",
            Verdict::NoQuorum => "no quorum",
            Verdict::Unknown => "unknown",
        }
    }

    /// 0 ok, 1 degraded or unknown, 3 no quorum (no usable ensemble, like no connection).
    fn exit_code(self) -> i32 {
        match self {
            Verdict::Ok => exit::OK,
            Verdict::Degraded | Verdict::Unknown => exit::FAILED,
            Verdict::NoQuorum => exit::CONNECTION,
        }
    }
}

/// The verdict and its reasons. Members that refuse the four-letter words are neither good
/// nor bad: they are left out.
pub fn judge(members: &[Member]) -> (Verdict, Vec<String>) {
    let known: Vec<&Member> = members.iter().filter(|m| !m.refused()).collect();
    if known.is_empty() {
        return (
            Verdict::Unknown,
            vec!["no member allows the four-letter words".into()],
        );
    }
    let mut reasons: Vec<String> = known
        .iter()
        .filter(|m| !m.serving())
        .map(|m| format!("{} {}", m.server, m.state))
        .collect();
    let leaders = known.iter().filter(|m| m.serving() && m.leads()).count();
    if leaders == 0 {
        reasons.push("no member leads".into());
        return (Verdict::NoQuorum, reasons);
    }
    let mut counts: Vec<u64> = known.iter().filter_map(|m| m.znodes).collect();
    counts.sort_unstable();
    counts.dedup();
    if counts.len() > 1 {
        reasons.push(format!("members hold different znode counts: {counts:?}"));
    }
    if leaders > 1 {
        reasons.push(format!("{leaders} members say they lead"));
    }
    match reasons.is_empty() {
        true => (Verdict::Ok, reasons),
        false => (Verdict::Degraded, reasons),
    }
}

/// Asks one member its three words at once.
async fn member(server: String, timeout: Duration) -> Member {
    let (srvr, mntr_text, cons) = tokio::join!(
        four_letter::ask(&server, "srvr", timeout),
        four_letter::ask(&server, "mntr", timeout),
        four_letter::ask(&server, "cons", timeout),
    );
    let mut m = Member {
        server,
        state: String::new(),
        mode: None,
        zxid: None,
        latency: None,
        outstanding: None,
        connections: None,
        watches: None,
        znodes: None,
        refused_words: Vec::new(),
    };
    for (word, answer) in [("srvr", &srvr), ("mntr", &mntr_text), ("cons", &cons)] {
        if *answer == Answer::Refused {
            m.refused_words.push(word);
        }
    }
    let text = match srvr {
        Answer::Text(t) => t,
        Answer::Refused => {
            m.state = REFUSED.into();
            return m;
        }
        Answer::NotServing => {
            m.state = "not serving".into();
            return m;
        }
        Answer::Silent => {
            m.state = "no answer".into();
            return m;
        }
        Answer::Down(why) => {
            m.state = format!("down ({why})");
            return m;
        }
    };
    let number = |v: Option<&str>| v.and_then(|s| s.parse::<u64>().ok());
    m.state = "serving".into();
    m.mode = field(&text, "Mode").map(str::to_owned);
    m.zxid = field(&text, "Zxid").map(str::to_owned);
    m.latency = field(&text, "Latency min/avg/max").map(str::to_owned);
    m.outstanding = number(field(&text, "Outstanding"));
    m.znodes = number(field(&text, "Node count"));
    m.connections = match cons {
        Answer::Text(t) => Some(t.lines().filter(|l| !l.trim().is_empty()).count() as u64),
        _ => number(field(&text, "Connections")),
    };
    if let Answer::Text(t) = mntr_text {
        m.watches = number(mntr(&t, "zk_watch_count"));
    }
    m
}

/// `zk health [--timeout SECS]`.
pub async fn health(g: &Global, timeout: Duration) -> Result<i32, Failure> {
    let server = input::utf8(&g.server(), "--server")?;
    let asks: Vec<_> = connect::hosts(&server)
        .into_iter()
        .filter(|h| !h.is_empty())
        .map(|h| {
            let h = if h.contains(':') {
                h.to_owned()
            } else {
                format!("{h}:2181")
            };
            tokio::spawn(member(h, timeout))
        })
        .collect();
    let mut members = Vec::new();
    for ask in asks {
        members.push(
            ask.await
                .map_err(|e| Failure::new(exit::FAILED, e.to_string()))?,
        );
    }
    let (verdict, reasons) = judge(&members);
    if g.json {
        let list: Vec<Value> = members.iter().map(member_json).collect();
        output::json(&json!({"members": list, "verdict": verdict.name(), "reasons": reasons}))?;
    } else {
        output::raw(table(&members, verdict, &reasons).as_bytes())?;
    }
    Ok(verdict.exit_code())
}

fn member_json(m: &Member) -> Value {
    json!({
        "server": m.server, "state": m.state, "mode": m.mode, "leader": m.serving() && m.leads(),
        "zxid": m.zxid, "latency": m.latency, "outstanding": m.outstanding,
        "connections": m.connections, "watches": m.watches, "znodes": m.znodes,
        "refusedWords": m.refused_words,
    })
}

fn table(members: &[Member], verdict: Verdict, reasons: &[String]) -> String {
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let num = |v: Option<u64>| v.map_or_else(|| "-".into(), |n| n.to_string());
    let mut rows = vec![[
        "MEMBER",
        "STATE",
        "MODE",
        "ZXID",
        "LATENCY",
        "OUTSTANDING",
        "CONNECTIONS",
        "WATCHES",
        "ZNODES",
    ]
    .map(String::from)];
    for m in members {
        let mode = match (&m.mode, m.serving() && m.leads()) {
            (Some(mode), true) => format!("{mode} *"),
            (mode, false) => opt(mode),
            (None, true) => "-".into(),
        };
        let state = match (m.serving(), m.refused_words.is_empty()) {
            (true, false) => format!("serving ({} not allowed)", m.refused_words.join(", ")),
            _ => m.state.clone(),
        };
        rows.push([
            m.server.clone(),
            state,
            mode,
            opt(&m.zxid),
            opt(&m.latency),
            num(m.outstanding),
            num(m.connections),
            num(m.watches),
            num(m.znodes),
        ]);
    }
    let widths: Vec<usize> = (0..9)
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    let mut text = String::new();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text.push_str(&format!("verdict: {}", verdict.name()));
    if !reasons.is_empty() {
        text.push_str(&format!(" ({})", reasons.join("; ")));
    }
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(server: &str, state: &str, mode: Option<&str>, znodes: Option<u64>) -> Member {
        Member {
            server: server.into(),
            state: state.into(),
            mode: mode.map(String::from),
            zxid: None,
            latency: None,
            outstanding: None,
            connections: None,
            watches: None,
            znodes,
            refused_words: Vec::new(),
        }
    }

    #[test]
    fn verdicts() {
        let leader = m("a", "serving", Some("leader"), Some(5));
        let follower = m("b", "serving", Some("follower"), Some(5));
        let hung = m("c", "no answer", None, None);
        let refused = m("d", REFUSED, None, None);
        let ok = [leader.clone(), follower.clone(), refused.clone()];
        assert_eq!(judge(&ok).0, Verdict::Ok);
        let (v, why) = judge(&[leader.clone(), follower.clone(), hung.clone()]);
        assert_eq!(v, Verdict::Degraded);
        assert_eq!(why, ["c no answer"]);
        let lone = m("b", "not serving", None, None);
        assert_eq!(judge(&[hung.clone(), lone, hung]).0, Verdict::NoQuorum);
        assert_eq!(judge(&[refused]).0, Verdict::Unknown);
        let behind = m("b", "serving", Some("follower"), Some(4));
        assert_eq!(judge(&[leader, behind]).0, Verdict::Degraded);
        let t = table(&[follower], Verdict::Ok, &[]);
        assert!(
            t.starts_with("MEMBER  STATE") && t.ends_with("verdict: ok\n"),
            "{t}"
        );
    }
}
