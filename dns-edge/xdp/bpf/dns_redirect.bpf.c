// gslb edge: the XDP program. Redirects UDP datagrams for the edge's DNS
// port on the edge's own addresses to the AF_XDP socket bound to the
// receiving queue; passes everything else (TCP, other ports and addresses,
// ARP, ICMP, VLAN-tagged frames, IPv4 with options or fragments, IPv6 with
// extension headers) to the kernel unchanged. With no socket on a queue,
// bpf_redirect_map's fallback passes the frame to the kernel too.
//
// Built by dns-edge/xdp/build.rs with clang -target bpf. Only the Linux UAPI
// headers are used (linux-libc-dev); the two helpers are declared here, so
// libbpf's headers are not needed.

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define be16(x) ((__u16)__builtin_bswap16(x))
#else
#define be16(x) ((__u16)(x))
#endif

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_lookup_elem;
static long (*bpf_redirect_map)(void *map, __u64 key, __u64 flags) = (void *)BPF_FUNC_redirect_map;

// Receive queue -> AF_XDP socket (set by the edge, one per queue).
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} gslb_xsks SEC(".maps");

// [0] = the DNS port, network byte order; 0 = redirect nothing.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u16);
} gslb_port SEC(".maps");

// The edge's IPv4 addresses (network byte order) and IPv6 addresses.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u8);
} gslb_addrs4 SEC(".maps");

struct addr6 {
	__u8 bytes[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct addr6);
	__type(value, __u8);
} gslb_addrs6 SEC(".maps");

SEC("xdp")
int gslb_dns(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct udphdr *udp;
	__u32 zero = 0;
	__u16 *port;

	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	port = bpf_map_lookup_elem(&gslb_port, &zero);
	if (!port || !*port)
		return XDP_PASS;

	if (eth->h_proto == be16(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		__u32 daddr;

		if ((void *)(ip + 1) > end)
			return XDP_PASS;
		// Options (ihl > 5) and fragments (MF or an offset) go to the
		// kernel, which reassembles and answers on its own socket.
		if (ip->version != 4 || ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
			return XDP_PASS;
		if (ip->frag_off & be16(0x3fff))
			return XDP_PASS;
		udp = (void *)(ip + 1);
		if ((void *)(udp + 1) > end || udp->dest != *port)
			return XDP_PASS;
		daddr = ip->daddr;
		if (!bpf_map_lookup_elem(&gslb_addrs4, &daddr))
			return XDP_PASS;
	} else if (eth->h_proto == be16(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		struct addr6 daddr;

		if ((void *)(ip6 + 1) > end)
			return XDP_PASS;
		// Any extension header (a fragment header among them) goes to the
		// kernel.
		if (ip6->version != 6 || ip6->nexthdr != IPPROTO_UDP)
			return XDP_PASS;
		udp = (void *)(ip6 + 1);
		if ((void *)(udp + 1) > end || udp->dest != *port)
			return XDP_PASS;
		__builtin_memcpy(daddr.bytes, &ip6->daddr, sizeof(daddr.bytes));
		if (!bpf_map_lookup_elem(&gslb_addrs6, &daddr))
			return XDP_PASS;
	} else {
		return XDP_PASS;
	}
	return bpf_redirect_map(&gslb_xsks, ctx->rx_queue_index, XDP_PASS);
}

// Neither helper is GPL-only, so the project's own licence is the one named.
char _license[] SEC("license") = "Apache-2.0";
