//! The synchronous Rust `zookeeper` crate 0.8 (a benchmark peer only: feature
//! `bench-peers`): one `ZooKeeper` handle shared by the caller threads.

use std::sync::Arc;

use conformance::{
    raw_session::SESSION_TIMEOUT,
    workload::{Kind, Paths, Schedule, Workload, DATA_LEN},
};
use zookeeper::{Acl, CreateMode, WatchedEvent, ZooKeeper};

use crate::callers::run_client;

pub(crate) fn zookeeper_08_run(
    connect: &str,
    workloads: &[Workload],
    paths: &Paths,
    s: Schedule,
) -> Result<(), String> {
    let zk = ZooKeeper::connect(connect, SESSION_TIMEOUT, |_: WatchedEvent| {})
        .map_err(|e| format!("connect: {e:?}"))?;
    let zk = Arc::new(zk);
    run_client(zk.clone(), one_op, "zk08", workloads, paths, s);
    zk.close().map_err(|e| format!("close: {e:?}"))
}

fn one_op(zk: &ZooKeeper, kind: Kind, data_path: &str, cd_path: &str) -> bool {
    match kind {
        Kind::Get => matches!(zk.get_data(data_path, false), Ok((d, _)) if d.len() == DATA_LEN),
        Kind::CreateDelete => {
            let data = vec![0u8; DATA_LEN];
            let acl = Acl::open_unsafe().clone();
            let c = zk
                .create(cd_path, data, acl, CreateMode::Persistent)
                .is_ok();
            c & zk.delete(cd_path, None).is_ok()
        }
    }
}
