//! Translating paths between the caller's view (under the chroot) and the server's.

use zk_proto::{validate_path, PathKind};

use crate::{ArgumentError, Error};

/// A chroot prefix such as `/app`; paths the caller sees are relative to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Chroot(Option<String>);

impl Chroot {
    pub fn none() -> Chroot {
        Chroot(None)
    }

    pub fn new(prefix: &str) -> Result<Chroot, Error> {
        if prefix == "/" {
            return Ok(Chroot(None));
        }
        validate_path(prefix, PathKind::Plain).map_err(|reason| Error::InvalidPath {
            path: prefix.to_owned(),
            reason,
        })?;
        Ok(Chroot(Some(prefix.to_owned())))
    }

    /// True when there is no chroot (the caller sees the server's whole tree).
    pub fn is_root(&self) -> bool {
        self.0.is_none()
    }

    /// The server's path for a caller's `path`, once `path` is valid for `kind`.
    pub fn server_path(&self, path: &str, kind: PathKind) -> Result<String, Error> {
        validate_path(path, kind).map_err(|reason| Error::InvalidPath {
            path: path.to_owned(),
            reason,
        })?;
        // The server appends the sequence to "/app" itself: "/app0000000001" is a sibling of
        // the chroot, outside it (the Java client lets this through).
        if path == "/" && matches!(kind, PathKind::Sequential) && !self.is_root() {
            return Err(ArgumentError::SequentialAtChroot.into());
        }
        Ok(self.to_server(path))
    }

    /// The server's path for a caller's path.
    pub fn to_server(&self, path: &str) -> String {
        match &self.0 {
            None => path.to_owned(),
            Some(root) if path == "/" => root.clone(),
            Some(root) => {
                let mut s = String::with_capacity(root.len() + path.len());
                s.push_str(root);
                s.push_str(path);
                s
            }
        }
    }

    /// The caller's path for a server path; paths outside the chroot are returned unchanged.
    pub fn to_client(&self, path: &str) -> String {
        match &self.0 {
            None => path.to_owned(),
            Some(root) => match path.strip_prefix(root.as_str()) {
                Some("") => "/".to_owned(),
                Some(rest) if rest.starts_with('/') => rest.to_owned(),
                _ => path.to_owned(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let c = Chroot::new("/app").unwrap();
        assert_eq!(c.to_server("/"), "/app");
        assert_eq!(c.to_server("/a/b"), "/app/a/b");
        assert_eq!(c.to_client("/app"), "/");
        assert_eq!(c.to_client("/app/a"), "/a");
        assert_eq!(c.to_client("/apple"), "/apple");
        assert_eq!(Chroot::none().to_client("/x"), "/x");
        assert_eq!(c.server_path("/a", PathKind::Plain).unwrap(), "/app/a");
        assert!(matches!(
            c.server_path("/", PathKind::Sequential),
            Err(Error::InvalidArgument(ArgumentError::SequentialAtChroot))
        ));
        assert!(matches!(
            c.server_path("a", PathKind::Plain),
            Err(Error::InvalidPath { .. })
        ));
    }
}
