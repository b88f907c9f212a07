//! One-shot watches set from a task of their own, so that dropping the caller cannot cut a
//! request off between its sending and its reply (see [`data_watch`](crate::plumbing::line::data_watch)): the
//! children and exists flavours the counters, the semaphore and the node recipes wait on.

use bytes::Bytes;
use zk_session::{Client, Error, OneshotWatch, Stat};

/// `get_children_watch` in a task of its own.
pub(crate) async fn children_watch(
    client: &Client,
    path: &str,
) -> Result<(Vec<String>, OneshotWatch), Error> {
    let (client, path) = (client.clone(), path.to_owned());
    tokio::spawn(async move {
        let (children, _stat, w) = client.get_children_watch(&path).await?;
        Ok((children, w))
    })
    .await
    .unwrap_or(Err(Error::Closed))
}

/// `exists_watch` in a task of its own.
pub(crate) async fn exists_watch(
    client: &Client,
    path: &str,
) -> Result<(Option<Stat>, OneshotWatch), Error> {
    let (client, path) = (client.clone(), path.to_owned());
    tokio::spawn(async move { client.exists_watch(&path).await })
        .await
        .unwrap_or(Err(Error::Closed))
}

/// `get_data_watch` in a task of its own (the one the mutex uses).
pub(crate) async fn data_watch(
    client: &Client,
    path: &str,
) -> Result<(Bytes, Stat, OneshotWatch), Error> {
    crate::plumbing::line::data_watch(client, path).await
}
