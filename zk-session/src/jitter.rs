//! Randomness that spreads clients out: the order of the hosts, reconnect and retry jitter.
//! Nothing here is a secret, so a small fast generator is enough.

use std::hash::{BuildHasher, RandomState};

use rand::{
    distr::uniform::{SampleRange, SampleUniform},
    rngs::SmallRng,
    RngExt, SeedableRng,
};

/// A fresh generator with an unpredictable seed.
///
/// The seed comes from the standard library's hasher keys, which it draws from the operating
/// system once per thread and varies for every `RandomState`: that keeps rand's ChaCha
/// thread generator and getrandom out of the dependency tree, at no cost here (a few calls per
/// reconnect or retry).
pub(crate) fn rng() -> SmallRng {
    SmallRng::seed_from_u64(RandomState::new().hash_one(0u8))
}

/// A value uniformly distributed in `range`, like `rand::random_range`.
pub(crate) fn random_range<T: SampleUniform, R: SampleRange<T>>(range: R) -> T {
    rng().random_range(range)
}

#[cfg(test)]
mod tests {
    use rand::{seq::SliceRandom, Rng};

    use super::*;

    #[test]
    fn values_stay_in_the_range() {
        for _ in 0..1000 {
            let x = random_range(0.5..1.0);
            assert!((0.5..1.0).contains(&x), "{x}");
            assert!(random_range(1..=3u64) >= 1 && random_range(1..=3u64) <= 3);
        }
    }

    #[test]
    fn every_generator_is_seeded_differently() {
        // Two equal 64-bit outputs would mean equal seeds (chance 2^-64 otherwise).
        let a: Vec<u64> = (0..8).map(|_| rng().next_u64()).collect();
        let mut b = a.clone();
        b.sort_unstable();
        b.dedup();
        assert_eq!(a.len(), b.len(), "{a:?}");
    }

    #[test]
    fn shuffles_reach_every_order() {
        // All 6 orders of three hosts show up in 600 shuffles (each missing: chance ~1e-47).
        let mut seen = std::collections::HashSet::new();
        for _ in 0..600 {
            let mut hosts = [1, 2, 3];
            hosts.shuffle(&mut rng());
            seen.insert(hosts);
        }
        assert_eq!(seen.len(), 6);
    }
}
