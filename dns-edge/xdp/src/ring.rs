//! One AF_XDP socket with its UMEM and four rings (fill, RX, TX,
//! completion), from the `xdp` crate, behind a safe interface: frames are
//! lent to a closure as byte slices and never outlive the UMEM. This is
//! the only module of the edge where `unsafe` is allowed; each block says
//! why it holds.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use xdp::nic::NicIndex;
use xdp::slab::{HeapSlab, Slab};
use xdp::socket::{PollTimeout, XdpSocket, XdpSocketBuilder};
use xdp::umem::{FrameSize, UmemCfgBuilder};
use xdp::{
    CompletionRing, Packet, RingConfigBuilder, RxRing, Umem, WakableFillRing, WakableTxRing,
};

/// Frames in each socket's UMEM (4 KiB each: 16 MiB per queue).
pub const FRAMES: u32 = 4096;
/// Entries of each ring (a power of two; the fill ring holds half the
/// frames, the other half is for replies in flight).
const RING: u32 = 2048;
/// Frames taken from the RX ring per call at most.
pub const BATCH: usize = 64;
/// Wake-ups per send at most (copy mode sends 32 frames per wake-up).
const KICKS: usize = RING as usize / 32;

/// Why a socket could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum RingError {
    /// Mapping the UMEM failed.
    #[error("UMEM of {FRAMES} frames: {0}")]
    Umem(io::Error),
    /// Ring or socket set-up failed (no permission, no AF_XDP support).
    #[error("AF_XDP socket: {0}")]
    Socket(String),
    /// Binding to the interface queue failed in both zero-copy and copy mode.
    #[error("binding queue {queue}: {error}")]
    Bind {
        /// The queue.
        queue: u32,
        /// The copy-mode error.
        error: String,
    },
}

/// What one call of [`Socket::serve`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    /// Frames received.
    pub received: usize,
    /// Replies queued for sending.
    pub sent: usize,
    /// Replies dropped because the TX ring was full.
    pub tx_full: usize,
}

/// An AF_XDP socket bound to one queue of one interface.
pub struct Socket {
    // Field order is drop order: rings and socket before the UMEM they use.
    rx: RxRing,
    tx: WakableTxRing,
    fill: WakableFillRing,
    completion: CompletionRing,
    socket: XdpSocket,
    rx_slab: HeapSlab,
    tx_slab: HeapSlab,
    zero_copy: bool,
    umem: Umem,
}

struct Bound {
    socket: XdpSocket,
    rx: RxRing,
    tx: WakableTxRing,
    fill: WakableFillRing,
    completion: CompletionRing,
}

fn bind(umem: &Umem, ifindex: u32, queue: u32, zero_copy: bool) -> Result<Bound, String> {
    let mut builder = XdpSocketBuilder::new().map_err(|e| e.to_string())?;
    let cfg = RingConfigBuilder {
        rx_count: RING,
        tx_count: RING,
        fill_count: RING,
        completion_count: RING,
    }
    .build()
    .map_err(|e| format!("{e:?}"))?;
    let (rings, mut flags) = builder
        .build_wakable_rings(umem, cfg)
        .map_err(|e| e.to_string())?;
    if zero_copy {
        flags.force_zerocopy();
    } else {
        flags.force_copy();
    }
    let socket = builder
        .bind(NicIndex::new(ifindex), queue, flags)
        .map_err(|e| e.to_string())?;
    let (Some(rx), Some(tx)) = (rings.rx_ring, rings.tx_ring) else {
        return Err("the kernel mapped no RX or TX ring".into());
    };
    Ok(Bound {
        socket,
        rx,
        tx,
        fill: rings.fill_ring,
        completion: rings.completion_ring,
    })
}

impl Socket {
    /// Open a socket on queue `queue` of interface `ifindex`: zero-copy if
    /// the driver allows it, copy mode otherwise.
    pub fn open(ifindex: u32, queue: u32) -> Result<Socket, RingError> {
        let cfg = UmemCfgBuilder {
            frame_size: FrameSize::FourK,
            frame_count: FRAMES,
            ..UmemCfgBuilder::default()
        }
        .build()
        .map_err(|e| RingError::Socket(format!("{e:?}")))?;
        let mut umem = Umem::map(cfg).map_err(RingError::Umem)?;
        let (bound, zero_copy) = match bind(&umem, ifindex, queue, true) {
            Ok(b) => (b, true),
            Err(zc) => match bind(&umem, ifindex, queue, false) {
                Ok(b) => {
                    tracing::debug!(queue, zero_copy_error = %zc, "zero-copy bind refused; copy mode");
                    (b, false)
                }
                Err(error) => return Err(RingError::Bind { queue, error }),
            },
        };
        let Bound {
            socket,
            rx,
            tx,
            mut fill,
            completion,
        } = bound;
        // SAFETY: the frames given to the kernel belong to `umem`, which
        // is dropped after the socket and its rings (field order of
        // `Socket`), so the kernel never writes to unmapped memory.
        // No wake-up call here: the first poll wakes the driver.
        unsafe { fill.enqueue(&mut umem, RING as usize, false) }
            .map_err(|e| RingError::Socket(format!("fill ring: {e}")))?;
        Ok(Socket {
            rx,
            tx,
            fill,
            completion,
            socket,
            rx_slab: HeapSlab::with_capacity(BATCH),
            tx_slab: HeapSlab::with_capacity(BATCH),
            zero_copy,
            umem,
        })
    }

    /// True when bound in zero-copy mode.
    pub fn zero_copy(&self) -> bool {
        self.zero_copy
    }

    /// The socket's descriptor, for the XDP program's socket map.
    pub fn fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }

    /// Wait up to `timeout` for a frame; true if one is ready.
    pub fn wait(&self, timeout: Duration) -> io::Result<bool> {
        self.socket.poll_read(PollTimeout::new(Some(timeout)))
    }

    /// Send up to `n` (at most [`BATCH`]) new frames, each written by
    /// `write` into a free frame's buffer (returning its length, or `None`
    /// to stop). Returns how many were queued; fewer when no frame or ring
    /// slot is free (a load generator's side: sent frames come back on the
    /// completion ring).
    pub fn transmit(
        &mut self,
        n: usize,
        mut write: impl FnMut(&mut [u8]) -> Option<usize>,
    ) -> io::Result<usize> {
        self.completion.dequeue(&mut self.umem, RING as usize);
        for _ in 0..n.min(BATCH) {
            // SAFETY: the packet points into `umem`; it is queued for TX or
            // freed back to `umem` before this call returns.
            let Some(mut packet) = (unsafe { self.umem.alloc() }) else {
                break;
            };
            if !lend(&mut packet, |buf, _| write(buf)) {
                self.umem.free_packet(packet);
                break;
            }
            if !self.queue(packet) {
                break;
            }
        }
        Ok(self.flush()?.0)
    }

    /// Queue `packet` for the next [`Self::flush`]; false (and the packet
    /// freed) when the batch is full.
    fn queue(&mut self, packet: Packet) -> bool {
        match self.tx_slab.push_front(packet) {
            Some(p) => {
                self.umem.free_packet(p);
                false
            }
            None => true,
        }
    }

    /// Send the queued frames: (sent, dropped because the TX ring was full).
    fn flush(&mut self) -> io::Result<(usize, usize)> {
        if self.tx_slab.is_empty() {
            return Ok((0, 0));
        }
        // SAFETY: the packets belong to `umem`, which outlives the socket;
        // the kernel hands them back on the completion ring.
        let mut sent = unsafe { self.tx.send(&mut self.tx_slab, false) }?;
        if sent == 0 {
            // The ring takes a batch whole or not at all: make room from
            // the completions and try once more.
            self.completion.dequeue(&mut self.umem, RING as usize);
            // SAFETY: as above.
            sent = unsafe { self.tx.send(&mut self.tx_slab, false) }?;
        }
        self.kick()?;
        let mut dropped = 0;
        while let Some(p) = self.tx_slab.pop_back() {
            self.umem.free_packet(p);
            dropped += 1;
        }
        Ok((sent, dropped))
    }

    /// Tell the kernel the TX ring has frames. In copy mode one call sends
    /// a bounded batch and answers EAGAIN while more wait, so it is
    /// repeated (at most [`KICKS`] times); a full device queue (ENOBUFS)
    /// or a downed link is left for the next call, as libxdp does.
    fn kick(&self) -> io::Result<()> {
        use nix::errno::Errno;
        let fd = self.socket.as_raw_fd();
        for _ in 0..KICKS {
            match nix::sys::socket::send(fd, &[], nix::sys::socket::MsgFlags::MSG_DONTWAIT) {
                Ok(_) | Err(Errno::ENOBUFS | Errno::ENETDOWN) => return Ok(()),
                Err(Errno::EAGAIN | Errno::EBUSY | Errno::EINTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Give free frames to the kernel to receive into. The ring takes a
    /// request whole or not at all, so frames go in batches until it is
    /// full or none is free.
    fn refill(&mut self) -> io::Result<()> {
        loop {
            let n = self.umem.allocatable().min(BATCH);
            if n == 0 {
                return Ok(());
            }
            // SAFETY: as in `open`, the frames belong to `umem`, which
            // outlives the socket.
            if unsafe { self.fill.enqueue(&mut self.umem, n, false) }? < n {
                return Ok(());
            }
        }
    }

    /// Take up to [`BATCH`] received frames and offer each to `answer` as
    /// (the frame's whole buffer, the frame's length). `answer` returns the
    /// length of the reply it wrote into the same buffer, or `None` to
    /// drop the frame. Replies are sent, sent frames reclaimed, and free
    /// frames given back to the kernel.
    pub fn serve(
        &mut self,
        mut answer: impl FnMut(&mut [u8], usize) -> Option<usize>,
    ) -> io::Result<Served> {
        let mut served = Served::default();
        self.completion.dequeue(&mut self.umem, RING as usize);
        self.refill()?;
        // SAFETY: the packets point into `umem`; they are all either
        // queued for TX or freed back to `umem` before this call returns,
        // so none outlives it.
        served.received = unsafe { self.rx.recv(&self.umem, &mut self.rx_slab) };
        while let Some(mut packet) = self.rx_slab.pop_back() {
            if !lend(&mut packet, &mut answer) {
                self.umem.free_packet(packet);
            } else if !self.queue(packet) {
                served.tx_full += 1;
            }
        }
        let (sent, dropped) = self.flush()?;
        served.sent = sent;
        served.tx_full += dropped;
        Ok(served)
    }
}

/// Lend `packet`'s whole buffer to `write`, with the length of what it
/// holds; `write` returns the new length, or `None`. True when it did and
/// the packet now has that length.
fn lend(packet: &mut Packet, write: impl FnOnce(&mut [u8], usize) -> Option<usize>) -> bool {
    let len = packet.len();
    let grown = i32::try_from(packet.capacity() - len).is_ok_and(|r| packet.adjust_tail(r).is_ok());
    if !grown {
        return false;
    }
    let Some(n) = write(&mut packet[..], len).filter(|&n| n <= packet.len()) else {
        return false;
    };
    i32::try_from(packet.len() - n).is_ok_and(|shrink| packet.adjust_tail(-shrink).is_ok())
}
