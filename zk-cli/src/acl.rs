//! ACLs in zkCli's syntax: `scheme:id:perms[,...]`, perms from `cdrwa`. The id may itself hold
//! colons (digest's `user:hash`), so the scheme ends at the first colon and the perms start
//! after the last.

use serde_json::{json, Value};
use zk_session::{Acl, Id, Perms};

/// zkCli's letters, in zkCli's order.
const LETTERS: [(char, Perms); 5] = [
    ('c', Perms::CREATE),
    ('d', Perms::DELETE),
    ('r', Perms::READ),
    ('w', Perms::WRITE),
    ('a', Perms::ADMIN),
];

/// Parses `scheme:id:perms[,...]`.
pub fn parse(text: &str) -> Result<Vec<Acl>, String> {
    text.split(',').map(parse_one).collect()
}

fn parse_one(entry: &str) -> Result<Acl, String> {
    let bad = || format!("ACL entry {entry:?}: expected scheme:id:perms, perms from cdrwa");
    let (scheme, rest) = entry.split_once(':').ok_or_else(bad)?;
    let (id, perms) = rest.rsplit_once(':').ok_or_else(bad)?;
    if scheme.is_empty() || perms.is_empty() {
        return Err(bad());
    }
    let perms = perms_from_letters(perms).ok_or_else(bad)?;
    Ok(Acl::new(perms, Id::new(scheme, id)))
}

/// The permissions `cdrwa` letters name; `None` for a letter that is not one of them.
pub fn perms_from_letters(letters: &str) -> Option<Perms> {
    let mut bits = 0;
    for ch in letters.chars() {
        let (_, p) = LETTERS.iter().find(|(l, _)| *l == ch)?;
        bits |= p.0;
    }
    Some(Perms(bits))
}

/// `cdrwa` letters for the permissions held.
pub fn perms_text(p: Perms) -> String {
    LETTERS
        .iter()
        .filter(|(_, bit)| p.contains(*bit))
        .map(|(l, _)| *l)
        .collect()
}

/// One entry as `scheme:id:perms`.
pub fn text(acl: &Acl) -> String {
    format!("{}:{}:{}", acl.id.scheme, acl.id.id, perms_text(acl.perms))
}

pub fn json(acl: &Acl) -> Value {
    json!({"scheme": acl.id.scheme, "id": acl.id.id, "perms": perms_text(acl.perms)})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_zkcli_syntax() {
        let acl = parse("world:anyone:r,digest:alice:x+y/z=:cdrwa,ip:10.0.0.1:rw").unwrap();
        assert_eq!(acl.len(), 3);
        assert_eq!(acl[0], Acl::new(Perms::READ, Id::anyone()));
        assert_eq!(acl[1].id.id, "alice:x+y/z=");
        assert_eq!(acl[1].perms, Perms::ALL);
        assert_eq!(text(&acl[1]), "digest:alice:x+y/z=:cdrwa");
        assert_eq!(text(&acl[2]), "ip:10.0.0.1:rw");
        assert_eq!(parse("auth::cdrwa").unwrap()[0].id, Id::auth());
    }

    #[test]
    fn rejects_malformed_entries() {
        for bad in [
            "world",
            "world:anyone",
            ":x:r",
            "world:anyone:",
            "world:anyone:rx",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
