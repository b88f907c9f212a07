//! zk-session measured: `window` tasks on clones of one `Client`, over TCP or mutual TLS.

use std::{
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use conformance::{bench::Throughput, Standalone, TestCerts};
use zk_session::{Client, CreateOptions, TlsConfig, Version};

use crate::{
    cpu::process_cpu,
    settings::{Paths, Settings},
    workloads::{Kind, Workload},
    DATA_LEN, SESSION_TIMEOUT,
};

pub(crate) async fn ours_run(
    client: &Client,
    w: Workload,
    paths: &Paths,
    set: &Settings,
) -> Vec<Throughput> {
    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = tokio::task::JoinSet::new();
    for i in 0..w.window {
        let (client, done, errors, stop) =
            (client.clone(), done.clone(), errors.clone(), stop.clone());
        let data_path = paths.data.clone();
        let cd_path = format!("{}/ours-{i}", paths.cd_base);
        let kind = w.kind;
        workers.spawn(async move {
            let payload = [0u8; DATA_LEN];
            let create = CreateOptions::persistent();
            while !stop.load(Ordering::Relaxed) {
                let ok = match kind {
                    Kind::Get => matches!(
                        client.get_data(&data_path).await,
                        Ok((d, _)) if d.len() == DATA_LEN
                    ),
                    Kind::CreateDelete => {
                        let c = client
                            .create(&cd_path, &payload, create.clone())
                            .await
                            .is_ok();
                        c & client.delete(&cd_path, Version::Any).await.is_ok()
                    }
                };
                if !ok {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    let out = measure(&done, &errors, set).await;
    stop.store(true, Ordering::Relaxed);
    while workers.join_next().await.is_some() {}
    out
}

/// Samples the ops and errors counted by running callers: a warm-up, then `set.reps`
/// repetitions.
pub(crate) async fn measure(
    done: &AtomicU64,
    errors: &AtomicU64,
    set: &Settings,
) -> Vec<Throughput> {
    let snapshot = || {
        (
            done.load(Ordering::Relaxed),
            errors.load(Ordering::Relaxed),
            Instant::now(),
            process_cpu(),
        )
    };
    tokio::time::sleep(Duration::from_secs_f64(set.timing.warmup)).await;
    let mut out = Vec::new();
    for _ in 0..set.reps {
        let a = snapshot();
        tokio::time::sleep(Duration::from_secs_f64(set.timing.secs)).await;
        let b = snapshot();
        out.push(Throughput {
            ops: b.0 - a.0,
            elapsed: b.2 - a.2,
            cpu: b.3 - a.3,
            errors: b.1 - a.1,
        });
    }
    out
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
