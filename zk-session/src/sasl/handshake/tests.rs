//! The exchange against scripted answers, without a connection.

use bytes::{BufMut, Bytes, BytesMut};

use super::*;
use crate::{SaslError, SaslExchange, SaslMechanism, SaslStep};

/// Sends `hello`, then `more` after the first answer, and is done after the second.
#[derive(Debug)]
pub(crate) struct TwoRounds;

struct TwoRoundsExchange(u8);

impl SaslMechanism for TwoRounds {
    fn name(&self) -> &str {
        "X-TWO"
    }
    fn start(&self, _: &str) -> Result<Box<dyn SaslExchange>, SaslError> {
        Ok(Box::new(TwoRoundsExchange(0)))
    }
}

impl SaslExchange for TwoRoundsExchange {
    fn initial_response(&mut self) -> Result<Vec<u8>, SaslError> {
        Ok(b"hello".to_vec())
    }
    fn step(&mut self, token: Option<&[u8]>) -> Result<SaslStep, SaslError> {
        self.0 += 1;
        match (self.0, token) {
            (1, Some(b"challenge")) => Ok(SaslStep::Send(b"more".to_vec())),
            (2, _) => Ok(SaslStep::Done),
            _ => Err(SaslError::new("unexpected token")),
        }
    }
}

/// A reply body (no length prefix): header, then the token when `err` is 0.
fn reply(xid: i32, err: i32, token: Option<&[u8]>) -> Bytes {
    let mut body = BytesMut::new();
    body.put_i32(xid);
    body.put_i64(0);
    body.put_i32(err);
    if err == 0 {
        match token {
            Some(t) => {
                body.put_i32(t.len() as i32);
                body.put_slice(t);
            }
            None => body.put_i32(-1),
        }
    }
    body.freeze()
}

/// The tokens sent, with their xids.
type Sent = Vec<(i32, Vec<u8>)>;

/// Runs the exchange from `xid`, the server answering packet `i` with `replies[i]` (built
/// from the packet's xid). Returns how it ended and the tokens sent.
fn run(
    mut xid: i32,
    replies: Vec<Box<dyn Fn(i32) -> Bytes>>,
) -> (Result<(), ConnectFailure>, Sent) {
    let (mut hs, work) = SaslHandshake::start(&SaslConfig::mechanism(TwoRounds), "zk1");
    assert!(
        work.blocks(),
        "a mechanism may block unless it says otherwise"
    );
    let mut token = hs.done(work.run()).unwrap().expect("a first token");
    let mut seen = Vec::new();
    for answer in replies {
        hs.sent(xid);
        seen.push((xid, token.clone()));
        let next = hs.answer(answer(xid)).and_then(|work| {
            assert!(hs.working());
            hs.done(work.run())
        });
        match next {
            Ok(Some(next)) => token = next,
            Ok(None) => return (Ok(()), seen),
            Err(e) => return (Err(e), seen),
        }
        xid += 1;
    }
    panic!("the exchange wanted more answers");
}

#[test]
fn tokens_go_out_in_turn_and_the_exchange_ends_with_the_mechanism() {
    let (result, seen) = run(
        7,
        vec![
            Box::new(|x| reply(x, 0, Some(b"challenge"))),
            Box::new(|x| reply(x, 0, None)),
        ],
    );
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(seen, [(7, b"hello".to_vec()), (8, b"more".to_vec())]);
}

#[test]
fn a_refusal_is_auth_failed_with_the_code() {
    for code in [-115, -124] {
        let (result, seen) = run(
            1,
            vec![
                Box::new(|x| reply(x, 0, Some(b"challenge"))),
                Box::new(move |x| reply(x, code, None)),
            ],
        );
        match result {
            Err(ConnectFailure::AuthFailed {
                reason: AuthFailure::Refused { code: c, .. },
                ..
            }) => assert_eq!(c.code(), code),
            other => panic!("{other:?}"),
        }
        assert_eq!(seen.len(), 2);
    }
}

#[test]
fn a_mechanism_error_is_auth_failed_and_nothing_more_is_sent() {
    let (result, seen) = run(1, vec![Box::new(|x| reply(x, 0, Some(b"nonsense")))]);
    match result {
        Err(ConnectFailure::AuthFailed {
            mechanism,
            reason: AuthFailure::Mechanism(why),
        }) => {
            assert_eq!(mechanism, "X-TWO");
            assert!(why.to_string().contains("unexpected token"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(seen.len(), 1);
}

#[test]
fn a_wrong_xid_or_trailing_bytes_are_a_protocol_error() {
    // Both mean "try another server", not a verdict on the credentials.
    let (result, _) = run(5, vec![Box::new(|x| reply(x + 1, 0, Some(b"challenge")))]);
    assert!(
        matches!(
            result,
            Err(ConnectFailure::Protocol(HandshakeError::SaslXid { expected, got }))
                if got == expected + 1
        ),
        "{result:?}"
    );
    // Bytes after the token are not a SetSASLResponse.
    let (result, _) = run(
        5,
        vec![Box::new(|x| {
            let mut f = BytesMut::from(&reply(x, 0, Some(b"challenge"))[..]);
            f.put_u8(0);
            f.freeze()
        })],
    );
    assert!(
        matches!(
            result,
            Err(ConnectFailure::Protocol(HandshakeError::Decode(_)))
        ),
        "{result:?}"
    );
}
