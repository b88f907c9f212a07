//! What the example programs share: where the servers are.
//!
//! Each program takes the connect string as its first argument, else from `$ZK_SERVERS`, as
//! printed by `cargo run --release -p zk-testkit --bin zk-local`.

/// The connect string: the first argument, else `$ZK_SERVERS`, else 127.0.0.1:2181.
pub fn servers() -> String {
    std::env::args()
        .nth(1)
        .or_else(|| std::env::var("ZK_SERVERS").ok())
        .unwrap_or_else(|| "127.0.0.1:2181".into())
}

/// A variable the program needs (a file or a credential), or a message naming it.
pub fn required_env(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("set {name} (zk-local prints it)"))
}
