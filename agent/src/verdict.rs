//! The check's verdict on one attempt, apart from how the probe ran: the
//! latency threshold, inversion, and which failures another attempt within
//! the cycle may still turn into a pass.

use std::time::Duration;

use gslb_shared::{Check, FailReason};

use crate::checker::Failure;

/// A failure another attempt could turn into a pass (a refused target or
/// destination stays refused).
pub fn retryable(reason: FailReason) -> bool {
    !matches!(
        reason,
        FailReason::InvalidTarget | FailReason::DeniedDestination
    )
}

/// The check's verdict on one attempt: a pass slower than the latency
/// threshold fails as `slow`, then an inverted check swaps pass and fail.
/// Failures that are not evidence about the target (refused targets and
/// destinations, names that do not resolve) stay failures when inverted.
pub fn judge(
    check: &Check,
    outcome: Result<(), Failure>,
    latency: Duration,
) -> Result<(), Failure> {
    let outcome = match (outcome, check.latency_threshold) {
        (Ok(()), Some(threshold)) if latency > threshold => Err(Failure::new(
            FailReason::Slow,
            format!("passed in {latency:?}, over the threshold of {threshold:?}"),
        )),
        (outcome, _) => outcome,
    };
    if !check.inverted {
        return outcome;
    }
    match outcome {
        Ok(()) => Err(Failure::new(
            FailReason::Inverted,
            "the probe passed; the check is inverted",
        )),
        Err(f)
            if matches!(
                f.reason,
                FailReason::InvalidTarget | FailReason::DeniedDestination | FailReason::Resolve
            ) =>
        {
            Err(f)
        }
        Err(f) => {
            tracing::debug!(check = %check.id, reason = f.reason.as_str(), detail = %f.detail, "inverted check: the probe failed, which counts as a pass");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use gslb_shared::{CheckId, Probe, StreamProbe};

    use super::*;

    fn check(threshold_ms: Option<u64>, inverted: bool) -> Check {
        let mut c = Check::new(CheckId(1), "c", Probe::Tcp(StreamProbe::default()));
        c.latency_threshold = threshold_ms.map(Duration::from_millis);
        c.inverted = inverted;
        c
    }

    fn reason(outcome: Result<(), Failure>) -> Option<FailReason> {
        outcome.err().map(|f| f.reason)
    }

    fn fail(reason: FailReason) -> Result<(), Failure> {
        Err(Failure::new(reason, "x"))
    }

    #[test]
    fn a_pass_over_the_threshold_is_slow_and_at_it_passes() {
        let c = check(Some(100), false);
        let ms = Duration::from_millis;
        assert_eq!(reason(judge(&c, Ok(()), ms(100))), None);
        assert_eq!(reason(judge(&c, Ok(()), ms(101))), Some(FailReason::Slow));
        assert_eq!(
            reason(judge(&c, fail(FailReason::Refused), ms(1))),
            Some(FailReason::Refused),
            "a failure keeps its own reason"
        );
        assert_eq!(reason(judge(&check(None, false), Ok(()), ms(10_000))), None);
    }

    #[test]
    fn inversion_swaps_evidence_but_never_refusals() {
        let c = check(None, true);
        let ms = Duration::from_millis(1);
        assert_eq!(reason(judge(&c, Ok(()), ms)), Some(FailReason::Inverted));
        for evidence in [
            FailReason::Refused,
            FailReason::Timeout,
            FailReason::Status,
            FailReason::BodyMismatch,
            FailReason::Tls,
        ] {
            assert_eq!(reason(judge(&c, fail(evidence), ms)), None, "{evidence:?}");
        }
        for refusal in [
            FailReason::InvalidTarget,
            FailReason::DeniedDestination,
            FailReason::Resolve,
        ] {
            assert_eq!(reason(judge(&c, fail(refusal), ms)), Some(refusal));
        }
        let slow_inverted = check(Some(1), true);
        assert_eq!(
            reason(judge(&slow_inverted, Ok(()), Duration::from_millis(5))),
            None,
            "a slow pass is a failure, which an inverted check counts as a pass"
        );
    }

    #[test]
    fn only_refusals_are_not_retried() {
        assert!(retryable(FailReason::Timeout));
        assert!(retryable(FailReason::Slow));
        assert!(retryable(FailReason::Inverted));
        assert!(!retryable(FailReason::DeniedDestination));
        assert!(!retryable(FailReason::InvalidTarget));
    }
}
