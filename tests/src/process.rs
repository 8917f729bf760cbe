//! Child processes with their output collected line by line, killed on drop.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::wait::wait_until;

/// Lines a child printed, collected by a reader thread.
#[derive(Clone, Default)]
pub struct Lines(Arc<Mutex<Vec<String>>>, Arc<AtomicBool>);

impl Lines {
    fn follow(self, stream: impl Read + Send + 'static) -> Self {
        let lines = self.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { break };
                lines.0.lock().expect("lines lock").push(line);
            }
            lines.1.store(true, Ordering::SeqCst);
        });
        self
    }

    /// True once the stream is closed and every line of it is read.
    pub fn ended(&self) -> bool {
        self.1.load(Ordering::SeqCst)
    }

    /// Lines so far.
    pub fn all(&self) -> Vec<String> {
        self.0.lock().expect("lines lock").clone()
    }

    /// True when some line contains `text`.
    pub fn contains(&self, text: &str) -> bool {
        self.all().iter().any(|l| l.contains(text))
    }

    /// How many lines contain `text`.
    pub fn count(&self, text: &str) -> usize {
        self.all().iter().filter(|l| l.contains(text)).count()
    }

    /// The address of the last "NAME listening on ADDR" line, waiting for one.
    pub fn listening(&self, name: &str, secs: u64) -> SocketAddr {
        let prefix = format!("{name} listening on ");
        let mut found = None;
        wait_until(secs, &prefix, || {
            found = self.all().iter().rev().find_map(|l| {
                l.strip_prefix(&prefix)
                    .map(|a| a.parse().expect("listening address"))
            });
            found.is_some()
        });
        found.expect("listening line")
    }
}

/// A child process, killed on drop.
pub struct Proc {
    /// The child.
    pub child: Child,
    /// What it printed on stdout.
    pub stdout: Lines,
    /// What it printed on stderr (logs).
    pub stderr: Lines,
}

impl Proc {
    /// Start `bin args`, inside network namespace `netns` when given.
    pub fn spawn(netns: Option<&str>, bin: &Path, args: &[&str]) -> Proc {
        Self::spawn_logging(netns, bin, args, "info")
    }

    /// [`Proc::spawn`] with `RUST_LOG` set to `filter`.
    pub fn spawn_logging(netns: Option<&str>, bin: &Path, args: &[&str], filter: &str) -> Proc {
        let mut cmd = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        let mut child = cmd
            .args(args)
            .env("RUST_LOG", filter)
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", bin.display()));
        let stdout = Lines::default().follow(child.stdout.take().expect("stdout"));
        let stderr = Lines::default().follow(child.stderr.take().expect("stderr"));
        Proc {
            child,
            stdout,
            stderr,
        }
    }

    /// Send SIGTERM (the orderly stop every binary handles).
    pub fn terminate(&self) {
        self.signal("TERM");
    }

    /// Send signal `name` (`TERM`, `STOP`, `CONT`, ...).
    pub fn signal(&self, name: &str) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill")
            .args([&format!("-{name}"), &pid])
            .status();
    }

    /// SIGKILL and reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// True once the process has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Wait for the process to exit and its output to be read to the end
    /// (the reader threads can lag behind the exit); stderr then stdout.
    pub fn output_at_exit(&mut self, secs: u64) -> (std::process::ExitStatus, String) {
        wait_until(secs, "the process to exit", || self.exited());
        wait_until(secs, "its output to be read", || {
            self.stdout.ended() && self.stderr.ended()
        });
        let status = self.child.wait().expect("exit status");
        let text = self.stderr.all().join("\n") + &self.stdout.all().join("\n");
        (status, text)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}
