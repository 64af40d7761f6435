//! Flags spelled one way across the commands: `--reps` for repetitions, and the
//! old spellings of renamed flags, which keep working for one release with a
//! warning on stderr. (A clap alias would accept them silently, so each old
//! spelling is a hidden flag of its own that conflicts with the new one.)

use std::process::ExitCode;

use crate::exit::usage;

/// The value of a renamed flag: the new spelling's, or the old one's with a
/// deprecation warning.
pub(crate) fn renamed<T>(
    new: Option<T>,
    old: Option<T>,
    old_flag: &str,
    new_flag: &str,
) -> Option<T> {
    match old {
        Some(v) => {
            eprintln!("warning: {old_flag} is deprecated; use {new_flag}");
            Some(v)
        }
        None => new,
    }
}

/// The repetitions of every variant: `--reps` if given, else 3, or 1 with
/// `--quick`; 0 or absurd counts exit 2.
pub(crate) fn reps(given: Option<usize>, quick: bool) -> Result<usize, ExitCode> {
    let n = given.unwrap_or_else(|| maestro_bench::reps::default_reps(quick));
    maestro_bench::reps::check_reps(n).map_err(usage)
}

/// `--duration` in seconds: positive and finite, else exit 2.
pub(crate) fn duration(given: Option<f64>) -> Result<Option<std::time::Duration>, ExitCode> {
    match given {
        Some(d) if !(d > 0.0 && d.is_finite()) => {
            Err(usage("--duration must be a positive number of seconds"))
        }
        d => Ok(d.map(std::time::Duration::from_secs_f64)),
    }
}
