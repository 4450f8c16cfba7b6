//! The real agent CLIs, each driven through `agents` against a loopback
//! mock of its model API (`AGENTS_TEST_<CLI>` names the pinned binary;
//! `.ci/run` installs them). One test binary, so that they run side by
//! side: each spends most of its time waiting on its CLI.

#[path = "../common/mod.rs"]
mod common;

mod aider;
mod auggie;
mod claude;
mod cline;
mod code_puppy;
mod codex;
mod continue_cli;
mod copilot;
mod droid;
mod gemini;
mod gptme;
mod grok;
mod hermes;
mod interpreter;
mod letta;
mod mini;
mod nanocoder;
mod opencode;
mod pi;
mod qwen;
