//! Four-letter words: a connection that sends one of them instead of a connect request is
//! answered in plain text and closed, or told that the word is not in the whitelist.

use std::io::Read;

use crate::{
    check::{ensure, fail, skip, Area, Check, CheckResult, Finding},
    ctx::Ctx,
};

const ADMIN: &str = "Administrator's Guide: The Four Letter Words";
/// The text a 3.5+ server answers for a word outside `4lw.commands.whitelist`.
const REFUSED: &str = "is not executed because it is not in the whitelist";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::FourLetter, "4lw";
    "ruok", "ruok is answered imok, then the connection closes", ADMIN, ruok;
    "srvr", "srvr names the version, latency, counts, mode and node count", ADMIN, srvr;
    "stat", "stat is srvr's report plus a Clients section", ADMIN, stat;
    "mntr", "mntr answers tab-separated key/value lines with zk_version and zk_server_state", ADMIN, mntr;
    "conf", "conf answers key=value lines including clientPort", ADMIN, conf;
    "envi", "envi answers an Environment section with zookeeper.version", ADMIN, envi;
    "wchs", "wchs counts watching connections and total watches", ADMIN, wchs;
    "cons", "cons lists connections with their queued and received counts", ADMIN, cons;
    "isro", "isro answers rw or ro", ADMIN, isro;
    "dump", "dump lists a session's ephemeral znode under its session id", ADMIN, dump;
    "wchp", "wchp lists a watched path with the watching session", ADMIN, wchp;
    "wchc", "wchc lists the watching session with its watched path", ADMIN, wchc;
);

/// The answer to `word` on a fresh connection, read until the server closes it; a skip
/// when the server says the word is not whitelisted.
fn ask(ctx: &mut Ctx, word: &str) -> Result<String, Finding> {
    let mut conn = ctx.connect()?;
    conn.send_bytes(word.as_bytes())?;
    let mut out = Vec::new();
    let mut stream = conn.stream();
    stream.read_to_end(&mut out).map_err(|e| {
        fail(
            format!("the answer to {word} and a close"),
            format!("{e} after {} bytes", out.len()),
        )
    })?;
    let text = String::from_utf8(out).map_err(|e| fail("UTF-8 text", e.to_string()))?;
    if text.contains(REFUSED) {
        return Err(skip(format!(
            "{word} is not in this server's 4lw.commands.whitelist"
        )));
    }
    ensure(!text.is_empty(), format!("an answer to {word}"), || {
        "the connection closed without one".into()
    })?;
    Ok(text)
}

/// Passes when every line of `needles` is in `text`.
fn has_all(word: &str, text: &str, needles: &[&str]) -> CheckResult {
    let missing: Vec<_> = needles.iter().filter(|n| !text.contains(*n)).collect();
    ensure(
        missing.is_empty(),
        format!("{word}'s answer to contain {needles:?}"),
        || format!("no {missing:?} in {text:?}"),
    )
}

fn ruok(ctx: &mut Ctx) -> CheckResult {
    let text = ask(ctx, "ruok")?;
    ensure(text == "imok", "exactly imok", || format!("{text:?}"))
}

const SRVR: &[&str] = &[
    "Zookeeper version: ",
    "Latency min/avg/max: ",
    "Received: ",
    "Sent: ",
    "Connections: ",
    "Outstanding: ",
    "Zxid: 0x",
    "Mode: ",
    "Node count: ",
];

fn srvr(ctx: &mut Ctx) -> CheckResult {
    let text = ask(ctx, "srvr")?;
    has_all("srvr", &text, SRVR)?;
    positive(&text, "Node count: ")
}

/// Passes when the line starting with `key` has a number above 0 after it.
fn positive(text: &str, key: &str) -> CheckResult {
    let value = field(text, key);
    ensure(
        value.is_some_and(|n| n.parse::<u64>().is_ok_and(|n| n > 0)),
        format!("{key}<a number above 0>"),
        || format!("{key}{value:?}"),
    )
}

fn stat(ctx: &mut Ctx) -> CheckResult {
    let text = ask(ctx, "stat")?;
    has_all("stat", &text, SRVR)?;
    has_all("stat", &text, &["Clients:\n"])
}

/// The rest of the line that starts with `key`.
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .map(str::trim)
}

fn mntr(ctx: &mut Ctx) -> CheckResult {
    let text = ask(ctx, "mntr")?;
    let bad: Vec<_> = text
        .lines()
        .filter(|l| l.split('\t').count() != 2)
        .collect();
    ensure(bad.is_empty(), "only key<TAB>value lines", || {
        format!("{bad:?}")
    })?;
    has_all("mntr", &text, &["zk_version\t", "zk_server_state\t"])
}

fn conf(ctx: &mut Ctx) -> CheckResult {
    let text = ask(ctx, "conf")?;
    let bad = conf_odd_lines(&text);
    ensure(bad.is_empty(), "only key=value lines", || {
        format!("{bad:?}")
    })?;
    let port = field(&text, "clientPort=");
    ensure(
        port == Some(&ctx.addr().port().to_string()),
        format!("clientPort={}", ctx.addr().port()),
        || format!("clientPort={port:?}"),
    )
}

/// The lines of a conf answer that are not key=value. A quorum member (3.5 and later) ends
/// its answer with its dynamic configuration under a `membership:` heading: only `server.N=`
/// lines and `version=` may follow it.
fn conf_odd_lines(text: &str) -> Vec<&str> {
    let mut membership = false;
    let mut bad = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let ok = match membership {
            false if line.trim_end() == "membership:" => {
                membership = true;
                true
            }
            false => line.contains('='),
            true => {
                line.contains('=') && (line.starts_with("server.") || line.starts_with("version="))
            }
        };
        if !ok {
            bad.push(line);
        }
    }
    bad
}

fn envi(ctx: &mut Ctx) -> CheckResult {
    let text = ask(ctx, "envi")?;
    has_all("envi", &text, &["Environment:", "zookeeper.version="])
}

fn wchs(ctx: &mut Ctx) -> CheckResult {
    // A watch of this check's own, so the counts cannot both be zero.
    let mut watcher = ctx.session()?;
    watcher.exists(&ctx.path("wchs"), true)?;
    let text = ask(ctx, "wchs")?;
    has_all(
        "wchs",
        &text,
        &["connections watching", "paths", "Total watches:"],
    )?;
    positive(&text, "Total watches:")
}

fn cons(ctx: &mut Ctx) -> CheckResult {
    // A session of this check's own, so the list cannot be empty.
    let _session = ctx.session()?;
    let text = ask(ctx, "cons")?;
    has_all("cons", &text, &["(queued=", "recved=", "sent="])
}

fn isro(ctx: &mut Ctx) -> CheckResult {
    let text = ask(ctx, "isro")?;
    ensure(text == "rw" || text == "ro", "rw or ro", || {
        format!("{text:?}")
    })
}

/// The session id as the four-letter words print it.
fn hex_id(conn: &crate::Conn) -> String {
    format!("0x{:x}", conn.session_id())
}

fn dump(ctx: &mut Ctx) -> CheckResult {
    let mut owner = ctx.session()?;
    let eph = ctx.path("dump");
    owner.create(&eph, b"", zk_proto::CreateMode::Ephemeral)?;
    let text = ask(ctx, "dump")?;
    has_all(
        "dump",
        &text,
        &["Sessions with Ephemerals", &hex_id(&owner), &eph],
    )
}

/// A session with a data watch on a znode of this check's own: the session and the path.
fn watching(ctx: &mut Ctx) -> Result<(crate::Conn, String), Finding> {
    let mut conn = ctx.session()?;
    let path = ctx.path("watched");
    conn.create(&path, b"", zk_proto::CreateMode::Persistent)?;
    conn.get_data(&path, true)?;
    Ok((conn, path))
}

/// The lines of `text` that follow the line `head`, up to the next line without a tab.
fn section<'a>(text: &'a str, head: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| *l != head)
        .skip(1)
        .take_while(|l| l.starts_with('\t'))
        .map(str::trim)
        .collect()
}

fn wchp(ctx: &mut Ctx) -> CheckResult {
    let (conn, path) = watching(ctx)?;
    let text = ask(ctx, "wchp")?;
    let sessions = section(&text, &path);
    ensure(
        sessions.contains(&hex_id(&conn).as_str()),
        format!("{path} then a tab-indented {}", hex_id(&conn)),
        || format!("{text:?}"),
    )
}

fn wchc(ctx: &mut Ctx) -> CheckResult {
    let (conn, path) = watching(ctx)?;
    let text = ask(ctx, "wchc")?;
    let paths = section(&text, &hex_id(&conn));
    ensure(
        paths.contains(&path.as_str()),
        format!("{} then a tab-indented {path}", hex_id(&conn)),
        || format!("{text:?}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_takes_the_indented_lines_after_its_head() {
        let text = "0x1\n\t/a\n\t/b\n0x2\n\t/c\n";
        assert_eq!(section(text, "0x1"), vec!["/a", "/b"]);
        assert_eq!(section(text, "0x2"), vec!["/c"]);
        assert!(section(text, "0x3").is_empty());
    }

    #[test]
    fn conf_lines_are_key_value_or_an_ensembles_membership() {
        let standalone = "clientPort=2181\ndataDir=/d\n";
        assert!(conf_odd_lines(standalone).is_empty());
        let member = "clientPort=2181\npeerType=0\nmembership: \n\
server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nversion=0\n";
        assert!(conf_odd_lines(member).is_empty());
        assert_eq!(
            conf_odd_lines("clientPort=2181\nnot a setting\n"),
            vec!["not a setting"]
        );
        // Only the dynamic configuration follows the heading.
        let odd = "membership: \nserver.1=h:1:2\ntickTime=200\nmembership: \n";
        assert_eq!(conf_odd_lines(odd), vec!["tickTime=200", "membership: "]);
    }

    #[test]
    fn field_and_has_all_find_or_miss_keys() {
        let text = "Mode: standalone\nNode count: 5\n";
        assert_eq!(field(text, "Node count: "), Some("5"));
        assert_eq!(field(text, "Zxid: "), None);
        assert!(has_all("srvr", text, &["Mode: "]).is_ok());
        assert!(has_all("srvr", text, &["Mode: ", "Zxid: "]).is_err());
    }
}
