//! Name compression for responses: `domain`'s [`StaticCompressor`], with a
//! shortcut for the most common owner of all, the query name itself. Every
//! answer record owned by the query name would otherwise be compared label
//! by label with the names already written; here it is recognised by
//! identity (it is the very slice the request parsed) and written as a
//! pointer to the question (RFC 1035 §4.1.4).

use domain::base::ToName;
use domain::base::message_builder::StaticCompressor;
use domain::base::wire::Composer;
use domain::dep::octseq::{OctetsBuilder, Truncate};

/// Where a message's question starts: right after the 12-byte header.
const QUESTION: usize = 12;

/// A compressing target over a reused buffer.
#[derive(Debug)]
pub struct Compressor<'b> {
    inner: StaticCompressor<&'b mut Vec<u8>>,
    /// Address and length of the request's query name.
    qname: (usize, usize),
    /// Where the question's name was written, once it was.
    question_at: Option<u16>,
}

impl<'b> Compressor<'b> {
    /// Compress into `out`; `qname` is the request's flat query name.
    pub fn new(out: &'b mut Vec<u8>, qname: &[u8]) -> Self {
        Self {
            inner: StaticCompressor::new(out),
            qname: (qname.as_ptr() as usize, qname.len()),
            question_at: None,
        }
    }

    fn is_qname<N: ToName + ?Sized>(&self, name: &N) -> bool {
        let (at, len) = self.qname;
        name.as_flat_slice()
            .is_some_and(|flat| flat.as_ptr() as usize == at && flat.len() == len)
    }
}

impl AsRef<[u8]> for Compressor<'_> {
    fn as_ref(&self) -> &[u8] {
        self.inner.as_ref()
    }
}

impl AsMut<[u8]> for Compressor<'_> {
    fn as_mut(&mut self) -> &mut [u8] {
        self.inner.as_mut()
    }
}

impl OctetsBuilder for Compressor<'_> {
    type AppendError = <Vec<u8> as OctetsBuilder>::AppendError;

    fn append_slice(&mut self, slice: &[u8]) -> Result<(), Self::AppendError> {
        self.inner.append_slice(slice)
    }
}

impl Truncate for Compressor<'_> {
    fn truncate(&mut self, len: usize) {
        if self.question_at.is_some_and(|at| usize::from(at) >= len) {
            self.question_at = None;
        }
        self.inner.truncate(len);
    }
}

impl Composer for Compressor<'_> {
    fn append_compressed_name<N: ToName + ?Sized>(
        &mut self,
        name: &N,
    ) -> Result<(), Self::AppendError> {
        if self.is_qname(name) {
            match self.question_at {
                Some(at) => return self.append_slice(&(0xC000 | at).to_be_bytes()),
                // The first time is the question itself, right after the
                // header: written in full (and known to the inner
                // compressor for suffixes).
                None if self.inner.as_ref().len() == QUESTION => {
                    self.question_at = Some(QUESTION as u16);
                }
                None => {}
            }
        }
        self.inner.append_compressed_name(name)
    }

    fn can_compress(&self) -> bool {
        true
    }
}
