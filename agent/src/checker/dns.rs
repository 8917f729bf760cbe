//! DNS: one query to the target (UDP, or TCP with the two-byte length
//! prefix), judged on its response code and, optionally, on an answer
//! record: an A/AAAA record equal to the expected address, or any record
//! whose data in presentation form contains the expected text. Messages are
//! built and parsed with `domain`.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;

use domain::base::iana::Class;
use domain::base::{Message, MessageBuilder, Name};
use domain::rdata::AllRecordData;
use gslb_shared::wire::{query_type, response_code};
use gslb_shared::{DnsProbe, DnsTransport, FailReason, Probe};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Checker, Failure, Outcome, ProbeFuture};
use crate::checker::destination::DenyList;
use crate::target::Target;

/// The EDNS payload size queries advertise (the DNS flag day's size).
const UDP_PAYLOAD: u16 = 1232;

/// DNS checker.
#[derive(Debug, Clone)]
pub struct DnsChecker {
    /// Destinations never sent to.
    pub deny: Arc<DenyList>,
}

impl Checker for DnsChecker {
    fn probe<'a>(&'a self, target: &'a Target) -> ProbeFuture<'a> {
        Box::pin(async move {
            let Probe::Dns(dns) = &target.check.probe else {
                return Err(Failure::new(FailReason::Other, "not a dns check"));
            };
            let id: u16 = rand::random();
            let query = build_query(dns, id)?;
            let to = SocketAddr::new(target.address, target.port);
            let reply = match dns.transport {
                DnsTransport::Udp => self.over_udp(to, &query).await?,
                DnsTransport::Tcp => self.over_tcp(to, &query).await?,
            };
            judge_reply(dns, id, reply)
        })
    }
}

impl DnsChecker {
    async fn over_udp(&self, to: SocketAddr, query: &[u8]) -> Result<Vec<u8>, Failure> {
        let socket = super::connect_udp(to, &self.deny).await?;
        socket
            .send(query)
            .await
            .map_err(|e| Failure::io("send", &e))?;
        let mut reply = vec![0u8; usize::from(UDP_PAYLOAD).max(512)];
        // A connected socket only takes datagrams from the server; one
        // that is not a reply to this query is judged (and fails) as is.
        let n = socket
            .recv(&mut reply)
            .await
            .map_err(|e| Failure::io("recv", &e))?;
        reply.truncate(n);
        Ok(reply)
    }

    async fn over_tcp(&self, to: SocketAddr, query: &[u8]) -> Result<Vec<u8>, Failure> {
        let mut stream = super::connect_tcp(to, &self.deny).await?;
        super::tcp::reset_on_close(&stream);
        let mut framed = Vec::with_capacity(query.len() + 2);
        framed.extend_from_slice(&(query.len() as u16).to_be_bytes());
        framed.extend_from_slice(query);
        stream
            .write_all(&framed)
            .await
            .map_err(|e| Failure::io("send", &e))?;
        let mut len = [0u8; 2];
        stream
            .read_exact(&mut len)
            .await
            .map_err(|e| Failure::io("read", &e))?;
        let mut reply = vec![0u8; usize::from(u16::from_be_bytes(len))];
        stream
            .read_exact(&mut reply)
            .await
            .map_err(|e| Failure::io("read", &e))?;
        Ok(reply)
    }
}

fn protocol(detail: impl Into<String>) -> Failure {
    Failure::new(FailReason::Protocol, detail)
}

/// The query of a check: its question, EDNS with [`UDP_PAYLOAD`], and RD
/// as the check says.
pub fn build_query(dns: &DnsProbe, id: u16) -> Result<Vec<u8>, Failure> {
    let invalid = |what: String| Failure::new(FailReason::InvalidTarget, what);
    let name = Name::<Vec<u8>>::from_str(&format!("{}.", dns.query_name.trim_end_matches('.')))
        .map_err(|e| invalid(format!("probe.queryName: {e}")))?;
    let rtype = query_type(&dns.query_type)
        .ok_or_else(|| invalid(format!("probe.queryType: {:?}", dns.query_type)))?;
    let mut message = MessageBuilder::new_vec();
    message.header_mut().set_id(id);
    message.header_mut().set_rd(dns.recursion_desired);
    let mut question = message.question();
    question
        .push((&name, rtype, Class::IN))
        .map_err(|e| invalid(format!("probe.queryName: {e}")))?;
    let mut extra = question.additional();
    extra
        .opt(|opt| {
            opt.set_udp_payload_size(UDP_PAYLOAD);
            Ok(())
        })
        .map_err(|e| invalid(format!("query: {e}")))?;
    Ok(extra.finish())
}

/// Judge a reply: a response to this query, an accepted response code, and
/// the expected answer when the check names one.
pub fn judge_reply(dns: &DnsProbe, id: u16, reply: Vec<u8>) -> Outcome {
    let message = Message::from_octets(reply).map_err(|e| protocol(format!("reply: {e}")))?;
    let header = message.header();
    if !header.qr() || header.id() != id {
        return Err(protocol("the reply does not answer the query (QR or ID)"));
    }
    let rcode = header.rcode();
    let accepted = dns
        .expected_rcodes
        .iter()
        .filter_map(|r| response_code(r))
        .any(|r| r == rcode);
    if !accepted {
        return Err(Failure::new(
            FailReason::Status,
            format!(
                "rcode {rcode}, expected {}",
                dns.expected_rcodes.join(" or ")
            ),
        ));
    }
    let Some(expect) = &dns.expect_answer else {
        return Ok(());
    };
    let answer = message
        .answer()
        .map_err(|e| protocol(format!("answer section: {e}")))?;
    let expected_ip = expect.parse::<IpAddr>().ok();
    let mut records = 0usize;
    for record in answer.limit_to::<AllRecordData<_, _>>() {
        let record = record.map_err(|e| protocol(format!("answer record: {e}")))?;
        records += 1;
        let found = match (expected_ip, record.data()) {
            (Some(ip), AllRecordData::A(a)) => IpAddr::V4(a.addr()) == ip,
            (Some(ip), AllRecordData::Aaaa(a)) => IpAddr::V6(a.addr()) == ip,
            (Some(_), _) => false,
            (None, data) => data.to_string().contains(expect.as_str()),
        };
        if found {
            return Ok(());
        }
    }
    let truncated = if header.tc() { " (truncated)" } else { "" };
    Err(Failure::new(
        FailReason::BodyMismatch,
        format!("none of the {records} answer records{truncated} holds {expect:?}"),
    ))
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use domain::base::iana::Rcode;
    use domain::base::{Ttl, record::Record};
    use domain::rdata::{A, Txt};

    use super::*;

    fn reply(id: u16, rcode: Rcode, a: Option<Ipv4Addr>, txt: Option<&str>) -> Vec<u8> {
        let name = Name::<Vec<u8>>::from_str("www.example.test.").unwrap();
        let mut m = MessageBuilder::new_vec();
        m.header_mut().set_id(id);
        m.header_mut().set_qr(true);
        m.header_mut().set_rcode(rcode);
        let mut answer = m.question().answer();
        if let Some(a) = a {
            answer
                .push(Record::new(
                    name.clone(),
                    Class::IN,
                    Ttl::from_secs(30),
                    A::new(a),
                ))
                .unwrap();
        }
        if let Some(t) = txt {
            let txt = Txt::<Vec<u8>>::build_from_slice(t.as_bytes()).unwrap();
            answer
                .push(Record::new(name, Class::IN, Ttl::from_secs(30), txt))
                .unwrap();
        }
        answer.finish()
    }

    fn check(expect: Option<&str>, rcodes: &[&str]) -> DnsProbe {
        DnsProbe {
            expect_answer: expect.map(Into::into),
            expected_rcodes: rcodes.iter().map(|r| r.to_string()).collect(),
            ..DnsProbe::new("www.example.test")
        }
    }

    fn reason(outcome: Outcome) -> Option<FailReason> {
        outcome.err().map(|f| f.reason)
    }

    #[test]
    fn rcode_and_answer_decide() {
        let ip = Ipv4Addr::new(192, 0, 2, 7);
        let ok = || reply(7, Rcode::NOERROR, Some(ip), Some("v=ok build 12"));
        assert_eq!(
            reason(judge_reply(&check(None, &["NOERROR"]), 7, ok())),
            None
        );
        assert_eq!(
            reason(judge_reply(
                &check(Some("192.0.2.7"), &["NOERROR"]),
                7,
                ok()
            )),
            None
        );
        assert_eq!(
            reason(judge_reply(&check(Some("build 12"), &["NOERROR"]), 7, ok())),
            None
        );
        assert_eq!(
            reason(judge_reply(
                &check(Some("192.0.2.8"), &["NOERROR"]),
                7,
                ok()
            )),
            Some(FailReason::BodyMismatch)
        );
        let nx = reply(7, Rcode::NXDOMAIN, None, None);
        assert_eq!(
            reason(judge_reply(&check(None, &["NOERROR"]), 7, nx.clone())),
            Some(FailReason::Status)
        );
        assert_eq!(
            reason(judge_reply(&check(None, &["noerror", "NXDOMAIN"]), 7, nx)),
            None
        );
    }

    #[test]
    fn a_reply_to_another_query_or_garbage_is_a_protocol_failure() {
        let other = reply(8, Rcode::NOERROR, None, None);
        assert_eq!(
            reason(judge_reply(&check(None, &["NOERROR"]), 7, other)),
            Some(FailReason::Protocol)
        );
        assert_eq!(
            reason(judge_reply(&check(None, &["NOERROR"]), 7, vec![1, 2, 3])),
            Some(FailReason::Protocol)
        );
        let query = build_query(&check(None, &["NOERROR"]), 7).unwrap();
        assert_eq!(
            reason(judge_reply(&check(None, &["NOERROR"]), 7, query)),
            Some(FailReason::Protocol),
            "a query echoed back is not a reply"
        );
    }
}
