//! What the ensemble knows of the session and of itself: ephemerals, counts, identities,
//! the dynamic configuration, and the server list a caller gives.

use bytes::Bytes;
use zk_proto::{
    ClientInfo, GetAllChildrenNumberRequest, GetAllChildrenNumberResponse, GetEphemeralsRequest,
    GetEphemeralsResponse, PathKind, ReconfigRequest, Request, Stat, WhoAmIResponse,
};

use super::{
    narrow,
    node::{data_of, get_data_at, plain},
    Call, Decode, WatchChoice,
};
use crate::{chroot::Chroot, connect_string::ConnectString, ArgumentError, Error};

/// The znode holding the ensemble's dynamic configuration (never under the chroot).
pub(crate) const CONFIG_NODE: &str = "/zookeeper/config";

/// getEphemerals: the paths, under the chroot, of the session's ephemerals under `prefix`.
pub(crate) fn get_ephemerals<'a>(
    chroot: &'a Chroot,
    prefix: &str,
) -> Result<Call<impl Decode<Vec<String>> + 'a>, Error> {
    let prefix_path = chroot.server_path(prefix, PathKind::Plain)?;
    let request = Request::GetEphemerals(GetEphemeralsRequest { prefix_path });
    Ok(plain(request, move |r| {
        let r: GetEphemeralsResponse = narrow(r?)?;
        Ok(r.ephemerals.iter().map(|p| chroot.to_client(p)).collect())
    }))
}

/// getAllChildrenNumber: how many znodes are below `path`, at any depth.
pub(crate) fn get_all_children_number(
    chroot: &Chroot,
    path: &str,
) -> Result<Call<impl Decode<i32>>, Error> {
    let path = chroot.server_path(path, PathKind::Plain)?;
    let request = Request::GetAllChildrenNumber(GetAllChildrenNumberRequest { path });
    Ok(plain(request, |r| {
        narrow::<GetAllChildrenNumberResponse>(r?).map(|n| n.total_number)
    }))
}

/// whoAmI: the identities the session is authenticated as.
pub(crate) fn who_am_i() -> Call<impl Decode<Vec<ClientInfo>>> {
    plain(Request::WhoAmI, |r| {
        narrow::<WhoAmIResponse>(r?).map(|w| w.client_info)
    })
}

/// getConfig: the configuration znode's data and Stat; `W` says whether it leaves a watch.
pub(crate) fn get_config<W: WatchChoice>() -> Call<impl Decode<(Bytes, Stat)>, W> {
    get_data_at(CONFIG_NODE.to_owned())
}

/// reconfig: incrementally (`joining`/`leaving`) or wholesale (`new_members`), conditional
/// on the configuration version `from_config` if given; the new configuration.
pub(crate) fn reconfig(
    joining: Option<&str>,
    leaving: Option<&str>,
    new_members: Option<&str>,
    from_config: Option<i64>,
) -> Call<impl Decode<(Bytes, Stat)>> {
    let request = Request::Reconfig(ReconfigRequest {
        joining_servers: joining.map(str::to_owned),
        leaving_servers: leaving.map(str::to_owned),
        new_members: new_members.map(str::to_owned),
        cur_config_id: from_config.unwrap_or(-1),
    });
    plain(request, data_of)
}

/// The hosts of a new server list (`host:port,…`); a chroot in it must be the client's own.
pub(crate) fn server_list(chroot: &Chroot, servers: &str) -> Result<Vec<(String, u16)>, Error> {
    let cs = ConnectString::parse(servers)?;
    if !cs.chroot.is_root() && cs.chroot != *chroot {
        let servers = servers.to_owned();
        return Err(ArgumentError::OtherChroot { servers }.into());
    }
    Ok(cs.hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_list_keeps_to_the_clients_chroot() {
        let c = Chroot::new("/app").unwrap();
        assert_eq!(server_list(&c, "a:1,b:2/app").unwrap().len(), 2);
        assert_eq!(server_list(&c, "a:1").unwrap(), vec![("a".to_owned(), 1)]);
        assert!(matches!(
            server_list(&c, "a:1/other"),
            Err(Error::InvalidArgument(ArgumentError::OtherChroot { .. }))
        ));
    }

    #[test]
    fn reconfig_without_a_version_is_unconditional() {
        let call = reconfig(None, Some("1"), None, None);
        assert!(matches!(call.request, Request::Reconfig(r) if r.cur_config_id == -1));
        assert!(matches!(get_config::<()>().request,
            Request::GetData(r) if r.path == CONFIG_NODE && !r.watch));
    }
}
