//! Server-sent events framed once and shared: the live view's first
//! message is megabytes at 100,000 members and every open stream sends the
//! same text, so the hub frames each message once and every stream sends
//! a handle to the same bytes.

use std::convert::Infallible;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use tokio::sync::mpsc;

/// A comment line: keeps an idle connection open, and browsers ignore it.
pub const KEEP_ALIVE: Bytes = Bytes::from_static(b":\n\n");

/// One event, framed: `event: NAME`, its data lines, a blank line.
#[derive(Debug, Clone)]
pub struct Framed {
    bytes: Bytes,
    name: &'static str,
    /// Where the data starts.
    head: usize,
}

impl Framed {
    /// Event `name` carrying `data`. Data with line breaks is sent as one
    /// `data:` line per line, as the format requires.
    pub fn new(name: &'static str, data: &str) -> Framed {
        let head = format!("event: {name}\ndata: ");
        let mut text = String::with_capacity(head.len() + data.len() + 2);
        text.push_str(&head);
        if data.contains(['\n', '\r']) {
            let lines = data.split("\r\n").flat_map(|l| l.split(['\n', '\r']));
            for (i, line) in lines.enumerate() {
                if i > 0 {
                    text.push_str("\ndata: ");
                }
                text.push_str(line);
            }
        } else {
            text.push_str(data);
        }
        text.push_str("\n\n");
        Framed {
            bytes: Bytes::from(text),
            name,
            head: head.len(),
        }
    }

    /// Event `name` carrying `value` as JSON, written straight into the
    /// frame (no second copy of a megabyte text). Compact JSON never has a
    /// line break: strings escape theirs.
    pub fn json<T: serde::Serialize>(name: &'static str, value: &T) -> Framed {
        let head = format!("event: {name}\ndata: ");
        let mut bytes = head.clone().into_bytes();
        if serde_json::to_writer(&mut bytes, value).is_err() {
            bytes.truncate(head.len());
        }
        bytes.extend_from_slice(b"\n\n");
        Framed {
            bytes: Bytes::from(bytes),
            name,
            head: head.len(),
        }
    }

    /// The event's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The data as framed (for JSON, which has no line breaks, the data
    /// itself).
    pub fn data(&self) -> &str {
        let data = &self.bytes[self.head..self.bytes.len() - 2];
        // Built from `&str` with ASCII framing: always UTF-8.
        std::str::from_utf8(data).unwrap_or_default()
    }

    /// The bytes to send: a handle, not a copy.
    pub fn bytes(&self) -> Bytes {
        self.bytes.clone()
    }
}

/// A `text/event-stream` response whose body is what `rx` yields.
pub fn response(rx: mpsc::Receiver<Bytes>) -> Response {
    let stream = tokio_stream::StreamExt::map(
        tokio_stream::wrappers::ReceiverStream::new(rx),
        Ok::<_, Infallible>,
    );
    let mut response = Body::from_stream(stream).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(framed: &Framed) -> String {
        String::from_utf8(framed.bytes().to_vec()).unwrap()
    }

    #[test]
    fn an_event_is_its_name_its_data_and_a_blank_line() {
        let framed = Framed::new("changes", "{\"seq\":3}");
        assert_eq!(text(&framed), "event: changes\ndata: {\"seq\":3}\n\n");
        assert_eq!(framed.data(), "{\"seq\":3}");
        assert_eq!(text(&Framed::new("tick", "")), "event: tick\ndata: \n\n");
    }

    #[test]
    fn json_is_framed_as_one_data_line() {
        let framed = Framed::json("changes", &serde_json::json!({"note": "a\nb"}));
        assert_eq!(
            text(&framed),
            "event: changes\ndata: {\"note\":\"a\\nb\"}\n\n"
        );
        assert_eq!(framed.data(), "{\"note\":\"a\\nb\"}");
    }

    #[test]
    fn each_line_of_the_data_is_a_data_line() {
        assert_eq!(
            text(&Framed::new("tick", "a\nb\r\nc\rd")),
            "event: tick\ndata: a\ndata: b\ndata: c\ndata: d\n\n"
        );
    }

    #[test]
    fn every_stream_sends_the_same_bytes() {
        let framed = Framed::new("snapshot", "{\"members\":[]}");
        assert_eq!(framed.bytes().as_ptr(), framed.clone().bytes().as_ptr());
    }
}
