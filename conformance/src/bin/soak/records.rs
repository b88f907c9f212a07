//! What a worker writes to its log file, one tab-separated line per record, and the driver
//! reads back after the run. Each line is flushed as it is written, so a log is complete up to
//! the moment its process stopped.

use std::{
    fs::File,
    io::{self, BufRead, BufReader, BufWriter, Write},
    path::Path,
    sync::Mutex,
    time::{SystemTime, UNIX_EPOCH},
};

/// Wall-clock microseconds since the epoch: every process of the run is on one machine, so
/// these compare across processes.
pub fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// What a worker knows of a fenced write once its call returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The client said it was applied.
    Ok,
    /// Definitely not applied: refused by the guard before sending, or rolled back by the
    /// server (the lock node was gone, or another op of the transaction failed).
    Refused,
    /// May or may not have been applied (connection lost, request timed out, session ended).
    Ambiguous,
    /// The caller stopped waiting (a leader's task cancelled when its term ended).
    Cancelled,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Refused => "refused",
            Outcome::Ambiguous => "ambiguous",
            Outcome::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> Option<Outcome> {
        Some(match s {
            "ok" => Outcome::Ok,
            "refused" => Outcome::Refused,
            "ambiguous" => Outcome::Ambiguous,
            "cancelled" => Outcome::Cancelled,
            _ => return None,
        })
    }
}

/// One fenced write to a ledger (a lock's, or the leader's).
#[derive(Debug, Clone)]
pub struct WriteRec {
    pub ledger: String,
    pub token: u64,
    pub writer: String,
    pub seq: u64,
    pub issued_us: u64,
    pub done_us: u64,
    pub outcome: Outcome,
    pub detail: String,
}

/// One hold of a lock, or one term of leadership, as its holder saw it.
#[derive(Debug, Clone)]
pub struct HoldRec {
    pub ledger: String,
    pub token: u64,
    pub writer: String,
    pub start_us: u64,
    pub end_us: u64,
    /// `released`, `refused`, `lost:<reason>` (lock holds); `returned`, `refused`,
    /// `cancelled` (terms, cancelled when the selector saw the term end).
    pub how: String,
    /// When the guard's `lost()` fired, if it did before the hold ended.
    pub lost_us: Option<u64>,
}

/// A session state change.
#[derive(Debug, Clone)]
pub struct SessionRec {
    pub writer: String,
    pub event: String,
    pub at_us: u64,
    pub session_id: i64,
}

/// The request counts of one session, written when the worker is done with it.
#[derive(Debug, Clone, Default)]
pub struct RequestsRec {
    pub writer: String,
    pub issued: u64,
    pub answered: u64,
    pub cancelled: u64,
    pub hung: u64,
    pub kv_writes: u64,
    pub kv_reads: u64,
    pub errors: u64,
}

#[derive(Debug, Clone)]
pub enum Record {
    Write(WriteRec),
    Hold(HoldRec),
    Session(SessionRec),
    Requests(RequestsRec),
    /// Resident set size in KiB, sampled now and then.
    Mem {
        at_us: u64,
        rss_kb: u64,
    },
    /// Something the worker itself saw break (a stale read, a request never answered).
    Violation(String),
    /// The worker finished cleanly.
    Exit {
        at_us: u64,
    },
}

fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

impl Record {
    pub fn to_line(&self) -> String {
        match self {
            Record::Write(w) => format!(
                "W\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                w.ledger,
                w.token,
                w.writer,
                w.seq,
                w.issued_us,
                w.done_us,
                w.outcome.as_str(),
                clean(&w.detail)
            ),
            Record::Hold(h) => format!(
                "H\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                h.ledger,
                h.token,
                h.writer,
                h.start_us,
                h.end_us,
                clean(&h.how),
                h.lost_us.map_or("-".to_string(), |t| t.to_string())
            ),
            Record::Session(s) => format!(
                "E\t{}\t{}\t{}\t{:x}",
                s.writer,
                clean(&s.event),
                s.at_us,
                s.session_id
            ),
            Record::Requests(r) => format!(
                "R\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                r.writer,
                r.issued,
                r.answered,
                r.cancelled,
                r.hung,
                r.kv_writes,
                r.kv_reads,
                r.errors
            ),
            Record::Mem { at_us, rss_kb } => format!("M\t{at_us}\t{rss_kb}"),
            Record::Violation(v) => format!("V\t{}", clean(v)),
            Record::Exit { at_us } => format!("X\t{at_us}"),
        }
    }

    pub fn parse(line: &str) -> Option<Record> {
        let f: Vec<&str> = line.split('\t').collect();
        let n = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok());
        let s = |i: usize| f.get(i).map(|s| s.to_string());
        Some(match *f.first()? {
            "W" => Record::Write(WriteRec {
                ledger: s(1)?,
                token: n(2)?,
                writer: s(3)?,
                seq: n(4)?,
                issued_us: n(5)?,
                done_us: n(6)?,
                outcome: Outcome::parse(f.get(7)?)?,
                detail: s(8).unwrap_or_default(),
            }),
            "H" => Record::Hold(HoldRec {
                ledger: s(1)?,
                token: n(2)?,
                writer: s(3)?,
                start_us: n(4)?,
                end_us: n(5)?,
                how: s(6)?,
                lost_us: n(7),
            }),
            "E" => Record::Session(SessionRec {
                writer: s(1)?,
                event: s(2)?,
                at_us: n(3)?,
                session_id: u64::from_str_radix(f.get(4)?, 16).ok()? as i64,
            }),
            "R" => Record::Requests(RequestsRec {
                writer: s(1)?,
                issued: n(2)?,
                answered: n(3)?,
                cancelled: n(4)?,
                hung: n(5)?,
                kv_writes: n(6)?,
                kv_reads: n(7)?,
                errors: n(8)?,
            }),
            "M" => Record::Mem {
                at_us: n(1)?,
                rss_kb: n(2)?,
            },
            "V" => Record::Violation(s(1).unwrap_or_default()),
            "X" => Record::Exit { at_us: n(1)? },
            _ => return None,
        })
    }
}

/// A worker's log, shared by its tasks.
#[derive(Debug)]
pub struct LogFile {
    out: Mutex<BufWriter<File>>,
}

impl LogFile {
    pub fn create(path: &Path) -> io::Result<LogFile> {
        Ok(LogFile {
            out: Mutex::new(BufWriter::new(File::create(path)?)),
        })
    }

    pub fn emit(&self, rec: &Record) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(out, "{}", rec.to_line());
        let _ = out.flush();
    }
}

/// Every record of a log, and the number of lines that did not parse.
pub fn read_log(path: &Path) -> io::Result<(Vec<Record>, usize)> {
    let mut records = Vec::new();
    let mut bad = 0;
    for line in BufReader::new(File::open(path)?).lines() {
        let line = line?;
        if line.is_empty() {
            continue;
        }
        match Record::parse(&line) {
            Some(r) => records.push(r),
            None => bad += 1,
        }
    }
    Ok((records, bad))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        let recs = [
            Record::Write(WriteRec {
                ledger: "lock-1".into(),
                token: 42,
                writer: "w0s1g2".into(),
                seq: 7,
                issued_us: 1,
                done_us: 2,
                outcome: Outcome::Ambiguous,
                detail: "connection\tloss".into(),
            }),
            Record::Hold(HoldRec {
                ledger: "leader".into(),
                token: 9,
                writer: "w1s0g0".into(),
                start_us: 3,
                end_us: 4,
                how: "lost:Expired".into(),
                lost_us: None,
            }),
            Record::Session(SessionRec {
                writer: "w".into(),
                event: "Expired".into(),
                at_us: 5,
                session_id: -2,
            }),
            Record::Mem {
                at_us: 1,
                rss_kb: 2,
            },
            Record::Exit { at_us: 3 },
        ];
        for r in recs {
            let line = r.to_line();
            let back = Record::parse(&line).expect(&line);
            assert_eq!(
                back.to_line(),
                line.replace("connection\tloss", "connection loss")
            );
        }
    }
}
