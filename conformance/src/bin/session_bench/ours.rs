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
    let out = counters.measure(set).await;
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

/// What running callers count (ops done, ops failed) and the flag that stops them.
#[derive(Clone, Default)]
pub(crate) struct Counters {
    done: Arc<AtomicU64>,
    errors: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Counters {
    pub(crate) fn count(&self, ok: bool) {
        if !ok {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Samples the counts through a warm-up and `set.reps` repetitions, then stops the
    /// callers.
    pub(crate) async fn measure(&self, set: &Settings) -> Vec<Throughput> {
        let snapshot = || {
            (
                self.done.load(Ordering::Relaxed),
                self.errors.load(Ordering::Relaxed),
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
        self.stop.store(true, Ordering::Relaxed);
        out
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
