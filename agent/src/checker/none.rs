//! Protocol `none`: no probe; passes without touching the network.

use super::{Checker, ProbeFuture};
use crate::target::Target;

/// Always passes.
#[derive(Debug, Clone, Copy)]
pub struct NoneChecker;

impl Checker for NoneChecker {
    fn probe<'a>(&'a self, _target: &'a Target) -> ProbeFuture<'a> {
        Box::pin(async { Ok(()) })
    }
}
