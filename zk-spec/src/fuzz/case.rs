//! A [`Case`]: the frames one connection sent, saved as text, replayed against a server and
//! shrunk to the frames the failure needs.

use std::{fmt::Write as _, io, net::SocketAddr, time::Duration};

use zk_proto::{decode_notification, decode_reply, jute::Record, OpCode, ReplyHeader};
use zk_testkit::raw::{RawConnection, RawError};

use super::gen::{Mutation, Step};
use crate::ctx::SESSION_TIMEOUT_MS;

/// The frames of one connection, the connect request first, and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// What the server did wrong.
    pub what: String,
    /// The frames after the connect request, in order.
    pub steps: Vec<Step>,
}

/// What an exchange showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judged {
    /// Answered as it should be; the reply's zxid.
    Answered(i64),
    /// The server closed the connection (allowed after malformed input).
    Closed,
    /// The server broke a rule.
    Finding(String),
}

fn is_timeout(e: &RawError) -> bool {
    matches!(e, RawError::Io(io) if matches!(io.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut))
}

/// A connection with a new session.
pub fn open(addr: SocketAddr, io_timeout: Duration) -> Result<RawConnection, String> {
    let mut conn = RawConnection::connect(addr).map_err(|e| format!("cannot connect: {e}"))?;
    conn.set_timeout(io_timeout).map_err(|e| e.to_string())?;
    match conn.handshake(SESSION_TIMEOUT_MS) {
        Ok(r) if !r.is_expired() => Ok(conn),
        Ok(r) => Err(format!("no session: {r:?}")),
        Err(e) => Err(format!("no connect response: {e}")),
    }
}

/// Sends `step` and judges what comes back. `after_mutation`: the connection has carried
/// malformed input before, so a close is allowed.
pub fn exchange(conn: &mut RawConnection, step: &Step, after_mutation: bool) -> Judged {
    if conn.send_bytes(&step.bytes).is_err() {
        return Judged::Closed;
    }
    let may_close = after_mutation || step.mutation.is_some();
    loop {
        let frame = match conn.recv_frame() {
            Ok(Some(f)) => f,
            Err(e) if is_timeout(&e) => {
                return Judged::Finding(format!(
                    "neither answered nor closed the connection after {}",
                    describe(step)
                ))
            }
            Ok(None) | Err(RawError::Io(_)) | Err(RawError::Closed) => {
                return if may_close {
                    Judged::Closed
                } else {
                    Judged::Finding(format!("closed the connection on {}", describe(step)))
                }
            }
            Err(e) => return Judged::Finding(format!("sent an undecodable frame: {e}")),
        };
        let xid = frame
            .get(..4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        if xid == Some(-1) {
            if let Err(e) = decode_notification(frame) {
                return Judged::Finding(format!("sent a malformed notification: {e}"));
            }
            continue;
        }
        if step.mutation == Some(Mutation::BadLength) {
            return Judged::Finding(format!(
                "answered a frame with a bad length prefix: {frame:02x?}"
            ));
        }
        if xid != Some(step.xid) {
            return Judged::Finding(format!(
                "answered xid {xid:?} while xid {} waited",
                step.xid
            ));
        }
        let decoded = match step.op {
            Some(op) => decode_reply(frame, op).map(|(h, _)| h),
            // A mutated request's reply body is the server's guess: only its header is judged.
            None => ReplyHeader::decode_exact(frame.slice(..frame.len().min(16)), "ReplyHeader"),
        };
        return match decoded {
            Ok(h) => Judged::Answered(h.zxid),
            Err(e) => Judged::Finding(format!(
                "answered {} with a malformed reply: {e}",
                describe(step)
            )),
        };
    }
}

fn describe(step: &Step) -> String {
    match (step.op, step.mutation) {
        (Some(op), _) => format!("a well-formed {op:?} (xid {})", step.xid),
        (None, Some(m)) => format!("a frame mutated by {} (xid {})", m.name(), step.xid),
        (None, None) => format!("a frame (xid {})", step.xid),
    }
}

/// A fresh session answers exists on `/`.
pub fn probe(addr: SocketAddr, io_timeout: Duration) -> Result<(), String> {
    let mut conn = open(addr, io_timeout)?;
    let req = crate::req::exists("/", false);
    match conn.call(1, &req) {
        Ok((h, _)) if h.err == 0 => {
            let _ = conn.send_request(2, &zk_proto::Request::CloseSession);
            Ok(())
        }
        Ok((h, _)) => Err(format!("exists / answered {:?}", h.error_code())),
        Err(e) => Err(e.to_string()),
    }
}

/// Replays `steps` on a new session, then probes; the finding, if the server breaks a rule.
pub fn replay(addr: SocketAddr, steps: &[Step], io_timeout: Duration) -> Option<String> {
    let mut conn = match open(addr, io_timeout) {
        Ok(c) => c,
        Err(e) => return Some(format!("probe session not served: {e}")),
    };
    let mut after_mutation = false;
    for step in steps {
        match exchange(&mut conn, step, after_mutation) {
            Judged::Answered(_) => after_mutation |= step.mutation.is_some(),
            Judged::Closed => break,
            Judged::Finding(what) => return Some(what),
        }
    }
    drop(conn);
    probe(addr, io_timeout)
        .err()
        .map(|e| format!("probe session not served: {e}"))
}

/// Removes steps while the replay still fails, at most `budget` replays; the smaller case.
pub fn shrink(addr: SocketAddr, case: &Case, io_timeout: Duration, budget: usize) -> Case {
    let mut steps = case.steps.clone();
    let mut tries = 0;
    let mut i = steps.len();
    while i > 0 && tries < budget {
        i -= 1;
        if steps.len() == 1 {
            break;
        }
        let mut fewer = steps.clone();
        fewer.remove(i);
        tries += 1;
        if replay(addr, &fewer, io_timeout).is_some() {
            steps = fewer;
        }
    }
    Case {
        what: case.what.clone(),
        steps,
    }
}

impl Case {
    /// The case as text: a comment line, then `step <xid> <opcode|-> <mutation|-> <hex>`.
    pub fn to_text(&self) -> String {
        let mut s = format!("# zk-spec fuzz case: {}\n", self.what.replace('\n', " "));
        for st in &self.steps {
            let op = st.op.map_or("-".to_string(), |o| o.code().to_string());
            let m = st.mutation.map_or("-", Mutation::name);
            let hex: String = st.bytes.iter().map(|b| format!("{b:02x}")).collect();
            let _ = writeln!(s, "step {} {op} {m} {hex}", st.xid);
        }
        s
    }

    /// Parses [`Case::to_text`]'s format.
    pub fn from_text(text: &str) -> Result<Case, String> {
        let mut case = Case {
            what: String::new(),
            steps: Vec::new(),
        };
        for (n, line) in text.lines().enumerate() {
            if let Some(what) = line.strip_prefix("# zk-spec fuzz case: ") {
                case.what = what.to_string();
                continue;
            }
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = || format!("line {}: not `step XID OP MUTATION HEX`", n + 1);
            let f: Vec<&str> = line.split_whitespace().collect();
            let [tag, xid, op, m, hex] = f.as_slice() else {
                return Err(bad());
            };
            if *tag != "step" || hex.len() % 2 != 0 {
                return Err(bad());
            }
            let xid = xid.parse().map_err(|_| bad())?;
            let op = match *op {
                "-" => None,
                code => Some(
                    code.parse()
                        .ok()
                        .and_then(OpCode::from_code)
                        .ok_or_else(bad)?,
                ),
            };
            let mutation = match *m {
                "-" => None,
                name => Some(Mutation::from_name(name).ok_or_else(bad)?),
            };
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|_| bad())?;
            case.steps.push(Step {
                xid,
                op,
                mutation,
                bytes,
            });
        }
        Ok(case)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::{gen, rng::Rng};

    #[test]
    fn cases_round_trip_through_text() {
        let mut rng = Rng::new(3);
        let steps = (1..20).map(|x| gen::step(&mut rng, "/r", x, 50)).collect();
        let case = Case {
            what: "hung\non a frame".into(),
            steps,
        };
        let back = Case::from_text(&case.to_text()).unwrap();
        assert_eq!(back.steps, case.steps);
        assert_eq!(back.what, "hung on a frame");
        assert!(Case::from_text("step 1 4 - 0g").is_err());
        assert!(Case::from_text("step 1 77777 - 00").is_err());
    }
}
