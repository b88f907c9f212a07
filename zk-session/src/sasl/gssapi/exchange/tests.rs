use super::*;

/// A context that needs `rounds` server tokens, "wraps" by prefixing `W` and "unwraps" by
/// stripping it; it records what it was given.
struct Fake {
    rounds: usize,
    seen: Vec<Vec<u8>>,
    complete: bool,
}

impl Fake {
    fn new(rounds: usize) -> Self {
        Fake {
            rounds,
            seen: Vec::new(),
            complete: false,
        }
    }
}

impl Context for Fake {
    fn step(&mut self, token: Option<&[u8]>) -> Result<Option<Vec<u8>>, SaslError> {
        if let Some(t) = token {
            self.seen.push(t.to_vec());
        }
        if self.seen.len() == self.rounds {
            self.complete = true;
            return Ok(None);
        }
        Ok(Some(format!("tok{}", self.seen.len()).into_bytes()))
    }
    fn is_complete(&self) -> bool {
        self.complete
    }
    fn wrap(&mut self, message: &[u8]) -> Result<Vec<u8>, SaslError> {
        Ok([b"W".as_slice(), message].concat())
    }
    fn unwrap(&mut self, message: &[u8]) -> Result<Vec<u8>, SaslError> {
        message
            .strip_prefix(b"W")
            .map(<[u8]>::to_vec)
            .ok_or_else(|| SaslError::new("bad wrap"))
    }
}

#[test]
fn mutual_auth_then_layer_negotiation_then_the_servers_last_packet() {
    let mut ex = Exchange::new(Fake::new(1));
    assert_eq!(ex.initial_response().unwrap(), b"tok0");
    // The AP-REP completes the context; nothing to send but an empty token.
    assert_eq!(ex.step(Some(b"ap-rep")).unwrap(), SaslStep::Send(vec![]));
    assert_eq!(
        ex.step(Some(b"W\x07\x01\x00\x00")).unwrap(),
        SaslStep::Send(b"W\x01\x00\x00\x00".to_vec()),
        "no layer, size 0, wrapped"
    );
    // Only ZooKeeper's answer to the layer packet ends the exchange.
    assert_eq!(ex.step(None).unwrap(), SaslStep::Done);
    assert!(ex.step(None).is_err(), "nothing after the end");
    assert_eq!(ex.ctx.seen, [b"ap-rep".to_vec()]);
}

#[test]
fn a_context_complete_at_once_goes_straight_to_the_layer_offer() {
    let mut ex = Exchange::new(Fake::new(0));
    assert_eq!(ex.initial_response().unwrap(), b"");
    assert_eq!(
        ex.step(Some(b"W\x01\x00\x00\x00")).unwrap(),
        SaslStep::Send(b"W\x01\x00\x00\x00".to_vec())
    );
}

#[test]
fn a_null_token_from_the_server_is_an_error_in_every_phase_that_needs_one() {
    let mut ex = Exchange::new(Fake::new(1));
    ex.initial_response().unwrap();
    let e = ex.step(None).unwrap_err();
    assert_eq!(
        e,
        SaslError::NoServerToken {
            mechanism: "GSSAPI",
            expected: "Kerberos token"
        }
    );

    let mut ex = Exchange::new(Fake::new(1));
    ex.initial_response().unwrap();
    ex.step(Some(b"ap-rep")).unwrap();
    assert!(matches!(
        ex.step(None),
        Err(SaslError::NoServerToken {
            expected: "security-layer offer",
            ..
        })
    ));
}

#[test]
fn a_bad_layer_offer_is_an_error() {
    let mut ex = Exchange::new(Fake::new(1));
    ex.initial_response().unwrap();
    ex.step(Some(b"ap-rep")).unwrap();
    assert!(ex.step(Some(b"not wrapped")).is_err());
    let mut ex = Exchange::new(Fake::new(1));
    ex.initial_response().unwrap();
    ex.step(Some(b"ap-rep")).unwrap();
    assert!(ex.step(Some(b"W\x04\x00\x00\x00")).is_err(), "privacy only");
}
