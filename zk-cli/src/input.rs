//! What the user gave, as ZooKeeper needs it: paths as UTF-8 (ZooKeeper's paths are strings),
//! data as the bytes given, from the argument or stdin.

use std::{
    ffi::{OsStr, OsString},
    io::Read,
    os::unix::ffi::OsStrExt,
};

use crate::{exit, Failure};

/// `what` as UTF-8, or a usage error naming it.
pub fn utf8(s: &OsStr, what: &str) -> Result<String, Failure> {
    s.to_str().map(str::to_owned).ok_or_else(|| {
        Failure::usage(format!(
            "{what} {:?} is not UTF-8 (ZooKeeper paths are text)",
            s.to_string_lossy()
        ))
    })
}

/// A znode path argument.
pub fn path(s: &OsStr) -> Result<String, Failure> {
    utf8(s, "path")
}

/// The data: the argument's bytes as they are, or all of stdin when it is left out (if
/// `stdin_if_absent`) or `-`.
pub fn data(arg: Option<&OsString>, stdin_if_absent: bool) -> Result<Vec<u8>, Failure> {
    match arg {
        Some(a) if a != "-" => Ok(a.as_bytes().to_vec()),
        None if !stdin_if_absent => Ok(Vec::new()),
        _ => {
            let mut buf = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut buf)
                .map_err(|e| Failure::new(exit::FAILED, format!("reading stdin: {e}")))?;
            Ok(buf)
        }
    }
}

/// `SCHEME:CRED` split at the first colon; the credential is bytes as given.
pub fn auth(arg: &OsStr) -> Result<(String, Vec<u8>), Failure> {
    let bytes = arg.as_bytes();
    let colon = bytes.iter().position(|&b| b == b':');
    let Some(i) = colon.filter(|&i| i > 0) else {
        return Err(Failure::usage(format!(
            "--auth {:?}: expected SCHEME:CRED, e.g. digest:user:password",
            arg.to_string_lossy()
        )));
    };
    let scheme = utf8(OsStr::from_bytes(&bytes[..i]), "--auth scheme")?;
    Ok((scheme, bytes[i + 1..].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_is_taken_byte_for_byte() {
        let raw = OsString::from(OsStr::from_bytes(b"\x01\xff\xfe"));
        assert_eq!(data(Some(&raw), true).unwrap(), b"\x01\xff\xfe");
        assert_eq!(data(None, false).unwrap(), b"");
    }

    #[test]
    fn non_utf8_paths_are_usage_errors() {
        let bad = OsStr::from_bytes(b"/a\xff");
        assert_eq!(path(bad).unwrap_err().code, exit::USAGE);
        assert_eq!(path(OsStr::new("/a")).unwrap(), "/a");
    }

    #[test]
    fn auth_splits_at_the_first_colon() {
        let (s, c) = auth(OsStr::new("digest:alice:secret")).unwrap();
        assert_eq!((s.as_str(), c.as_slice()), ("digest", &b"alice:secret"[..]));
        assert!(auth(OsStr::new("nocolon")).is_err());
        assert!(auth(OsStr::new(":x")).is_err());
    }
}
