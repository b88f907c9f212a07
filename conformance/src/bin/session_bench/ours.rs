//! zk-session measured: `window` tasks on clones of one `Client`, over TCP or mutual TLS.

use conformance::{
    bench::Throughput, counters::Counters, raw_session::SESSION_TIMEOUT, workload::DATA_LEN,
    Standalone, TestCerts,
};
use zk_session::{Client, CreateOptions, TlsConfig, Version};

use crate::{
    settings::{Paths, Settings},
    workloads::{Kind, Workload},
};

pub(crate) async fn ours_run(
    client: &Client,
    w: Workload,
    paths: &Paths,
    set: &Settings,
) -> Vec<Throughput> {
    let counters = Counters::default();
    let mut workers = tokio::task::JoinSet::new();
    for i in 0..w.window {
        let (client, counters) = (client.clone(), counters.clone());
        let data_path = paths.data.clone();
        let cd_path = format!("{}/ours-{i}", paths.cd_base);
        workers.spawn(async move {
            while !counters.stopped() {
                counters.count(one_op(&client, w.kind, &data_path, &cd_path).await);
            }
        });
    }
    let out = counters.measure(set.schedule()).await;
    while workers.join_next().await.is_some() {}
    out
}

/// One op of the workload on `client`: whether it succeeded.
pub(crate) async fn one_op(client: &Client, kind: Kind, data_path: &str, cd_path: &str) -> bool {
    match kind {
        Kind::Get => matches!(
            client.get_data(data_path).await,
            Ok((d, _)) if d.len() == DATA_LEN
        ),
        Kind::CreateDelete => {
            let c = client
                .create(cd_path, &[0u8; DATA_LEN], CreateOptions::persistent())
                .await
                .is_ok();
            c & client.delete(cd_path, Version::Any).await.is_ok()
        }
    }
}

/// A client over mutual TLS to the server's secure port.
pub(crate) async fn tls_connect(zk: &Standalone, certs: &TestCerts) -> Client {
    let tls = TlsConfig::builder()
        .ca_file(certs.ca())
        .client_cert_files(certs.client_cert(), certs.client_key())
        .build()
        .expect("TLS config");
    Client::builder(&zk.secure_connect_string())
        .session_timeout(SESSION_TIMEOUT)
        .tls(tls)
        .connect()
        .await
        .expect("connect over TLS")
}
