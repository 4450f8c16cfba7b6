//! The public tool table: method names, their parameter and result types, and
//! the typed errors every transport carries (docs/design.md §2). The daemon implements
//! it (`daemon::broker::dispatch`); the CLI, the socket and later MCP call it.

pub mod bounds;
mod error;
mod harness;
mod hosts;
mod lineage;
mod mail;
mod prompts;
mod removal;
mod routines;
mod sessions;
mod spec;
mod teams;
mod transcript;
mod types;
mod usage;
mod worktree;

#[cfg(test)]
mod wire_tests;

pub use error::{ApiError, ErrorCode};
pub use harness::*;
pub use hosts::*;
pub use lineage::*;
pub use mail::*;
pub use prompts::*;
pub use removal::*;
pub use routines::*;
pub use sessions::*;
pub use spec::RunSpec;
pub use teams::*;
pub use transcript::*;
pub use types::*;
pub use usage::*;
pub use worktree::*;

pub mod method;
mod replies;
pub use replies::*;
