//! Mode `server` of analyze (not implemented yet).

use std::process::ExitCode;

use crate::args::Args;

pub fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("server mode is not yet implemented")
}
