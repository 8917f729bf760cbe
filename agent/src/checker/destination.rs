//! Where probes never go: the shared deny-list (`gslb_shared::destination`)
//! as a probe failure.

use std::net::SocketAddr;

use gslb_shared::FailReason;
pub use gslb_shared::destination::{DenyList, default_ranges};

use super::Failure;

/// Refuse `addr` (a target, or the peer a socket connected to) as a
/// denied-destination failure.
pub fn check(deny: &DenyList, addr: SocketAddr) -> Result<(), Failure> {
    deny.check(addr)
        .map_err(|why| Failure::new(FailReason::DeniedDestination, why))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_denied_destination_is_a_probe_failure_that_says_why() {
        let list = DenyList::new(default_ranges());
        let f = check(&list, "169.254.169.254:80".parse().unwrap()).unwrap_err();
        assert_eq!(f.reason, FailReason::DeniedDestination);
        assert!(
            f.detail.contains("denied range 169.254.0.0/16"),
            "{}",
            f.detail
        );
        assert!(check(&list, "127.0.0.1:80".parse().unwrap()).is_ok());
    }
}
