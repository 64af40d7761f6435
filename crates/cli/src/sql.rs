//! `maestro sql`: one SQL statement over the TPC-H tables.

use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use maestro_bench::tpch;
use maestro_execution::{Executor, Granularity};
use maestro_sql::{ErrorKind, Output, SqlError, TpchCatalog};
use maestro_tpch::queries::OutputFormat;

use crate::exit::{failure, usage};
use crate::tpch::{contexts, scale_factor};
use crate::variants::GranularityParser;

#[derive(Args)]
pub struct SqlArgs {
    /// The statement: a SELECT over the eight TPC-H tables, or EXPLAIN [ANALYZE] SELECT ….
    statement: String,
    /// Run the statement and print its plan with each operator's actual rows,
    /// time, tasks and memory instead of its rows (as `EXPLAIN ANALYZE …`).
    #[arg(long)]
    explain_analyze: bool,
    /// Scale factor of the TPC-H data to load (0.01 to 10).
    #[arg(long, default_value_t = 1.0)]
    sf: f64,
    /// Print the result as one JSON object (default: an aligned table).
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print the result as CSV.
    #[arg(long)]
    csv: bool,
    /// Granularity policy of the operators.
    #[arg(long, default_value = "hint", value_parser = GranularityParser)]
    granularity: Granularity,
    /// Hardware contexts to use (default: detected).
    #[arg(long)]
    contexts: Option<usize>,
    /// Print each operator's tasks and time to stderr.
    #[arg(long)]
    profile: bool,
}

/// Bad SQL (syntax, names, types, unsupported constructs) is bad input: exit 2.
fn sql_error(e: SqlError) -> ExitCode {
    match e.kind {
        ErrorKind::Execution => failure(e),
        _ => usage(e),
    }
}

pub fn run(a: SqlArgs) -> ExitCode {
    sql(a).unwrap_or_else(|code| code)
}

fn sql(mut a: SqlArgs) -> Result<ExitCode, ExitCode> {
    // Syntax first: no need to load data to reject it.
    maestro_sql::parse(&a.statement).map_err(sql_error)?;
    if a.explain_analyze {
        let first = a.statement.split_whitespace().next().unwrap_or("");
        if first.eq_ignore_ascii_case("explain") {
            return Err(usage(
                "--explain-analyze takes the statement itself, not an EXPLAIN",
            ));
        }
        a.statement = format!("EXPLAIN ANALYZE {}", a.statement);
    }
    let sf = scale_factor(a.sf)?;
    let scheduler =
        tpch::start_scheduler("single-hints", contexts(a.contexts)?).map_err(failure)?;
    eprintln!("loading TPC-H SF {sf} …");
    let (db, load) = tpch::load(&scheduler, sf, &|_| {}).map_err(failure)?;
    eprintln!("loaded in {:.2} s", load.as_secs_f64());
    let exec = Executor::new(scheduler, a.granularity);
    let start = Instant::now();
    let (output, profile) =
        maestro_sql::execute_profiled(&exec, &TpchCatalog::new(&db), &a.statement)
            .map_err(sql_error)?;
    let elapsed = start.elapsed();
    match output {
        Output::Explain(plan) => {
            if a.json {
                let lines: Vec<&str> = plan.lines().collect();
                println!("{}", serde_json::json!({ "plan": lines }));
            } else {
                print!("{plan}");
            }
        }
        Output::Rows(result) => {
            let format = match (a.json, a.csv) {
                (true, _) => OutputFormat::Json,
                (_, true) => OutputFormat::Csv,
                _ => OutputFormat::Table,
            };
            print!("{}", result.format(format));
            if format == OutputFormat::Json {
                println!();
            }
            eprintln!(
                "{} row(s) in {:.4} s, {} operator task(s), granularity {}",
                result.len(),
                elapsed.as_secs_f64(),
                profile.as_ref().map_or(0, |p| p.tasks),
                a.granularity
            );
        }
    }
    if a.profile
        && let Some(p) = profile
    {
        eprintln!("{}", p.summary());
    }
    Ok(ExitCode::SUCCESS)
}
