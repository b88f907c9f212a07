//! The tokio driver's side of the callers: its channels in the shared
//! [`CallerTable`], and the outputs of the core applied to them and to the handle's
//! [`Shared`] state.

use tokio::sync::oneshot;

pub(crate) use crate::caller_table::CallerTable;
use crate::{
    caller_table::{Answer, EventSink, Published},
    command::Senders,
    session::View,
    shared::Shared,
    watch::StreamTx,
    ConnectError, Error, WatchedEvent,
};

/// Every channel a caller of the tokio client waits on, by the key the core knows it by.
pub(crate) type Callers = CallerTable<Senders>;

impl<T> Answer<T> for oneshot::Sender<T> {
    fn answer(self, value: T) {
        let _ = self.send(value);
    }

    fn gone(&self) -> bool {
        self.is_closed()
    }
}

impl EventSink for StreamTx {
    fn event(&self, event: &WatchedEvent) {
        let _ = self.send(event);
    }
}

impl Published for Shared {
    fn publish(&self, view: View) {
        Shared::publish(self, view)
    }

    fn attempt_failed(&self, why: ConnectError) {
        Shared::attempt_failed(self, why)
    }

    fn hopeless(&self, e: Error) {
        self.hopeless.send_replace(Some(e));
    }
}
