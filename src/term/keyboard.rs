//! The kitty keyboard protocol's flags
//! (<https://sw.kovidgoyal.net/kitty/keyboard-protocol/>): what a program
//! asked its keys to look like.
//!
//! A program pushes flags (`CSI > flags u`), pops them (`CSI < n u`), sets
//! the ones in effect (`CSI = flags ; how u`) and asks which are
//! (`CSI ? u`, answered in `queries.rs`). Asking is how Codex (crossterm's
//! `supports_keyboard_enhancement`) finds out the terminal speaks it; once
//! on, Shift-Enter reaches it as `CSI 13;2u`, told apart from Enter. The
//! client that types into the run reads the flags from
//! [`crate::values::screen::mode::KITTY_KEYBOARD`].
//!
//! The main and the alternate screen keep a stack each, as the protocol
//! says. Only the first flag (disambiguate escape codes) is kept: it is the
//! one the clients encode keys for, and what a program asks back is what
//! it will get.

/// "Disambiguate escape codes": Esc and keys with modifiers as `CSI … u`.
pub(crate) const DISAMBIGUATE: u8 = 1;

/// The flags kept; the others (event types, alternate keys, all keys as
/// escape codes, associated text) are dropped from what is pushed or set.
const KEPT: u8 = DISAMBIGUATE;

/// Entries a screen's stack holds; a push beyond drops the oldest. kitty's
/// own stack is this deep.
const DEPTH: usize = 8;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct KeyboardFlags {
    main: Vec<u8>,
    alt: Vec<u8>,
}

impl KeyboardFlags {
    /// The flags in effect on the main or the alternate screen.
    pub(crate) fn current(&self, alt: bool) -> u8 {
        self.stack(alt).last().copied().unwrap_or(0)
    }

    /// `CSI > flags u`.
    pub(crate) fn push(&mut self, alt: bool, flags: u16) {
        let stack = self.stack_mut(alt);
        if stack.len() == DEPTH {
            stack.remove(0);
        }
        stack.push(kept(flags));
    }

    /// `CSI < n u`: an emptied stack leaves no flags in effect.
    pub(crate) fn pop(&mut self, alt: bool, n: u16) {
        let stack = self.stack_mut(alt);
        let keep = stack.len().saturating_sub(usize::from(n.max(1)));
        stack.truncate(keep);
    }

    /// `CSI = flags ; how u`: 1 (or none) sets the flags in effect to
    /// `flags`, 2 adds them, 3 takes them away. On an empty stack it makes
    /// the first entry, as kitty does.
    pub(crate) fn set(&mut self, alt: bool, flags: u16, how: u16) {
        let stack = self.stack_mut(alt);
        if stack.is_empty() {
            stack.push(0);
        }
        let Some(top) = stack.last_mut() else { return };
        let flags = kept(flags);
        *top = match how {
            0 | 1 => flags,
            2 => *top | flags,
            3 => *top & !flags,
            _ => *top,
        };
    }

    /// The bytes that rebuild one screen's stack on a fresh emulator, that
    /// screen shown.
    pub(crate) fn snapshot(&self, alt: bool) -> String {
        self.stack(alt).iter().map(|f| format!("\x1b[>{f}u")).collect()
    }

    fn stack(&self, alt: bool) -> &Vec<u8> {
        if alt { &self.alt } else { &self.main }
    }

    fn stack_mut(&mut self, alt: bool) -> &mut Vec<u8> {
        if alt { &mut self.alt } else { &mut self.main }
    }
}

fn kept(flags: u16) -> u8 {
    (flags & u16::from(KEPT)) as u8
}
