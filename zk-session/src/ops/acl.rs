//! Reading and setting a znode's ACL.

use zk_proto::{Acl, GetAclRequest, GetAclResponse, PathKind, Request, SetAclRequest, Stat};

use super::{narrow, node::plain, Call, Decode};
use crate::{chroot::Chroot, Error, Version};

/// getACL: the ACL and the znode's Stat.
pub(crate) fn get_acl(
    chroot: &Chroot,
    path: &str,
) -> Result<Call<impl Decode<(Vec<Acl>, Stat)>>, Error> {
    let path = chroot.server_path(path, PathKind::Plain)?;
    let request = Request::GetAcl(GetAclRequest { path });
    Ok(plain(request, |r| {
        narrow::<GetAclResponse>(r?).map(|a| (a.acl, a.stat))
    }))
}

/// setACL, if the ACL version matches: the new Stat.
pub(crate) fn set_acl(
    chroot: &Chroot,
    path: &str,
    acl: &[Acl],
    version: Version,
) -> Result<Call<impl Decode<Stat>>, Error> {
    let request = Request::SetAcl(SetAclRequest {
        path: chroot.server_path(path, PathKind::Plain)?,
        acl: acl.to_vec(),
        version: version.as_i32(),
    });
    Ok(plain(request, |r| narrow(r?)))
}
