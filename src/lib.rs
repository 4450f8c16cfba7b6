//! `agents`: a terminal session manager for coding agents. See
//! `docs/architecture.md` for where each concept lives.

/// `println!` for human output: what is printed is made inert first
/// (`text::inert`), so no byte an agent, a transcript or a path carried can
/// drive the user's terminal. JSON output is printed exactly, with
/// `println!`.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::print::out(&format!("{}\n", $crate::text::inert(&format!($($arg)*))))
    };
}

/// `eprintln!` made inert, as `say!`.
macro_rules! say_err {
    ($($arg:tt)*) => {
        $crate::cli::print::err(&format!("{}\n", $crate::text::inert(&format!($($arg)*))))
    };
}

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
pub mod worktree;
