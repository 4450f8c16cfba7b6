//! The TUI's NORMAL-mode key bindings: defaults, overridable in
//! `config.toml`. Below `config`, which refuses a revision whose `[keys]`
//! do not parse; the TUI (`tui::keymap`) builds its keymap from them:
//!
//! ```toml
//! [keys]
//! prefix = "ctrl-a"
//! new = "n"
//! down = "j down"      # alternatives separated by spaces
//! ```

use std::collections::HashMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Quit,
    Down,
    Up,
    Top,
    Bottom,
    Focus,
    New,
    Send,
    Cancel,
    ForceCancel,
    Rerun,
    Attach,
    Zoom,
    /// Shows or hides the side panel beside the panes.
    ToggleSide,
    Single,
    Split,
    Grid,
    NextPanel,
    NextTab,
    PrevTab,
    Filter,
    Help,
    ScrollUp,
    ScrollDown,
    Copy,
    /// Answers yes to the selected run's permission prompt.
    Approve,
    /// Answers no to it.
    Deny,
    /// Selects the next run that needs you (unseen).
    NextUnseen,
    /// The Changes tab's next / previous hunk.
    NextHunk,
    PrevHunk,
    /// Opens the composer with the Changes tab's hunk quoted.
    Comment,
    /// Merges the run's branch into the one it started from (asks first).
    Merge,
    /// A look at the selected run's last lines (or its question) with a
    /// one-line reply, without focusing its pane.
    Peek,
    /// Marks or unmarks the selected run: `send` then goes to each marked run.
    Mark,
    /// Clears the marks.
    ClearMarks,
    /// Focuses the next / previous pane (its run becomes the selected one).
    NextPane,
    PrevPane,
    /// Deletes the selected ended run (or the marked ones) with the runs
    /// they own, after naming them.
    Delete,
    /// Gives the selected run a new name (its old one keeps finding it).
    Rename,
}

/// Each action's config name and default keys.
const DEFAULTS: &[(Action, &str, &str)] = &[
    (Action::Quit, "quit", "q"),
    (Action::Down, "down", "j down"),
    (Action::Up, "up", "k up"),
    (Action::Top, "top", "g home"),
    (Action::Bottom, "bottom", "G end"),
    (Action::Focus, "focus", "enter i"),
    (Action::New, "new", "n"),
    (Action::Send, "send", "s"),
    (Action::Cancel, "cancel", "x"),
    (Action::ForceCancel, "force_cancel", "X"),
    (Action::Rerun, "rerun", "r"),
    (Action::Attach, "attach", "a"),
    (Action::Zoom, "zoom", "z"),
    (Action::ToggleSide, "toggle_side", "p"),
    (Action::Single, "layout_single", "1"),
    (Action::Split, "layout_split", "2"),
    (Action::Grid, "layout_grid", "3 4"),
    (Action::NextPanel, "next_panel", "tab"),
    (Action::NextTab, "next_tab", "]"),
    (Action::PrevTab, "prev_tab", "["),
    (Action::Filter, "filter", "/"),
    (Action::Help, "help", "?"),
    (Action::ScrollUp, "scroll_up", "pageup"),
    (Action::ScrollDown, "scroll_down", "pagedown"),
    (Action::Copy, "copy", "v"),
    (Action::Approve, "approve", "Y"),
    (Action::Deny, "deny", "N"),
    (Action::NextUnseen, "next_unseen", "u"),
    (Action::NextHunk, "next_hunk", "}"),
    (Action::PrevHunk, "prev_hunk", "{"),
    (Action::Comment, "comment", "c"),
    (Action::Merge, "merge", "M"),
    (Action::Peek, "peek", "o"),
    (Action::Mark, "mark", "space"),
    (Action::ClearMarks, "clear_marks", "esc"),
    (Action::NextPane, "next_pane", "l right"),
    (Action::PrevPane, "prev_pane", "h left"),
    (Action::Delete, "delete", "D"),
    (Action::Rename, "rename", "R"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
}

impl Key {
    pub fn of(event: &KeyEvent) -> Key {
        // Terminals report Shift+letter as the upper-case letter, so SHIFT
        // itself is not part of the key.
        Key {
            code: event.code,
            ctrl: event.modifiers.contains(KeyModifiers::CONTROL),
            alt: event.modifiers.contains(KeyModifiers::ALT),
        }
    }

    /// Parses `q`, `G`, `ctrl-a`, `alt-x`, `enter`, `tab`, `pageup`, `f5`, …
    pub fn parse(spec: &str) -> Result<Key, String> {
        let mut ctrl = false;
        let mut alt = false;
        let mut rest = spec;
        loop {
            if let Some(r) = rest.strip_prefix("ctrl-").or_else(|| rest.strip_prefix("c-")) {
                ctrl = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("alt-").or_else(|| rest.strip_prefix("m-")) {
                alt = true;
                rest = r;
            } else {
                break;
            }
        }
        let code = match rest {
            "enter" | "return" => KeyCode::Enter,
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "esc" | "escape" => KeyCode::Esc,
            "space" => KeyCode::Char(' '),
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pageup" | "pgup" => KeyCode::PageUp,
            "pagedown" | "pgdn" => KeyCode::PageDown,
            "backspace" => KeyCode::Backspace,
            "delete" | "del" => KeyCode::Delete,
            f if f.len() >= 2 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                KeyCode::F(f[1..].parse().unwrap_or(1))
            }
            s if s.chars().count() == 1 => {
                let c = s.chars().next().unwrap_or(' ');
                KeyCode::Char(if ctrl { c.to_ascii_lowercase() } else { c })
            }
            _ => return Err(format!("unknown key '{spec}'")),
        };
        Ok(Key { code, ctrl, alt })
    }
}

/// As hints and help name a key: `Ctrl-a`, `Alt-x`, `Enter`, `q`.
impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.ctrl {
            f.write_str("Ctrl-")?;
        }
        if self.alt {
            f.write_str("Alt-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "F{n}"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            other => write!(f, "{other:?}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Keymap {
    keys: HashMap<Key, Action>,
    pub prefix: Key,
    /// Keys bound to two actions, said as `N: new, not deny`: a configured
    /// key wins over a default one, else the action listed first.
    pub shadowed: Vec<String>,
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap::from_config(&HashMap::new()).unwrap_or_else(|_| unreachable!("the defaults parse"))
    }
}

impl Keymap {
    /// Defaults, with the config's `[keys]` table applied on top. An entry
    /// replaces all default keys of its action.
    pub fn from_config(overrides: &HashMap<String, String>) -> Result<Keymap, String> {
        for name in overrides.keys() {
            if name != "prefix" && !DEFAULTS.iter().any(|(_, n, _)| n == name) {
                return Err(format!("unknown key action '{name}'"));
            }
        }
        let mut keys: HashMap<Key, Action> = HashMap::new();
        let mut shadowed = Vec::new();
        // Configured keys first, so a default never takes a key the user gave.
        for configured in [true, false] {
            for (action, name, default) in DEFAULTS {
                let spec = match (overrides.get(*name), configured) {
                    (Some(spec), true) => spec.as_str(),
                    (None, false) => default,
                    _ => continue,
                };
                for part in spec.split_whitespace() {
                    let key = Key::parse(part)?;
                    match keys.get(&key) {
                        Some(held) if held != action => {
                            shadowed.push(format!("{key}: {}, not {name}", Keymap::name(*held)));
                        }
                        _ => {
                            keys.insert(key, *action);
                        }
                    }
                }
            }
        }
        let prefix = Key::parse(overrides.get("prefix").map(String::as_str).unwrap_or("ctrl-a"))?;
        if let Some(held) = keys.get(&prefix) {
            shadowed.push(format!("{prefix}: both the prefix and {}", Keymap::name(*held)));
        }
        Ok(Keymap { keys, prefix, shadowed })
    }

    /// An action's config name.
    fn name(action: Action) -> &'static str {
        DEFAULTS
            .iter()
            .find(|(a, _, _)| *a == action)
            .map_or("?", |(_, name, _)| name)
    }

    /// The keys that do `action`, as hints name them (`j/↓`), in the order
    /// they were given; `-` when none does.
    pub fn keys_of(&self, action: Action) -> String {
        let bound = self.bound(action);
        if bound.is_empty() {
            return "-".into();
        }
        bound.iter().map(Key::to_string).collect::<Vec<_>>().join("/")
    }

    /// The first key that does `action`, for the status line.
    pub fn key_of(&self, action: Action) -> String {
        self.bound(action).first().map_or_else(|| "-".into(), Key::to_string)
    }

    /// The keys that do `action`, in the order they were given.
    fn bound(&self, action: Action) -> Vec<Key> {
        let mut bound: Vec<(usize, String, Key)> = self
            .keys
            .iter()
            .filter(|(_, a)| **a == action)
            .map(|(k, _)| (self.order(action, k), k.to_string(), *k))
            .collect();
        bound.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        bound.into_iter().map(|(_, _, k)| k).collect()
    }

    /// Where `key` stands among the keys of `action` as the defaults list
    /// them (configured keys sort by their text).
    fn order(&self, action: Action, key: &Key) -> usize {
        let default = DEFAULTS.iter().find(|(a, _, _)| *a == action).map_or("", |(_, _, d)| d);
        default
            .split_whitespace()
            .position(|part| Key::parse(part).ok().as_ref() == Some(key))
            .unwrap_or(usize::MAX)
    }

    pub fn action(&self, event: &KeyEvent) -> Option<Action> {
        self.keys.get(&Key::of(event)).copied()
    }

    pub fn is_prefix(&self, event: &KeyEvent) -> bool {
        Key::of(event) == self.prefix
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_entries_replace_the_defaults_of_their_action() {
        let overrides = HashMap::from([
            ("new".to_string(), "ctrl-n".to_string()),
            ("prefix".into(), "ctrl-b".into()),
        ]);
        let map = Keymap::from_config(&overrides).unwrap();
        let n = KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE);
        let ctrl_n = KeyEvent::new(KeyCode::Char('n'), KeyModifiers::CONTROL);
        assert_eq!(map.action(&n), None);
        assert_eq!(map.action(&ctrl_n), Some(Action::New));
        assert!(map.is_prefix(&KeyEvent::new(KeyCode::Char('b'), KeyModifiers::CONTROL)));
        assert!(Keymap::from_config(&HashMap::from([("nope".to_string(), "x".to_string())])).is_err());
        assert!(Keymap::from_config(&HashMap::from([("new".to_string(), "ctrl-".to_string())])).is_err());
        assert!(map.shadowed.is_empty(), "{:?}", map.shadowed);
    }

    #[test]
    fn a_key_given_to_two_actions_is_reported_and_the_configured_one_wins() {
        let map = Keymap::from_config(&HashMap::from([("new".to_string(), "N".to_string())])).unwrap();
        let big_n = KeyEvent::new(KeyCode::Char('N'), KeyModifiers::SHIFT);
        assert_eq!(map.action(&big_n), Some(Action::New));
        assert_eq!(map.shadowed, ["N: new, not deny"]);
        assert_eq!(map.keys_of(Action::Deny), "-");
        assert_eq!(map.key_of(Action::New), "N");
        // The prefix shadows a NORMAL key too.
        let map = Keymap::from_config(&HashMap::from([("prefix".to_string(), "x".to_string())])).unwrap();
        assert_eq!(map.shadowed, ["x: both the prefix and cancel"]);
        // Defaults, in their own order.
        let map = Keymap::default();
        assert_eq!(map.keys_of(Action::Down), "j/↓");
        assert_eq!(map.keys_of(Action::Focus), "Enter/i");
        assert_eq!(map.key_of(Action::Filter), "/");
        assert!(map.shadowed.is_empty(), "{:?}", map.shadowed);
    }
}
