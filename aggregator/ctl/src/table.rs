//! Plain aligned tables for terminal output. Cells are made safe for a
//! terminal (control, bidirectional and zero-width characters escaped) and
//! cut at [`MAX_CELL`] characters; padding is written out, never through a
//! format width (which panics past 65,535).

/// Most characters shown of one cell; longer ones end in `…`.
pub const MAX_CELL: usize = 120;

use gslb_shared::validate::invisible;

/// A cell as shown: every character a terminal would act on or hide is
/// escaped (`\u{202e}`), and the result cut at [`MAX_CELL`] characters.
pub fn clean(cell: &str) -> String {
    escape(cell, MAX_CELL)
}

/// A line of text as shown: escaped as [`clean`] does, never cut.
pub fn clean_line(text: &str) -> String {
    escape(text, usize::MAX)
}

/// `text` with every character a terminal would act on or hide escaped,
/// cut after `limit` characters.
fn escape(text: &str, limit: usize) -> String {
    let mut out = String::new();
    for (shown, c) in text.chars().enumerate() {
        if shown >= limit {
            out.push('…');
            break;
        }
        if c.is_control() || invisible(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// Render rows under a header, columns separated by two spaces, the last
/// column not padded.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let columns = header.len();
    let clean_row = |row: &[String]| -> Vec<String> { row.iter().map(|c| clean(c)).collect() };
    let header: Vec<String> = header.iter().map(|h| clean(h)).collect();
    let rows: Vec<Vec<String>> = rows.iter().map(|r| clean_row(r)).collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            out.push_str(cell);
            if i + 1 < cells.len() {
                let width = widths.get(i).copied().unwrap_or(0);
                let pad = width.saturating_sub(cell.chars().count()) + 2;
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.trim_end().to_owned()
    };
    let mut out = vec![line(&header)];
    for row in &rows {
        out.push(line(row));
    }
    out.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    #[test]
    fn columns_align_and_trailing_space_is_trimmed() {
        let t = super::render(
            &["ID", "NAME"],
            &[vec!["1".into(), "web".into()], vec!["10".into(), "".into()]],
        );
        assert_eq!(t, "ID  NAME\n1   web\n10\n");
    }

    #[test]
    fn a_64_ki_cell_and_hidden_characters_are_shown_safely() {
        let t = super::render(
            &["ID", "NAME"],
            &[vec![
                "x".repeat(65_536),
                "a\u{202e}b\u{200b}\x1b[31m".into(),
            ]],
        );
        assert!(t.lines().all(|l| l.chars().count() < 400), "{t}");
        assert!(t.contains("a\\u{202e}b\\u{200b}\\u{1b}[31m"), "{t}");
    }

    proptest! {
        /// Any cells of any width and content render without a panic, one
        /// line per row, and nothing a terminal would act on gets through.
        #[test]
        fn any_input_renders(
            rows in prop::collection::vec(prop::collection::vec(any::<String>(), 0..6), 0..8),
            wide in 0usize..100_000,
        ) {
            let mut rows = rows;
            if let Some(first) = rows.first_mut() {
                first.push("w".repeat(wide));
            }
            let t = super::render(&["A", "B", "C"], &rows);
            prop_assert_eq!(t.lines().count(), rows.len() + 1);
            prop_assert!(!t.chars().any(|c| (c.is_control() && c != '\n') || super::invisible(c)));
        }
    }
}
