//! Text wrapped at spaces into lines ahead of drawing, where the lines
//! must be counted before they are drawn: the Changes tab's head (a hunk's
//! line is its place) and the help overlay (each entry's text hung under
//! its first line, the box as tall as its lines).

use ratatui::text::{Line, Span};

/// Words wrapped to `width` columns, each keeping its span's style (a word
/// wider than a line broken where the line ends): one line of these is one
/// line on the screen, so what follows keeps its place.
pub fn wrapped(spans: Vec<Span<'static>>, width: usize) -> Vec<Line<'static>> {
    use unicode_width::UnicodeWidthStr;
    let width = width.max(1);
    let mut out = vec![Line::default()];
    let mut used = 0;
    for span in spans {
        for word in span.content.split_inclusive(' ') {
            let wide = word.trim_end().width();
            if used > 0 && used + wide > width {
                out.push(Line::default());
                used = 0;
            }
            let mut rest = word;
            // Pieces of a word no line holds whole.
            while used + rest.trim_end().width() > width {
                let mut cut = 0;
                for (i, ch) in rest.char_indices() {
                    if used + rest[..i + ch.len_utf8()].width() > width {
                        break;
                    }
                    cut = i + ch.len_utf8();
                }
                let cut = cut.max(rest.chars().next().map_or(0, char::len_utf8));
                if let Some(line) = out.last_mut() {
                    line.push_span(Span::styled(rest[..cut].to_string(), span.style));
                }
                out.push(Line::default());
                used = 0;
                rest = &rest[cut..];
            }
            if let Some(line) = out.last_mut() {
                line.push_span(Span::styled(rest.to_string(), span.style));
            }
            used += rest.width();
        }
    }
    out
}

/// `text` after `prefix`, its further lines indented as wide as the prefix:
/// a key or glyph beside what it does.
pub fn hung(prefix: Span<'static>, text: Span<'static>, width: usize) -> Vec<Line<'static>> {
    let indent = prefix.width();
    let mut lines = wrapped(vec![text], width.saturating_sub(indent).max(1));
    for (i, line) in lines.iter_mut().enumerate() {
        let first = match i {
            0 => prefix.clone(),
            _ => Span::raw(" ".repeat(indent)),
        };
        line.spans.insert(0, first);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.to_string()).collect::<String>())
            .collect()
    }

    #[test]
    fn words_wrap_at_spaces_and_only_a_word_no_line_holds_is_broken() {
        let said = vec![Span::raw("M merge into main · { } hunks · c comment")];
        assert_eq!(
            text(&wrapped(said, 20)),
            ["M merge into main · ", "{ } hunks · c ", "comment"]
        );
        let long = vec![Span::raw("agents/a-very-long-branch"), Span::raw(" · 2 commits")];
        assert_eq!(
            text(&wrapped(long, 10)),
            ["agents/a-v", "ery-long-b", "ranch · 2 ", "commits"]
        );
    }

    #[test]
    fn a_hung_entry_continues_under_its_text() {
        let lines = hung(Span::raw("  q  "), Span::raw("quit (runs keep going)"), 16);
        assert_eq!(text(&lines), ["  q  quit (runs ", "     keep going)"]);
    }
}
