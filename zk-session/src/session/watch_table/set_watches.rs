//! Re-registering every live watch after a reconnect: SetWatches/SetWatches2 batches that
//! each fit the path-text budget and the frame limit.

use std::collections::VecDeque;

use zk_proto::{Request, SetWatches, SetWatches2};

use super::{end_streams, fail_oneshots, Output, WatchTable};
use crate::Error;

/// SetWatches batches stay under this much path text, as the Java client's do, so that no
/// batch comes near the server's frame limit.
const SET_WATCHES_MAX_PATH_BYTES: usize = 128 * 1024;

/// Bytes of a SetWatches2 frame body besides its paths: request header (8), relative zxid
/// (8) and five vector counts (20). Each path adds its own 4-byte length.
const SET_WATCHES_FIXED_BYTES: usize = 36;

impl WatchTable {
    /// The SetWatches/SetWatches2 requests that re-register every live watch after a
    /// reconnect, each under [`SET_WATCHES_MAX_PATH_BYTES`] of path text and each a frame
    /// of at most `max_frame_len` bytes. A watch whose path cannot fit in any frame is ended
    /// here (one-shot watches with [`Error::InvalidArgument`], streams closed) rather than
    /// silently forgotten: the server could never be told about it.
    pub fn set_watches(
        &mut self,
        relative_zxid: i64,
        max_frame_len: usize,
        ended: &mut VecDeque<Output>,
    ) -> Vec<Request> {
        let fits = |path: &str| SET_WATCHES_FIXED_BYTES + 4 + path.len() <= max_frame_len;
        self.end_unfit(&fits, ended);
        let mut out = Vec::new();
        let mut batch = empty_batch(relative_zxid);
        let mut text = 0;
        let mut frame = SET_WATCHES_FIXED_BYTES;
        let lists: [(usize, Vec<&String>); 5] = [
            (0, self.data.keys().collect()),
            (1, self.exist.keys().collect()),
            (2, self.child.keys().collect()),
            (3, self.persistent.keys().collect()),
            (4, self.recursive.keys().collect()),
        ];
        for (which, keys) in lists {
            for path in keys {
                let full = text + path.len() > SET_WATCHES_MAX_PATH_BYTES
                    || frame + 4 + path.len() > max_frame_len;
                if full && text > 0 {
                    out.push(finish_batch(&mut batch, relative_zxid));
                    text = 0;
                    frame = SET_WATCHES_FIXED_BYTES;
                }
                text += path.len();
                frame += 4 + path.len();
                let list = match which {
                    0 => &mut batch.data_watches,
                    1 => &mut batch.exist_watches,
                    2 => &mut batch.child_watches,
                    3 => &mut batch.persistent_watches,
                    _ => &mut batch.persistent_recursive_watches,
                };
                list.push(path.clone());
            }
        }
        if text > 0 {
            out.push(finish_batch(&mut batch, relative_zxid));
        }
        out
    }

    /// Ends the watches on paths for which `fits` says no.
    fn end_unfit(&mut self, fits: &dyn Fn(&str) -> bool, out: &mut VecDeque<Output>) {
        let err = Error::InvalidArgument(crate::ArgumentError::WatchPathTooLong);
        for map in [&mut self.data, &mut self.exist, &mut self.child] {
            map.retain(|path, list| {
                if fits(path) {
                    return true;
                }
                fail_oneshots(std::mem::take(list), &err, out);
                false
            });
        }
        for map in [&mut self.persistent, &mut self.recursive] {
            map.retain(|path, list| {
                if fits(path) {
                    return true;
                }
                end_streams(std::mem::take(list), out);
                false
            });
        }
    }
}

fn empty_batch(relative_zxid: i64) -> SetWatches2 {
    SetWatches2 {
        relative_zxid,
        ..SetWatches2::default()
    }
}

/// Turns a filled batch into a request: SetWatches when it has no persistent watches (the
/// opcode every 3.x server knows), SetWatches2 otherwise.
fn finish_batch(batch: &mut SetWatches2, relative_zxid: i64) -> Request {
    let b = std::mem::replace(batch, empty_batch(relative_zxid));
    if b.persistent_watches.is_empty() && b.persistent_recursive_watches.is_empty() {
        Request::SetWatches(SetWatches {
            relative_zxid,
            data_watches: b.data_watches,
            exist_watches: b.exist_watches,
            child_watches: b.child_watches,
        })
    } else {
        Request::SetWatches2(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{session::WatchId, watched_event::WatchKind};

    /// The paths of a SetWatches or SetWatches2 batch, and its relative zxid.
    fn batch_paths(r: &Request) -> (Vec<&String>, i64) {
        match r {
            Request::SetWatches(s) => (
                s.data_watches
                    .iter()
                    .chain(&s.exist_watches)
                    .chain(&s.child_watches)
                    .collect(),
                s.relative_zxid,
            ),
            Request::SetWatches2(s) => (
                s.data_watches
                    .iter()
                    .chain(&s.exist_watches)
                    .chain(&s.child_watches)
                    .chain(&s.persistent_watches)
                    .chain(&s.persistent_recursive_watches)
                    .collect(),
                s.relative_zxid,
            ),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn set_watches_batches_stay_under_the_limit() {
        let mut t = WatchTable::default();
        for i in 0..3000 {
            t.add(
                WatchKind::Data,
                format!("/{}/{i:08}", "x".repeat(90)),
                WatchId(i),
            );
        }
        t.add(WatchKind::Persistent, "/p".into(), WatchId(9999));
        let mut ended = VecDeque::new();
        let reqs = t.set_watches(42, zk_proto::DEFAULT_MAX_FRAME_LEN, &mut ended);
        assert!(ended.is_empty());
        assert!(reqs.len() >= 3);
        let mut total = 0;
        let mut saw_v2 = false;
        for r in &reqs {
            saw_v2 |= matches!(r, Request::SetWatches2(_));
            let (paths, zxid) = batch_paths(r);
            assert_eq!(zxid, 42);
            assert!(paths.iter().map(|p| p.len()).sum::<usize>() <= SET_WATCHES_MAX_PATH_BYTES);
            total += paths.len();
        }
        assert!(saw_v2);
        assert_eq!(total, 3001);
    }

    /// With a small frame limit, every batch encodes within it, and a watch whose path could
    /// never fit is told so instead of being dropped without a word.
    #[test]
    fn set_watches_frames_fit_the_max_frame_len() {
        const MAX: usize = 4096;
        let mut t = WatchTable::default();
        for i in 0..200 {
            t.add(
                WatchKind::Exist,
                format!("/{}/{i:04}", "e".repeat(120)),
                WatchId(i),
            );
        }
        t.add(WatchKind::PersistentRecursive, "/r".into(), WatchId(500));
        // Exactly as long as one frame allows, and one byte longer.
        let longest = format!("/{}", "a".repeat(MAX - SET_WATCHES_FIXED_BYTES - 4 - 1));
        let too_long = format!("/{}", "b".repeat(MAX - SET_WATCHES_FIXED_BYTES - 4));
        t.add(WatchKind::Data, longest.clone(), WatchId(501));
        t.add(WatchKind::Child, too_long.clone(), WatchId(502));
        t.add(WatchKind::Persistent, too_long.clone(), WatchId(503));

        let codec = zk_proto::FrameCodec::with_max_frame_len(MAX);
        let mut sent = Vec::new();
        let mut ended = VecDeque::new();
        for r in t.set_watches(7, MAX, &mut ended) {
            let mut buf = bytes::BytesMut::new();
            codec
                .encode_with(&mut buf, |b| r.encode(-8, b))
                .unwrap_or_else(|e| panic!("{e}"));
            sent.extend(batch_paths(&r).0.into_iter().cloned());
        }
        assert_eq!(sent.len(), 202);
        assert!(sent.contains(&longest) && sent.contains(&"/r".to_string()));
        assert!(!sent.contains(&too_long));
        // The fitting watch stays armed; the unfit ones end, and say why.
        assert_eq!(ended.len(), 2, "{ended:?}");
        assert!(ended.iter().any(|o| matches!(
            o,
            Output::Watch {
                to: WatchId(502),
                result: Err(Error::InvalidArgument(
                    crate::ArgumentError::WatchPathTooLong
                ))
            }
        )));
        assert!(ended
            .iter()
            .any(|o| matches!(o, Output::WatchEnded { to: WatchId(503) })));
    }
}
