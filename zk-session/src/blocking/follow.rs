//! [`ServerList::FollowEnsemble`](crate::ServerList::FollowEnsemble) for the blocking
//! client: a thread (`zk-session-ensemble`) reads `/zookeeper/config` with a watch, and on
//! every change hands the members' client addresses to the session as its server list.
//! It holds the handle weakly: the session closes when the user's last handle goes, and the
//! thread ends with it.

use std::{
    sync::{Arc, Weak},
    time::Duration,
};

use super::client::{Client, Handle};
use crate::{ensemble_config, Error};

/// Starts following the ensemble's configuration for `client`'s session.
pub(super) fn spawn(client: &Client) {
    let weak = Arc::downgrade(&client.handle);
    let _ = std::thread::Builder::new()
        .name("zk-session-ensemble".into())
        .spawn(move || follow(weak));
}

fn follow(weak: Weak<Handle>) {
    let mut pause = Duration::from_millis(100);
    loop {
        let Some(handle) = weak.upgrade() else { return };
        let client = Client { handle };
        let watch = match client.get_config_watch() {
            Ok((config, _stat, watch)) => {
                let config = String::from_utf8_lossy(&config);
                if let Some(hosts) = ensemble_config::client_addresses(&config) {
                    if client.set_server_list(hosts).is_err() {
                        return;
                    }
                }
                pause = Duration::from_millis(100);
                Some(watch)
            }
            Err(Error::Closed) => return,
            Err(_) if client.has_ended() => return,
            Err(_) => None,
        };
        // Not kept while waiting: the user's last handle must be able to close the session.
        drop(client);
        match watch {
            // Fired, or ended with the connection or the session: read it again.
            Some(w) => drop(w.wait()),
            None => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(5));
            }
        }
    }
}
