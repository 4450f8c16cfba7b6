//! The full-screen interface. For now: the pane widget that draws a run's
//! emulated screen, shared by `agents attach` and the TUI to come.

pub mod pane;
