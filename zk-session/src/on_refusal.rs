//! [`OnRefusal`]: whether `connect` gives up at once when every server refuses.

/// What [`connect`](crate::ClientBuilder::connect) does when every server of the connect string
/// refuses the connection (nothing listens on the port: a mistyped port, a server down).
///
/// ```no_run
/// # async fn f() {
/// use zk_session::{Client, Error, OnRefusal};
///
/// let e = Client::builder("127.0.0.1:2999,127.0.0.1:2998")
///     .on_refusal(OnRefusal::FailFast)
///     .connect()
///     .await
///     .unwrap_err();
/// // At once, with every server's refusal.
/// assert!(matches!(e, Error::ConnectRefused { .. }));
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnRefusal {
    /// Keep trying until the first connection's timeout, as the Java client does (the
    /// default): a server may be starting.
    #[default]
    KeepTrying,
    /// Fail with [`Error::ConnectRefused`](crate::Error::ConnectRefused) as soon as every server has refused once, before
    /// any connection was made: an operator who mistyped a port hears of it at once.
    FailFast,
}
