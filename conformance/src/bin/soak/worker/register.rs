//! Plain reads and writes: a session's own ephemeral register, checked on every read.

use conformance::ephemeral_owner;
use std::{
    sync::{atomic::Ordering, Arc},
    time::Duration,
};

use zk_session::{CreateOptions, Error, ErrorCode, Version};

use super::Sess;

/// Writes increasing numbers to the session's own ephemeral register and reads them back,
/// several reads at once; a read must return the last value known written, or one written
/// since whose outcome was unknown (and never go back once it has seen that one).
pub(super) async fn kv_task(s: Arc<Sess>) {
    let path = format!("{}/{}", crate::KV_DIR, s.writer);
    let mut created = false;
    let mut known = 0u64;
    let mut unsure: Vec<u64> = Vec::new();
    let mut next = 1u64;
    while !s.should_end() {
        if !created {
            match s
                .counted(
                    "create register",
                    s.client.create(&path, b"0", CreateOptions::ephemeral()),
                )
                .await
            {
                Some(Ok(_)) | Some(Err(Error::Code(ErrorCode::NodeExists))) => created = true,
                _ => {
                    s.error();
                    s.pause(50, 200).await;
                }
            }
            continue;
        }
        let v = next;
        next += 1;
        s.req.kv_writes.fetch_add(1, Ordering::Relaxed);
        match s
            .counted(
                "set register",
                s.client
                    .set_data(&path, v.to_string().as_bytes(), Version::Any),
            )
            .await
        {
            Some(Ok(_)) => {
                known = v;
                unsure.clear();
            }
            Some(Err(Error::Code(ErrorCode::NoNode))) => {
                s.error();
                if !s.should_end() {
                    // Possible only if the session ended meanwhile (the client ended, or
                    // went on with a new session and sent this on it).
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    let same_session = ephemeral_owner(&s.client) == s.session_id;
                    if !s.client.state().is_terminal() && same_session {
                        s.w.violation(format!(
                            "{}: own ephemeral {path} vanished while the session lives",
                            s.writer
                        ));
                    }
                }
                break;
            }
            _ => {
                s.error();
                unsure.push(v);
            }
        }
        let reads = s.rand(1..=4usize);
        let mut set = Vec::with_capacity(reads);
        for _ in 0..reads {
            let c = s.client.clone();
            let p = path.clone();
            set.push(tokio::spawn(async move { c.get_data(&p).await }));
        }
        for h in set {
            s.req.kv_reads.fetch_add(1, Ordering::Relaxed);
            let r = s.counted("get register", h).await;
            let data = match r {
                Some(Ok(Ok((data, _)))) => data,
                _ => {
                    s.error();
                    continue;
                }
            };
            let got: Option<u64> = std::str::from_utf8(&data).ok().and_then(|t| t.parse().ok());
            match got {
                Some(g) if g == known => {}
                Some(g) => match unsure.iter().position(|u| *u == g) {
                    Some(i) => {
                        known = g;
                        unsure.drain(..=i);
                    }
                    None => s.w.violation(format!(
                        "{}: read {g} from {path}, expected {known} or one of {unsure:?}",
                        s.writer
                    )),
                },
                None => s.w.violation(format!(
                    "{}: read {:?} from {path}, not a number this session wrote",
                    s.writer, data
                )),
            }
        }
        if s.rand(0..10) == 0
            && s.counted("list registers", s.client.get_children(crate::KV_DIR))
                .await
                .is_none_or(|r| r.is_err())
        {
            s.error();
        }
        s.pause(10, 60).await;
    }
}
