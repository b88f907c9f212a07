//! Short constructors for the requests checks send.

use bytes::Bytes;
use zk_proto::{
    Acl, AddWatchMode, AddWatchRequest, CreateMode, CreateRequest, DeleteRequest, ExistsRequest,
    GetAclRequest, GetChildrenRequest, GetDataRequest, RemoveWatchesRequest, Request,
    SetAclRequest, SetDataRequest, SyncRequest, WatcherType,
};

/// Data as a buffer (`None` is jute's null).
pub fn data(bytes: &[u8]) -> Option<Bytes> {
    Some(Bytes::copy_from_slice(bytes))
}

/// create (1), open ACL.
pub fn create(path: &str, bytes: &[u8], mode: CreateMode) -> Request {
    Request::Create(create_record(path, data(bytes), Acl::open_unsafe(), mode))
}

/// The record of a create, create2 or createContainer.
pub fn create_record(
    path: &str,
    data: Option<Bytes>,
    acl: Vec<Acl>,
    mode: CreateMode,
) -> CreateRequest {
    CreateRequest {
        path: path.into(),
        data,
        acl,
        mode,
    }
}

/// create2 (15), open ACL.
pub fn create2(path: &str, bytes: &[u8], mode: CreateMode) -> Request {
    Request::Create2(create_record(path, data(bytes), Acl::open_unsafe(), mode))
}

/// delete (2).
pub fn delete(path: &str, version: i32) -> Request {
    Request::Delete(DeleteRequest {
        path: path.into(),
        version,
    })
}

/// exists (3).
pub fn exists(path: &str, watch: bool) -> Request {
    Request::Exists(ExistsRequest {
        path: path.into(),
        watch,
    })
}

/// getData (4).
pub fn get_data(path: &str, watch: bool) -> Request {
    Request::GetData(GetDataRequest {
        path: path.into(),
        watch,
    })
}

/// setData (5).
pub fn set_data(path: &str, bytes: &[u8], version: i32) -> Request {
    Request::SetData(SetDataRequest {
        path: path.into(),
        data: data(bytes),
        version,
    })
}

/// getACL (6).
pub fn get_acl(path: &str) -> Request {
    Request::GetAcl(GetAclRequest { path: path.into() })
}

/// setACL (7).
pub fn set_acl(path: &str, acl: Vec<Acl>, version: i32) -> Request {
    Request::SetAcl(SetAclRequest {
        path: path.into(),
        acl,
        version,
    })
}

/// getChildren (8).
pub fn get_children(path: &str, watch: bool) -> Request {
    Request::GetChildren(GetChildrenRequest {
        path: path.into(),
        watch,
    })
}

/// getChildren2 (12).
pub fn get_children2(path: &str, watch: bool) -> Request {
    Request::GetChildren2(GetChildrenRequest {
        path: path.into(),
        watch,
    })
}

/// sync (9).
pub fn sync(path: &str) -> Request {
    Request::Sync(SyncRequest { path: path.into() })
}

/// addWatch (106).
pub fn add_watch(path: &str, mode: AddWatchMode) -> Request {
    Request::AddWatch(AddWatchRequest {
        path: path.into(),
        mode,
    })
}

/// removeWatches (18).
pub fn remove_watches(path: &str, kind: WatcherType) -> Request {
    Request::RemoveWatches(RemoveWatchesRequest {
        path: path.into(),
        watcher_type: kind,
    })
}

/// checkWatches (17).
pub fn check_watches(path: &str, kind: WatcherType) -> Request {
    Request::CheckWatches(RemoveWatchesRequest {
        path: path.into(),
        watcher_type: kind,
    })
}
