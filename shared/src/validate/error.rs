//! The validation error: a list of `field: rule` findings.

use std::fmt;

/// One rejected field: its path (`members[2].address`) and the rule it broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Path of the offending field, camelCase as in the API.
    pub field: String,
    /// The rule, in lower case ("must be between 0 and 1").
    pub rule: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.rule)
    }
}

/// Every finding of one validation run; never empty.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ValidationError {
    /// The findings, in field order.
    pub errors: Vec<FieldError>,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, error) in self.errors.iter().enumerate() {
            if index > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl ValidationError {
    /// A single finding.
    pub fn single(field: impl Into<String>, rule: impl Into<String>) -> Self {
        Self {
            errors: vec![FieldError {
                field: field.into(),
                rule: rule.into(),
            }],
        }
    }

    /// True when some finding names exactly this field.
    pub fn names(&self, field: &str) -> bool {
        self.errors.iter().any(|e| e.field == field)
    }
}

/// Collects findings under a field prefix.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    prefix: String,
    errors: Vec<FieldError>,
}

impl Findings {
    /// Findings whose fields are written below `prefix` (may be empty).
    pub(crate) fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
            errors: Vec::new(),
        }
    }

    /// The full path of a field under the prefix.
    pub(crate) fn path(&self, field: &str) -> String {
        if self.prefix.is_empty() {
            field.to_owned()
        } else {
            format!("{}.{}", self.prefix, field)
        }
    }

    /// Record a broken rule.
    pub(crate) fn add(&mut self, field: &str, rule: impl Into<String>) {
        let field = self.path(field);
        self.errors.push(FieldError {
            field,
            rule: rule.into(),
        });
    }

    /// Record a broken rule when `ok` is false.
    pub(crate) fn require(&mut self, ok: bool, field: &str, rule: impl Into<String>) {
        if !ok {
            self.add(field, rule);
        }
    }

    /// Take in the findings of a nested validation.
    pub(crate) fn extend(&mut self, result: Result<(), ValidationError>) {
        if let Err(err) = result {
            self.errors.extend(err.errors);
        }
    }

    /// `Ok` when nothing was found.
    pub(crate) fn finish(self) -> Result<(), ValidationError> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ValidationError {
                errors: self.errors,
            })
        }
    }
}

/// Check that `value` lies in `lo..=hi`, naming the bounds in the rule.
pub(crate) fn in_range<T: PartialOrd + fmt::Display>(
    findings: &mut Findings,
    field: &str,
    value: T,
    lo: T,
    hi: T,
) {
    if value < lo || value > hi {
        findings.add(
            field,
            format!("must be between {lo} and {hi} (got {value})"),
        );
    }
}
