//! A UDP query's frame checked and read, and its reply's headers written in
//! place: Ethernet II, IPv4 without options or IPv6 without extension
//! headers, UDP. Pure functions over bytes; the XDP program passes
//! everything else to the kernel, and these checks hold again here
//! because a frame is hostile input whatever the program let through.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use xdp::packet::csum;

/// Ethernet II header length (no VLAN tag: tagged frames go to the kernel).
pub const ETH_LEN: usize = 14;
const IPV4_LEN: usize = 20;
const IPV6_LEN: usize = 40;
const UDP_LEN: usize = 8;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
const PROTO_UDP: u8 = 17;
/// Hop limit of replies (Linux's default).
const HOP_LIMIT: u8 = 64;

/// Why a frame is not a query we answer here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Reject {
    /// Shorter than its headers, or its lengths disagree with the frame.
    #[error("truncated or inconsistent lengths")]
    Length,
    /// Not IPv4 or IPv6 (a VLAN tag among others).
    #[error("not IPv4 or IPv6")]
    NotIp,
    /// IPv4 options or an IPv6 extension header.
    #[error("IP options or extension headers")]
    Options,
    /// A fragment (the kernel reassembles those).
    #[error("IP fragment")]
    Fragment,
    /// Not UDP.
    #[error("not UDP")]
    NotUdp,
    /// A source or destination that is not one host (multicast,
    /// broadcast, unspecified, port 0).
    #[error("not a unicast source and destination")]
    Source,
}

/// A checked query: where its payload is and who sent it to whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Query {
    /// The client.
    pub peer: SocketAddr,
    /// The address and port it was sent to (ours).
    pub local: SocketAddr,
    /// Bytes of headers before the DNS payload (42 for IPv4, 62 for IPv6).
    pub header_len: usize,
    /// Length of the DNS payload.
    pub payload_len: usize,
    macs: [u8; 12],
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn answerable(ip: IpAddr, port: u16) -> bool {
    port != 0
        && match ip {
            IpAddr::V4(a) => !(a.is_multicast() || a.is_broadcast() || a.is_unspecified()),
            IpAddr::V6(a) => !(a.is_multicast() || a.is_unspecified()),
        }
}

/// Check a received frame (padding after the IP datagram is allowed, as
/// short Ethernet frames carry it) and read its addresses.
pub fn parse(frame: &[u8]) -> Result<Query, Reject> {
    if frame.len() < ETH_LEN {
        return Err(Reject::Length);
    }
    let mut macs = [0u8; 12];
    macs.copy_from_slice(&frame[..12]);
    let ip = &frame[ETH_LEN..];
    let (peer_ip, local_ip, udp_at, datagram_len) = match be16(frame, 12) {
        ETHERTYPE_IPV4 => {
            if ip.len() < IPV4_LEN {
                return Err(Reject::Length);
            }
            if ip[0] >> 4 != 4 {
                return Err(Reject::NotIp);
            }
            if ip[0] & 0x0f != 5 {
                return Err(Reject::Options);
            }
            if be16(ip, 6) & 0x3fff != 0 {
                return Err(Reject::Fragment);
            }
            if ip[9] != PROTO_UDP {
                return Err(Reject::NotUdp);
            }
            let total = usize::from(be16(ip, 2));
            if total < IPV4_LEN + UDP_LEN || total > ip.len() {
                return Err(Reject::Length);
            }
            let src = Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]);
            let dst = Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]);
            (
                IpAddr::V4(src),
                IpAddr::V4(dst),
                ETH_LEN + IPV4_LEN,
                total - IPV4_LEN,
            )
        }
        ETHERTYPE_IPV6 => {
            if ip.len() < IPV6_LEN {
                return Err(Reject::Length);
            }
            if ip[0] >> 4 != 6 {
                return Err(Reject::NotIp);
            }
            if ip[6] != PROTO_UDP {
                return Err(if ip[6] == 44 {
                    Reject::Fragment
                } else {
                    Reject::Options
                });
            }
            let payload = usize::from(be16(ip, 4));
            if payload < UDP_LEN || IPV6_LEN + payload > ip.len() {
                return Err(Reject::Length);
            }
            let mut src = [0u8; 16];
            let mut dst = [0u8; 16];
            src.copy_from_slice(&ip[8..24]);
            dst.copy_from_slice(&ip[24..40]);
            (
                IpAddr::V6(Ipv6Addr::from(src)),
                IpAddr::V6(Ipv6Addr::from(dst)),
                ETH_LEN + IPV6_LEN,
                payload,
            )
        }
        _ => return Err(Reject::NotIp),
    };
    let udp = &frame[udp_at..];
    if usize::from(be16(udp, 4)) != datagram_len {
        return Err(Reject::Length);
    }
    let (sport, dport) = (be16(udp, 0), be16(udp, 2));
    // Neither end may be multicast, broadcast, unspecified or port 0: a
    // reply would come from or go to no single host.
    if !answerable(peer_ip, sport) || !answerable(local_ip, dport) {
        return Err(Reject::Source);
    }
    Ok(Query {
        peer: SocketAddr::new(peer_ip, sport),
        local: SocketAddr::new(local_ip, dport),
        header_len: udp_at + UDP_LEN,
        payload_len: datagram_len - UDP_LEN,
        macs,
    })
}

impl Query {
    /// The DNS payload inside `frame`.
    pub fn payload<'a>(&self, frame: &'a [u8]) -> &'a [u8] {
        &frame[self.header_len..self.header_len + self.payload_len]
    }

    /// Write the reply's headers into `buf` (the same frame buffer), whose
    /// payload of `payload_len` bytes is already at `header_len`: MACs,
    /// addresses and ports swapped, lengths and checksums computed.
    /// Returns the frame's length; `None` if it does not fit `buf` or a
    /// 16-bit length.
    pub fn write_reply(&self, buf: &mut [u8], payload_len: usize) -> Option<usize> {
        let mut macs = [0u8; 12];
        macs[..6].copy_from_slice(&self.macs[6..12]);
        macs[6..].copy_from_slice(&self.macs[..6]);
        write_headers(buf, macs, self.local, self.peer, payload_len)
    }
}

/// Bytes of Ethernet, IP and UDP headers before the payload of a datagram
/// between addresses of `family` (`to`'s).
pub fn header_len(to: SocketAddr) -> usize {
    ETH_LEN + if to.is_ipv4() { IPV4_LEN } else { IPV6_LEN } + UDP_LEN
}

/// Write the headers of a datagram `from` → `to` into `buf`, whose payload
/// of `payload_len` bytes is already at [`header_len`]: `macs` is the
/// destination MAC then the source MAC, lengths and checksums computed.
/// Returns the frame's length; `None` if it does not fit `buf` or a 16-bit
/// length, or the families differ.
pub fn write_headers(
    buf: &mut [u8],
    macs: [u8; 12],
    from: SocketAddr,
    to: SocketAddr,
    payload_len: usize,
) -> Option<usize> {
    let header_len = header_len(to);
    let total = header_len + payload_len;
    let udp_len = u16::try_from(UDP_LEN + payload_len).ok()?;
    if total > buf.len() {
        return None;
    }
    buf[..12].copy_from_slice(&macs);
    let udp_at = header_len - UDP_LEN;
    // Checksums with xdp's csum, which sums bytes in native order: every
    // input is fed as bytes in network order and the result is stored
    // with to_ne_bytes, so no field is byte-swapped by hand.
    let sum = match (from.ip(), to.ip()) {
        (IpAddr::V4(src), IpAddr::V4(dst)) => {
            buf[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
            let ip_total = u16::try_from(IPV4_LEN + usize::from(udp_len)).ok()?;
            let ip = &mut buf[ETH_LEN..udp_at];
            ip[0] = 0x45;
            ip[1] = 0;
            ip[2..4].copy_from_slice(&ip_total.to_be_bytes());
            // Identification 0 with DF: never fragmented on the way.
            ip[4..6].fill(0);
            ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes());
            ip[8] = HOP_LIMIT;
            ip[9] = PROTO_UDP;
            ip[10..12].fill(0);
            ip[12..16].copy_from_slice(&src.octets());
            ip[16..20].copy_from_slice(&dst.octets());
            let check = csum::fold_checksum(csum::partial(ip, 0));
            ip[10..12].copy_from_slice(&check.to_ne_bytes());
            csum::partial(&ip[12..20], 0)
        }
        (IpAddr::V6(src), IpAddr::V6(dst)) => {
            buf[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
            let ip = &mut buf[ETH_LEN..udp_at];
            ip[..4].copy_from_slice(&[0x60, 0, 0, 0]);
            ip[4..6].copy_from_slice(&udp_len.to_be_bytes());
            ip[6] = PROTO_UDP;
            ip[7] = HOP_LIMIT;
            ip[8..24].copy_from_slice(&src.octets());
            ip[24..40].copy_from_slice(&dst.octets());
            csum::partial(&ip[8..40], 0)
        }
        _ => return None,
    };
    // The rest of the pseudo header: zero, protocol, UDP length.
    let [len_hi, len_lo] = udp_len.to_be_bytes();
    let sum = csum::partial(&[0, PROTO_UDP, len_hi, len_lo], sum);
    let udp = &mut buf[udp_at..total];
    udp[..2].copy_from_slice(&from.port().to_be_bytes());
    udp[2..4].copy_from_slice(&to.port().to_be_bytes());
    udp[4..6].copy_from_slice(&udp_len.to_be_bytes());
    udp[6..8].fill(0);
    let mut check = csum::fold_checksum(csum::partial(udp, sum));
    // 0 means "no checksum" in UDP over IPv4 and is invalid over IPv6.
    if check == 0 {
        check = 0xffff;
    }
    udp[6..8].copy_from_slice(&check.to_ne_bytes());
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// RFC 1071 over big-endian words, written apart from xdp's csum.
    fn ones_sum(parts: &[&[u8]]) -> u16 {
        let bytes: Vec<u8> = parts.concat();
        let mut sum: u32 = 0;
        for pair in bytes.chunks(2) {
            let word = u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
            sum += u32::from(word);
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum as u16
    }

    /// A query frame as a client's kernel would send it.
    fn frame(peer: SocketAddr, local: SocketAddr, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
        let udp_len = (UDP_LEN + payload.len()) as u16;
        let mut udp = Vec::new();
        udp.extend_from_slice(&peer.port().to_be_bytes());
        udp.extend_from_slice(&local.port().to_be_bytes());
        udp.extend_from_slice(&udp_len.to_be_bytes());
        udp.extend_from_slice(&[0, 0]);
        udp.extend_from_slice(payload);
        match (peer.ip(), local.ip()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                f.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
                let mut ip = vec![0x45, 0];
                ip.extend_from_slice(&(20 + udp_len).to_be_bytes());
                ip.extend_from_slice(&[0x12, 0x34, 0x40, 0, 64, PROTO_UDP, 0, 0]);
                ip.extend_from_slice(&s.octets());
                ip.extend_from_slice(&d.octets());
                let c = !ones_sum(&[&ip]);
                ip[10..12].copy_from_slice(&c.to_be_bytes());
                f.extend_from_slice(&ip);
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                f.extend_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
                f.extend_from_slice(&[0x60, 0, 0, 0]);
                f.extend_from_slice(&udp_len.to_be_bytes());
                f.extend_from_slice(&[PROTO_UDP, 64]);
                f.extend_from_slice(&s.octets());
                f.extend_from_slice(&d.octets());
            }
            _ => unreachable!("one family"),
        }
        f.extend_from_slice(&udp);
        f
    }

    fn v4(a: [u8; 4], port: u16) -> SocketAddr {
        SocketAddr::from((a, port))
    }

    #[test]
    fn an_ipv4_query_is_read_and_answered_with_swapped_headers_and_valid_checksums() {
        let peer = v4([10, 0, 0, 1], 40000);
        let local = v4([10, 0, 0, 2], 53);
        let mut f = frame(peer, local, b"query!");
        let q = parse(&f).expect("a query");
        assert_eq!(
            (q.peer, q.local, q.header_len, q.payload_len),
            (peer, local, 42, 6)
        );
        assert_eq!(q.payload(&f), b"query!");
        f.resize(2048, 0);
        f[42..51].copy_from_slice(b"the reply");
        let n = q.write_reply(&mut f, 9).expect("fits");
        assert_eq!(n, 51);
        let r = parse(&f[..n]).expect("the reply parses");
        assert_eq!((r.peer, r.local), (local, peer));
        assert_eq!(&f[..6], &[2, 0, 0, 0, 0, 1], "to the client's MAC");
        assert_eq!(&f[6..12], &[2, 0, 0, 0, 0, 2], "from ours");
        assert_eq!(ones_sum(&[&f[14..34]]), 0xffff, "IPv4 header checksum");
        let udp = &f[34..n];
        let pseudo = [
            &f[26..34],
            &[0, PROTO_UDP],
            &(udp.len() as u16).to_be_bytes(),
        ]
        .concat();
        assert_eq!(ones_sum(&[&pseudo, udp]), 0xffff, "UDP checksum");
    }

    #[test]
    fn short_frames_keep_their_ethernet_padding() {
        let mut f = frame(v4([10, 0, 0, 1], 1000), v4([10, 0, 0, 2], 53), b"x");
        f.resize(60, 0);
        assert_eq!(parse(&f).map(|q| q.payload_len), Ok(1));
    }

    #[test]
    fn fragments_options_other_protocols_and_bad_lengths_are_refused() {
        let good = frame(v4([10, 0, 0, 1], 1000), v4([10, 0, 0, 2], 53), b"abc");
        let with = |at: usize, byte: u8| {
            let mut f = good.clone();
            f[at] = byte;
            f
        };
        assert_eq!(parse(&with(14, 0x46)), Err(Reject::Options));
        assert_eq!(parse(&with(20, 0x20)), Err(Reject::Fragment), "MF set");
        assert_eq!(parse(&with(21, 0x01)), Err(Reject::Fragment), "an offset");
        assert_eq!(parse(&with(23, 6)), Err(Reject::NotUdp));
        assert_eq!(parse(&with(12, 0x81)), Err(Reject::NotIp), "VLAN tag");
        assert_eq!(
            parse(&with(14, 0x65)),
            Err(Reject::NotIp),
            "version 6 in IPv4"
        );
        assert_eq!(
            parse(&with(17, 0xff)),
            Err(Reject::Length),
            "IP length past the frame"
        );
        assert_eq!(
            parse(&with(39, 20)),
            Err(Reject::Length),
            "UDP length disagrees"
        );
        assert_eq!(parse(&good[..40]), Err(Reject::Length));
        let bcast = frame(v4([255, 255, 255, 255], 1000), v4([10, 0, 0, 2], 53), b"a");
        assert_eq!(parse(&bcast), Err(Reject::Source));
        let port0 = frame(v4([10, 0, 0, 1], 0), v4([10, 0, 0, 2], 53), b"a");
        assert_eq!(parse(&port0), Err(Reject::Source));
        let to_any = frame(v4([10, 0, 0, 1], 1000), v4([0, 0, 0, 0], 53), b"a");
        assert_eq!(
            parse(&to_any),
            Err(Reject::Source),
            "to the unspecified address"
        );
        let to_group = frame(v4([10, 0, 0, 1], 1000), v4([224, 0, 0, 251], 53), b"a");
        assert_eq!(
            parse(&to_group),
            Err(Reject::Source),
            "to a multicast group"
        );
        let six = frame(
            "[2001:db8::1]:1000"
                .parse()
                .unwrap_or_else(|_| unreachable!()),
            "[2001:db8::2]:53"
                .parse()
                .unwrap_or_else(|_| unreachable!()),
            b"a",
        );
        let mut frag = six.clone();
        frag[20] = 44;
        assert_eq!(parse(&frag), Err(Reject::Fragment));
        frag[20] = 0;
        assert_eq!(parse(&frag), Err(Reject::Options), "hop-by-hop header");
    }

    #[test]
    fn a_reply_that_does_not_fit_is_refused() {
        let f = frame(v4([10, 0, 0, 1], 1000), v4([10, 0, 0, 2], 53), b"abc");
        let q = parse(&f).unwrap_or_else(|e| panic!("{e}"));
        let mut buf = vec![0u8; 100];
        assert_eq!(q.write_reply(&mut buf, 59), None);
        assert_eq!(q.write_reply(&mut buf, 58), Some(100));
        let mut big = vec![0u8; 70_000];
        assert_eq!(
            q.write_reply(&mut big, 65_528),
            None,
            "over a 16-bit UDP length"
        );
    }

    fn addr() -> impl Strategy<Value = (SocketAddr, SocketAddr)> {
        prop_oneof![
            (
                any::<[u8; 4]>(),
                1..=u16::MAX,
                any::<[u8; 4]>(),
                1..=u16::MAX
            )
                .prop_map(|(a, p, b, q)| (
                    SocketAddr::from((a.map(|x| x.clamp(1, 223)), p)),
                    SocketAddr::from((b.map(|x| x.clamp(1, 223)), q))
                )),
            (
                any::<[u8; 16]>(),
                1..=u16::MAX,
                any::<[u8; 16]>(),
                1..=u16::MAX
            )
                .prop_map(|(mut a, p, b, q)| {
                    let mut b = b;
                    a[0] = 0x20;
                    b[0] = 0xfd;
                    (
                        SocketAddr::from((Ipv6Addr::from(a), p)),
                        SocketAddr::from((Ipv6Addr::from(b), q)),
                    )
                }),
        ]
    }

    proptest! {
        #[test]
        fn every_query_round_trips_into_a_reply_with_valid_checksums(
            (peer, local) in addr(),
            payload in proptest::collection::vec(any::<u8>(), 0..600),
            reply in proptest::collection::vec(any::<u8>(), 0..1400),
        ) {
            let f = frame(peer, local, &payload);
            let q = parse(&f).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(q.payload(&f), &payload[..]);
            let mut buf = f.clone();
            buf.resize(q.header_len + reply.len(), 0);
            buf[q.header_len..].copy_from_slice(&reply);
            let n = q.write_reply(&mut buf, reply.len()).ok_or_else(|| TestCaseError::fail("fits"))?;
            let r = parse(&buf[..n]).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!((r.peer, r.local), (local, peer));
            prop_assert_eq!(r.payload(&buf), &reply[..]);
            let udp_at = q.header_len - UDP_LEN;
            let udp = &buf[udp_at..n];
            let addrs = if peer.is_ipv4() { &buf[26..34] } else { &buf[22..54] };
            let pseudo = [addrs, &[0, PROTO_UDP], &(udp.len() as u16).to_be_bytes()].concat();
            prop_assert_eq!(ones_sum(&[&pseudo, udp]), 0xffff);
            if peer.is_ipv4() {
                prop_assert_eq!(ones_sum(&[&buf[14..34]]), 0xffff);
            }
        }

        #[test]
        fn any_bytes_parse_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(q) = parse(&bytes) {
                prop_assert!(q.header_len + q.payload_len <= bytes.len());
            }
        }
    }
}
