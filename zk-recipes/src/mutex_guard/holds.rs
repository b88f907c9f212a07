//! [`Holds`]: the re-entrant holds of one mutex handle, one id per [`InterProcessMutexGuard`], and the
//! hand-back of the holding and the handle's permit when the last of them goes.

use std::sync::{Arc, Mutex as StdMutex, MutexGuard as StdMutexGuard};

use tokio::sync::{watch, OwnedMutexGuard};

use super::{holding::Holding, InterProcessMutexGuard};
use crate::{RecipeError, Result};

/// The re-entrant holds of one mutex handle: the current holding, and one id per guard.
#[derive(Debug, Default)]
pub(crate) struct Holds {
    inner: StdMutex<HoldsInner>,
    /// Bumped whenever a hold is taken or given up, for [`InterProcessMutexGuard::lost`].
    changed: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct HoldsInner {
    holding: Option<Arc<Holding>>,
    /// The handle's one-holder permit, kept while the holding lives.
    permit: Option<OwnedMutexGuard<()>>,
    /// The guards' ids, oldest first.
    ids: Vec<u64>,
    next_id: u64,
}

/// What the last hold gives back: the holding to finish, and the handle's permit, to be let
/// go once the deletion is under way.
pub(crate) struct LastHold {
    pub(crate) holding: Arc<Holding>,
    pub(crate) permit: Option<OwnedMutexGuard<()>>,
}

impl Holds {
    fn lock(&self) -> StdMutexGuard<'_, HoldsInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add(
        self: &Arc<Self>,
        inner: &mut HoldsInner,
        holding: Arc<Holding>,
    ) -> InterProcessMutexGuard {
        let id = inner.next_id;
        inner.next_id += 1;
        inner.ids.push(id);
        self.changed.send_modify(|n| *n += 1);
        InterProcessMutexGuard {
            holds: self.clone(),
            holding,
            id,
            released: false,
        }
    }

    /// The first hold on a new holding, with the handle's permit.
    pub(crate) fn install(
        self: &Arc<Self>,
        holding: Arc<Holding>,
        permit: OwnedMutexGuard<()>,
    ) -> InterProcessMutexGuard {
        let mut inner = self.lock();
        inner.holding = Some(holding.clone());
        inner.permit = Some(permit);
        self.add(&mut inner, holding)
    }

    /// Counts up for the holder of hold `id`; fails if that hold is gone or the lock lost.
    pub(super) fn reenter(self: &Arc<Self>, id: u64) -> Result<InterProcessMutexGuard> {
        let mut inner = self.lock();
        let holding = match &inner.holding {
            Some(h) if inner.ids.contains(&id) => h.clone(),
            _ => return Err(RecipeError::NotHeld),
        };
        if let Some(reason) = holding.lost_reason() {
            return Err(RecipeError::Lost(reason));
        }
        Ok(self.add(&mut inner, holding))
    }

    /// Bumped whenever a hold is taken or given up.
    pub(super) fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    pub(super) fn contains(&self, id: u64) -> bool {
        self.lock().ids.contains(&id)
    }

    pub(crate) fn count(&self) -> usize {
        self.lock().ids.len()
    }

    pub(crate) fn is_held(&self) -> bool {
        self.lock()
            .holding
            .as_ref()
            .is_some_and(|h| h.lost_reason().is_none())
    }

    /// Gives up hold `id`; returns the holding and the permit when that was the last, for
    /// the caller to finish.
    pub(crate) fn drop_hold(&self, id: u64) -> Result<Option<LastHold>> {
        let mut inner = self.lock();
        let Some(pos) = inner.ids.iter().position(|x| *x == id) else {
            return Err(RecipeError::NotHeld);
        };
        inner.ids.remove(pos);
        let last = if inner.ids.is_empty() {
            inner.holding.take().map(|holding| LastHold {
                holding,
                permit: inner.permit.take(),
            })
        } else {
            None
        };
        self.changed.send_modify(|n| *n += 1);
        Ok(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        plumbing::{liveness::SuspendPolicy, protected::ProtectedNode},
        LostReason,
    };
    use zk_session::Client;

    /// A holding on a client that never connects: enough for the bookkeeping.
    fn holding(czxid: i64) -> Arc<Holding> {
        let client = Client::builder("127.0.0.1:1").build().unwrap();
        let node = ProtectedNode {
            path: "/l/_c_x-lock-0000000001".into(),
            name: "_c_x-lock-0000000001".into(),
            id: "x".into(),
            stat: zk_session::Stat {
                czxid,
                ..Default::default()
            },
        };
        Holding::start(client, "/l".into(), node, None, SuspendPolicy::StepDown)
    }

    fn permit() -> OwnedMutexGuard<()> {
        Arc::new(tokio::sync::Mutex::new(()))
            .try_lock_owned()
            .unwrap()
    }

    #[tokio::test]
    async fn holds_count_up_and_down_through_the_guards() {
        let holds = Arc::new(Holds::default());
        let serial = Arc::new(tokio::sync::Mutex::new(()));
        let a = holds.install(holding(7), serial.clone().try_lock_owned().unwrap());
        let b = a.reenter().unwrap();
        assert_eq!(holds.count(), 2);
        assert_eq!((a.fencing_token(), b.fencing_token()), (7, 7));
        assert!(a.is_held() && b.is_held() && holds.is_held());
        // The handle stays taken for any other task while a hold is left.
        assert!(serial.try_lock().is_err());
        assert!(holds.drop_hold(b.id).unwrap().is_none());
        assert!(!b.is_held() && a.is_held());
        assert_eq!(b.lost().await, LostReason::Released);
        assert!(matches!(b.reenter(), Err(RecipeError::NotHeld)));
        assert!(matches!(
            b.fenced_multi([]).await,
            Err(RecipeError::NotHeld)
        ));
        assert!(matches!(b.release().await, Err(RecipeError::NotHeld)));
        // The last hold hands the holding and the permit back.
        let last = holds.drop_hold(a.id).unwrap().expect("the last hold");
        assert_eq!(last.holding.path(), "/l/_c_x-lock-0000000001");
        assert!(last.permit.is_some());
        drop(last);
        assert!(serial.try_lock().is_ok());
        assert!(!holds.is_held());
        assert!(matches!(holds.drop_hold(a.id), Err(RecipeError::NotHeld)));
        drop(a); // its hold is gone already: nothing for its Drop to do
    }

    #[tokio::test]
    async fn a_lost_holding_refuses_reentry() {
        let holds = Arc::new(Holds::default());
        let h = holding(1);
        let g = holds.install(h.clone(), permit());
        h.mark_lost(LostReason::Expired);
        assert_eq!(g.lost().await, LostReason::Expired);
        assert!(!g.is_held() && !holds.is_held());
        assert!(matches!(g.reenter(), Err(RecipeError::Lost(_))));
        assert!(matches!(
            g.fenced_multi([]).await,
            Err(RecipeError::Lost(LostReason::Expired))
        ));
    }
}
