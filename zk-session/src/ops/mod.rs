//! Every operation's semantics, written once for both clients: the request it sends (path
//! checks, the chroot, the `Request` value), the watch it registers, and how its reply
//! becomes the value the caller gets (error mapping included). No I/O and no runtime here:
//! the async [`Client`](crate::Client) and the blocking client each only send a [`Call`],
//! wait for its reply and hand it to the call's decoder.

use zk_proto::{ReplyBody, Response};

use crate::{watched_event::WatchKind, Error, ProtocolViolation};

mod acl;
mod children;
mod ensemble;
mod node;
mod transactions;
mod watches;

pub(crate) use acl::{get_acl, set_acl};
pub(crate) use children::{get_children, get_children_with_stat};
pub(crate) use ensemble::{
    get_all_children_number, get_config, get_ephemerals, reconfig, server_list, who_am_i,
};
pub(crate) use node::{create, create_with_stat, delete, exists, get_data, set_data, sync};
pub(crate) use transactions::{multi, multi_read};
pub(crate) use watches::{add_watch, check_watches, remove_watches};

/// One operation ready to send: its request (paths already under the chroot), the watch it
/// registers if it succeeds (`W`: none, [`Oneshot`], [`Stream`] or [`Remove`]), and the
/// decoder that turns the reply, or the error the session answered instead, into its result.
#[derive(Debug)]
pub(crate) struct Call<D, W = ()> {
    pub request: zk_proto::Request,
    pub watch: W,
    pub decode: D,
}

/// What turns an operation's reply into its result.
pub(crate) trait Decode<T>: FnOnce(Result<Response, Error>) -> Result<T, Error> {}

impl<T, F: FnOnce(Result<Response, Error>) -> Result<T, Error>> Decode<T> for F {}

/// Whether a read leaves a one-shot watch: `()` for none, [`Oneshot`] for one. The caller's
/// type chooses, so each read is written once for both.
pub(crate) trait WatchChoice: Sized {
    /// The watch on the server path `path` of `kind`, if this choice leaves one.
    fn on(path: &str, kind: WatchKind) -> Self;
    /// The request's watch flag.
    fn flag(&self) -> bool;
}

impl WatchChoice for () {
    fn on(_: &str, _: WatchKind) -> Self {}
    fn flag(&self) -> bool {
        false
    }
}

/// A one-shot watch of `kind` on the server path `path` (Data for getData and exists, Child
/// for getChildren).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Oneshot {
    pub path: String,
    pub kind: WatchKind,
}

impl WatchChoice for Oneshot {
    fn on(path: &str, kind: WatchKind) -> Self {
        Oneshot {
            path: path.to_owned(),
            kind,
        }
    }
    fn flag(&self) -> bool {
        true
    }
}

/// addWatch's persistent watch of `kind` on the server path `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stream {
    pub path: String,
    pub kind: WatchKind,
}

/// removeWatches: the local watches of `watcher_type` on `path` end when the server's do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Remove {
    pub path: String,
    pub watcher_type: zk_proto::WatcherType,
}

/// Narrows a reply to the record its request expects; zk-proto's [`ReplyBody`] says which
/// variant holds which record.
pub(crate) fn narrow<R: ReplyBody>(resp: Response) -> Result<R, Error> {
    R::from_response(resp).map_err(|got| {
        Error::ProtocolViolation(ProtocolViolation::WrongReply {
            expected: R::RECORD,
            got: got.record_name(),
        })
    })
}

/// A reply whose only news is success (delete, sync, checkWatches, removeWatches).
pub(crate) fn done(r: Result<Response, Error>) -> Result<(), Error> {
    r.map(drop)
}

#[cfg(test)]
mod tests {
    use zk_proto::Stat;

    use super::*;

    #[test]
    fn a_reply_of_another_record_is_a_protocol_violation_naming_both() {
        match narrow::<Stat>(Response::Empty) {
            Err(Error::ProtocolViolation(ProtocolViolation::WrongReply { expected, got })) => {
                assert_eq!((expected, got), ("Stat", "Empty"))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_watch_choice_sets_the_request_flag() {
        let watched = Oneshot::on("/a", WatchKind::Child);
        assert!(watched.flag());
        assert_eq!(watched.path, "/a");
        assert!(!WatchChoice::flag(&()));
    }
}
