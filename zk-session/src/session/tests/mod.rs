//! Unit tests of the session core: no sockets, no sleeps.

mod basics;
mod harness;
mod interleavings;
mod sasl;
mod server;
