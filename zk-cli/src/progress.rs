//! A progress line on stderr (znodes done / total, rate, time left), drawn only when stderr
//! is a terminal: pipes and logs get nothing.

use std::{
    io::{IsTerminal, Write},
    time::{Duration, Instant},
};

/// How often the line is redrawn at most.
const EVERY: Duration = Duration::from_millis(100);

pub struct Progress {
    what: &'static str,
    total: usize,
    done: usize,
    started: Instant,
    drawn: Option<Instant>,
    on: bool,
}

impl Progress {
    /// A progress line for `total` znodes; silent unless stderr is a terminal.
    pub fn new(what: &'static str, total: usize) -> Progress {
        Progress {
            what,
            total,
            done: 0,
            started: Instant::now(),
            drawn: None,
            on: std::io::stderr().is_terminal(),
        }
    }

    /// `n` more znodes done.
    pub fn advance(&mut self, n: usize) {
        self.done += n;
        let now = Instant::now();
        if self.on && self.drawn.is_none_or(|d| now - d >= EVERY) {
            self.drawn = Some(now);
            let line = line(self.what, self.done, self.total, now - self.started);
            let _ = write!(std::io::stderr(), "\r{line}\x1b[K");
        }
    }

    /// Clears the line.
    pub fn finish(&mut self) {
        if self.on && self.drawn.is_some() {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `cp: 500/2000 znodes, 250/s, 6 s left`.
fn line(what: &str, done: usize, total: usize, elapsed: Duration) -> String {
    let rate = done as f64 / elapsed.as_secs_f64().max(1e-3);
    let left = if rate > 0.0 {
        format!(", {:.0} s left", total.saturating_sub(done) as f64 / rate)
    } else {
        String::new()
    };
    format!("{what}: {done}/{total} znodes, {rate:.0}/s{left}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_time_left() {
        assert_eq!(
            line("cp", 500, 2000, Duration::from_secs(2)),
            "cp: 500/2000 znodes, 250/s, 6 s left"
        );
        assert_eq!(line("cp", 0, 10, Duration::ZERO), "cp: 0/10 znodes, 0/s");
    }
}
