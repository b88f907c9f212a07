//! Unit tests of the session core: no sockets, no sleeps.

mod basics;
mod driven;
mod handshake;
mod harness;
mod interleavings;
mod sasl;
#[cfg(feature = "sasl")]
mod sasl_exchange;
mod server;
mod server_list;
