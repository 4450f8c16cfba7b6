//! Input that arrives all at once. A terminal that does not mark pastes (no
//! bracketed paste, `tmux send-keys`, some web terminals) sends a pasted
//! text as keys, its newlines as Enter: read one by one they would send the
//! composer's draft at the first line and drive the TUI with the rest (the
//! `i` of "line" entering INSERT).

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// The most events gathered from one look at the terminal.
pub const MOST: usize = 4096;
/// A paste's next piece comes within this of the last; a person's next key
/// after a paste takes longer.
pub const PASTE_GAP: std::time::Duration = std::time::Duration::from_millis(15);
/// The longest paste gathered in one (bytes); the composer and the run take
/// more as a second paste.
pub const LONGEST: usize = 1 << 20;

/// The events of one read of the terminal, with a paste nobody marked made
/// into one: plain characters in which an Enter is followed by more text.
/// Nobody types Enter and the next key within one read, so this never
/// takes typing for a paste.
pub fn coalesce(batch: Vec<Event>) -> Vec<Event> {
    let mut text = String::new();
    let mut enter_then_more = false;
    for event in &batch {
        let Event::Key(key) = event else { return batch };
        let Some(ch) = plain(key) else { return batch };
        enter_then_more |= text.ends_with('\n') && ch != '\n';
        text.push(ch);
    }
    if enter_then_more {
        vec![Event::Paste(text)]
    } else {
        batch
    }
}

/// The text of a read made of plain characters only (more of a paste), or
/// `None`.
pub fn plain_text(batch: &[Event]) -> Option<String> {
    batch
        .iter()
        .map(|event| match event {
            Event::Key(key) => plain(key),
            _ => None,
        })
        .collect()
}

/// The character a key press stands for in a paste.
fn plain(key: &KeyEvent) -> Option<char> {
    if key.kind == KeyEventKind::Release || !(key.modifiers - KeyModifiers::SHIFT).is_empty() {
        return None;
    }
    match key.code {
        KeyCode::Char(c) => Some(c),
        KeyCode::Enter => Some('\n'),
        KeyCode::Tab => Some('\t'),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Vec<Event> {
        text.chars()
            .map(|c| {
                let code = match c {
                    '\n' => KeyCode::Enter,
                    c => KeyCode::Char(c),
                };
                Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
            })
            .collect()
    }

    #[test]
    fn lines_sent_as_keys_in_one_read_are_a_paste() {
        assert_eq!(
            coalesce(keys("first line\nsecond line\n")),
            vec![Event::Paste("first line\nsecond line\n".into())]
        );
    }

    #[test]
    fn typing_stays_typing() {
        // One key, a word and its Enter, a burst of the same key: no Enter
        // with text after it.
        for typed in ["j", "hello\n", "jjjj", "\n\n"] {
            assert_eq!(coalesce(keys(typed)), keys(typed), "{typed:?}");
        }
        // A control key or an arrow in the read: keys, as they came.
        let mut mixed = keys("a\nb");
        mixed.insert(1, Event::Key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::CONTROL)));
        assert_eq!(coalesce(mixed.clone()), mixed);
        let mut arrows = keys("a\nb");
        arrows.push(Event::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)));
        assert_eq!(coalesce(arrows.clone()), arrows.clone());
        // More of a paste is plain text; a read with an arrow is not.
        assert_eq!(plain_text(&keys("last line\n")).as_deref(), Some("last line\n"));
        assert_eq!(plain_text(&arrows), None);
    }
}
