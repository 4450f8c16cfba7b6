//! What a frame measured as it drew: where the tree, the side panel and
//! the panes went (for the mouse and for keys that move by a page) and
//! how far what was drawn can scroll. `view::render` returns it from a
//! borrowed app; `App::drawn` keeps it once the frame is done.

use super::app::App;

/// Where a full frame put things, and what it found of their sizes. A
/// field left `None` was not drawn this frame and keeps the last value.
#[derive(Debug, Clone, Default)]
pub struct Hits {
    /// The layout below the bars ran: not a too-small window, not full
    /// screen. Only then are the tree's and side panel's places new.
    pub(super) laid_out: bool,
    /// The tree's rows (x, y, width, height) and the index of the first
    /// row shown, where the tree listed runs.
    pub(super) tree: Option<([u16; 4], usize)>,
    /// The side panel's box, for clicks on its tab titles.
    pub(super) side: Option<[u16; 4]>,
    /// Each pane's screen (x, y, width, height), for the mouse and for
    /// pane-only frames (`echo.rs`).
    pub(super) panes: Vec<(String, [u16; 4])>,
    /// Each pane's inside (rows, cols), for its run's PTY size.
    pub(super) pane_sizes: Vec<(String, u16, u16)>,
    /// The tree's width (`view::tree_width`), kept while a filter is typed.
    pub(super) tree_width: Option<u16>,
    /// Whether the window was wide enough for the side panel beside the
    /// panes by default.
    pub(super) side_beside_by_width: Option<bool>,
    /// How far the side panel can scroll: its lines as drawn (wrapped)
    /// less its height.
    pub(super) side_scroll_max: Option<u16>,
    /// How far the help overlay can scroll, where it does not fit.
    pub(super) help_scroll_max: Option<u16>,
    /// The line after the last one copy mode showed (the view stays put
    /// while its cursor moves within it).
    pub(super) copy_view_end: Option<usize>,
    /// Full screen was asked with no run selected: it ends.
    pub(super) fullscreen_gone: bool,
}

/// What the last frames measured, as the app keeps it.
#[derive(Debug, Clone)]
pub(super) struct Measured {
    pub(super) tree: Option<([u16; 4], usize)>,
    pub(super) side: Option<[u16; 4]>,
    pub(super) panes: Vec<(String, [u16; 4])>,
    pub(super) tree_width: u16,
    pub(super) side_beside_by_width: bool,
    pub(super) side_scroll_max: u16,
    pub(super) help_scroll_max: u16,
}

impl Default for Measured {
    fn default() -> Self {
        Measured {
            tree: None,
            side: None,
            panes: Vec::new(),
            tree_width: 0,
            side_beside_by_width: false,
            // Not drawn yet: nothing stops a scroll.
            side_scroll_max: u16::MAX,
            help_scroll_max: 0,
        }
    }
}

impl App {
    /// Keeps what a frame measured; the panes it laid out resize their runs.
    pub fn drawn(&mut self, hits: Hits) {
        let m = &mut self.measured;
        if hits.laid_out {
            m.tree = hits.tree;
            m.side = hits.side;
        }
        m.panes = hits.panes;
        m.tree_width = hits.tree_width.unwrap_or(m.tree_width);
        m.side_beside_by_width = hits.side_beside_by_width.unwrap_or(m.side_beside_by_width);
        m.side_scroll_max = hits.side_scroll_max.unwrap_or(m.side_scroll_max);
        m.help_scroll_max = hits.help_scroll_max.unwrap_or(m.help_scroll_max);
        if let (Some(end), Some(copy)) = (hits.copy_view_end, self.panes.copy.as_mut()) {
            copy.view_end = end;
        }
        if hits.fullscreen_gone {
            self.panes.fullscreen = false;
        }
        if !hits.pane_sizes.is_empty() {
            self.panes_laid_out(hits.pane_sizes);
        }
    }

    /// Where each pane's screen was drawn last (x, y, width, height).
    pub fn pane_rects(&self) -> &[(String, [u16; 4])] {
        &self.measured.panes
    }

    /// How far the side panel could scroll as last drawn.
    pub fn side_scroll_max(&self) -> u16 {
        self.measured.side_scroll_max
    }

    /// The tree's width as last laid out.
    pub fn tree_width(&self) -> u16 {
        self.measured.tree_width
    }
}
