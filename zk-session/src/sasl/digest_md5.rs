//! DIGEST-MD5 (RFC 2831) as ZooKeeper's `DigestLoginModule` serves it: qop `auth` only (no
//! integrity or privacy layer), algorithm `md5-sess`, digest-uri `zookeeper/zk-sasl-md5`
//! whatever host the client connected to.
//!
//! The exchange is a plain value: the server's challenge in, the response out, then the
//! server's `rspauth` in, checked. Nothing here touches a socket or a clock.

use std::fmt;

use super::{directives, SaslError, SaslExchange, SaslMechanism, SaslStep};

/// The digest-uri ZooKeeper's server expects: its SaslServer is made for protocol
/// `zookeeper` and server name `zk-sasl-md5`, and it refuses any other uri.
pub(crate) const DIGEST_URI: &str = "zookeeper/zk-sasl-md5";

/// Every exchange is new, so the nonce count is always 1.
const NONCE_COUNT: &str = "00000001";

/// The DIGEST-MD5 mechanism with a username and password.
#[derive(Clone)]
pub(crate) struct DigestMd5 {
    user: String,
    password: String,
}

impl DigestMd5 {
    pub(crate) fn new(user: &str, password: &str) -> Self {
        DigestMd5 {
            user: user.to_owned(),
            password: password.to_owned(),
        }
    }
}

impl fmt::Debug for DigestMd5 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DigestMd5")
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .finish()
    }
}

impl SaslMechanism for DigestMd5 {
    fn name(&self) -> &str {
        "DIGEST-MD5"
    }

    fn start(&self, _server_host: &str) -> Result<Box<dyn SaslExchange>, SaslError> {
        Ok(Box::new(DigestMd5Exchange::new(self.clone(), new_cnonce())))
    }

    /// Hashing only: run in place.
    fn may_block(&self) -> bool {
        false
    }
}

/// 48 hex digits from the thread's CSPRNG.
fn new_cnonce() -> String {
    hex(&rand::random::<[u8; 24]>())
}

/// One connection's exchange.
#[derive(Debug)]
pub(crate) struct DigestMd5Exchange {
    creds: DigestMd5,
    cnonce: String,
    state: State,
}

#[derive(Debug)]
enum State {
    /// The empty initial token was sent; the challenge comes next.
    AwaitChallenge,
    /// The response was sent; the server's `rspauth` must be this.
    AwaitRspauth(String),
    Done,
}

impl DigestMd5Exchange {
    pub(crate) fn new(creds: DigestMd5, cnonce: String) -> Self {
        DigestMd5Exchange {
            creds,
            cnonce,
            state: State::AwaitChallenge,
        }
    }

    /// The response to the server's challenge (RFC 2831 §2.1.2).
    pub(crate) fn respond(&mut self, challenge: &[u8]) -> Result<Vec<u8>, SaslError> {
        let challenge = Challenge::parse(challenge)?;
        let utf8 = challenge.utf8;
        let inputs = Inputs {
            user: &self.creds.user,
            realm: &challenge.realm,
            password: &self.creds.password,
            nonce: &challenge.nonce,
            cnonce: &self.cnonce,
            authzid: None,
            utf8,
        };
        let response = inputs.digest("AUTHENTICATE:")?;
        let rspauth = inputs.digest(":")?;
        let mut text = String::new();
        if utf8 {
            text.push_str("charset=utf-8,");
        }
        text.push_str(&format!("username={},", directives::quote(inputs.user)));
        if !challenge.realm.is_empty() {
            text.push_str(&format!("realm={},", directives::quote(inputs.realm)));
        }
        text.push_str(&format!(
            "nonce={},nc={NONCE_COUNT},cnonce={},digest-uri={},maxbuf=65536,response={response},qop=auth",
            directives::quote(inputs.nonce),
            directives::quote(inputs.cnonce),
            directives::quote(DIGEST_URI),
        ));
        self.state = State::AwaitRspauth(rspauth);
        encode_text(&text, utf8)
    }

    /// Checks the server's final message, `rspauth=<hex>`: a server that does not know the
    /// password cannot compute it.
    fn verify(&self, expected: &str, token: &[u8]) -> Result<(), SaslError> {
        let text = String::from_utf8_lossy(token);
        let got = directives::parse(&text)?
            .into_iter()
            .find(|(k, _)| k == "rspauth")
            .map(|(_, v)| v)
            .ok_or_else(|| protocol("the server's last DIGEST-MD5 message has no rspauth"))?;
        if got.eq_ignore_ascii_case(expected) {
            Ok(())
        } else {
            Err(SaslError::ServerNotVerified {
                mechanism: MECHANISM,
            })
        }
    }
}

impl SaslExchange for DigestMd5Exchange {
    fn initial_response(&mut self) -> Result<Vec<u8>, SaslError> {
        // DIGEST-MD5 has no initial response; ZooKeeper clients send an empty token.
        Ok(Vec::new())
    }

    fn step(&mut self, token: Option<&[u8]>) -> Result<SaslStep, SaslError> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::AwaitChallenge => {
                // A server without a JAAS section answers with a null token.
                let challenge = token.ok_or(SaslError::NoServerToken {
                    mechanism: MECHANISM,
                    expected: "challenge",
                })?;
                self.respond(challenge).map(SaslStep::Send)
            }
            State::AwaitRspauth(expected) => {
                self.verify(&expected, token.unwrap_or_default())?;
                Ok(SaslStep::Done)
            }
            State::Done => Err(SaslError::AlreadyComplete {
                mechanism: MECHANISM,
            }),
        }
    }
}

/// What the client needs from a challenge.
#[derive(Debug)]
struct Challenge {
    realm: String,
    nonce: String,
    utf8: bool,
}

impl Challenge {
    fn parse(token: &[u8]) -> Result<Challenge, SaslError> {
        // The challenge is US-ASCII or UTF-8 (RFC 2831 §2.1.1).
        let text = std::str::from_utf8(token)
            .map_err(|_| protocol("the DIGEST-MD5 challenge is not UTF-8"))?;
        let mut realm = None;
        let mut nonce = None;
        let mut utf8 = false;
        let mut algorithm = None;
        let mut auth_offered = true;
        for (k, v) in directives::parse(text)? {
            match k.as_str() {
                // Several realms may be offered; ZooKeeper offers one, and the first will do.
                "realm" => {
                    realm.get_or_insert(v);
                }
                "nonce" if nonce.is_some() => return Err(once("nonce")),
                "nonce" => nonce = Some(v),
                "charset" => utf8 = v.eq_ignore_ascii_case("utf-8"),
                "algorithm" if algorithm.is_some() => return Err(once("algorithm")),
                "algorithm" => algorithm = Some(v),
                "qop" => auth_offered = v.split(',').any(|q| q.trim() == "auth"),
                _ => {}
            }
        }
        if algorithm.as_deref() != Some("md5-sess") {
            return Err(protocol(
                "the DIGEST-MD5 challenge must say algorithm=md5-sess",
            ));
        }
        if !auth_offered {
            return Err(protocol(
                "the server does not offer qop auth, the only one this client does",
            ));
        }
        Ok(Challenge {
            realm: realm.unwrap_or_default(),
            nonce: nonce.ok_or_else(|| protocol("the DIGEST-MD5 challenge has no nonce"))?,
            utf8,
        })
    }
}

fn once(what: &str) -> SaslError {
    protocol(format!("the DIGEST-MD5 challenge has more than one {what}"))
}

/// The mechanism's name in errors.
const MECHANISM: &str = "DIGEST-MD5";

/// A server message that breaks DIGEST-MD5.
fn protocol(what: impl Into<String>) -> SaslError {
    SaslError::Protocol {
        mechanism: MECHANISM,
        what: what.into().into_boxed_str(),
    }
}

/// The values the digests are computed from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Inputs<'a> {
    pub user: &'a str,
    pub realm: &'a str,
    pub password: &'a str,
    pub nonce: &'a str,
    pub cnonce: &'a str,
    pub authzid: Option<&'a str>,
    /// The server said charset=utf-8.
    pub utf8: bool,
}

impl Inputs<'_> {
    /// `response` (with `a2_prefix` "AUTHENTICATE:") or `rspauth` (with ":"), qop auth,
    /// md5-sess:
    /// `HEX(MD5(HEX(MD5(MD5(user:realm:pass):nonce:cnonce[:authzid])):nonce:nc:cnonce:auth:HEX(MD5(A2))))`.
    pub(crate) fn digest(&self, a2_prefix: &str) -> Result<String, SaslError> {
        let mut secret = Vec::new();
        secret.extend(hash_text(self.user, self.utf8)?);
        secret.push(b':');
        secret.extend(hash_text(self.realm, self.utf8)?);
        secret.push(b':');
        secret.extend(hash_text(self.password, self.utf8)?);
        let mut a1 = md5::compute(&secret).0.to_vec();
        a1.extend_from_slice(format!(":{}:{}", self.nonce, self.cnonce).as_bytes());
        if let Some(authzid) = self.authzid {
            a1.push(b':');
            a1.extend(encode_text(authzid, self.utf8)?);
        }
        let ha1 = hex(&md5::compute(&a1).0);
        let ha2 = hex(&md5::compute(format!("{a2_prefix}{DIGEST_URI}")).0);
        let kd = format!(
            "{ha1}:{}:{NONCE_COUNT}:{}:auth:{ha2}",
            self.nonce, self.cnonce
        );
        Ok(hex(&md5::compute(kd).0))
    }
}

/// How a username, realm or password is hashed (RFC 2831 §2.1.2.1, as Java's SASL does it):
/// ISO 8859-1 when every character fits in it, else UTF-8 (only allowed with charset=utf-8).
fn hash_text(s: &str, utf8: bool) -> Result<Vec<u8>, SaslError> {
    match latin1(s) {
        Some(bytes) => Ok(bytes),
        None => encode_text(s, utf8),
    }
}

/// The bytes of text sent on the wire: UTF-8 with charset=utf-8, else ISO 8859-1.
fn encode_text(s: &str, utf8: bool) -> Result<Vec<u8>, SaslError> {
    if utf8 {
        return Ok(s.as_bytes().to_vec());
    }
    latin1(s).ok_or(SaslError::UnencodableCredentials)
}

fn latin1(s: &str) -> Option<Vec<u8>> {
    s.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect()
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

#[cfg(test)]
mod tests;
