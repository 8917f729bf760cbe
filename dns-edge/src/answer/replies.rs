//! Replies that carry no zone data: errors (FORMERR, NOTIMP, SERVFAIL),
//! BADVERS, the truncated reply rate limiting slips, and the OPT record.

use domain::base::opt::keepalive::IdleTimeout;

use super::summary::summary_of;
use super::*;

/// Bytes the OPT record takes: 11, plus the ECS option when echoed, plus
/// an edns-tcp-keepalive option (6) when `closing`, plus the NSID option
/// when sent.
pub(super) fn opt_size(
    subnet: Option<&domain::base::opt::ClientSubnet>,
    closing: bool,
    nsid: Option<&[u8]>,
) -> usize {
    11 + subnet.map_or(0, |s| {
        4 + 4 + usize::from(s.source_prefix_len().div_ceil(8))
    }) + if closing { 6 } else { 0 }
        + nsid.map_or(0, |n| 4 + n.len())
}

pub(super) fn push_opt(
    additional: &mut AdditionalBuilder<Target<'_>>,
    edns: &Edns,
    rcode: OptRcode,
    scope: u8,
    closing: bool,
    nsid: Option<&[u8]>,
) -> Result<(), PushError> {
    additional.opt(|opt| {
        // RFC 5001: only to a query that asked, and only when configured.
        if let Some(id) = nsid.filter(|_| edns.nsid) {
            // At most 64 bytes (checked at start): never too long.
            if let Ok(option) = domain::base::opt::Nsid::from_slice(id) {
                opt.push(option)?;
            }
        }
        if closing {
            // RFC 7828: a timeout of 0 asks the client to close the
            // connection (the edge is draining).
            opt.tcp_keepalive(Some(IdleTimeout::from(0)))?;
        }
        opt.set_udp_payload_size(EDNS_UDP_SIZE);
        opt.set_rcode(rcode);
        // RFC 3225 section 3: the DO bit of the query is copied.
        opt.set_dnssec_ok(edns.dnssec_ok);
        if let Some(s) = edns.subnet {
            opt.client_subnet(s.source_prefix_len(), scope, s.addr())?;
        }
        Ok(())
    })
}

/// A response with `rcode` and the question (when it parses), no records.
pub(super) fn error(message: &Message<[u8]>, rcode: Rcode, out: &mut Vec<u8>) -> Summary {
    let Ok(mut builder) = MessageBuilder::from_target(StaticCompressor::new(&mut *out));
    let h = builder.header_mut();
    h.set_id(message.header().id());
    h.set_qr(true);
    h.set_opcode(message.header().opcode());
    h.set_rd(message.header().rd());
    h.set_rcode(rcode);
    // The question is echoed only when there is exactly one and it parses:
    // an error reply is never longer than the query.
    let question = message
        .sole_question()
        .ok()
        .filter(|q| !q.qname().is_compressed());
    let mut section = builder.question();
    if let Some(q) = &question
        && section.push(q).is_err()
    {
        section.rewind();
    }
    section.finish();
    let qtype = question.map_or(Rtype::NULL, |q| q.qtype());
    summary_of(qtype, OptRcode::from_rcode(rcode))
}

pub(super) fn badvers(q: &Query<'_>, out: &mut Vec<u8>, qtype: usize) -> Summary {
    let built = (|| -> Result<(), PushError> {
        let flat = q.flat_qname.as_slice();
        let Ok(builder) = MessageBuilder::from_target(Compressor::new(&mut *out, flat));
        let answer = start(builder, q)?;
        let mut additional = answer.additional();
        let edns = Edns {
            subnet: None,
            ..q.edns.unwrap_or(Edns {
                udp_size: 512,
                version: 0,
                dnssec_ok: false,
                subnet: None,
                nsid: false,
            })
        };
        push_opt(&mut additional, &edns, OptRcode::BADVERS, 0, false, None)?;
        additional.finish();
        Ok(())
    })();
    if built.is_err() {
        return error(q.message, Rcode::SERVFAIL, out);
    }
    Summary {
        qtype,
        rcode: rcode_bucket(OptRcode::BADVERS),
        truncated: false,
        prebuilt: false,
    }
}

/// A truncated reply to `query` (TC set, the question only): what rate
/// limiting sends instead of an answer it withholds. False when the query
/// cannot be echoed.
pub fn truncated(query: &[u8], out: &mut Vec<u8>) -> bool {
    let Ok(message) = Message::from_slice(query) else {
        return false;
    };
    let Ok(builder) = MessageBuilder::from_target(StaticCompressor::new(&mut *out));
    let mut answer = builder.start_error(message, Rcode::NOERROR);
    answer.header_mut().set_tc(true);
    answer.header_mut().set_ra(false);
    answer.finish();
    true
}
