//! Persistent watches, and removing and checking watches on the server.

use zk_proto::{
    AddWatchMode, AddWatchRequest, ErrorCode, ErrorResponse, PathKind, RemoveWatchesRequest,
    Request, Response, WatcherType,
};

use super::{done, narrow, node::plain, Call, Decode, Remove, Stream};
use crate::{chroot::Chroot, watched_event::WatchKind, Error};

/// addWatch: a persistent or persistent-recursive watch on `path`.
pub(crate) fn add_watch(
    chroot: &Chroot,
    path: &str,
    mode: AddWatchMode,
) -> Result<Call<impl Decode<()>, Stream>, Error> {
    let path = chroot.server_path(path, PathKind::Plain)?;
    let kind = match mode {
        AddWatchMode::Persistent => WatchKind::Persistent,
        AddWatchMode::PersistentRecursive => WatchKind::PersistentRecursive,
    };
    let watch = Stream {
        path: path.clone(),
        kind,
    };
    let request = Request::AddWatch(AddWatchRequest { path, mode });
    Ok(Call {
        request,
        watch,
        decode: added,
    })
}

/// The server answers addWatch with an ErrorResponse; an empty body is success too.
fn added(r: Result<Response, Error>) -> Result<(), Error> {
    match r? {
        Response::Empty => Ok(()),
        other => match narrow::<ErrorResponse>(other)?.err {
            0 => Ok(()),
            err => Err(Error::Code(ErrorCode::from_code(err))),
        },
    }
}

/// removeWatches: the session's watches of `watcher_type` on `path`, there and here.
pub(crate) fn remove_watches(
    chroot: &Chroot,
    path: &str,
    watcher_type: WatcherType,
) -> Result<Call<impl Decode<()>, Remove>, Error> {
    let path = chroot.server_path(path, PathKind::Plain)?;
    let watch = Remove {
        path: path.clone(),
        watcher_type,
    };
    let request = Request::RemoveWatches(RemoveWatchesRequest { path, watcher_type });
    Ok(Call {
        request,
        watch,
        decode: done,
    })
}

/// checkWatches: success if the session has such a watch, `NoWatcher` if not.
pub(crate) fn check_watches(
    chroot: &Chroot,
    path: &str,
    watcher_type: WatcherType,
) -> Result<Call<impl Decode<()>>, Error> {
    let path = chroot.server_path(path, PathKind::Plain)?;
    let request = Request::CheckWatches(RemoveWatchesRequest { path, watcher_type });
    Ok(plain(request, done))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_watch_reads_the_error_in_its_reply() {
        assert!(added(Ok(Response::Empty)).is_ok());
        assert!(added(Ok(Response::Error(ErrorResponse { err: 0 }))).is_ok());
        let code = ErrorCode::NoAuth.code();
        assert!(matches!(
            added(Ok(Response::Error(ErrorResponse { err: code }))),
            Err(Error::Code(ErrorCode::NoAuth))
        ));
    }
}
