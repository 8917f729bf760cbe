//! The edge's AF_XDP fast path, below the DNS code: the XDP program that
//! picks the edge's UDP queries off a NIC queue (and its loader), the
//! AF_XDP sockets with their rings and UMEM, and the Ethernet/IP/UDP
//! headers of a query and its reply. The answer itself is the edge's one
//! request handler, the same as on the kernel path.
//!
//! `unsafe` is denied in this crate and allowed in one module only,
//! [`ring`], where the UMEM and ring calls are.

pub mod frame;
pub mod program;
#[allow(unsafe_code)]
pub mod ring;

pub use frame::{Query, Reject};
pub use program::{AttachMode, Program, ProgramError};
pub use ring::{RingError, Served, Socket};
