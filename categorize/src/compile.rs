//! The `categorize` tool: INI rules (docs/formats.md#category-ini) to compiled JSON (f.2).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use unitrace_core::atomic::{ensure_not_input, write_atomic};
use unitrace_core::category_schema::compile_rules;
use unitrace_core::cli::warn;
use unitrace_core::ini_schema::{parse_ini, IniOptions};
use unitrace_core::whole_file::{read_capped, MAX_INI_BYTES};
use unitrace_core::InputError;

#[derive(Parser, Debug, Clone)]
#[command(
    name = "categorize",
    version,
    about = "Compile an INI file of kernel categories into the JSON search tree used by `summary`",
    infer_long_args = true
)]
pub struct CategorizeArgs {
    /// INI file with the category rules.
    #[arg(long = "ini", visible_alias = "input", value_name = "INI")]
    pub ini: PathBuf,

    /// Compiled JSON schema to write.
    #[arg(long = "json", visible_alias = "output", value_name = "JSON")]
    pub json: PathBuf,

    /// Remove spaces and tabs from tags and names (default).
    #[arg(long = "remove-spaces", overrides_with = "no_remove_spaces")]
    pub remove_spaces: bool,

    /// Keep spaces in tags; `summary` then matches names with their spaces.
    #[arg(long = "no-remove-spaces", overrides_with = "remove_spaces")]
    pub no_remove_spaces: bool,

    /// Keep dotted section names (`allreduce.nocopy`) as categories instead
    /// of cutting them at the first `.` as the original does.
    #[arg(long = "keep-dotted")]
    pub keep_dotted: bool,

    /// -vv or -vvv: write the JSON indented by 3 (as categorize.py does).
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
}

pub fn run(args: &CategorizeArgs) -> Result<ExitCode> {
    ensure_not_input(&args.json, &[&args.ini])?;
    let bytes = read_capped(&args.ini, MAX_INI_BYTES, "category INI file")?;
    let text =
        String::from_utf8(bytes).map_err(|_| InputError::at_file(&args.ini, "not UTF-8 text"))?;
    let options = IniOptions {
        remove_spaces: !args.no_remove_spaces,
        keep_dotted: args.keep_dotted,
    };
    let schema = parse_ini(&args.ini, &text, options)?;
    for w in &schema.warnings {
        warn(
            "categorize",
            format!("{}:{}: {}", args.ini.display(), w.line, w.message),
        );
    }
    for rule in &schema.rules {
        if rule.condition == unitrace_core::ini_schema::Condition::MatchesRegex {
            regex::Regex::new(&rule.tag).map_err(|e| {
                InputError::at_line(
                    &args.ini,
                    rule.line,
                    format!(
                        "invalid regex: {}",
                        unitrace_core::cli::one_line(&e.to_string())
                    ),
                )
            })?;
        }
    }
    let json = compile_rules(&schema.rules, options.remove_spaces);
    // categorize.py indents by 3 at INFO/DEBUG level (-vv, -vvv); at -vvvv
    // it profiles and writes the compact form again.
    let indent = matches!(args.verbose, 2 | 3).then_some(3);
    let text = json.to_python_json(indent);
    write_atomic(&args.json, text.as_bytes())
        .map_err(|e| InputError::at_file(&args.json, format!("cannot write: {e}")))?;
    Ok(ExitCode::SUCCESS)
}
