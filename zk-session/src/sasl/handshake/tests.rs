//! The exchange over an in-memory stream, against a scripted server.

use bytes::{BufMut, Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use zk_proto::{FrameCodec, GetSaslRequest, Request};

use super::*;
use crate::{SaslError, SaslExchange, SaslMechanism, SaslStep};

/// Sends `hello`, then `more` after the first answer, and is done after the second.
#[derive(Debug)]
struct TwoRounds;

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

/// A reply frame: header, then the token when `err` is 0.
fn reply(xid: i32, err: i32, token: Option<&[u8]>) -> Vec<u8> {
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
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    frame
}

async fn read_request(server: &mut DuplexStream) -> Option<(i32, Request)> {
    let mut len = [0u8; 4];
    server.read_exact(&mut len).await.ok()?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    server.read_exact(&mut body).await.ok()?;
    let (header, request) = Request::decode(Bytes::from(body)).unwrap();
    Some((header.xid, request))
}

fn sasl(token: &[u8]) -> Request {
    Request::Sasl(GetSaslRequest {
        token: Some(Bytes::copy_from_slice(token)),
    })
}

/// Runs the exchange from `xid` against a server that answers request `i` with `replies[i]`
/// (built from the request's xid), then hangs up. Returns the outcome and the requests seen.
async fn run(
    xid: i32,
    replies: Vec<Box<dyn Fn(i32) -> Vec<u8> + Send>>,
) -> (Result<i32, ConnectFailure>, Vec<(i32, Request)>) {
    let (client, mut server) = tokio::io::duplex(4096);
    let serve = tokio::spawn(async move {
        let mut seen = Vec::new();
        for answer in replies {
            let Some((xid, req)) = read_request(&mut server).await else {
                break;
            };
            seen.push((xid, req));
            server.write_all(&answer(xid)).await.unwrap();
        }
        seen
    });
    let (mut rd, mut wr) = tokio::io::split(client);
    let mut rbuf = BytesMut::new();
    let mut codec = FrameCodec::with_max_frame_len(1 << 20);
    let config = SaslConfig::mechanism(TwoRounds);
    let result = authenticate(&mut rd, &mut wr, &mut rbuf, &mut codec, &config, "zk1", xid).await;
    drop((rd, wr));
    (result, serve.await.unwrap())
}

#[tokio::test]
async fn tokens_go_out_with_consecutive_xids_and_the_next_one_comes_back() {
    let (result, seen) = run(
        i32::MAX,
        vec![
            Box::new(|x| reply(x, 0, Some(b"challenge"))),
            Box::new(|x| reply(x, 0, None)),
        ],
    )
    .await;
    assert_eq!(result.unwrap(), 2, "xids wrap to 1, as the session's do");
    assert_eq!(seen, [(i32::MAX, sasl(b"hello")), (1, sasl(b"more"))]);
}

#[tokio::test]
async fn a_refusal_is_auth_failed_with_the_code() {
    for code in [-115, -124] {
        let (result, seen) = run(
            1,
            vec![
                Box::new(|x| reply(x, 0, Some(b"challenge"))),
                Box::new(move |x| reply(x, code, None)),
            ],
        )
        .await;
        match result {
            Err(ConnectFailure::AuthFailed(why)) => {
                assert!(why.contains(&format!("({code})")), "{why}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(seen.len(), 2);
    }
}

#[tokio::test]
async fn a_mechanism_error_is_auth_failed_and_nothing_more_is_sent() {
    let (result, seen) = run(1, vec![Box::new(|x| reply(x, 0, Some(b"nonsense")))]).await;
    match result {
        Err(ConnectFailure::AuthFailed(why)) => {
            assert!(
                why.contains("X-TWO") && why.contains("unexpected token"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(seen.len(), 1);
}

#[tokio::test]
async fn a_wrong_xid_is_a_protocol_error_and_a_hang_up_an_io_error() {
    // Both mean "try another server", not a verdict on the credentials.
    let (result, _) = run(5, vec![Box::new(|x| reply(x + 1, 0, Some(b"challenge")))]).await;
    assert!(
        matches!(result, Err(ConnectFailure::Protocol(_))),
        "{result:?}"
    );
    let (result, _) = run(5, vec![Box::new(|x| reply(x, 0, Some(b"challenge")))]).await;
    assert!(matches!(result, Err(ConnectFailure::Io(_))), "{result:?}");
    // Bytes after the token are not a SetSASLResponse.
    let (result, _) = run(
        5,
        vec![Box::new(|x| {
            let mut f = reply(x, 0, Some(b"challenge"));
            f[3] += 1;
            f.push(0);
            f
        })],
    )
    .await;
    assert!(
        matches!(result, Err(ConnectFailure::Protocol(_))),
        "{result:?}"
    );
}
