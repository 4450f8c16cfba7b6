//! `agents`: a terminal session manager for coding agents. See
//! `docs/architecture.md` for where each concept lives.

pub mod api;
pub mod cli;
pub mod client;
pub mod clock;
pub mod config;
pub mod daemon;
pub mod engine;
pub mod harness;
pub mod keymap;
pub mod mcp;
pub mod paths;
pub mod proof;
pub mod protocol;
pub mod pty;
pub mod remote;
pub mod store;
pub mod supervise;
pub mod term;
pub mod text;
pub mod transcript;
pub mod tui;
pub mod values;
pub mod web;
pub mod worktree;
