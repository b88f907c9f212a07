//! [`ephemeral_owner`]: a client's session id as the server spells it in a znode's
//! `ephemeralOwner` and in the four-letter words, for tests that compare the two.

use zk_session::{Client, SessionId};

/// The value that `client`'s ephemeral znodes carry in `Stat::ephemeral_owner`: its session
/// id, or 0 while it has none (which is also what a persistent znode carries).
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_session::Result<()> {
/// use zk_session::CreateOptions;
/// use conformance::ephemeral_owner;
///
/// client.create("/worker", b"", CreateOptions::ephemeral()).await?;
/// let stat = client.exists("/worker").await?.expect("just created");
/// assert_eq!(stat.ephemeral_owner, ephemeral_owner(&client));
/// # Ok(()) }
/// ```
pub fn ephemeral_owner(client: &Client) -> i64 {
    client.session_id().map_or(0, SessionId::get)
}
