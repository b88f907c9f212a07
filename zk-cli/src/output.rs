//! Writing results: raw bytes, text lines, JSON documents, and data in JSON.

use std::io::{IsTerminal, Write};

use base64::Engine;
use serde_json::{json, Map, Value};
use zk_session::WatchedEvent;

use crate::{exit, Failure};

/// Writes to stdout; a closed pipe (`zk ls / | head`) is not worth an error message.
pub fn raw(bytes: &[u8]) -> Result<(), Failure> {
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
