//! The wire: a version header each way, then length-prefixed frames (docs/design.md §5).
//!
//! This module knows bytes and values only; reading and writing go through
//! `AsyncRead`/`AsyncWrite` so the same code serves the daemon socket, the run
//! sockets and (later) the SSH bridge.

pub mod exit;
mod frame;
mod header;
pub mod input;
pub mod peer;
pub mod rebuild;
pub mod rpc;
pub mod run_files;
pub mod screen;
pub mod supervisor;

pub use frame::{Frame, FrameError, MAX_FRAME, read_frame, read_frame_within, write_frame};
pub use header::{HeaderError, PROTOCOL_VERSION, exchange_headers};
