//! Free-text names and identifier tokens.

use super::error::Findings;
use crate::model::{LocationId, Region};

/// Longest human name.
pub const MAX_NAME_LEN: usize = 64;

/// A human name: 1 to 64 characters, no control, bidirectional or
/// zero-width characters, no leading or trailing whitespace, and not
/// mixing Latin letters with Greek or Cyrillic ones (the look-alikes of a
/// name that reads the same). Names of one kind are compared by
/// [`name_key`].
pub(crate) fn human_name(findings: &mut Findings, field: &str, name: &str) {
    if name.trim().is_empty() {
        findings.add(field, "must not be empty");
    } else if name.trim() != name {
        findings.add(field, "must not start or end with whitespace");
    } else if mixes_scripts(name) {
        findings.add(
            field,
            "must not mix Latin letters with Greek or Cyrillic ones (look-alike names)",
        );
    } else if name.chars().count() > MAX_NAME_LEN {
        findings.add(field, format!("must be at most {MAX_NAME_LEN} characters"));
    } else if name.chars().any(char::is_control) {
        findings.add(field, "must not contain control characters");
    } else if name.chars().any(invisible) {
        findings.add(
            field,
            "must not contain bidirectional controls or zero-width characters",
        );
    }
}

/// The key names of one kind are compared by: compatibility-normalised
/// (NFKC: composed and decomposed forms, full-width letters alike) and
/// lower-cased, so `Web`, `web` and `ｗｅｂ` are one name.
pub fn name_key(name: &str) -> String {
    icu_normalizer::ComposingNormalizerBorrowed::new_nfkc()
        .normalize(name)
        .to_lowercase()
}

/// Whether `name` has Latin letters beside Greek or Cyrillic ones.
fn mixes_scripts(name: &str) -> bool {
    let latin = name.chars().any(|c| {
        c.is_ascii_alphabetic() || (c.is_alphabetic() && ('\u{c0}'..='\u{24f}').contains(&c))
    });
    let other = name
        .chars()
        .any(|c| ('\u{370}'..='\u{3ff}').contains(&c) || ('\u{400}'..='\u{52f}').contains(&c));
    latin && other
}

/// Characters that change how the text around them is shown without being
/// seen: bidirectional controls and zero-width characters.
pub fn invisible(c: char) -> bool {
    matches!(c,
        '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}'
        | '\u{061c}'
        | '\u{00ad}'
        | '\u{034f}'
        | '\u{180e}'
    )
}

fn token_rule(text: &str) -> Option<&'static str> {
    if text.is_empty() || text.len() > 32 {
        return Some("must be 1 to 32 characters");
    }
    if !text
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
    {
        return Some("may contain only lower-case letters, digits, '-' and '_'");
    }
    None
}

/// Longest edge id.
pub const MAX_EDGE_ID: usize = 128;

/// An edge id: 1 to [`MAX_EDGE_ID`] of `A-Z a-z 0-9 . _ : -` (a host or
/// pod name), so no two rows read alike; checked by the edge at start and
/// by the aggregator on every call.
pub fn edge_id(id: &str) -> Result<(), String> {
    let allowed = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-');
    if id.is_empty() || id.len() > MAX_EDGE_ID || !id.bytes().all(allowed) {
        return Err(format!(
            "must be 1 to {MAX_EDGE_ID} characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'"
        ));
    }
    Ok(())
}

/// A location id such as `fra1`.
pub fn location_id(location: &LocationId) -> Result<(), String> {
    token_rule(location.as_str()).map_or(Ok(()), |rule| Err(rule.to_owned()))
}

/// A region such as `eu` or `us-east`.
pub fn region(region: &Region) -> Result<(), String> {
    token_rule(region.as_str()).map_or(Ok(()), |rule| Err(rule.to_owned()))
}
