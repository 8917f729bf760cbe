//! `gslbctl`: parse the command line, run it against the aggregator, print
//! the result; errors go to stderr as `gslbctl: <message>` with exit code 1.

use std::io::Write;

use clap::Parser;
use gslb_ctl::{Cli, run};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    match run(Cli::parse()).await {
        Ok(text) => {
            // A closed stdout (e.g. piped to `head`) is not an error worth reporting.
            let _ = std::io::stdout().write_all(text.as_bytes());
        }
        Err(err) => {
            // Errors quote documents and servers: escape what a terminal
            // would act on or hide, line by line.
            let text = err.to_string();
            let shown: Vec<String> = text.lines().map(gslb_ctl::table::clean_line).collect();
            let _ = writeln!(std::io::stderr(), "gslbctl: {}", shown.join("\n"));
            std::process::exit(1);
        }
    }
}
