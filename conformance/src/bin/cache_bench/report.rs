//! The table, and the goals beside it (ours against Curator's, printed, not asserted).

use crate::run::Outcome;

/// One tree's runs.
pub(crate) struct Row {
    pub(crate) tree: String,
    pub(crate) znodes: usize,
    pub(crate) ours: Result<Outcome, String>,
    pub(crate) curator: Result<Outcome, String>,
}

impl Outcome {
    fn load_rate(&self) -> f64 {
        self.nodes as f64 / self.load.as_secs_f64().max(1e-9)
    }

    fn rss_per_node(&self) -> f64 {
        self.rss_growth_kb as f64 * 1024.0 / self.nodes.max(1) as f64
    }

    /// Live heap bytes per znode (ours: a counting allocator; the JVM: its heap after a GC).
    fn live_per_node(&self) -> Option<f64> {
        self.heap_growth
            .map(|b| b as f64 / self.nodes.max(1) as f64)
    }

    fn event_rate(&self) -> f64 {
        self.events as f64 / self.events_span.as_secs_f64().max(1e-9)
    }

    fn p50_ms(&self) -> f64 {
        let mut v = self.latencies.clone();
        v.sort_unstable();
        let mid = v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0);
        mid as f64 / 1e6
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "n/a".into(),
    }
}

fn per_node(v: Option<i64>, nodes: u64) -> String {
    v.map_or("n/a".into(), |x| {
        format!("{:.2}", x as f64 / nodes.max(1) as f64)
    })
}

pub(crate) fn print(rows: &[Row], writes: usize) {
    println!("cache_bench: {writes} setData per tree for propagation");
    println!(
        "{:<10} {:<8} {:>8} {:>8} {:>10} {:>9} {:>10} {:>11} {:>8} {:>9} {:>8}",
        "tree",
        "client",
        "znodes",
        "cached",
        "load/s",
        "req/node",
        "RSS B/node",
        "live B/node",
        "events",
        "events/s",
        "p50 ms"
    );
    for row in rows {
        for (client, r) in [("ours", &row.ours), ("Curator", &row.curator)] {
            match r {
                Ok(o) => println!(
                    "{:<10} {:<8} {:>8} {:>8} {:>10.0} {:>9} {:>10.0} {:>11} {:>8} {:>9.0} {:>8.2}",
                    row.tree,
                    client,
                    row.znodes,
                    o.nodes,
                    o.load_rate(),
                    per_node(o.requests.map(|r| r as i64), o.nodes),
                    o.rss_per_node(),
                    o.live_per_node()
                        .map_or("n/a".into(), |v| format!("{v:.2}")),
                    o.events,
                    o.event_rate(),
                    o.p50_ms(),
                ),
                Err(e) => println!("{:<10} {client:<8} n/a: {e}", row.tree),
            }
        }
    }
    println!("goals: load >= 2x, live/node <= 0.65x, events/s >= 1x, p50 <= 1x Curator's");
    for row in rows {
        if let (Ok(o), Ok(c)) = (&row.ours, &row.curator) {
            println!(
                "{:<10} load {:.1}x  live/node {}  RSS/node {:.2}x  events/s {:.1}x  p50 {:.2}x",
                row.tree,
                o.load_rate() / c.load_rate().max(1e-9),
                ratio(o.live_per_node(), c.live_per_node()),
                o.rss_per_node() / c.rss_per_node().max(1e-9),
                o.event_rate() / c.event_rate().max(1e-9),
                o.p50_ms() / c.p50_ms().max(1e-9),
            );
        }
    }
}
