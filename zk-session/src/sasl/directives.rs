//! RFC 2831 directive lists: `key=value` pairs separated by commas, each value a token or a
//! quoted string with backslash escapes (`realm="zk-sasl-md5",nonce="…",algorithm=md5-sess`).

use super::SaslError;

/// Parses a directive list. Keys come back lower-cased (they are case-insensitive); values as
/// sent, unquoted. Empty list elements (`a=1,,b=2`) are allowed, as the `#rule` allows them.
pub(crate) fn parse(text: &str) -> Result<Vec<(String, String)>, SaslError> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches(is_lws);
        if rest.is_empty() {
            return Ok(out);
        }
        if let Some(r) = rest.strip_prefix(',') {
            rest = r;
            continue;
        }
        let (key, r) = split_token(rest);
        if key.is_empty() {
            return Err(malformed(text, "a directive name is missing"));
        }
        let r = r.trim_start_matches(is_lws);
        let Some(r) = r.strip_prefix('=') else {
            return Err(malformed(text, "a directive has no '='"));
        };
        let r = r.trim_start_matches(is_lws);
        let (value, r) = if let Some(quoted) = r.strip_prefix('"') {
            unquote(quoted).ok_or_else(|| malformed(text, "a quoted value is not closed"))?
        } else {
            let (v, r) = split_token(r);
            (v.to_owned(), r)
        };
        out.push((key.to_ascii_lowercase(), value));
        rest = r.trim_start_matches(is_lws);
        if !rest.is_empty() && !rest.starts_with(',') {
            return Err(malformed(text, "directives must be separated by ','"));
        }
    }
}

/// `value` as a quoted string, escaping `"` and `\`.
pub(crate) fn quote(value: &str) -> String {
    let mut q = String::with_capacity(value.len() + 2);
    q.push('"');
    for c in value.chars() {
        if c == '"' || c == '\\' {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('"');
    q
}

fn is_lws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// The longest prefix of token characters (RFC 2616: no separators, no controls).
fn split_token(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| c.is_ascii_control() || is_lws(c) || "()<>@,;:\\\"/[]?={}".contains(c))
        .unwrap_or(s.len());
    s.split_at(end)
}

/// Reads a quoted string whose opening quote is already consumed: the value and what follows
/// the closing quote, or `None` when it never closes.
fn unquote(s: &str) -> Option<(String, &str)> {
    let mut value = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((value, &s[i + 1..])),
            '\\' => value.push(chars.next()?.1),
            c => value.push(c),
        }
    }
    None
}

fn malformed(text: &str, why: &str) -> SaslError {
    // The challenge carries no secret; a prefix helps to see what the server sent.
    let shown: String = text.chars().take(120).collect();
    SaslError::Protocol {
        mechanism: "DIGEST-MD5",
        what: format!("malformed DIGEST-MD5 challenge ({why}): {shown:?}").into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parses_the_challenge_zookeeper_sends() {
        let c = r#"realm="zk-sasl-md5",nonce="zHSWg0CPE6L6tQ9dPtbJdkqp9Iy/rlsCOpB3MtZU",charset=utf-8,algorithm=md5-sess"#;
        assert_eq!(
            parse(c).unwrap(),
            pairs(&[
                ("realm", "zk-sasl-md5"),
                ("nonce", "zHSWg0CPE6L6tQ9dPtbJdkqp9Iy/rlsCOpB3MtZU"),
                ("charset", "utf-8"),
                ("algorithm", "md5-sess"),
            ])
        );
    }

    #[test]
    fn accepts_spaces_empty_elements_escapes_and_any_key_case() {
        let c = " Realm = \"a\\\"b\\\\c\" ,, qop=\"auth,auth-int\" ,\tNONCE=x ";
        assert_eq!(
            parse(c).unwrap(),
            pairs(&[
                ("realm", "a\"b\\c"),
                ("qop", "auth,auth-int"),
                ("nonce", "x")
            ])
        );
        assert_eq!(parse("").unwrap(), pairs(&[]));
    }

    #[test]
    fn rejects_what_is_not_a_directive_list() {
        for bad in [
            "nonce",
            "=x",
            "nonce=\"open",
            "a=1 b=2",
            "nonce=\"x\"y",
            "\u{0}=1",
        ] {
            let err = parse(bad).unwrap_err();
            assert!(err.to_string().contains("malformed"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn quote_round_trips_through_parse() {
        for v in ["plain", "with \"quotes\"", "back\\slash", "", "ünï"] {
            let parsed = parse(&format!("k={}", quote(v))).unwrap();
            assert_eq!(parsed, pairs(&[("k", v)]));
        }
    }
}
