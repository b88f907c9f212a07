//! What the session's state means for what a recipe built on it: whether requests can go
//! ahead, whether a held lock or a leadership can still be trusted, whether the session (and
//! the ephemeral nodes made on it) is over, and whether the client is.
//!
//! Every recipe decides these here and nowhere else, from [`Liveness`], a plain value read
//! from the client (its state and whether it has ended), so that the rules are tested without
//! a server and a change in zk-session's states is met in this one file.

use zk_session::{Client, EndReason, SessionEvent, SessionId, SessionState};

use crate::LostReason;

/// What a lock holder or a leader does when its connection is suspended (dropped, the
/// session possibly alive).
///
/// The lock or leadership always ends when the session is lost or expires; this only decides
/// the earlier, ambiguous moment, as Curator's `ConnectionStateErrorPolicy` does.
///
/// ```
/// use zk_recipes::{InterProcessMutex, SuspendPolicy};
/// # fn f(client: zk_session::Client) {
/// let mutex = InterProcessMutex::builder(client, "/locks/cache")
///     .suspend_policy(SuspendPolicy::WaitForLost)
///     .build();
/// # }
/// assert_eq!(SuspendPolicy::default(), SuspendPolicy::StepDown);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SuspendPolicy {
    /// Give up the lock or leadership at once (Curator's standard policy). Safe: the session
    /// may expire while we are cut off, and another participant may take over then.
    #[default]
    StepDown,
    /// Keep it until the session is presumed lost (after the session timeout without a
    /// connection). Fewer handovers on short blips, at the price of a window in which the
    /// server may already have expired the session and let someone else in.
    WaitForLost,
}

/// Where a client's session stands, as the recipes see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Liveness {
    /// Connected to a server that serves reads and writes.
    Serving,
    /// Looking for a server, with no doubt on the session (before the first one, or on the
    /// way to a new one).
    Connecting,
    /// The connection dropped; the session may live.
    Suspended,
    /// Only a read-only server is reachable: it cannot vouch for the session.
    ReadOnly,
    /// No connection for the whole session timeout: the session is presumed expired, and
    /// requests fail at once.
    Lost,
    /// The session expired; the client goes on with a new one.
    Expired,
    /// The client is over for good (closed, authentication failed, expired with no new
    /// session to follow).
    Ended(LostReason),
}

/// What a latch participant does in a given [`Liveness`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Candidacy {
    /// Requests can go ahead: look at the line.
    Go,
    /// Wait for the state to change, keeping whatever leadership it has.
    Wait,
    /// Stop leading, then wait.
    StepDown,
    /// Our node went with the session: forget it, stop leading, wait for the new session.
    Forget,
    /// The election is over for this participant.
    End(LostReason),
}

impl Liveness {
    /// The reading of `state` on a client that has (`ended`) or has not ended for good.
    pub(crate) fn of(state: SessionState, ended: bool) -> Liveness {
        match state {
            SessionState::Ended(why) => Liveness::Ended(end_reason(why)),
            // An end published before the state caught up.
            SessionState::Expired if ended => Liveness::Ended(LostReason::Expired),
            _ if ended => Liveness::Ended(LostReason::Closed),
            SessionState::Connected => Liveness::Serving,
            SessionState::Connecting => Liveness::Connecting,
            SessionState::ConnectedReadOnly => Liveness::ReadOnly,
            SessionState::Lost => Liveness::Lost,
            SessionState::Expired => Liveness::Expired,
            // Suspended, and anything this crate does not know yet: doubt the session.
            _ => Liveness::Suspended,
        }
    }

    /// The client's current reading.
    pub(crate) fn now(client: &Client) -> Liveness {
        Liveness::of(client.state(), client.has_ended())
    }

    /// The reading of `state`, as a state watch of `client` delivered it.
    pub(crate) fn seen(client: &Client, state: SessionState) -> Liveness {
        Liveness::of(state, client.has_ended())
    }

    /// Whether a server is connected (read-only or not), so a request is answered soon.
    pub(crate) fn connected(self) -> bool {
        matches!(self, Liveness::Serving | Liveness::ReadOnly)
    }

    /// Why the client is over for good, if it is.
    pub(crate) fn ended(self) -> Option<LostReason> {
        match self {
            Liveness::Ended(r) => Some(r),
            _ => None,
        }
    }

    /// Why nothing can be done on the client now, if so: it is over for good, or its
    /// session is presumed lost (requests fail at once). An expiry followed by a new session
    /// is not the end of the client.
    pub(crate) fn client_over(self) -> Option<LostReason> {
        match self {
            Liveness::Lost => Some(LostReason::SessionLost),
            other => other.ended(),
        }
    }

    /// Whether a new operation can bind to the current session: one is there and not
    /// expired (the operation then waits for the next).
    pub(crate) fn has_session(self, session_id: i64) -> bool {
        self != Liveness::Expired && session_id != 0
    }

    /// Whether the current session is over, and its ephemeral nodes with it: it expired,
    /// or the client ended.
    pub(crate) fn session_over(self) -> bool {
        matches!(self, Liveness::Expired | Liveness::Ended(_))
    }

    /// Whether the ephemeral nodes of session `owner` are gone with it: it is over, or the
    /// client is on another session (`current`, 0 for none yet).
    pub(crate) fn session_gone(self, current: i64, owner: i64) -> bool {
        self.session_over() || (current != 0 && current != owner)
    }

    /// Why a held lock (or a leadership held through one) can no longer be trusted under
    /// `policy`, if so.
    pub(crate) fn doubt(self, policy: SuspendPolicy) -> Option<LostReason> {
        match self {
            Liveness::Serving | Liveness::Connecting => None,
            Liveness::Suspended | Liveness::ReadOnly => suspended(policy),
            Liveness::Lost => Some(LostReason::SessionLost),
            Liveness::Expired => Some(LostReason::Expired),
            Liveness::Ended(r) => Some(r),
        }
    }

    /// What a latch participant does under `policy`. A latch leader steps down on a
    /// read-only server whatever the policy: that server has lost its quorum, and cannot
    /// keep the session (and the node that makes it leader) alive.
    pub(crate) fn candidacy(self, policy: SuspendPolicy) -> Candidacy {
        match self {
            Liveness::Serving => Candidacy::Go,
            Liveness::Connecting => Candidacy::Wait,
            Liveness::Suspended if policy == SuspendPolicy::WaitForLost => Candidacy::Wait,
            Liveness::Suspended | Liveness::ReadOnly | Liveness::Lost => Candidacy::StepDown,
            // Curator's latch too takes part again after a loss, with a new node.
            Liveness::Expired => Candidacy::Forget,
            Liveness::Ended(r) => Candidacy::End(r),
        }
    }
}

/// What a session event means for a recipe that follows znodes through watches: the
/// moments it must look again, since a watch does not replay what it missed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    /// The connection dropped (suspended, or lost for the whole session timeout).
    Away,
    /// The session expired; the client goes on with a new one.
    Expired,
    /// Connected again: to a new session (`Some`, its id; also a client's first
    /// connection) or the same one (`None`), on a read-only server or not.
    Back {
        /// The id of the session connected, when it is announced (a first or new session).
        session: Option<SessionId>,
        /// Whether the server is read-only (it cannot take writes).
        read_only: bool,
    },
    /// The client is over for good.
    Ended(LostReason),
}

impl Turn {
    /// The turn `event` announces; `None` for an event this crate does not know yet.
    pub(crate) fn of(event: SessionEvent) -> Option<Turn> {
        Some(match event {
            SessionEvent::Suspended | SessionEvent::Lost => Turn::Away,
            SessionEvent::Expired => Turn::Expired,
            SessionEvent::Connected { session_id } => Turn::Back {
                session: Some(session_id),
                read_only: false,
            },
            SessionEvent::ConnectedReadOnly { session_id } => Turn::Back {
                session: Some(session_id),
                read_only: true,
            },
            SessionEvent::Reconnected => Turn::Back {
                session: None,
                read_only: false,
            },
            SessionEvent::Ended(why) => Turn::Ended(end_reason(why)),
            _ => return None,
        })
    }

    /// Whether requests that write can go ahead again: back on a server that takes them.
    pub(crate) fn writable_again(self) -> bool {
        matches!(
            self,
            Turn::Back {
                read_only: false,
                ..
            }
        )
    }
}

/// [`Liveness::doubt`] for a change of state as the event stream tells it (a stream that
/// may skip states: read it beside [`Liveness::now`]).
pub(crate) fn event_doubt(event: SessionEvent, policy: SuspendPolicy) -> Option<LostReason> {
    match event {
        SessionEvent::Suspended | SessionEvent::ConnectedReadOnly { .. } => suspended(policy),
        SessionEvent::Lost => Some(LostReason::SessionLost),
        SessionEvent::Expired => Some(LostReason::Expired),
        SessionEvent::Ended(why) => Some(end_reason(why)),
        _ => None,
    }
}

fn suspended(policy: SuspendPolicy) -> Option<LostReason> {
    (policy == SuspendPolicy::StepDown).then_some(LostReason::Suspended)
}

/// What a client's end means for a recipe.
pub(crate) fn end_reason(why: EndReason) -> LostReason {
    match why {
        EndReason::SessionExpired => LostReason::Expired,
        EndReason::AuthFailed => LostReason::AuthFailed,
        // Closed, and any end this crate does not know yet.
        _ => LostReason::Closed,
    }
}

/// The client's session id as ZooKeeper's znodes carry it (`ephemeral_owner`): 0 for none.
pub(crate) fn raw_session_id(client: &Client) -> i64 {
    client.session_id().map_or(0, SessionId::get)
}

/// [`Liveness::client_over`] of the client now.
pub(crate) fn client_over(client: &Client) -> Option<LostReason> {
    Liveness::now(client).client_over()
}

/// Whether the client is over for good, now.
pub(crate) fn client_ended(client: &Client) -> bool {
    Liveness::now(client).ended().is_some()
}

/// Why the client ended, for a recipe that stopped with it (closed when it does not say).
pub(crate) fn why_ended(client: &Client) -> LostReason {
    Liveness::now(client).ended().unwrap_or(LostReason::Closed)
}

/// [`Liveness::session_gone`] of the client now.
pub(crate) fn session_gone(client: &Client, owner: i64) -> bool {
    Liveness::now(client).session_gone(raw_session_id(client), owner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use SessionState as S;
    use SuspendPolicy::{StepDown, WaitForLost};

    const ID: SessionId = SessionId::new(7).unwrap();

    const ALL: [SessionState; 8] = [
        S::Connecting,
        S::Connected,
        S::ConnectedReadOnly,
        S::Suspended,
        S::Lost,
        S::Expired,
        S::Ended(EndReason::AuthFailed),
        S::Ended(EndReason::Closed),
    ];

    #[test]
    fn an_expiry_is_the_clients_end_only_when_it_has_ended() {
        assert_eq!(Liveness::of(S::Expired, false), Liveness::Expired);
        assert_eq!(
            Liveness::of(S::Expired, true),
            Liveness::Ended(LostReason::Expired)
        );
        assert_eq!(Liveness::of(S::Expired, false).client_over(), None);
        assert_eq!(
            Liveness::of(S::Ended(EndReason::AuthFailed), false).ended(),
            Some(LostReason::AuthFailed)
        );
        // An end published before the state caught up is the end.
        for s in ALL
            .into_iter()
            .filter(|s| !matches!(s, S::Expired | S::Ended(_)))
        {
            assert_eq!(
                Liveness::of(s, true).ended(),
                Some(LostReason::Closed),
                "{s:?}"
            );
        }
    }

    #[test]
    fn a_lost_session_stops_requests_but_does_not_end_the_client() {
        let lost = Liveness::of(S::Lost, false);
        assert_eq!(lost.client_over(), Some(LostReason::SessionLost));
        assert_eq!(lost.ended(), None);
        assert!(!lost.session_gone(7, 7));
    }

    #[test]
    fn the_suspend_policy_decides_only_the_ambiguous_states() {
        for s in [S::Suspended, S::ConnectedReadOnly] {
            let l = Liveness::of(s, false);
            assert_eq!(l.doubt(StepDown), Some(LostReason::Suspended));
            assert_eq!(l.doubt(WaitForLost), None);
        }
        let decided = [
            (S::Connected, None),
            (S::Connecting, None),
            (S::Lost, Some(LostReason::SessionLost)),
            (S::Expired, Some(LostReason::Expired)),
            (S::Ended(EndReason::Closed), Some(LostReason::Closed)),
            (
                S::Ended(EndReason::AuthFailed),
                Some(LostReason::AuthFailed),
            ),
        ];
        for (s, want) in decided {
            for p in [StepDown, WaitForLost] {
                assert_eq!(Liveness::of(s, false).doubt(p), want, "{s:?} {p:?}");
            }
        }
    }

    #[test]
    fn events_are_judged_as_the_states_they_announce() {
        let pairs = [
            (SessionEvent::Suspended, S::Suspended),
            (
                SessionEvent::ConnectedReadOnly { session_id: ID },
                S::ConnectedReadOnly,
            ),
            (SessionEvent::Lost, S::Lost),
            (SessionEvent::Expired, S::Expired),
            (
                SessionEvent::Ended(EndReason::Closed),
                S::Ended(EndReason::Closed),
            ),
            (
                SessionEvent::Ended(EndReason::AuthFailed),
                S::Ended(EndReason::AuthFailed),
            ),
            (SessionEvent::Connected { session_id: ID }, S::Connected),
            (SessionEvent::Reconnected, S::Connected),
        ];
        for (ev, s) in pairs {
            for p in [StepDown, WaitForLost] {
                assert_eq!(
                    event_doubt(ev, p),
                    Liveness::of(s, false).doubt(p),
                    "{ev:?}"
                );
            }
        }
    }

    #[test]
    fn session_events_turn_into_the_moments_to_look_again() {
        let back = |session, read_only| Some(Turn::Back { session, read_only });
        let cases = [
            (SessionEvent::Suspended, Some(Turn::Away)),
            (SessionEvent::Lost, Some(Turn::Away)),
            (SessionEvent::Expired, Some(Turn::Expired)),
            (SessionEvent::Reconnected, back(None, false)),
            (
                SessionEvent::Connected { session_id: ID },
                back(Some(ID), false),
            ),
            (
                SessionEvent::ConnectedReadOnly { session_id: ID },
                back(Some(ID), true),
            ),
            (
                SessionEvent::Ended(EndReason::AuthFailed),
                Some(Turn::Ended(LostReason::AuthFailed)),
            ),
        ];
        for (ev, want) in cases {
            assert_eq!(Turn::of(ev), want, "{ev:?}");
        }
        let writable: Vec<_> = cases
            .iter()
            .filter(|(ev, _)| Turn::of(*ev).is_some_and(Turn::writable_again))
            .map(|(ev, _)| *ev)
            .collect();
        assert_eq!(
            writable,
            [
                SessionEvent::Reconnected,
                SessionEvent::Connected { session_id: ID }
            ]
        );
    }

    #[test]
    fn a_latch_participant_steps_down_forgets_or_ends() {
        let c = |s, ended, p| Liveness::of(s, ended).candidacy(p);
        assert_eq!(c(S::Connected, false, StepDown), Candidacy::Go);
        assert_eq!(c(S::Connecting, false, StepDown), Candidacy::Wait);
        assert_eq!(c(S::Suspended, false, StepDown), Candidacy::StepDown);
        assert_eq!(c(S::Suspended, false, WaitForLost), Candidacy::Wait);
        assert_eq!(
            c(S::ConnectedReadOnly, false, WaitForLost),
            Candidacy::StepDown
        );
        assert_eq!(c(S::Lost, false, WaitForLost), Candidacy::StepDown);
        assert_eq!(c(S::Expired, false, StepDown), Candidacy::Forget);
        assert_eq!(
            c(S::Expired, true, StepDown),
            Candidacy::End(LostReason::Expired)
        );
        assert_eq!(
            c(S::Ended(EndReason::Closed), false, WaitForLost),
            Candidacy::End(LostReason::Closed)
        );
    }

    #[test]
    fn a_sessions_nodes_go_with_it() {
        let serving = Liveness::of(S::Connected, false);
        assert!(!serving.session_gone(7, 7));
        assert!(serving.session_gone(8, 7)); // the client moved on to another session
        assert!(!Liveness::of(S::Connecting, false).session_gone(0, 7));
        assert!(Liveness::of(S::Expired, false).session_gone(7, 7));
        assert!(Liveness::of(S::Connected, true).session_gone(7, 7));
        assert!(serving.has_session(7) && serving.connected());
        assert!(Liveness::of(S::ConnectedReadOnly, false).connected());
        assert!(!Liveness::of(S::Suspended, false).connected());
        assert!(!serving.has_session(0));
        assert!(!Liveness::of(S::Expired, false).has_session(7));
    }
}
