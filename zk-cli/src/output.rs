//! Writing results: raw bytes, text lines, JSON documents, and data in JSON.

use std::{
    io::{IsTerminal, Write},
    sync::atomic::{AtomicBool, Ordering},
};

use base64::Engine;
use serde_json::{json, Map, Value};
use zk_session::WatchedEvent;

use crate::{exit, Failure};

/// Whether stdout's last byte was not a newline: data written raw to a pipe (`get`). The
/// newline it lacks is written before any more output, so that in a piped `zk shell` one
/// command's data does not run into the next command's output, while the last one's ends
/// byte for byte.
static MID_LINE: AtomicBool = AtomicBool::new(false);

/// Writes to stdout, first ending the line the last output left open.
pub fn raw(bytes: &[u8]) -> Result<(), Failure> {
    if bytes.is_empty() {
        return Ok(());
    }
    if MID_LINE.swap(!bytes.ends_with(b"\n"), Ordering::Relaxed) {
        write_stdout(b"\n")?;
    }
    write_stdout(bytes)
}

/// Ends the line the last output left open, before something else writes to stdout (the
/// command run by `lock` or `elect`).
pub fn finish_line() -> Result<(), Failure> {
    match MID_LINE.swap(false, Ordering::Relaxed) {
        true => write_stdout(b"\n"),
        false => Ok(()),
    }
}

/// Writes to stdout; a closed pipe (`zk ls / | head`) is not worth an error message.
fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::new(exit::FAILED, format!("writing output: {e}"))),
    }
}

/// One JSON document (or event) on a line of its own.
pub fn json(value: &Value) -> Result<(), Failure> {
    raw(format!("{value}\n").as_bytes())
}

/// Data as it is; a newline is added only for a terminal, so that pipes get the exact bytes.
pub fn data(bytes: &[u8], newline: bool) -> Result<(), Failure> {
    let mut out = bytes.to_vec();
    let terminal = std::io::stdout().is_terminal();
    if (newline || terminal) && !out.is_empty() && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    raw(&out)
}

/// Data for JSON: `{"data": ..., "encoding": "utf8"|"base64"}` merged into `into`.
pub fn data_fields(bytes: &[u8], into: &mut Map<String, Value>) {
    let (data, encoding) = match std::str::from_utf8(bytes) {
        Ok(text) => (text.to_owned(), "utf8"),
        Err(_) => (
            base64::engine::general_purpose::STANDARD.encode(bytes),
            "base64",
        ),
    };
    into.insert("data".into(), Value::String(data));
    into.insert("encoding".into(), Value::String(encoding.into()));
}

/// A watch event as text (`NodeDataChanged /path`) or a JSON line.
pub fn event(ev: &WatchedEvent, as_json: bool) -> Result<(), Failure> {
    if as_json {
        json(&json!({"event": format!("{:?}", ev.event_type()), "path": ev.path()}))
    } else {
        raw(format!("{:?} {}\n", ev.event_type(), ev.path()).as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_is_text_when_it_can_be() {
        let mut m = Map::new();
        data_fields(b"hello", &mut m);
        assert_eq!(m["data"], "hello");
        assert_eq!(m["encoding"], "utf8");
        data_fields(b"\x00\x01\xff", &mut m);
        assert_eq!(m["data"], "AAH/");
        assert_eq!(m["encoding"], "base64");
    }
}
