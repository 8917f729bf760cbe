//! The one reconnect loop of every long-lived stream to an aggregator (the
//! agent uplink, the edge feed): dial the addresses in turn, follow a
//! leader hint at once, and back off with jitter between failures, starting
//! over once a session had been established.

use std::time::Duration;

use gslb_shared::backoff::Backoff;

/// How one session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// The peer closed an established session.
    Closed,
    /// The peer named the leader to talk to instead.
    Redirect(String),
    /// The session failed; `established` when it had been set up first.
    Failed {
        /// Whether the session had been set up before it failed.
        established: bool,
        /// What failed, for the log.
        error: String,
    },
}

/// One session on a link: dial `address`, use the stream until it ends.
///
/// A trait rather than an async closure: a spawned task needs the session's
/// future to be `Send`, which rustc cannot yet prove for an async closure
/// that borrows what it captures.
pub trait Session {
    /// Dial `address` and use the stream until it ends.
    fn dial(&mut self, address: &str) -> impl Future<Output = Ended> + Send;
}

/// Where to dial next and how long to wait first.
#[derive(Debug, Clone)]
pub struct Redial {
    name: &'static str,
    addresses: Vec<String>,
    backoff: Backoff,
    attempt: u32,
    index: usize,
    hint: Option<String>,
}

/// A reconnect loop needs at least one address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}: no aggregator address to dial")]
pub struct NoAddress(&'static str);

impl Redial {
    /// A loop named `name` (for the log) over `addresses`, tried in turn.
    pub fn new(
        name: &'static str,
        addresses: Vec<String>,
        backoff: Backoff,
    ) -> Result<Self, NoAddress> {
        if addresses.is_empty() {
            return Err(NoAddress(name));
        }
        Ok(Self {
            name,
            addresses,
            backoff,
            attempt: 0,
            index: 0,
            hint: None,
        })
    }

    /// The address to dial next: a leader hint if one came, else the
    /// address list's turn.
    pub fn address(&self) -> &str {
        self.hint
            .as_deref()
            .unwrap_or(&self.addresses[self.index % self.addresses.len()])
    }

    /// Record how the session with [`Redial::address`] ended; the wait
    /// before the next dial (zero after a leader hint), drawn with `rng`.
    pub fn after<R: rand::Rng + ?Sized>(&mut self, ended: &Ended, rng: &mut R) -> Duration {
        let hinted = self.hint.take().is_some();
        match ended {
            Ended::Redirect(leader) => {
                self.hint = Some(leader.clone());
                self.attempt = 0;
                return Duration::ZERO;
            }
            Ended::Closed
            | Ended::Failed {
                established: true, ..
            } => self.attempt = 0,
            Ended::Failed { .. } => {}
        }
        // A hint is not an entry of the list: the list's turn is kept.
        if !hinted {
            self.index = self.index.wrapping_add(1);
        }
        let delay = self.backoff.delay(self.attempt, rng);
        self.attempt = self.attempt.saturating_add(1);
        delay
    }

    /// Run `session` forever, once per dial.
    pub async fn run(mut self, session: &mut impl Session) {
        loop {
            let address = self.address().to_owned();
            let ended = session.dial(&address).await;
            match &ended {
                Ended::Redirect(leader) => {
                    tracing::info!(link = self.name, from = %address, to = %leader, "following leader hint");
                }
                Ended::Closed => {
                    tracing::warn!(link = self.name, %address, "aggregator closed the stream");
                }
                Ended::Failed { established, error } => {
                    tracing::warn!(link = self.name, %address, %error, established, "aggregator stream failed");
                }
            }
            let delay = self.after(&ended, &mut rand::rng());
            if !delay.is_zero() {
                tracing::info!(link = self.name, next = %self.address(), ?delay, "reconnecting");
                tokio::time::sleep(delay).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use rand::SeedableRng;

    use super::*;

    fn failed(established: bool) -> Ended {
        Ended::Failed {
            established,
            error: "refused".into(),
        }
    }

    fn redial(addresses: &[&str]) -> Redial {
        let addresses = addresses.iter().map(|a| (*a).to_owned()).collect();
        Redial::new("test", addresses, Backoff::default()).unwrap()
    }

    #[test]
    fn no_address_is_refused() {
        assert_eq!(
            Redial::new("uplink", vec![], Backoff::default()).unwrap_err(),
            NoAddress("uplink")
        );
    }

    #[test]
    fn addresses_are_tried_in_turn_and_failures_back_off() {
        let mut r = redial(&["a", "b"]);
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let mut seen = Vec::new();
        for attempt in 0..8u32 {
            seen.push(r.address().to_owned());
            let delay = r.after(&failed(false), &mut rng);
            let ceiling = Backoff::default().ceiling(attempt);
            assert!(
                delay <= ceiling && delay >= ceiling / 2,
                "{attempt}: {delay:?}"
            );
        }
        assert_eq!(seen, ["a", "b", "a", "b", "a", "b", "a", "b"]);
    }

    #[test]
    fn an_established_session_starts_the_backoff_over() {
        let mut r = redial(&["a"]);
        let mut rng = rand::rngs::StdRng::seed_from_u64(2);
        for _ in 0..5 {
            r.after(&failed(false), &mut rng);
        }
        for ended in [Ended::Closed, failed(true)] {
            let delay = r.after(&ended, &mut rng);
            assert!(
                delay <= Backoff::default().ceiling(0),
                "{ended:?}: {delay:?}"
            );
        }
    }

    #[test]
    fn a_leader_hint_is_dialled_at_once_and_then_the_list_resumes() {
        let mut r = redial(&["a", "b", "c"]);
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        r.after(&failed(false), &mut rng);
        r.after(&failed(false), &mut rng);
        assert_eq!(r.address(), "c");
        let wait = r.after(&Ended::Redirect("leader".into()), &mut rng);
        assert_eq!((wait, r.address()), (Duration::ZERO, "leader"));
        // The leader's session was established: no long wait, and the list
        // goes on where it was.
        let wait = r.after(&failed(true), &mut rng);
        assert!(wait <= Backoff::default().ceiling(0));
        assert_eq!(r.address(), "c");
    }
}
