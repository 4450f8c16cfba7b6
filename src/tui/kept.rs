//! What the TUI showed when it was closed, shown again when it opens: the
//! layout, the side panel and its tab, the selected run. Kept in
//! `$AGENTS_HOME/tui.json`; nothing of a run's output or environment.

use serde::{Deserialize, Serialize};

use super::app::{App, Layout, Tab};
use crate::paths::Paths;

#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Kept {
    pub layout: String,
    pub tab: String,
    pub side_shown: Option<bool>,
    pub run: Option<String>,
}

impl Kept {
    pub fn of(app: &App) -> Kept {
        Kept {
            layout: match app.panes.layout {
                Layout::Single => "single",
                Layout::Split => "split",
                Layout::Grid => "grid",
            }
            .into(),
            tab: app.side.tab.title().to_lowercase(),
            side_shown: app.side.shown,
            run: app.selected_run().map(|r| r.id.clone()),
        }
    }

    /// Onto a new app; what does not parse (an older or newer file) is left
    /// at its default.
    pub fn apply(self, app: &mut App) {
        app.panes.layout = match self.layout.as_str() {
            "split" => Layout::Split,
            "grid" => Layout::Grid,
            _ => Layout::Single,
        };
        if let Some(tab) = Tab::ALL.into_iter().find(|t| t.title().to_lowercase() == self.tab) {
            app.side.tab = tab;
        }
        app.side.shown = self.side_shown;
        app.tree.reselect = self.run;
    }

    pub fn load(paths: &Paths) -> Kept {
        std::fs::read(paths.tui_state())
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Written whole or not at all (a temporary file renamed over it); a
    /// failure costs only the next opening's layout.
    pub fn save(&self, paths: &Paths) {
        let path = paths.tui_state();
        let temporary = path.with_extension("json.tmp");
        let Ok(text) = serde_json::to_vec_pretty(self) else {
            return;
        };
        if std::fs::write(&temporary, text).is_ok() {
            let _ = std::fs::rename(&temporary, &path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_tab_side_and_selection_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::at(dir.path().to_path_buf());
        let kept = Kept {
            layout: "grid".into(),
            tab: "lineage".into(),
            side_shown: Some(false),
            run: Some("01A".into()),
        };
        kept.save(&paths);
        let mut app = App::new();
        Kept::load(&paths).apply(&mut app);
        assert_eq!(app.panes.layout, Layout::Grid);
        assert_eq!(app.side.tab, Tab::Lineage);
        assert_eq!(app.side.shown, Some(false));
        assert_eq!(app.tree.reselect.as_deref(), Some("01A"));
        // A file from elsewhere leaves the defaults.
        std::fs::write(paths.tui_state(), b"{\"layout\": 7}").unwrap();
        assert_eq!(Kept::load(&paths), Kept::default());
    }
}
