//! Coarse wake-ups for far deadlines: a deadline at least [`FAR`] ahead (a ping, a read
//! timeout) is put off to the next point of a grid of [`GRAIN`] shared by every session of
//! the process, so that thousands of idle sessions wake their runtime a few times a second,
//! in waves, instead of once or twice per session per ping.
//!
//! Late by at most one grain is harmless where it is used: the core acts on any deadline
//! that has passed, and a ping or read timeout of seconds is not moved by 64 ms that
//! matters (the server's session timeout is three ping periods).

use std::{sync::OnceLock, time::Duration};

use std::time::Instant;

/// Deadlines nearer than this keep their exact time (backoff, attempts, a close).
const FAR: Duration = Duration::from_secs(1);
/// The grid's step.
const GRAIN: Duration = Duration::from_millis(64);

/// When to wake for `deadline`, seen at `now`.
pub(crate) fn wake_at(deadline: Instant, now: Instant) -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    on_grid(deadline, now, *ORIGIN.get_or_init(Instant::now))
}

/// `deadline`, or (when it is [`FAR`] ahead of `now`) the first grid point from `origin`
/// at or after it.
fn on_grid(deadline: Instant, now: Instant, origin: Instant) -> Instant {
    if deadline.saturating_duration_since(now) < FAR || deadline < origin {
        return deadline;
    }
    let grain = GRAIN.as_nanos();
    let since = (deadline - origin).as_nanos();
    let steps = since.div_ceil(grain);
    match u64::try_from(steps * grain) {
        Ok(nanos) => origin + Duration::from_nanos(nanos),
        Err(_) => deadline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_far_deadline_moves_to_the_next_grid_point_and_a_near_one_stays() {
        let origin = Instant::now();
        let now = origin + Duration::from_millis(500);
        let ms = |n| origin + Duration::from_millis(n);
        // 3,330 ms is not on the 64 ms grid: 52 * 64 = 3,328, 53 * 64 = 3,392.
        assert_eq!(on_grid(ms(3_330), now, origin), ms(3_392));
        // On the grid already: unchanged.
        assert_eq!(on_grid(ms(3_328), now, origin), ms(3_328));
        // Less than a second ahead: exact.
        assert_eq!(on_grid(ms(1_400), now, origin), ms(1_400));
        // Never earlier, and never more than a grain late.
        for d in [1_501, 2_000, 2_047, 9_999] {
            let at = on_grid(ms(d), now, origin);
            assert!(at >= ms(d) && at - ms(d) < GRAIN, "{d}");
        }
    }

    #[test]
    fn sessions_with_different_deadlines_in_one_grain_wake_together() {
        let origin = Instant::now();
        let now = origin;
        // 5,001 and 5,050 ms both lie in (4,992, 5,056].
        let a = on_grid(origin + Duration::from_millis(5_001), now, origin);
        let b = on_grid(origin + Duration::from_millis(5_050), now, origin);
        assert_eq!(a, b);
    }
}
