//! Keys typed into a pane one at a time, each timed from the write to the
//! terminal until its echo is on screen where it belongs; and the figures
//! of such timings. Shared by `tui_latency` and `web_load`.

use std::time::{Duration, Instant};

use agents::term::Terminal;

use super::{Home, Pty, quantile};

/// Characters typed on one line before it is erased.
const LINE: u16 = 40;
/// Keys typed first and not counted.
pub const WARMUP_KEYS: usize = 20;
const CTRL_U: u8 = 0x15;

fn cell_is(term: &Terminal, row: u16, col: u16, ch: u8) -> bool {
    term.cell(row, col).is_some_and(|c| c.text().as_bytes() == [ch])
}

fn cell_is_blank(term: &Terminal, row: u16, col: u16) -> bool {
    term.cell(row, col).is_none_or(|c| c.text().is_empty())
}

/// Types `keys` characters into the pane whose first cell is `origin`;
/// returns each one's latency in ms.
pub fn type_and_time(pty: &mut Pty, origin: (u16, u16), keys: usize) -> Vec<f64> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let (row, left) = origin;
    let mut col = 0u16;
    let mut latencies = Vec::with_capacity(keys);
    // What an earlier round left on the line, erased.
    pty.press(&[CTRL_U]);
    pty.wait("the line blank", |t| {
        (left..left + LINE).all(|c| cell_is_blank(t, row, c))
    });
    for k in 0..keys + WARMUP_KEYS {
        if col == LINE {
            pty.press(&[CTRL_U]);
            pty.wait("the line erased", |t| {
                (left..left + LINE).all(|c| cell_is_blank(t, row, c))
            });
            col = 0;
        }
        // Irregular typing, 3–15 ms between keys.
        std::thread::sleep(Duration::from_millis(3 + (k as u64 * 7) % 13));
        pty.drain();
        let ch = ALPHABET[k % ALPHABET.len()];
        assert!(
            !cell_is(&pty.term, row, left + col, ch),
            "the pane is not blank where the key should land"
        );
        let sent = Instant::now();
        pty.press(&[ch]);
        let echoed = pty.wait("the typed character", |t| cell_is(t, row, left + col, ch));
        if k >= WARMUP_KEYS {
            latencies.push(echoed.saturating_duration_since(sent).as_secs_f64() * 1000.0);
        }
        col += 1;
    }
    latencies
}

/// The inside of the focused pane, which the TUI draws with a thick border.
pub fn focused_pane_origin(term: &Terminal) -> Option<(u16, u16)> {
    let (rows, cols) = term.size();
    (0..rows).find_map(|r| {
        (0..cols)
            .find(|&c| term.cell(r, c).is_some_and(|cell| cell.text() == "┏"))
            .map(|c| (r + 1, c + 1))
    })
}

/// A number field of a verb's `--json` answer.
pub fn shown_u32(home: &Home, args: &[&str], field: &str) -> Option<u32> {
    let shown: serde_json::Value = serde_json::from_str(&home.agents(args)).ok()?;
    shown[field].as_u64().map(|n| n as u32)
}

/// A process's parent: a run's harness is its supervisor's child.
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// p50, p99, mean and max of latencies in ms.
pub struct Figures {
    pub p50: f64,
    pub p99: f64,
    pub mean: f64,
    pub max: f64,
}

pub fn figures(mut ms: Vec<f64>) -> Figures {
    ms.sort_by(f64::total_cmp);
    Figures {
        p50: quantile(&ms, 0.5),
        p99: quantile(&ms, 0.99),
        mean: ms.iter().sum::<f64>() / ms.len() as f64,
        max: ms[ms.len() - 1],
    }
}
