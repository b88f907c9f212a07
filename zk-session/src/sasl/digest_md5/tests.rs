//! DIGEST-MD5 against the exchange captured between ZooKeeper 3.8's Java client and server
//! (user bob, password bobsecret; shared/notes/security.md §3).

use super::*;

const NONCE: &str = "zHSWg0CPE6L6tQ9dPtbJdkqp9Iy/rlsCOpB3MtZU";
const CNONCE: &str = "kakMZ2FSN8TmAOQR7i/MMjE6luF5bFRj2yPpHCKX";
const CHALLENGE: &str = "realm=\"zk-sasl-md5\",nonce=\"zHSWg0CPE6L6tQ9dPtbJdkqp9Iy/rlsCOpB3MtZU\",charset=utf-8,algorithm=md5-sess";

fn inputs(authzid: Option<&'static str>) -> Inputs<'static> {
    Inputs {
        user: "bob",
        realm: "zk-sasl-md5",
        password: "bobsecret",
        nonce: NONCE,
        cnonce: CNONCE,
        authzid,
        utf8: true,
    }
}

fn exchange(password: &str) -> DigestMd5Exchange {
    DigestMd5Exchange::new(DigestMd5::new("bob", password), CNONCE.to_owned())
}

#[test]
fn the_captured_java_exchange_digests_match() {
    // The Java client sends authzid = username; these two values are the ones on the wire.
    let java = inputs(Some("bob"));
    assert_eq!(
        java.digest("AUTHENTICATE:").unwrap(),
        "3515cd057a5b628d387a8f7b8eae302b"
    );
    assert_eq!(
        java.digest(":").unwrap(),
        "b17d500e57b51dd3724acceda2a4b63f"
    );
    // Without authzid, as this client sends it.
    let ours = inputs(None);
    assert_eq!(
        ours.digest("AUTHENTICATE:").unwrap(),
        "8d6dca05c05a7f84d5cbdf6dd5f71af5"
    );
    assert_eq!(
        ours.digest(":").unwrap(),
        "bd83f7a14045abe9b664d73ae462dd20"
    );
}

#[test]
fn a_full_exchange_answers_the_challenge_and_checks_rspauth() {
    let mut ex = exchange("bobsecret");
    assert_eq!(ex.initial_response().unwrap(), b"");
    let SaslStep::Send(response) = ex.step(Some(CHALLENGE.as_bytes())).unwrap() else {
        panic!("no response to the challenge");
    };
    assert_eq!(
        String::from_utf8(response).unwrap(),
        "charset=utf-8,username=\"bob\",realm=\"zk-sasl-md5\",\
         nonce=\"zHSWg0CPE6L6tQ9dPtbJdkqp9Iy/rlsCOpB3MtZU\",nc=00000001,\
         cnonce=\"kakMZ2FSN8TmAOQR7i/MMjE6luF5bFRj2yPpHCKX\",digest-uri=\"zookeeper/zk-sasl-md5\",\
         maxbuf=65536,response=8d6dca05c05a7f84d5cbdf6dd5f71af5,qop=auth"
    );
    let done = ex.step(Some(b"rspauth=bd83f7a14045abe9b664d73ae462dd20"));
    assert!(matches!(done, Ok(SaslStep::Done)), "{done:?}");
    // Nothing more is expected.
    assert!(ex.step(Some(b"")).is_err());
}

#[test]
fn a_wrong_rspauth_or_none_fails() {
    for last in [
        &b"rspauth=b17d500e57b51dd3724acceda2a4b63f"[..],
        b"",
        b"something=else",
    ] {
        let mut ex = exchange("bobsecret");
        ex.step(Some(CHALLENGE.as_bytes())).unwrap();
        let err = ex.step(Some(last)).unwrap_err();
        assert!(err.to_string().contains("rspauth"), "{err}");
    }
    let mut ex = exchange("bobsecret");
    ex.step(Some(CHALLENGE.as_bytes())).unwrap();
    assert!(ex.step(None).is_err());
}

#[test]
fn another_password_gives_another_response() {
    let mut ex = exchange("wrong");
    let SaslStep::Send(response) = ex.step(Some(CHALLENGE.as_bytes())).unwrap() else {
        panic!("no response");
    };
    let text = String::from_utf8(response).unwrap();
    assert!(text.contains("response="), "{text}");
    assert!(!text.contains("8d6dca05c05a7f84d5cbdf6dd5f71af5"), "{text}");
    assert!(
        !text.contains("wrong"),
        "the password is never sent: {text}"
    );
}

#[test]
fn challenges_that_cannot_be_answered_are_errors_not_panics() {
    for (challenge, why) in [
        (None, "no DIGEST-MD5 challenge"),
        (Some(&b"\xff\xfe"[..]), "not UTF-8"),
        (Some(b"realm=\"r\",algorithm=md5-sess"), "no nonce"),
        (Some(b"nonce=\"n\""), "md5-sess"),
        (Some(b"nonce=\"n\",algorithm=md5"), "md5-sess"),
        (
            Some(b"nonce=\"n\",nonce=\"m\",algorithm=md5-sess"),
            "more than one nonce",
        ),
        (
            Some(b"nonce=\"n\",algorithm=md5-sess,qop=\"auth-conf\""),
            "qop auth",
        ),
        (Some(b"nonce=\"n"), "malformed"),
    ] {
        let err = exchange("p").step(challenge).unwrap_err();
        assert!(err.to_string().contains(why), "{challenge:?}: {err}");
    }
}

#[test]
fn a_challenge_without_realm_or_charset_is_answered_without_them() {
    let mut ex = exchange("bobsecret");
    let SaslStep::Send(response) = ex
        .step(Some(
            b"nonce=\"abc\",qop=\"auth,auth-int\",algorithm=md5-sess",
        ))
        .unwrap()
    else {
        panic!("no response");
    };
    let text = String::from_utf8(response).unwrap();
    assert!(
        text.starts_with("username=\"bob\",nonce=\"abc\","),
        "{text}"
    );
    assert!(
        !text.contains("realm") && !text.contains("charset"),
        "{text}"
    );
}

#[test]
fn names_and_passwords_are_hashed_as_latin1_when_they_fit() {
    // Java (and RFC 2831 §2.1.2.1) hash "pässword" as ISO 8859-1 even with charset=utf-8.
    assert_eq!(hash_text("pässword", true).unwrap(), b"p\xe4ssword");
    // Beyond Latin-1, UTF-8 — and only when the server takes it.
    assert_eq!(hash_text("p€", true).unwrap(), "p€".as_bytes());
    assert!(hash_text("p€", false).is_err());
    let no_utf8 = Inputs {
        password: "p€",
        utf8: false,
        ..inputs(None)
    };
    assert!(no_utf8.digest(":").is_err());
}

#[test]
fn debug_never_shows_the_password() {
    let mech = DigestMd5::new("bob", "bobsecret");
    let shown = format!("{mech:?} {:?}", exchange("bobsecret"));
    assert!(shown.contains("bob"), "{shown}");
    assert!(!shown.contains("bobsecret"), "{shown}");
}

#[test]
fn each_start_has_a_fresh_cnonce() {
    let a = new_cnonce();
    let b = new_cnonce();
    assert_eq!(a.len(), 48);
    assert_ne!(a, b);
}
