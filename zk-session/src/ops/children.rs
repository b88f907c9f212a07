//! Listing a znode's children, with or without its Stat and a child watch.

use zk_proto::{GetChildren2Response, GetChildrenRequest, GetChildrenResponse, PathKind, Request};

use super::{narrow, node::plain, Call, Decode, WatchChoice};
use crate::{chroot::Chroot, watched_event::WatchKind, Error};

/// getChildren: the children's names.
pub(crate) fn get_children(
    chroot: &Chroot,
    path: &str,
) -> Result<Call<impl Decode<Vec<String>>>, Error> {
    let path = chroot.server_path(path, PathKind::Plain)?;
    let request = Request::GetChildren(GetChildrenRequest { path, watch: false });
    Ok(plain(request, |r| {
        narrow::<GetChildrenResponse>(r?).map(|c| c.children)
    }))
}

/// getChildren2: the children's names and the znode's Stat; `W` says whether it leaves a
/// child watch.
pub(crate) fn get_children_with_stat<W: WatchChoice>(
    chroot: &Chroot,
    path: &str,
) -> Result<Call<impl Decode<(Vec<String>, zk_proto::Stat)>, W>, Error> {
    let path = chroot.server_path(path, PathKind::Plain)?;
    let watch = W::on(&path, WatchKind::Child);
    let request = Request::GetChildren2(GetChildrenRequest {
        path,
        watch: watch.flag(),
    });
    let decode = |r| narrow::<GetChildren2Response>(r?).map(|c| (c.children, c.stat));
    Ok(Call {
        request,
        watch,
        decode,
    })
}
