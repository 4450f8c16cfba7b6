//! `agents web` (issue #36) through the real binary: the URL and token it
//! prints, what it refuses (no token: 401 and nothing said of any run;
//! another host or origin: 403), the headers every answer carries, the
//! calls of the tool table over HTTP and WebSockets (`api.rs`), and the
//! page in a real headless Chromium (`page.rs`, `screen.rs`), which draws
//! what runs carry as text, never as HTML.

#[path = "../common/mod.rs"]
mod common;

mod api;
mod browser;
mod page;
mod screen;
mod served;
mod served_for_devices;
