//! One side of `cp` or `diff`: a znode path on the ensemble of `--server` (`/app`), a path
//! on another ensemble (`zk://HOST:PORT[,HOST:PORT...]/app`), or a backup file (anything
//! else, e.g. `backup.zkb`, `./app.json`, or `file:PATH` for any name).

use std::{ffi::OsStr, path::PathBuf};

use zk_session::Client;

use crate::{
    backup,
    cli::Global,
    connect, input,
    tree::Tree,
    tree_read::{self, Scope},
    Failure,
};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Side {
    /// A znode path on `--server`'s ensemble.
    Here(String),
    /// A znode path on the ensemble of `hosts`.
    Remote { hosts: String, path: String },
    /// A backup file.
    File(PathBuf),
}

impl Side {
    /// Reads the argument: a znode path starts with `/`; `zk://` names another ensemble;
    /// `file:` or anything else is a backup file.
    pub fn parse(arg: &OsStr) -> Result<Side, Failure> {
        let text = arg.to_str();
        if let Some(rest) = text.and_then(|t| t.strip_prefix("zk://")) {
            let (hosts, path) = match rest.find('/') {
                Some(i) => (&rest[..i], rest[i..].to_owned()),
                None => (rest, "/".to_owned()),
            };
            if hosts.is_empty() {
                return Err(Failure::usage(format!(
                    "{rest:?}: zk://HOSTS/PATH needs hosts"
                )));
            }
            return Ok(Side::Remote {
                hosts: hosts.to_owned(),
                path: trim(path),
            });
        }
        if text.is_some_and(|t| t.starts_with('/')) {
            return Ok(Side::Here(trim(input::path(arg)?)));
        }
        let file = match text.and_then(|t| t.strip_prefix("file:")) {
            Some(f) => PathBuf::from(f),
            None => PathBuf::from(arg),
        };
        Ok(Side::File(file))
    }

    /// The ensemble path, if this side is on an ensemble.
    pub fn znode(&self) -> Option<&str> {
        match self {
            Side::Here(p) | Side::Remote { path: p, .. } => Some(p),
            Side::File(_) => None,
        }
    }

    /// A session to this side's ensemble (`None` for a file).
    pub async fn connect(&self, g: &Global) -> Result<Option<Client>, Failure> {
        let server = match self {
            Side::Here(_) => input::utf8(&g.server(), "--server")?,
            Side::Remote { hosts, .. } => hosts.clone(),
            Side::File(_) => return Ok(None),
        };
        connect::connect_to(g, &server).await.map(Some)
    }

    /// The subtree this side holds, with ACLs.
    pub async fn read(&self, client: Option<&Client>) -> Result<Tree, Failure> {
        match (self, client) {
            (Side::File(f), _) => backup::read(f),
            (_, Some(c)) => {
                let scope = Scope {
                    acls: true,
                    depth: None,
                };
                tree_read::read(c, self.znode().unwrap_or("/"), scope).await
            }
            (_, None) => Err(Failure::usage(format!("{self}: not connected"))),
        }
    }
}

/// `/app/` names `/app`.
fn trim(path: String) -> String {
    match path.trim_end_matches('/') {
        "" => "/".to_owned(),
        t => t.to_owned(),
    }
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Side::Here(p) => f.write_str(p),
            Side::Remote { hosts, path } => write!(f, "zk://{hosts}{path}"),
            Side::File(p) => write!(f, "file:{}", p.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(s: &str) -> Side {
        Side::parse(OsStr::new(s)).unwrap()
    }

    #[test]
    fn the_three_kinds() {
        assert_eq!(side("/app/"), Side::Here("/app".into()));
        assert_eq!(
            side("zk://a:1,b:2/x/y"),
            Side::Remote {
                hosts: "a:1,b:2".into(),
                path: "/x/y".into()
            }
        );
        assert_eq!(
            side("zk://a:1"),
            Side::Remote {
                hosts: "a:1".into(),
                path: "/".into()
            }
        );
        assert_eq!(side("b.zkb"), Side::File("b.zkb".into()));
        assert_eq!(side("file:/tmp/x"), Side::File("/tmp/x".into()));
        assert!(Side::parse(OsStr::new("zk:///x")).is_err());
        assert_eq!(side("file:/tmp/x").to_string(), "file:/tmp/x");
    }
}
