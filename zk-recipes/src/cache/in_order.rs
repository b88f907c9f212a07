//! Requests in flight, completed in the order they were sent.
//!
//! The server answers one session's requests in order, and the tree must apply read results
//! in that order too: a NoNode read before a create must not land after the create's read.
//! Spawning each request would let the runtime send them in any order, so they are all
//! polled here, oldest first, by the loader's own task: the first poll sends a request, and
//! the oldest result is handed out first.

use std::{
    collections::VecDeque,
    future::{poll_fn, Future},
    pin::Pin,
    task::Poll,
};

type Boxed<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Futures polled oldest first, their outputs handed out in the order they were pushed.
pub(crate) struct InOrder<T> {
    slots: VecDeque<(Boxed<T>, Option<T>)>,
}

impl<T> InOrder<T> {
    pub(crate) fn new() -> Self {
        InOrder {
            slots: VecDeque::new(),
        }
    }

    pub(crate) fn push(&mut self, fut: impl Future<Output = T> + Send + 'static) {
        self.slots.push_back((Box::pin(fut), None));
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The output of the oldest future, once it is done (pending forever when empty).
    /// Cancellation-safe: outputs that arrive meanwhile are kept.
    pub(crate) async fn next(&mut self) -> T {
        poll_fn(|cx| {
            for (fut, out) in self.slots.iter_mut() {
                if out.is_none() {
                    if let Poll::Ready(v) = fut.as_mut().poll(cx) {
                        *out = Some(v);
                    }
                }
            }
            match self.slots.front_mut() {
                Some((_, out)) if out.is_some() => {
                    let v = out.take();
                    self.slots.pop_front();
                    Poll::Ready(v.expect("checked"))
                }
                _ => Poll::Pending,
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::oneshot;

    #[tokio::test]
    async fn outputs_come_in_push_order_whatever_order_they_finish_in() {
        let mut q = InOrder::new();
        let (tx1, rx1) = oneshot::channel::<u32>();
        let (tx2, rx2) = oneshot::channel::<u32>();
        q.push(async move { rx1.await.unwrap() });
        q.push(async move { rx2.await.unwrap() });
        tx2.send(2).unwrap();
        let early = tokio::time::timeout(std::time::Duration::ZERO, q.next()).await;
        assert!(early.is_err(), "the second may not overtake the first");
        tx1.send(1).unwrap();
        assert_eq!(q.next().await, 1);
        assert_eq!(q.next().await, 2);
        assert!(q.is_empty());
    }
}
