//! How a provider picks one instance among those listed (Curator's `ProviderStrategy`), and
//! which instances it skips for a while after errors (its `DownInstancePolicy`). Plain
//! values: the instances and the time come in as arguments.

use std::time::{Duration, Instant};

use super::ServiceInstance;

/// How a provider picks an instance (Curator's strategies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ProviderStrategy {
    /// Each in turn (Curator's `RoundRobinStrategy`; ours does not fail after 2^31 picks).
    #[default]
    RoundRobin,
    /// Uniformly at random.
    Random,
    /// The same instance while it is listed, then another by round robin (Curator's
    /// `StickyStrategy` around `RoundRobinStrategy`).
    Sticky,
}

/// The picking state of one provider.
#[derive(Debug, Clone, Default)]
struct Picker {
    strategy: ProviderStrategy,
    next: u64,
    stuck: Option<ServiceInstance>,
}

impl Picker {
    fn new(strategy: ProviderStrategy) -> Self {
        Picker {
            strategy,
            ..Picker::default()
        }
    }

    /// The index in `instances` of the one to use, or `None` when there is none.
    fn pick_index(&mut self, instances: &[&ServiceInstance]) -> Option<usize> {
        if instances.is_empty() {
            return None;
        }
        match self.strategy {
            ProviderStrategy::Random => Some(rand::random_range(0..instances.len())),
            ProviderStrategy::RoundRobin => Some(self.round_robin(instances.len())),
            ProviderStrategy::Sticky => {
                let held = self.stuck.as_ref();
                if let Some(i) = held.and_then(|h| instances.iter().position(|i| *i == h)) {
                    return Some(i);
                }
                let chosen = self.round_robin(instances.len());
                self.stuck = Some(instances[chosen].clone());
                Some(chosen)
            }
        }
    }

    fn round_robin(&mut self, len: usize) -> usize {
        let i = (self.next % len as u64) as usize;
        self.next = self.next.wrapping_add(1);
        i
    }
}

/// When an instance reported in error is skipped (Curator's `DownInstancePolicy`): after
/// `error_threshold` errors, for `timeout` from the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DownInstancePolicy {
    /// How long an instance stays down, counted from its first error.
    pub timeout: Duration,
    /// How many errors take it down.
    pub error_threshold: u32,
}

impl Default for DownInstancePolicy {
    /// Curator's: 30 s, two errors.
    fn default() -> Self {
        DownInstancePolicy {
            timeout: Duration::from_secs(30),
            error_threshold: 2,
        }
    }
}

/// A provider's decision as a value: which instance to use next, skipping those reported
/// down. A `ServiceProvider` holds one beside its cache of the service's instances.
///
/// ```
/// use std::time::Instant;
/// use zk_recipes::{DownInstancePolicy, InstancePicker, ProviderStrategy, ServiceInstance};
///
/// let list: Vec<ServiceInstance> = ["a", "b"]
///     .iter()
///     .map(|id| ServiceInstance::builder("api").id(*id).build())
///     .collect();
/// let mut picker = InstancePicker::new(ProviderStrategy::RoundRobin, DownInstancePolicy::default());
/// let now = Instant::now();
/// picker.note_error(&list[0], now);
/// picker.note_error(&list[0], now); // two errors: "a" is skipped for 30 s
/// assert_eq!(picker.pick(&list, now).unwrap().id(), "b");
/// assert_eq!(picker.pick(&list, now).unwrap().id(), "b");
/// ```
#[derive(Debug, Clone)]
pub struct InstancePicker {
    picker: Picker,
    down: DownInstances,
}

impl InstancePicker {
    /// A picker with `strategy`, skipping instances as `policy` says.
    pub fn new(strategy: ProviderStrategy, policy: DownInstancePolicy) -> Self {
        InstancePicker {
            picker: Picker::new(strategy),
            down: DownInstances::new(policy),
        }
    }

    /// The next instance of `instances` to use at `now`, or `None` when none is up. A
    /// disabled instance (`enabled: false`) is never picked, as in Curator.
    pub fn pick<'a>(
        &mut self,
        instances: &'a [ServiceInstance],
        now: Instant,
    ) -> Option<&'a ServiceInstance> {
        let up: Vec<&ServiceInstance> = instances
            .iter()
            .filter(|i| i.is_enabled() && !self.down.is_down(i, now))
            .collect();
        let index = self.picker.pick_index(&up)?;
        Some(up[index])
    }

    /// Reports that `instance` failed at `now` (Curator's `noteError`).
    pub fn note_error(&mut self, instance: &ServiceInstance, now: Instant) {
        self.down.note_error(instance, now);
    }
}

/// The instances reported in error, with their counts.
#[derive(Debug, Clone, Default)]
struct DownInstances {
    policy: DownInstancePolicy,
    errors: Vec<(ServiceInstance, Instant, u32)>,
}

impl DownInstances {
    fn new(policy: DownInstancePolicy) -> Self {
        DownInstances {
            policy,
            errors: Vec::new(),
        }
    }

    /// Counts an error of `instance` at `now`.
    fn note_error(&mut self, instance: &ServiceInstance, now: Instant) {
        self.purge(now);
        match self.errors.iter_mut().find(|(i, _, _)| i == instance) {
            Some((_, _, count)) => *count += 1,
            None => self.errors.push((instance.clone(), now, 1)),
        }
    }

    /// Whether `instance` is down at `now`. Curator purges only every timeout/2, so an
    /// instance may stay down up to 1.5 timeouts there; here it comes back on time.
    fn is_down(&self, instance: &ServiceInstance, now: Instant) -> bool {
        self.errors.iter().any(|(i, first, count)| {
            i == instance
                && *count >= self.policy.error_threshold
                && now.duration_since(*first) < self.policy.timeout
        })
    }

    fn purge(&mut self, now: Instant) {
        let timeout = self.policy.timeout;
        self.errors
            .retain(|(_, first, _)| now.duration_since(*first) < timeout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(list: &[ServiceInstance]) -> Vec<&ServiceInstance> {
        list.iter().collect()
    }

    fn instances(n: usize) -> Vec<ServiceInstance> {
        (0..n)
            .map(|i| ServiceInstance::builder("s").id(i.to_string()).build())
            .collect()
    }

    #[test]
    fn round_robin_takes_each_in_turn() {
        let list = instances(3);
        let mut p = Picker::new(ProviderStrategy::RoundRobin);
        let ids: Vec<usize> = (0..7)
            .map(|_| p.pick_index(&refs(&list)).unwrap())
            .collect();
        assert_eq!(ids, [0, 1, 2, 0, 1, 2, 0]);
        assert!(p.pick_index(&[]).is_none());
    }

    #[test]
    fn sticky_keeps_its_instance_while_listed() {
        let list = instances(3);
        let mut p = Picker::new(ProviderStrategy::Sticky);
        let pick = |p: &mut Picker, l: &[ServiceInstance]| {
            let i = p.pick_index(&refs(l)).unwrap();
            l[i].id().to_owned()
        };
        let first = pick(&mut p, &list);
        assert!((0..5).all(|_| pick(&mut p, &list) == first));
        let rest: Vec<ServiceInstance> = list.into_iter().filter(|i| i.id() != first).collect();
        let next = pick(&mut p, &rest);
        assert_ne!(next, first);
        assert!((0..5).all(|_| pick(&mut p, &rest) == next));
    }

    #[test]
    fn random_stays_in_range() {
        let list = instances(4);
        let mut p = Picker::new(ProviderStrategy::Random);
        let mut seen = [false; 4];
        for _ in 0..400 {
            seen[p.pick_index(&refs(&list)).unwrap()] = true;
        }
        assert_eq!(seen, [true; 4]);
    }

    #[test]
    fn down_after_the_threshold_until_the_timeout() {
        let list = instances(2);
        let mut down = DownInstances::new(DownInstancePolicy::default());
        let t0 = Instant::now();
        down.note_error(&list[0], t0);
        assert!(
            !down.is_down(&list[0], t0),
            "one error is below the threshold"
        );
        down.note_error(&list[0], t0 + Duration::from_secs(1));
        assert!(down.is_down(&list[0], t0 + Duration::from_secs(1)));
        assert!(!down.is_down(&list[1], t0 + Duration::from_secs(1)));
        assert!(down.is_down(&list[0], t0 + Duration::from_millis(29_999)));
        assert!(!down.is_down(&list[0], t0 + Duration::from_secs(30)));
        down.note_error(&list[0], t0 + Duration::from_secs(31));
        assert!(
            !down.is_down(&list[0], t0 + Duration::from_secs(31)),
            "counts restart"
        );
    }

    #[test]
    fn the_picker_skips_down_and_disabled_instances() {
        let mut list = instances(3);
        list[2] = ServiceInstance::builder("s").id("2").enabled(false).build();
        let mut p =
            InstancePicker::new(ProviderStrategy::RoundRobin, DownInstancePolicy::default());
        let t0 = Instant::now();
        let ids = |p: &mut InstancePicker, t| -> Vec<String> {
            (0..4)
                .map(|_| p.pick(&list, t).unwrap().id().to_owned())
                .collect()
        };
        assert_eq!(ids(&mut p, t0), ["0", "1", "0", "1"]);
        p.note_error(&list[1], t0);
        p.note_error(&list[1], t0);
        assert_eq!(ids(&mut p, t0), ["0", "0", "0", "0"]);
        assert_eq!(ids(&mut p, t0 + Duration::from_secs(30)).len(), 4);
        assert!(ids(&mut p, t0 + Duration::from_secs(30)).contains(&"1".to_owned()));
        p.note_error(&list[0], t0);
        p.note_error(&list[0], t0);
        p.note_error(&list[1], t0);
        p.note_error(&list[1], t0);
        assert!(p.pick(&list, t0).is_none(), "all down or disabled");
    }
}
