//! The bounded result queue between probes and the uplink. When the
//! aggregator is away it fills up; then the oldest results are dropped (they
//! are the least useful: their cycles have closed) and counted.

use std::collections::VecDeque;
use std::sync::Mutex;

use gslb_shared::ProbeResult;
use tokio::sync::Notify;

/// A bounded FIFO of results with drop-oldest overflow.
#[derive(Debug)]
pub struct ResultBuffer {
    /// Guarded queue and counts; held only for pushes and drains.
    inner: Mutex<Inner>,
    capacity: usize,
    /// Wakes the uplink when a full batch is waiting.
    batch_ready: Notify,
    batch_size: usize,
}

#[derive(Debug, Default)]
struct Inner {
    queue: VecDeque<ProbeResult>,
    dropped_total: u64,
    dropped_unreported: u64,
}

impl ResultBuffer {
    /// A buffer holding at most `capacity` results; `batch_size` results wake
    /// the uplink early.
    pub fn new(capacity: usize, batch_size: usize) -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            capacity: capacity.max(1),
            batch_ready: Notify::new(),
            batch_size: batch_size.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding this lock cannot leave the queue inconsistent.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Append a result, dropping the oldest if full.
    pub fn push(&self, result: ProbeResult) {
        let ready = {
            let mut inner = self.lock();
            if inner.queue.len() >= self.capacity {
                inner.queue.pop_front();
                inner.dropped_total += 1;
                inner.dropped_unreported += 1;
            }
            inner.queue.push_back(result);
            inner.queue.len() >= self.batch_size
        };
        if ready {
            self.batch_ready.notify_one();
        }
    }

    /// Put results that were sent but never acknowledged back at the front.
    pub fn requeue_front(&self, results: Vec<ProbeResult>) {
        let mut inner = self.lock();
        for r in results.into_iter().rev() {
            if inner.queue.len() >= self.capacity {
                inner.dropped_total += 1;
                inner.dropped_unreported += 1;
                continue;
            }
            inner.queue.push_front(r);
        }
    }

    /// Take up to `max` results, and the number dropped since the last take.
    pub fn take(&self, max: usize) -> (Vec<ProbeResult>, u64) {
        let mut inner = self.lock();
        let n = inner.queue.len().min(max);
        let batch = inner.queue.drain(..n).collect();
        (batch, std::mem::take(&mut inner.dropped_unreported))
    }

    /// Wait until a full batch is queued.
    pub async fn batch_ready(&self) {
        self.batch_ready.notified().await;
    }

    /// Results queued now.
    pub fn len(&self) -> usize {
        self.lock().queue.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Results dropped since start.
    pub fn dropped_total(&self) -> u64 {
        self.lock().dropped_total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(cycle: u64) -> ProbeResult {
        ProbeResult {
            member: gslb_shared::MemberId(1),
            check: gslb_shared::CheckId(1),
            cycle,
            failure: None,
            latency_us: 0,
        }
    }

    #[test]
    fn overflow_drops_the_oldest_and_counts_them() {
        let b = ResultBuffer::new(3, 10);
        for c in 1..=5 {
            b.push(r(c));
        }
        let (batch, dropped) = b.take(10);
        assert_eq!(
            batch.iter().map(|r| r.cycle).collect::<Vec<_>>(),
            vec![3, 4, 5]
        );
        assert_eq!((dropped, b.dropped_total()), (2, 2));
        assert_eq!(b.take(10).1, 0, "the dropped count is reported once");
    }

    #[test]
    fn requeued_results_go_first_within_capacity() {
        let b = ResultBuffer::new(3, 10);
        b.push(r(9));
        b.requeue_front(vec![r(1), r(2), r(3)]);
        let (batch, dropped) = b.take(10);
        assert_eq!(
            batch.iter().map(|r| r.cycle).collect::<Vec<_>>(),
            vec![2, 3, 9]
        );
        assert_eq!(dropped, 1);
    }
}
