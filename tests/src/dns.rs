//! Talking to the edge and the status listeners: dig (in a namespace when
//! asked), a native UDP query for tight polling loops, and a plain HTTP GET.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream, UdpSocket};
use std::process::Command;
use std::str::FromStr;
use std::time::Duration;

use hickory_proto::op::{Message, Query};
use hickory_proto::rr::{Name, RData, RecordType};

/// Run dig against `server` (inside `netns` when given); returns stdout.
pub fn dig(netns: Option<&str>, server: SocketAddr, args: &[&str]) -> String {
    let mut cmd = match netns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, "dig"]);
            c
        }
        None => Command::new("dig"),
    };
    let out = cmd
        .arg(format!("@{}", server.ip()))
        .args(["-p", &server.port().to_string(), "+time=2", "+tries=1"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("dig not runnable ({e}): apt-get install bind9-dnsutils"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `dig +short`: the answer lines, sorted (empty for NODATA or no reply).
pub fn short(netns: Option<&str>, server: SocketAddr, args: &[&str]) -> Vec<String> {
    let mut all = args.to_vec();
    all.push("+short");
    let mut lines: Vec<String> = dig(netns, server, &all)
        .lines()
        .filter(|l| !l.starts_with(';'))
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

/// The status word of a dig reply (`NOERROR`, `NXDOMAIN`, ...).
pub fn rcode(reply: &str) -> &str {
    reply
        .split("status: ")
        .nth(1)
        .and_then(|r| r.split([',', ';']).next())
        .unwrap_or("")
}

/// One A query over UDP from loopback: the addresses answered, or an error
/// when no (parsable) reply came within `timeout`.
pub fn query_a(server: SocketAddr, name: &str, timeout: Duration) -> anyhow::Result<Vec<Ipv4Addr>> {
    let socket = UdpSocket::bind("127.0.0.1:0")?;
    socket.set_read_timeout(Some(timeout))?;
    let mut q = Message::query();
    q.metadata.id = rand_id();
    q.add_query(Query::query(Name::from_str(name)?, RecordType::A));
    socket.send_to(&q.to_vec()?, server)?;
    let mut buf = [0u8; 4096];
    loop {
        let (n, _) = socket.recv_from(&mut buf)?;
        let reply = Message::from_vec(&buf[..n])?;
        if reply.metadata.id != q.metadata.id {
            continue;
        }
        return Ok(reply
            .answers
            .iter()
            .filter_map(|r| match &r.data {
                RData::A(a) => Some(a.0),
                _ => None,
            })
            .collect());
    }
}

/// A query id that differs between calls (not security-relevant here).
fn rand_id() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A plain HTTP/1.1 GET: (status code, body); (0, "") when unreachable.
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let (code, _, body) = http_get_with_headers(addr, path);
    (code, body)
}

/// `GET path` over HTTP/1.1; (status, response headers, body). Status 0
/// when the server cannot be reached.
pub fn http_get_with_headers(addr: SocketAddr, path: &str) -> (u16, String, String) {
    http_request(addr, "GET", path, &[], "")
}

/// `METHOD path` over HTTP/1.1 with `headers` and a JSON `body`;
/// (status, response headers, body). Status 0 when unreachable.
pub fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(5)) else {
        return (0, String::new(), String::new());
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request += &format!("{name}: {value}\r\n");
    }
    if !body.is_empty() {
        request += &format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        );
    }
    request += "\r\n";
    request += body;
    if s.write_all(request.as_bytes()).is_err() {
        return (0, String::new(), String::new());
    }
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    let code = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (code, head.to_owned(), body.to_owned())
}

/// Sign in to the web UI on the HTTP listener `http` with `token`; the
/// session cookie (`gslb_session=…`).
pub fn ui_session(http: SocketAddr, token: &str) -> String {
    let body = serde_json::json!({ "token": token }).to_string();
    let (code, headers, text) =
        http_request(http, "POST", "/ui/session", &[("x-gslb-ui", "1")], &body);
    assert!(code < 300, "sign-in: {code} {text}");
    let cookie = headers
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("set-cookie:"))
        .expect("a session cookie");
    cookie["set-cookie:".len()..]
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned()
}
