//! The broker: each client's connection (`connection.rs`), the tool table
//! it calls (`dispatch.rs`, with the calls on one run in `run_methods.rs`
//! and `runs.list` in `listing.rs`), and what a client follows — a run's
//! output (`subscribe.rs`) and its screen (`screen_relay.rs`); room for a
//! new client when every place is taken (`room.rs`). It answers
//! through the engine (`crate::engine`) and the features beside it in
//! `daemon/`, and keeps no state of its own but each connection's.

pub(in crate::daemon) mod connection;
pub(in crate::daemon) mod dispatch;
pub(in crate::daemon) mod listing;
pub(in crate::daemon) mod room;
pub(in crate::daemon) mod run_methods;
pub(in crate::daemon) mod screen_relay;
pub(in crate::daemon) mod subscribe;
