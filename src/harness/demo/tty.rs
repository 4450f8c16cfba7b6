//! The moments the demo agent changes its terminal's settings — two short
//! ones, and the whole session's pastes — each undone when its guard drops
//! (also when a signal cuts the moment short).

use std::io;
use std::os::fd::AsFd;

use nix::sys::termios::{LocalFlags, OutputFlags, SetArg, SpecialCharacterIndices, Termios, tcgetattr, tcsetattr};

/// Terminal settings to put back on drop.
pub(super) struct Restore<F: AsFd> {
    fd: F,
    saved: Termios,
}

impl<F: AsFd> Restore<F> {
    /// Applies `change` when `fd` is a terminal; does nothing otherwise (a
    /// pipe has no settings, and needs none of these changes).
    fn change(fd: F, change: impl FnOnce(&mut Termios)) -> io::Result<Option<Self>> {
        if !nix::unistd::isatty(&fd).unwrap_or(false) {
            return Ok(None);
        }
        let saved = tcgetattr(&fd)?;
        let mut changed = saved.clone();
        change(&mut changed);
        tcsetattr(&fd, SetArg::TCSANOW, &changed)?;
        Ok(Some(Self { fd, saved }))
    }
}

impl<F: AsFd> Drop for Restore<F> {
    fn drop(&mut self) {
        // Nothing better to do if it fails: the terminal is going away.
        let _ = tcsetattr(&self.fd, SetArg::TCSANOW, &self.saved);
    }
}

/// Single keys, not echoed, for the permission prompt (as Claude Code reads
/// it: `1` answers at once). Ctrl-C still sends SIGINT.
pub(super) fn single_keys() -> io::Result<Option<Restore<io::Stdin>>> {
    Restore::change(io::stdin(), |termios| {
        termios.local_flags.remove(LocalFlags::ICANON | LocalFlags::ECHO);
        termios.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
        termios.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
    })
}

/// Bracketed paste for the whole session, as real agents ask for it: the
/// terminal marks a paste (a multi-line prompt typed in one go) so its
/// lines are one prompt, and the line discipline echoes the markers as
/// they are (a terminal takes them as a sequence it ignores) rather than
/// as `^[[200~`. The demo prints its own `^C` lines.
pub(super) fn bracketed_paste() -> io::Result<Option<Restore<io::Stdin>>> {
    let restore = Restore::change(io::stdin(), |termios| {
        termios.local_flags.remove(LocalFlags::ECHOCTL);
    })?;
    if restore.is_some() {
        use io::Write;
        let mut out = io::stdout();
        out.write_all(PASTE_ON)?;
        out.flush()?;
    }
    Ok(restore)
}

const PASTE_ON: &[u8] = b"\x1b[?2004h";

/// No `\n` → `\r\n` translation on output, so the flood's bytes (which end
/// their lines in `\r\n` themselves) reach the PTY's reader unchanged.
pub(super) fn exact_newlines() -> io::Result<Option<Restore<io::Stdout>>> {
    Restore::change(io::stdout(), |termios| {
        termios.output_flags.remove(OutputFlags::ONLCR);
    })
}
