//! [`Standalone`]: a single ZooKeeper server.

use std::{ops::Deref, sync::Arc};

use crate::{
    options::forward_option_setters, ports, HarnessError, Result, ServerOptions, ZkServer,
};

/// How many times a start is retried with fresh ports when one was taken meanwhile.
pub(crate) const PORT_ATTEMPTS: usize = 4;

/// A standalone ZooKeeper server, serving when returned.
///
/// Derefs to [`ZkServer`] for `connect_string()`, `client_addr()`, `kill9()`, `restart()`,
/// `pause()`, `srvr()`, …. Dropping it kills the server and removes its files.
///
/// ```no_run
/// use zk_testkit::{Mode, Standalone};
/// let zk = Standalone::start().unwrap();
/// assert_eq!(zk.mode(), Some(Mode::Standalone));
/// println!("connect to {}", zk.connect_string());
/// ```
#[derive(Debug)]
pub struct Standalone {
    server: ZkServer,
}

impl Standalone {
    /// Starts a server with the default [`ServerOptions`] (tickTime 200).
    pub fn start() -> Result<Standalone> {
        Standalone::builder().start()
    }

    /// A builder for non-default options.
    ///
    /// ```no_run
    /// let zk = zk_testkit::Standalone::builder()
    ///     .tick_time(100)
    ///     .extended_types(true)
    ///     .start()
    ///     .unwrap();
    /// ```
    pub fn builder() -> StandaloneBuilder {
        StandaloneBuilder::default()
    }

    /// The server.
    pub fn server(&self) -> &ZkServer {
        &self.server
    }
}

impl Deref for Standalone {
    type Target = ZkServer;

    fn deref(&self) -> &ZkServer {
        &self.server
    }
}

/// Options for [`Standalone`]; see [`ServerOptions`] for each setting.
#[derive(Debug, Clone, Default)]
pub struct StandaloneBuilder {
    options: ServerOptions,
}

impl StandaloneBuilder {
    forward_option_setters!(options);

    /// Starts the server and waits until it serves.
    pub fn start(self) -> Result<Standalone> {
        let opts = Arc::new(self.options);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let port = ports::free_port()?;
            let server = ZkServer::prepare(opts.clone(), port, None, &[])?;
            let started = server
                .start_no_wait()
                .and_then(|()| server.wait_healthy(opts.startup_timeout));
            match started {
                Ok(_) => return Ok(Standalone { server }),
                Err(HarnessError::PortInUse { .. }) if attempt < PORT_ATTEMPTS => continue,
                Err(e) => return Err(e),
            }
        }
    }
}
