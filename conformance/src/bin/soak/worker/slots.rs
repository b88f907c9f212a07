//! A slot: one session at a time of a worker, and the tasks on it.
//!
//! Even slots end their client with its session (`OnExpiry::End`) and connect a new one, as a
//! user who handles expiry by hand would. Odd slots keep one client for the whole run with
//! `OnExpiry::NewSession` (the default, as in Curator): after an expiry the client goes on
//! with a new session, and the slot's mutexes and its `LeaderSelector` go on with it — the
//! selector rejoins the election by itself. Either way each session is a writer of its own
//! (`w<worker>s<slot>g<generation>`), so the checks see every write under the session that
//! made it.

use conformance::ephemeral_owner;
use std::{
    sync::{atomic::AtomicU64, Arc, Mutex as StdMutex},
    time::Duration,
};

use rand::{rngs::SmallRng, SeedableRng};
use zk_session::{Client, OnExpiry};

use super::{
    lock, lock_task, mutexes, say, start_selector, Counters, Sess, Worker, REQUEST_TIMEOUT,
};
use crate::records::{now_us, Record, SessionRec};

/// Runs slot `slot` until the driver says stop.
pub(super) async fn run(w: Arc<Worker>, slot: usize) {
    if slot % 2 == 0 {
        ending(w, slot).await
    } else {
        renewing(w, slot).await
    }
}

/// A client per session: when the session ends, so does the client.
async fn ending(w: Arc<Worker>, slot: usize) {
    let mut generation = 0u64;
    while !w.stopping() {
        let Some(client) = connect(&w, OnExpiry::End).await else {
            continue;
        };
        let s = new_writer(&w, &client, slot, generation);
        generation += 1;
        let events = log_events(&w, &client, Arc::new(StdMutex::new(s.clone())));
        let mutexes = mutexes(&client);
        // The selector joins beside the other tasks, as it did when its start returned at once.
        let (selector, (), ()) = tokio::join!(
            start_selector(&client, Arc::new(StdMutex::new(s.clone()))),
            lock_task(s.clone(), &mutexes),
            super::kv_task(s.clone())
        );
        if let Some(selector) = selector {
            s.counted("leaving the election", selector.close()).await;
        }
        if s.counted("closing the session", s.client.close())
            .await
            .is_none()
        {
            s.error();
        }
        stop_logging(events).await;
    }
}

/// One client for the whole run; a new writer for each session it goes through.
async fn renewing(w: Arc<Worker>, slot: usize) {
    let client = loop {
        if w.stopping() {
            return;
        }
        if let Some(c) = connect(&w, OnExpiry::NewSession).await {
            break c;
        }
    };
    let mut generation = 0u64;
    let first = new_writer(&w, &client, slot, generation);
    let current = Arc::new(StdMutex::new(first));
    let events = log_events(&w, &client, current.clone());
    let mut selector = start_selector(&client, current.clone()).await;
    let mutexes = mutexes(&client);
    loop {
        let s = lock(&current).clone();
        tokio::join!(lock_task(s.clone(), &mutexes), super::kv_task(s.clone()));
        if w.stopping() || client.state().is_terminal() {
            if let Some(selector) = selector.take() {
                let _ = s.counted("leaving the election", selector.close()).await;
            }
            if s.counted("closing the session", client.close())
                .await
                .is_none()
            {
                s.error();
            }
            break;
        }
        let old = s.session_id;
        drop(s);
        if !next_session(&w, &client, old).await {
            continue;
        }
        generation += 1;
        *lock(&current) = new_writer(&w, &client, slot, generation);
    }
    drop(selector);
    stop_logging(events).await;
}

/// Lets the last state change reach the log, then stops listening; once this returns the
/// task (and the writer it held) is gone, so the writer's request counts are logged.
async fn stop_logging(events: tokio::task::JoinHandle<()>) {
    tokio::time::sleep(Duration::from_millis(100)).await;
    events.abort();
    let _ = events.await;
}

/// Waits until the client runs a session other than `old`; false when the driver says stop
/// or the client ends first.
async fn next_session(w: &Worker, client: &Client, old: i64) -> bool {
    loop {
        if w.stopping() || client.state().is_terminal() {
            return false;
        }
        if ephemeral_owner(client) != old && client.state().is_connected() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A new client; `None` (after a short wait) while the ensemble takes no session.
async fn connect(w: &Worker, on_expiry: OnExpiry) -> Option<Client> {
    match Client::builder(&w.args.hosts)
        .session_timeout(w.args.session_timeout)
        .on_session_expiry(on_expiry)
        .operation_timeout(REQUEST_TIMEOUT)
        .connect()
        .await
    {
        Ok(c) => Some(c),
        Err(_) => {
            // The ensemble may have no quorum just now.
            tokio::time::sleep(Duration::from_millis(300)).await;
            None
        }
    }
}

/// The writer of the client's current session, logged as connected.
fn new_writer(w: &Arc<Worker>, client: &Client, slot: usize, generation: u64) -> Arc<Sess> {
    let writer = format!("w{}s{slot}g{generation}", w.args.id);
    let session_id = ephemeral_owner(client);
    w.log.emit(&Record::Session(SessionRec {
        writer: writer.clone(),
        event: "Connected".into(),
        at_us: now_us(),
        session_id,
    }));
    let seed = w.args.seed
        ^ (w.args.id as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ ((slot as u64) << 32)
        ^ (generation + 1).wrapping_mul(0xd6e8_feb8_6659_fd93);
    if !w.ready.swap(true, std::sync::atomic::Ordering::Relaxed) {
        say("READY");
    }
    Arc::new(Sess {
        w: w.clone(),
        writer,
        client: client.clone(),
        session_id,
        seq: AtomicU64::new(0),
        rng: StdMutex::new(SmallRng::seed_from_u64(seed)),
        req: Counters::default(),
    })
}

/// Logs the client's state changes under the writer current at the time.
fn log_events(
    w: &Arc<Worker>,
    client: &Client,
    current: Arc<StdMutex<Arc<Sess>>>,
) -> tokio::task::JoinHandle<()> {
    let mut events = client.session_events();
    let w = w.clone();
    tokio::spawn(async move {
        while let Some(ev) = events.next().await {
            let (writer, session_id) = {
                let s = lock(&current);
                (s.writer.clone(), ephemeral_owner(&s.client))
            };
            w.log.emit(&Record::Session(SessionRec {
                writer,
                event: format!("{ev:?}"),
                at_us: now_us(),
                session_id,
            }));
        }
    })
}
