//! Where a client is, as a geo database tells it: country, continent,
//! subdivision and autonomous system. Codes are short ASCII strings held
//! inline, so a place is `Copy` and a lookup allocates nothing.

use std::fmt;

/// An ISO code of at most [`GeoCode::MAX`] ASCII letters or digits, upper
/// case (`DE`, `EU`, `BE`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct GeoCode {
    bytes: [u8; GeoCode::MAX],
    len: u8,
}

impl GeoCode {
    /// Longest code kept (subdivision codes have up to three characters).
    pub const MAX: usize = 3;

    /// The code of `text`, upper-cased, or `None` when it is empty, longer
    /// than [`GeoCode::MAX`] or not ASCII letters and digits.
    pub fn new(text: &str) -> Option<GeoCode> {
        let raw = text.as_bytes();
        if raw.is_empty() || raw.len() > Self::MAX || !raw.iter().all(u8::is_ascii_alphanumeric) {
            return None;
        }
        let mut bytes = [0; Self::MAX];
        for (b, r) in bytes.iter_mut().zip(raw) {
            *b = r.to_ascii_uppercase();
        }
        Some(GeoCode {
            bytes,
            len: raw.len() as u8,
        })
    }

    /// The code as text.
    pub fn as_str(&self) -> &str {
        // Only ASCII alphanumerics are ever stored.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

impl fmt::Debug for GeoCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for GeoCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for GeoCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What a geo database knows of a client address (each part if it knows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Place {
    /// ISO 3166-1 alpha-2 country (`DE`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<GeoCode>,
    /// Continent code (`EU`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continent: Option<GeoCode>,
    /// The first (largest) subdivision's ISO 3166-2 code within the country
    /// (`BE` of `DE-BE`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subdivision: Option<GeoCode>,
    /// Autonomous system number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asn: Option<u32>,
}

impl Place {
    /// Nothing known.
    pub const UNKNOWN: Place = Place {
        country: None,
        continent: None,
        subdivision: None,
        asn: None,
    };

    /// True when nothing is known.
    pub fn is_unknown(&self) -> bool {
        *self == Place::UNKNOWN
    }

    /// Whether this place is in subdivision `code`, written `CC-SUB`.
    pub fn in_subdivision(&self, code: &str) -> bool {
        let (Some(country), Some(sub)) = (self.country, self.subdivision) else {
            return false;
        };
        code.split_once('-').is_some_and(|(c, s)| {
            c.eq_ignore_ascii_case(country.as_str()) && s.eq_ignore_ascii_case(sub.as_str())
        })
    }

    /// Fill what `self` does not know from `other` (several databases:
    /// a City file and an ASN file, say).
    pub fn merge(&mut self, other: Place) {
        self.country = self.country.or(other.country);
        self.continent = self.continent.or(other.continent);
        self.subdivision = self.subdivision.or(other.subdivision);
        self.asn = self.asn.or(other.asn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_short_upper_case_ascii() {
        assert_eq!(GeoCode::new("de").unwrap().as_str(), "DE");
        assert_eq!(GeoCode::new("BE").unwrap().as_str(), "BE");
        assert!(GeoCode::new("").is_none());
        assert!(GeoCode::new("ABCD").is_none());
        assert!(GeoCode::new("D-").is_none());
        assert!(GeoCode::new("É").is_none());
    }

    #[test]
    fn subdivisions_are_matched_with_their_country() {
        let place = Place {
            country: GeoCode::new("DE"),
            subdivision: GeoCode::new("BE"),
            ..Place::UNKNOWN
        };
        assert!(place.in_subdivision("DE-BE"));
        assert!(place.in_subdivision("de-be"));
        assert!(!place.in_subdivision("AT-BE"));
        assert!(!place.in_subdivision("DE"));
    }
}
