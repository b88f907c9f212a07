//! Fenced writes to a ledger: each write goes behind a guard (the lock's, the leadership's,
//! or a check of the lock node through another session) and its outcome is logged, also
//! when the future is dropped before it is known.

use std::sync::atomic::Ordering;

use zk_recipes::{InterProcessMutexGuard, Leadership, LostReason, RecipeError};
use zk_session::{Client, CreateOptions, Error, ErrorCode, Op, OpResult, Version};

use super::Sess;
use crate::records::{now_us, Outcome, Record, WriteRec};

/// The guard a write goes behind.
#[derive(Clone, Copy)]
pub(super) enum Fence<'a> {
    /// `InterProcessMutexGuard::fenced_multi`, on the holder's session.
    Lock(&'a InterProcessMutexGuard),
    /// `Leadership::fenced_multi`, on the leader's session.
    Lead(&'a Leadership),
    /// Through another session (the worker's storage session, which outlives a pause of the
    /// process): refused here once the guard knows the lock is lost, and behind a check that
    /// the guard's lock node still exists on the server. A late write of a paused holder
    /// reaches the server through a live session, so only that check stops it.
    Store(&'a InterProcessMutexGuard, &'a Client),
}

impl Fence<'_> {
    async fn multi(self, ops: Vec<Op>) -> zk_recipes::Result<Vec<OpResult>> {
        match self {
            Fence::Lock(g) => g.fenced_multi(ops).await,
            Fence::Lead(l) => l.fenced_multi(ops).await,
            Fence::Store(g, storage) => {
                if let Some(r) = g.lost_reason() {
                    return Err(RecipeError::Lost(r));
                }
                let check = Op::check(g.path(), Version::Any);
                match storage.multi(std::iter::once(check).chain(ops)).await {
                    Ok(mut results) => {
                        results.remove(0);
                        Ok(results)
                    }
                    Err(Error::Multi { index: 0, .. }) =>
                    // The lock node is gone (checked through another session).
                    {
                        Err(RecipeError::Lost(LostReason::NodeDeleted))
                    }
                    Err(Error::Multi {
                        index,
                        code,
                        results,
                    }) => Err(RecipeError::Session(Error::Multi {
                        index: index - 1,
                        code,
                        results: results.get(1..).unwrap_or_default().to_vec(),
                    })),
                    Err(e) => Err(e.into()),
                }
            }
        }
    }
}

/// The writes of one hold (or term) to a ledger: a znode whose data is the newest token,
/// with one child bucket per hold (`h-<token>`, created by the hold's first write) holding one
/// persistent-sequential entry per write (`<writer>_<seq>_<n>`). The server's record of the
/// ledger is thus: which writes were applied, by whom, under which token, and in what order
/// (a bucket's czxid is its first write, its pzxid its last).
pub(super) struct LedgerWriter<'a> {
    s: &'a Sess,
    ledger: &'a str,
    root: String,
    token: u64,
    /// Whether the bucket exists: `None` after an ambiguous outcome.
    bucket: Option<bool>,
}

/// Logs a write as cancelled if its future is dropped before the outcome is known.
struct PendingWrite<'a> {
    s: &'a Sess,
    rec: Option<WriteRec>,
}

impl PendingWrite<'_> {
    fn finish(mut self, outcome: Outcome, detail: String) {
        if let Some(mut rec) = self.rec.take() {
            rec.done_us = now_us();
            rec.outcome = outcome;
            rec.detail = detail;
            self.s.w.log.emit(&Record::Write(rec));
        }
    }
}

impl Drop for PendingWrite<'_> {
    fn drop(&mut self) {
        if let Some(mut rec) = self.rec.take() {
            rec.done_us = now_us();
            rec.outcome = Outcome::Cancelled;
            self.s.w.log.emit(&Record::Write(rec));
        }
    }
}

impl<'a> LedgerWriter<'a> {
    pub(super) fn new(s: &'a Sess, ledger: &'a str, token: u64) -> Self {
        LedgerWriter {
            s,
            ledger,
            root: crate::ledger_root(ledger),
            token,
            bucket: Some(false),
        }
    }

    /// One fenced write; a refusal that only says the bucket was not as expected is retried
    /// once with the other form.
    pub(super) async fn write(&mut self, fence: Fence<'_>) -> Outcome {
        let mut outcome = Outcome::Refused;
        for _ in 0..2 {
            let with_bucket = self.bucket == Some(false);
            let seq = self.s.seq.fetch_add(1, Ordering::Relaxed);
            let bucket = format!("{}/h-{:020}", self.root, self.token);
            let mut ops = Vec::with_capacity(3);
            if with_bucket {
                ops.push(Op::create(bucket.clone(), b"", CreateOptions::persistent()));
            }
            ops.push(Op::create(
                format!("{bucket}/{}_{seq}_", self.s.writer),
                b"",
                CreateOptions::persistent_sequential(),
            ));
            ops.push(Op::set_data(
                self.root.clone(),
                self.token.to_string().as_bytes(),
                Version::Any,
            ));
            let pending = PendingWrite {
                s: self.s,
                rec: Some(WriteRec {
                    ledger: self.ledger.to_owned(),
                    token: self.token,
                    writer: self.s.writer.clone(),
                    seq,
                    issued_us: now_us(),
                    done_us: 0,
                    outcome: Outcome::Cancelled,
                    detail: String::new(),
                }),
            };
            let r = self.s.counted("fenced write", fence.multi(ops)).await;
            let mut retry = false;
            let (o, detail) = match r {
                None => {
                    self.bucket = self.bucket.filter(|b| *b);
                    (Outcome::Ambiguous, "not answered".to_string())
                }
                Some(Ok(results)) => {
                    self.bucket = Some(true);
                    // The ledger znode's new version and the transaction's zxid, from the
                    // reply: the checker matches them against the server's record.
                    let detail = results
                        .iter()
                        .find_map(|r| match r {
                            OpResult::SetData(st) => {
                                Some(format!("v={} z={:#x}", st.version, st.mzxid))
                            }
                            _ => None,
                        })
                        .unwrap_or_default();
                    (Outcome::Ok, detail)
                }
                Some(Err(RecipeError::Session(Error::Multi { index, code, .. }))) => {
                    // Our ops only: the fence's check is not counted in `index`.
                    if with_bucket && index == 0 && code == ErrorCode::NodeExists {
                        self.bucket = Some(true);
                        retry = true;
                    } else if !with_bucket && index == 0 && code == ErrorCode::NoNode {
                        self.bucket = Some(false);
                        retry = true;
                    }
                    (Outcome::Refused, format!("op {index}: {code:?}"))
                }
                Some(Err(e @ (RecipeError::Lost(_) | RecipeError::NotHeld))) => {
                    (Outcome::Refused, e.to_string())
                }
                Some(Err(e)) => {
                    self.bucket = self.bucket.filter(|b| *b);
                    self.s.error();
                    (Outcome::Ambiguous, e.to_string())
                }
            };
            pending.finish(o, detail);
            outcome = o;
            if !retry {
                break;
            }
        }
        outcome
    }
}
