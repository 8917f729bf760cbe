//! HTTP check targets (seed 004): the path is a relative reference resolved
//! against the member, header names are tokens, values carry no control
//! characters but tab, and request-framing headers are refused.

/// Longest accepted path, in bytes.
pub const MAX_PATH_LEN: usize = 2048;
/// Longest accepted header value, in bytes.
pub const MAX_HEADER_VALUE_LEN: usize = 4096;

/// Why an HTTP target part was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpTargetError {
    /// Empty path.
    #[error("must not be empty")]
    EmptyPath,
    /// The path does not start with '/'.
    #[error("must start with '/' (a relative reference such as /health?x=1)")]
    NotAbsolutePath,
    /// `scheme:` before the first '/'.
    #[error("must not contain a scheme")]
    Scheme,
    /// `//authority`.
    #[error("must not contain an authority (host, port or user information)")]
    Authority,
    /// `#fragment`.
    #[error("must not contain a fragment")]
    Fragment,
    /// White space, control or non-ASCII characters.
    #[error("must contain only visible ASCII characters (percent-encode the rest)")]
    BadPathCharacter,
    /// Longer than [`MAX_PATH_LEN`].
    #[error("must be at most {MAX_PATH_LEN} bytes")]
    PathTooLong,
    /// Name is not an RFC 9110 token.
    #[error("header name {0:?} must be a token (letters, digits and !#$%&'*+-.^_`|~)")]
    HeaderName(String),
    /// `Content-Length` or `Transfer-Encoding`.
    #[error("header {0:?} frames the request and cannot be set by a check")]
    FramingHeader(String),
    /// A control character other than tab in a value.
    #[error("header value must not contain control characters other than tab")]
    HeaderValue,
    /// Value longer than [`MAX_HEADER_VALUE_LEN`].
    #[error("header value must be at most {MAX_HEADER_VALUE_LEN} bytes")]
    HeaderValueTooLong,
    /// Method is not one of the supported ones.
    #[error("method {0:?} must be one of GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH")]
    Method(String),
}

/// Accept a path-and-query relative reference such as `/health?deep=1`.
pub fn http_path(path: &str) -> Result<(), HttpTargetError> {
    if path.is_empty() {
        return Err(HttpTargetError::EmptyPath);
    }
    if path.len() > MAX_PATH_LEN {
        return Err(HttpTargetError::PathTooLong);
    }
    if !path.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(HttpTargetError::BadPathCharacter);
    }
    if path.contains('#') {
        return Err(HttpTargetError::Fragment);
    }
    if path.starts_with("//") {
        return Err(HttpTargetError::Authority);
    }
    if !path.starts_with('/') {
        let head = path.split(['/', '?']).next().unwrap_or("");
        if head.contains(':') {
            return Err(HttpTargetError::Scheme);
        }
        return Err(HttpTargetError::NotAbsolutePath);
    }
    Ok(())
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Accept a custom header.
pub fn header(name: &str, value: &str) -> Result<(), HttpTargetError> {
    if name.is_empty() || !name.bytes().all(is_tchar) {
        return Err(HttpTargetError::HeaderName(name.to_owned()));
    }
    if name.eq_ignore_ascii_case("content-length") || name.eq_ignore_ascii_case("transfer-encoding")
    {
        return Err(HttpTargetError::FramingHeader(name.to_owned()));
    }
    if value.len() > MAX_HEADER_VALUE_LEN {
        return Err(HttpTargetError::HeaderValueTooLong);
    }
    if value.chars().any(|c| c != '\t' && c.is_control()) {
        return Err(HttpTargetError::HeaderValue);
    }
    Ok(())
}

/// Accept a request method.
pub fn method(method: &str) -> Result<(), HttpTargetError> {
    match method {
        "GET" | "HEAD" | "POST" | "PUT" | "DELETE" | "OPTIONS" | "PATCH" => Ok(()),
        other => Err(HttpTargetError::Method(other.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_accepts_relative_references_with_query() {
        for ok in ["/", "/health", "/a/b?x=1&y=%20", "/status;v=1"] {
            assert_eq!(http_path(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn path_refuses_scheme_authority_fragment_and_bad_bytes() {
        let cases = [
            ("", HttpTargetError::EmptyPath),
            ("health", HttpTargetError::NotAbsolutePath),
            ("http://evil/x", HttpTargetError::Scheme),
            ("javascript:alert(1)", HttpTargetError::Scheme),
            ("//evil.example/x", HttpTargetError::Authority),
            ("/x#frag", HttpTargetError::Fragment),
            ("/a b", HttpTargetError::BadPathCharacter),
            ("/a\r\nHost: x", HttpTargetError::BadPathCharacter),
            ("/é", HttpTargetError::BadPathCharacter),
        ];
        for (path, expected) in cases {
            assert_eq!(http_path(path), Err(expected), "{path:?}");
        }
        assert_eq!(
            http_path(&format!("/{}", "a".repeat(MAX_PATH_LEN))),
            Err(HttpTargetError::PathTooLong)
        );
    }

    #[test]
    fn headers_follow_token_and_control_rules() {
        assert_eq!(header("Host", "api.example.com"), Ok(()));
        assert_eq!(header("Authorization", "Bearer\tx"), Ok(()));
        assert!(matches!(
            header("Bad Name", "x"),
            Err(HttpTargetError::HeaderName(_))
        ));
        assert!(matches!(
            header("", "x"),
            Err(HttpTargetError::HeaderName(_))
        ));
        assert!(matches!(
            header("X:y", "x"),
            Err(HttpTargetError::HeaderName(_))
        ));
        assert!(matches!(
            header("content-length", "1"),
            Err(HttpTargetError::FramingHeader(_))
        ));
        assert!(matches!(
            header("Transfer-Encoding", "chunked"),
            Err(HttpTargetError::FramingHeader(_))
        ));
        assert_eq!(
            header("X-A", "a\r\nInjected: 1"),
            Err(HttpTargetError::HeaderValue)
        );
        assert_eq!(header("X-A", "a\u{7f}"), Err(HttpTargetError::HeaderValue));
    }

    #[test]
    fn methods_are_a_closed_set() {
        assert_eq!(method("HEAD"), Ok(()));
        assert!(method("get").is_err());
        assert!(method("CONNECT").is_err());
    }
}
