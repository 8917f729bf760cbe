//! Plain aligned tables for terminal output.

/// Render rows under a header, columns separated by two spaces, the last
/// column not padded.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        out.trim_end().to_owned()
    };
    let mut out = vec![line(header.to_vec())];
    for row in rows {
        out.push(line(row.iter().map(String::as_str).collect()));
    }
    out.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_align_and_trailing_space_is_trimmed() {
        let t = super::render(
            &["ID", "NAME"],
            &[vec!["1".into(), "web".into()], vec!["10".into(), "".into()]],
        );
        assert_eq!(t, "ID  NAME\n1   web\n10\n");
    }
}
