//! What the user types: whole lines at the prompt (the terminal is in cooked
//! mode, so it edits and echoes them), single keys at the permission prompt.
//! Reads only when poll says stdin is ready, so a signal always gets through.

use std::io;
use std::os::fd::AsFd;

use nix::errno::Errno;

use super::Stop;
use super::signals::Signals;

/// A bracketed paste's markers.
const PASTE_START: &str = "\x1b[200~";
const PASTE_END: &str = "\x1b[201~";

/// A paste whose end never comes is one prompt this long at most.
const PASTE_MAX: usize = 1 << 20;

pub(super) struct Input {
    /// Bytes read but not yet handed out (type-ahead, a key's trailing Enter).
    pending: Vec<u8>,
    ended: bool,
}

impl Input {
    pub(super) fn new() -> Self {
        Self {
            pending: Vec::new(),
            ended: false,
        }
    }

    /// The next prompt: a line without its line ending, or a bracketed
    /// paste whole, its lines joined by `\n` and its markers gone (the
    /// terminal's line discipline hands a paste over line by line). `None`
    /// at end of input.
    pub(super) fn line(&mut self, signals: &Signals) -> Result<Option<String>, Stop> {
        let Some(mut text) = self.raw_line(signals)? else {
            return Ok(None);
        };
        if !text.contains(PASTE_START) {
            return Ok(Some(text));
        }
        while !text.contains(PASTE_END) && text.len() < PASTE_MAX {
            let Some(next) = self.raw_line(signals)? else {
                break;
            };
            text.push('\n');
            text.push_str(&next);
        }
        Ok(Some(text.replace(PASTE_START, "").replace(PASTE_END, "")))
    }

    /// The next line without its line ending, or `None` at end of input.
    fn raw_line(&mut self, signals: &Signals) -> Result<Option<String>, Stop> {
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line);
                return Ok(Some(line.trim_end_matches(['\r', '\n']).to_string()));
            }
            if self.ended {
                // A last line without a newline still counts.
                if self.pending.is_empty() {
                    return Ok(None);
                }
                let line = String::from_utf8_lossy(&self.pending).into_owned();
                self.pending.clear();
                return Ok(Some(line.trim_end_matches('\r').to_string()));
            }
            self.read_more(signals)?;
        }
    }

    /// The next byte typed, or `None` at end of input.
    pub(super) fn key(&mut self, signals: &Signals) -> Result<Option<u8>, Stop> {
        while self.pending.is_empty() {
            if self.ended {
                return Ok(None);
            }
            self.read_more(signals)?;
        }
        Ok(Some(self.pending.remove(0)))
    }

    pub(super) fn buffered(&self) -> usize {
        self.pending.len()
    }

    /// Forgets what was typed but not used yet.
    pub(super) fn discard(&mut self) {
        self.pending.clear();
    }

    /// Drops one line ending that directly follows an answered key.
    pub(super) fn skip_newline(&mut self) {
        if matches!(self.pending.first(), Some(b'\n' | b'\r')) {
            self.pending.remove(0);
        }
    }

    fn read_more(&mut self, signals: &Signals) -> Result<(), Stop> {
        let stdin = io::stdin();
        signals.wait(&[stdin.as_fd()], None)?;
        let mut buf = [0u8; 4096];
        match nix::unistd::read(&stdin, &mut buf) {
            Ok(0) => self.ended = true,
            Ok(n) => self.pending.extend_from_slice(&buf[..n]),
            Err(Errno::EINTR | Errno::EAGAIN) => {}
            // A PTY whose other side closed reads as EIO: the user is gone.
            Err(Errno::EIO) => self.ended = true,
            Err(err) => return Err(err.into()),
        }
        Ok(())
    }
}
