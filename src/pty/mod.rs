//! Processes: who a pid really is, and signals that never reach a stranger.

pub mod identity;
pub mod signal;

pub use identity::{Identity, Liveness, boot_id};
