//! The gslb gRPC contract: generated types and services (`pb`), the encoded
//! descriptor set for reflection, the conversions between generated types
//! and the domain model (`convert`), and how every part dials an aggregator
//! (`link`). Domain code never touches `pb`.

/// Generated protobuf messages and tonic services for `gslb.v1`.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod pb {
    tonic::include_proto!("gslb.v1");
}

pub mod convert;
pub mod link;
pub mod metadata;
pub mod revised;

/// Largest gRPC message sent on any gslb link: a location with 100,000
/// targets receives an assignment set, and an edge a full snapshot, far
/// above tonic's 4 MiB default. What a server accepts is bounded per
/// service, by its messages (see docs/security.md).
pub const MAX_MESSAGE: usize = 256 * 1024 * 1024;

/// The encoded `FileDescriptorSet` of every gslb proto, for gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/gslb_descriptor.bin"));
