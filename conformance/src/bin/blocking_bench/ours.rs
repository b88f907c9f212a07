//! `zk_session::blocking::Client`: one client shared by the caller threads.

use std::sync::Arc;

use conformance::{
    raw_session::SESSION_TIMEOUT,
    workload::{Kind, Paths, Schedule, Workload, DATA_LEN},
};
use zk_session::{blocking::Client, CreateOptions, Version};

use crate::callers::run_client;

pub(crate) fn ours_run(
    connect: &str,
    workloads: &[Workload],
    paths: &Paths,
    s: Schedule,
) -> Result<(), String> {
    let client = Client::builder(connect)
        .session_timeout(SESSION_TIMEOUT)
        .connect_blocking()
        .map_err(|e| format!("connect: {e}"))?;
    let client = Arc::new(client);
    run_client(client.clone(), one_op, "ours", workloads, paths, s);
    client.close().map_err(|e| format!("close: {e}"))
}

fn one_op(client: &Client, kind: Kind, data_path: &str, cd_path: &str) -> bool {
    match kind {
        Kind::Get => matches!(client.get_data(data_path), Ok((d, _)) if d.len() == DATA_LEN),
        Kind::CreateDelete => {
            let c = client
                .create(cd_path, &[0u8; DATA_LEN], CreateOptions::persistent())
                .is_ok();
            c & client.delete(cd_path, Version::Any).is_ok()
        }
    }
}
