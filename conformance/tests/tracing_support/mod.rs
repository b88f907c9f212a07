//! A `tracing` subscriber for the tests: it keeps every event and every span (with the
//! fields recorded on it later) at every level, and which spans each thread is in, so that a
//! test can ask which spans an event was emitted in.

#![allow(dead_code)]

use std::{
    cell::RefCell,
    collections::BTreeMap,
    fmt,
    sync::{Mutex, Once},
};

use tracing::{
    field::{Field, Visit},
    span, Event, Level, Metadata, Subscriber,
};

/// One event (or span, or values recorded on a span) as it was emitted: its level, every
/// field printed and, for an event, the innermost span it was in.
#[derive(Debug, Clone)]
pub struct Captured {
    pub level: Level,
    pub fields: BTreeMap<String, String>,
    pub span: Option<u64>,
}

impl Captured {
    pub fn message(&self) -> &str {
        self.fields.get("message").map_or("", String::as_str)
    }

    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

static CAUGHT: Mutex<Vec<Captured>> = Mutex::new(Vec::new());

/// A span: its name, its fields as they are now, and the span it is in.
#[derive(Debug, Clone)]
pub struct SpanRec {
    pub name: &'static str,
    pub fields: BTreeMap<String, String>,
    pub parent: Option<u64>,
}

impl SpanRec {
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// Every span made, span id `n` at index `n - 1`.
static SPANS: Mutex<Vec<SpanRec>> = Mutex::new(Vec::new());

thread_local! {
    /// The spans this thread is in, innermost last.
    static STACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

fn spans() -> std::sync::MutexGuard<'static, Vec<SpanRec>> {
    SPANS.lock().unwrap_or_else(|e| e.into_inner())
}

fn current_span() -> Option<u64> {
    STACK.with(|s| s.borrow().last().copied())
}

/// Keeps every event and every span's fields, at every level.
pub struct Capture;

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

fn keep(level: Level, span: Option<u64>, record: impl FnOnce(&mut Fields<'_>)) -> Captured {
    let mut fields = BTreeMap::new();
    record(&mut Fields(&mut fields));
    let c = Captured {
        level,
        fields,
        span,
    };
    let mut caught = CAUGHT.lock().unwrap_or_else(|e| e.into_inner());
    caught.push(c.clone());
    c
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &span::Attributes<'_>) -> span::Id {
        let parent = if span.is_root() {
            None
        } else if let Some(p) = span.parent() {
            Some(p.into_u64())
        } else {
            current_span()
        };
        let c = keep(*span.metadata().level(), None, |f| span.record(f));
        let mut all = spans();
        all.push(SpanRec {
            name: span.metadata().name(),
            fields: c.fields,
            parent,
        });
        span::Id::from_u64(all.len() as u64)
    }

    fn record(&self, span: &span::Id, values: &span::Record<'_>) {
        let c = keep(Level::TRACE, None, |f| values.record(f));
        let mut all = spans();
        all[span.into_u64() as usize - 1].fields.extend(c.fields);
    }

    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}

    fn event(&self, event: &Event<'_>) {
        let span = if event.is_root() {
            None
        } else if let Some(p) = event.parent() {
            Some(p.into_u64())
        } else {
            current_span()
        };
        keep(*event.metadata().level(), span, |f| event.record(f));
    }

    fn enter(&self, span: &span::Id) {
        STACK.with(|s| s.borrow_mut().push(span.into_u64()));
    }

    fn exit(&self, span: &span::Id) {
        STACK.with(|s| {
            let mut s = s.borrow_mut();
            if let Some(i) = s.iter().rposition(|&id| id == span.into_u64()) {
                s.remove(i);
            }
        });
    }
}

/// The nearest span named `name` that `c` was in, as it is now.
pub fn enclosing(c: &Captured, name: &str) -> Option<SpanRec> {
    let all = spans();
    let mut at = c.span;
    while let Some(id) = at {
        let s = &all[id as usize - 1];
        if s.name == name {
            return Some(s.clone());
        }
        at = s.parent;
    }
    None
}

/// `c` was in a `connection` span for `server` inside a `session` span with `session_id`
/// (as it is now) and `connect_string`; returns the two spans.
pub fn assert_in_spans(
    c: &Captured,
    server: &str,
    session_id: &str,
    connect_string: &str,
) -> (SpanRec, SpanRec) {
    let conn =
        enclosing(c, "connection").unwrap_or_else(|| panic!("not in a connection span: {c:?}"));
    assert_eq!(conn.field("server"), Some(server), "{conn:?} around {c:?}");
    assert!(
        conn.field("attempt")
            .is_some_and(|a| a.parse::<u64>().is_ok_and(|a| a >= 1)),
        "{conn:?}"
    );
    let session = enclosing(c, "session").unwrap_or_else(|| panic!("not in a session span: {c:?}"));
    assert_eq!(session.field("session_id"), Some(session_id), "{session:?}");
    assert_eq!(
        session.field("connect_string"),
        Some(connect_string),
        "{session:?}"
    );
    (conn, session)
}

pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| tracing::subscriber::set_global_default(Capture).expect("no other"));
}

pub fn caught() -> Vec<Captured> {
    CAUGHT.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The events with `message` whose fields include every `(name, value)` of `with`.
pub fn find(message: &str, with: &[(&str, &str)]) -> Vec<Captured> {
    caught()
        .into_iter()
        .filter(|c| c.message() == message && with.iter().all(|(k, v)| c.field(k) == Some(*v)))
        .collect()
}

/// Exactly what [`find`] finds, but at least one, at `level`.
pub fn expect(level: Level, message: &str, with: &[(&str, &str)]) -> Captured {
    let found = find(message, with);
    let Some(first) = found.first() else {
        panic!("no event {message:?} with {with:?} in {:#?}", caught());
    };
    assert_eq!(first.level, level, "{first:?}");
    first.clone()
}

/// No field of any event caught so far shows any of `secrets`.
pub fn assert_no_secret(secrets: &[String]) {
    for c in caught() {
        for (name, value) in &c.fields {
            for s in secrets {
                assert!(!value.contains(s.as_str()), "{name} shows a secret: {c:?}");
            }
        }
    }
}
