//! Where a connected client goes when its server list changes: the decision as a value.
//!
//! The aim, as in the Java client's `StaticHostProvider.updateServerList`, is that clients
//! spread evenly over the new list while as few as possible move. Ours, for `o` servers
//! before, `n` after, `k` of them in both lists and `a = n - k` added:
//!
//! - a client whose server left the list moves to a server of the new list, drawn uniformly;
//! - a client whose server stayed moves, with probability `a / n`, to one of the added servers
//!   drawn uniformly, and stays otherwise (never when nothing was added).
//!
//! With `m` clients spread evenly before, a kept server keeps `(m/o)(k/n)` of its own and
//! receives `m(o-k)/(on)` from the servers that left: `m/n` in all; each added server
//! receives `m/n` too. (When nothing left the list, `a/n = 1 - o/n`, the Java client's
//! probability.)

/// A server, as in the connect string.
pub(crate) type Addr = (String, u16);

/// What a connected client does when its server list changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rebalance {
    /// Keep the connection; the server is at `index` in the new list.
    Stay { index: usize },
    /// Drop the connection and reconnect to the server at `index` in the new list.
    Move { index: usize },
}

/// Decides for a client connected to `current` when the list goes from `old` to `new`
/// (not empty). `draw` is uniform in [0, 1), `pick` any random number (it chooses the
/// target).
pub(crate) fn rebalance(
    old: &[Addr],
    new: &[Addr],
    current: &Addr,
    draw: f64,
    pick: usize,
) -> Rebalance {
    let n = new.len();
    let Some(index) = new.iter().position(|a| a == current) else {
        return Rebalance::Move { index: pick % n };
    };
    let added: Vec<usize> = (0..n).filter(|&i| !old.contains(&new[i])).collect();
    if added.is_empty() {
        return Rebalance::Stay { index };
    }
    let p_move = added.len() as f64 / n as f64;
    if draw < p_move {
        Rebalance::Move {
            index: added[pick % added.len()],
        }
    } else {
        Rebalance::Stay { index }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(ports: &[u16]) -> Vec<Addr> {
        ports.iter().map(|p| ("10.0.0.1".to_owned(), *p)).collect()
    }

    #[test]
    fn a_client_whose_server_left_moves_to_any_server_of_the_new_list() {
        let (old, new) = (hosts(&[1, 2, 3]), hosts(&[4, 5]));
        for pick in 0..4 {
            let r = rebalance(&old, &new, &old[0], 0.99, pick);
            assert_eq!(r, Rebalance::Move { index: pick % 2 });
        }
    }

    #[test]
    fn nothing_added_means_nobody_whose_server_stayed_moves() {
        let (old, new) = (hosts(&[1, 2, 3]), hosts(&[3, 1]));
        assert_eq!(
            rebalance(&old, &new, &old[0], 0.0, 7),
            Rebalance::Stay { index: 1 }
        );
        // The same list, reordered.
        let same = hosts(&[3, 2, 1]);
        assert_eq!(
            rebalance(&old, &same, &old[1], 0.0, 0),
            Rebalance::Stay { index: 1 }
        );
    }

    #[test]
    fn growing_from_three_to_five_moves_two_fifths_to_the_new_servers() {
        let (old, new) = (hosts(&[1, 2, 3]), hosts(&[1, 2, 3, 4, 5]));
        assert_eq!(
            rebalance(&old, &new, &old[2], 0.39, 1),
            Rebalance::Move { index: 4 }
        );
        assert_eq!(
            rebalance(&old, &new, &old[2], 0.41, 1),
            Rebalance::Stay { index: 2 }
        );
    }

    #[test]
    fn the_moves_even_out_the_load() {
        // 3 servers, 2 of them replaced by 3 others: {1,2,3} -> {3,4,5,6}.
        let (old, new) = (hosts(&[1, 2, 3]), hosts(&[3, 4, 5, 6]));
        let mut load = vec![0usize; new.len()];
        let per_server = 1200;
        for (s, server) in old.iter().enumerate() {
            for c in 0..per_server {
                let draw = (c as f64 + 0.5) / per_server as f64;
                let pick = c * 7 + s;
                let i = match rebalance(&old, &new, server, draw, pick) {
                    Rebalance::Stay { index } | Rebalance::Move { index } => index,
                };
                load[i] += 1;
            }
        }
        // 3600 clients over 4 servers: 900 each, give or take the rounding of the picks.
        for l in &load {
            assert!((850..=950).contains(l), "{load:?}");
        }
    }
}
