//! `gslbctl query`: one DNS question to a server, as a client in a chosen
//! subnet would ask it (EDNS Client Subnet), so the quickstart and an
//! operator can see a DNS edge's answers with nothing but this binary.
//! UDP first, TCP when the reply is truncated (or with `--tcp`).

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::str::FromStr;
use std::time::Duration;

use hickory_proto::op::{Edns, Message, Query};
use hickory_proto::rr::rdata::opt::{ClientSubnet, EdnsOption};
use hickory_proto::rr::{Name, RecordType};

use super::CtlError;

/// One question and where to send it.
#[derive(Debug, Clone)]
pub struct Question {
    /// The name asked for.
    pub name: String,
    /// Its type (A, AAAA, TXT, ...).
    pub rtype: String,
    /// The server, `IP:PORT`.
    pub server: SocketAddr,
    /// The client subnet to send, `ADDRESS/PREFIX`.
    pub subnet: Option<String>,
    /// Ask over TCP from the start.
    pub tcp: bool,
    /// Give up after this long.
    pub timeout: Duration,
}

fn invalid(field: &str, rule: impl std::fmt::Display) -> CtlError {
    CtlError::Input(format!("{field}: {rule}"))
}

/// The subnet as (address, prefix), the prefix within the family's bits.
fn subnet(text: &str) -> Result<ClientSubnet, CtlError> {
    let net: ipnet::IpNet = text
        .parse()
        .map_err(|e| invalid("--subnet", format!("{text:?} is no ADDRESS/PREFIX ({e})")))?;
    let (address, prefix): (IpAddr, u8) = (net.network(), net.prefix_len());
    Ok(ClientSubnet::new(address, prefix, 0))
}

fn question(q: &Question) -> Result<Message, CtlError> {
    let name = Name::from_str(&q.name)
        .map_err(|e| invalid("name", format!("{:?} is no DNS name ({e})", q.name)))?;
    let rtype = RecordType::from_str(&q.rtype.to_ascii_uppercase())
        .map_err(|_| invalid("--type", format!("{:?} is no record type", q.rtype)))?;
    let mut m = Message::query();
    m.metadata.id = rand::random();
    m.add_query(Query::query(name, rtype));
    let mut edns = Edns::new();
    edns.set_max_payload(1232);
    if let Some(text) = &q.subnet {
        edns.options_mut().insert(EdnsOption::Subnet(subnet(text)?));
    }
    m.set_edns(edns);
    Ok(m)
}

fn io(e: std::io::Error, q: &Question) -> CtlError {
    CtlError::Input(format!("query to {}: {e}", q.server))
}

fn over_udp(q: &Question, bytes: &[u8], id: u16) -> Result<Message, CtlError> {
    let local: SocketAddr = if q.server.is_ipv4() {
        ([0, 0, 0, 0], 0).into()
    } else {
        ([0u16; 8], 0).into()
    };
    let socket = UdpSocket::bind(local).map_err(|e| io(e, q))?;
    socket
        .set_read_timeout(Some(q.timeout))
        .map_err(|e| io(e, q))?;
    socket.send_to(bytes, q.server).map_err(|e| io(e, q))?;
    let mut buf = vec![0u8; 65_535];
    // Bounded: replies with another id are skipped, at most 16 of them.
    for _ in 0..16 {
        let (n, from) = socket.recv_from(&mut buf).map_err(|e| io(e, q))?;
        if from != q.server {
            continue;
        }
        let reply = Message::from_vec(&buf[..n])
            .map_err(|e| CtlError::Input(format!("the reply does not parse: {e}")))?;
        if reply.metadata.id == id {
            return Ok(reply);
        }
    }
    Err(CtlError::Input(format!(
        "no reply from {} matched the query",
        q.server
    )))
}

fn over_tcp(q: &Question, bytes: &[u8]) -> Result<Message, CtlError> {
    let mut s = TcpStream::connect_timeout(&q.server, q.timeout).map_err(|e| io(e, q))?;
    s.set_read_timeout(Some(q.timeout)).map_err(|e| io(e, q))?;
    s.set_write_timeout(Some(q.timeout)).map_err(|e| io(e, q))?;
    let len = u16::try_from(bytes.len()).map_err(|_| invalid("name", "query too long"))?;
    s.write_all(&len.to_be_bytes()).map_err(|e| io(e, q))?;
    s.write_all(bytes).map_err(|e| io(e, q))?;
    let mut len = [0u8; 2];
    s.read_exact(&mut len).map_err(|e| io(e, q))?;
    let mut reply = vec![0u8; usize::from(u16::from_be_bytes(len))];
    s.read_exact(&mut reply).map_err(|e| io(e, q))?;
    Message::from_vec(&reply).map_err(|e| CtlError::Input(format!("the reply does not parse: {e}")))
}

/// Ask, and render the reply: with `short`, one record's data per line
/// (sorted); else the status, flags and every answer record.
pub fn run(q: &Question, short: bool) -> Result<String, CtlError> {
    let m = question(q)?;
    let bytes = m
        .to_vec()
        .map_err(|e| CtlError::Input(format!("the query does not encode: {e}")))?;
    let mut reply = if q.tcp {
        over_tcp(q, &bytes)?
    } else {
        over_udp(q, &bytes, m.metadata.id)?
    };
    let mut transport = if q.tcp { "tcp" } else { "udp" };
    if !q.tcp && reply.metadata.truncation {
        reply = over_tcp(q, &bytes)?;
        transport = "tcp (udp was truncated)";
    }
    if short {
        let mut lines: Vec<String> = reply.answers.iter().map(|r| r.data.to_string()).collect();
        lines.sort();
        return Ok(lines.iter().map(|l| format!("{l}\n")).collect());
    }
    let md = &reply.metadata;
    let flags: Vec<&str> = [
        (md.authoritative, "aa"),
        (md.truncation, "tc"),
        (md.recursion_desired, "rd"),
    ]
    .iter()
    .filter_map(|(on, name)| on.then_some(*name))
    .collect();
    let mut out = format!(
        "{} {} from {} over {transport}: {}, flags [{}], {} answer(s)\n",
        q.name,
        q.rtype.to_ascii_uppercase(),
        q.server,
        md.response_code,
        flags.join(" "),
        reply.answers.len()
    );
    if let Some(text) = &q.subnet {
        out.push_str(&format!("client subnet {text}\n"));
    }
    for r in &reply.answers {
        out.push_str(&format!("{r}\n"));
    }
    Ok(out)
}
