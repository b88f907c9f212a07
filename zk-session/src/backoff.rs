//! Exponential backoff with jitter: the one formula behind reconnect pauses, retried
//! operations ([`RetryPolicy`](crate::RetryPolicy)) and the recipes' retries.

use std::time::Duration;

use rand::{rngs::SmallRng, RngExt};

/// Pause `n` (0-based) is a random duration in `[d/2, d]`, where `d = base × 2^n` capped at
/// `max`: it doubles from one pause to the next, and the jitter keeps many clients that
/// failed together from retrying in step.
///
/// ```rust
/// use std::time::Duration;
/// use zk_session::Backoff;
///
/// let backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(1));
/// let first = backoff.delay(0);
/// assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
/// // The doubling stops at the cap: from the fifth pause on, 500 ms to 1 s.
/// let late = backoff.delay(30);
/// assert!(late >= Duration::from_millis(500) && late <= Duration::from_secs(1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    base: Duration,
    max: Duration,
}

impl Backoff {
    /// Pauses from `base` doubling up to `max`, with jitter.
    ///
    /// See the example on [`Backoff`].
    pub const fn new(base: Duration, max: Duration) -> Self {
        Backoff { base, max }
    }

    /// The longest pause `n` can be (`base × 2^n`, capped at `max`), before jitter.
    ///
    /// ```rust
    /// use std::time::Duration;
    /// use zk_session::Backoff;
    ///
    /// let backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(1));
    /// assert_eq!(backoff.ceiling(1), Duration::from_millis(100));
    /// assert_eq!(backoff.ceiling(10), Duration::from_secs(1));
    /// ```
    pub fn ceiling(&self, n: u32) -> Duration {
        // 2^16 × any sensible base is past any sensible cap; saturating keeps the rest.
        self.base.saturating_mul(1u32 << n.min(16)).min(self.max)
    }

    /// Pause number `n` (0-based), drawn from a fresh, unpredictably seeded generator.
    ///
    /// See the example on [`Backoff`].
    pub fn delay(&self, n: u32) -> Duration {
        self.delay_with(n, &mut crate::jitter::rng())
    }

    /// Pause number `n` drawn from `rng`: the session core passes its own seeded generator,
    /// so that its tests are repeatable.
    pub(crate) fn delay_with(&self, n: u32, rng: &mut SmallRng) -> Duration {
        let ceiling = self.ceiling(n);
        // mul_f64 would panic on a product past Duration::MAX.
        Duration::try_from_secs_f64(ceiling.as_secs_f64() * rng.random_range(0.5..=1.0))
            .map_or(ceiling, |d| d.min(ceiling))
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn pauses_double_within_the_jitter_and_stop_at_the_cap() {
        let b = Backoff::new(Duration::from_millis(10), Duration::from_millis(500));
        for n in 0..40 {
            let ceiling = Duration::from_millis(10 << n.min(6)).min(Duration::from_millis(500));
            assert_eq!(b.ceiling(n), ceiling, "pause {n}");
            for _ in 0..50 {
                let d = b.delay(n);
                assert!(d >= ceiling / 2 && d <= ceiling, "pause {n}: {d:?}");
            }
        }
    }

    #[test]
    fn the_jitter_spreads_over_the_whole_range() {
        let b = Backoff::new(Duration::from_millis(1000), Duration::from_secs(10));
        let mut rng = SmallRng::seed_from_u64(3);
        let ms: Vec<u128> = (0..2000)
            .map(|_| b.delay_with(0, &mut rng).as_millis())
            .collect();
        // Both ends of [500, 1000] are reached within a few percent.
        assert!(ms.iter().any(|&m| m < 520), "{:?}", ms.iter().min());
        assert!(ms.iter().any(|&m| m > 980), "{:?}", ms.iter().max());
    }

    #[test]
    fn a_seeded_generator_repeats_its_pauses() {
        let b = Backoff::new(Duration::from_millis(50), Duration::from_secs(1));
        let run = |seed| {
            let mut rng = SmallRng::seed_from_u64(seed);
            (0..8)
                .map(|n| b.delay_with(n, &mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn huge_settings_saturate_instead_of_panicking() {
        let b = Backoff::new(Duration::MAX, Duration::MAX);
        assert_eq!(b.ceiling(u32::MAX), Duration::MAX);
        let _ = b.delay(u32::MAX);
    }
}
