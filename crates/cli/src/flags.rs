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

/// `--class SPEC`'s parser (the grammar is `maestro_scheduler::ClassSpec`'s
/// `FromStr`, one for every command): a bad spec exits 2 naming its key.
pub(crate) fn class_spec(s: &str) -> Result<maestro_scheduler::ClassSpec, String> {
    let spec: maestro_scheduler::ClassSpec = s
        .parse()
        .map_err(|e: maestro_scheduler::ClassSpecError| e.to_string())?;
    // Every preset has these levels; checked here so that a bad priority
    // exits 2 like the other keys, before anything loads.
    let levels = maestro_scheduler::SchedulerConfig::single_hints().priority_levels;
    if spec.priority >= levels {
        return Err(format!(
            "workload class spec: bad priority: {} not below the scheduler's {levels} levels",
            spec.priority
        ));
    }
    Ok(spec)
}

/// [`class_spec`], boxed (for argument structs clippy finds large).
pub(crate) fn class_spec_boxed(s: &str) -> Result<Box<maestro_scheduler::ClassSpec>, String> {
    class_spec(s).map(Box::new)
}

/// Defines the `--class` classes on `scheduler`, in order; a class the
/// scheduler refuses (a priority beyond its levels, a name given twice)
/// exits 2.
pub(crate) fn define_classes(
    scheduler: &maestro_scheduler::Scheduler,
    specs: &[maestro_scheduler::ClassSpec],
) -> Result<Vec<maestro_scheduler::ClassId>, ExitCode> {
    specs
        .iter()
        .map(|spec| {
            scheduler
                .define_class(spec)
                .map_err(|e| usage(format!("--class {}: {e}", spec.name)))
        })
        .collect()
}
