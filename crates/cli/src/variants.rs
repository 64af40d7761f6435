//! The values a flag accepts, as clap value enums, so that `--help` lists them
//! and a bad value exits 2 with the list. One enum per set of variants a
//! command can run; each mirrors a list the library owns (a test keeps them
//! equal), and `name()` gives the library's spelling back.

use clap::ValueEnum;
use clap::builder::{PossibleValue, TypedValueParser};
use maestro_execution::Granularity;

/// The spelling clap shows and the library takes.
pub(crate) fn name_of(v: &impl ValueEnum) -> String {
    v.to_possible_value()
        .expect("no variant is skipped")
        .get_name()
        .to_string()
}

/// The names of `given`, or of every value when nothing was given.
pub(crate) fn names_or_all<E: ValueEnum>(given: Option<Vec<E>>) -> Vec<String> {
    match given {
        Some(v) => v.iter().map(name_of).collect(),
        None => E::value_variants().iter().map(name_of).collect(),
    }
}

/// `bench scheduler`: rayon and the scheduler presets
/// (`maestro_bench::scheduler::VARIANTS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SchedulerVariant {
    Rayon,
    SinglePool,
    SinglePoolPaper,
    SinglePoolNosys,
    SingleHints,
}

/// The analytical engine variants: scheduler presets and the papers'
/// thread-pool baselines (`maestro_bench::tpch::ENGINE_VARIANTS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum EngineVariant {
    MultiplePools,
    SinglePoolNosys,
    SinglePool,
    SingleHints,
    Rayon,
}

/// `bench mixed`/`timeline`: the engine variants and `single-classes`
/// (`maestro_bench::mixed_bench::MIXED_VARIANTS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum MixedVariant {
    MultiplePools,
    SinglePoolNosys,
    SinglePool,
    SingleHints,
    Rayon,
    SingleClasses,
}

/// TPC-C execution: one scheduler task per transaction on a preset, or each
/// terminal on its own thread (`maestro_tpcc::driver::Mode::ALL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum TpccVariant {
    SinglePool,
    SinglePoolNosys,
    SingleHints,
    Receivers,
}

/// TPC-C concurrency control (`maestro_tpcc::driver::Cc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum TpccCc {
    /// Strict two-phase locking on row tables.
    #[value(name = "2pl")]
    TwoPl,
    /// Snapshot isolation on versioned tables (first updater wins).
    Mvcc,
    /// The transactions as SQL statements on the SQL store (main + delta
    /// columns; snapshot isolation, row locks on write).
    Sql,
}

/// The isolation level of `--cc sql`'s transactions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SqlIsolation {
    /// Snapshot isolation: a row another transaction changed since the
    /// snapshot is a conflict (40001), and the transaction runs again.
    RepeatableRead,
    /// Each statement on a fresh snapshot: a waiting UPDATE applies to
    /// the committed row (hot rows do not abort).
    ReadCommitted,
}

/// A scheduler preset (`maestro_scheduler::SchedulerConfig::preset`). The
/// shared prefix is the presets' own names.
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Preset {
    SinglePool,
    SinglePoolPaper,
    SinglePoolNosys,
    SingleHints,
}

/// Parses a granularity policy (`fixed:N` takes a number, so this is not a
/// value enum) and lists the accepted forms for `--help`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GranularityParser;

impl TypedValueParser for GranularityParser {
    type Value = Granularity;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Granularity, clap::Error> {
        let text = value.to_string_lossy();
        text.parse::<Granularity>().map_err(|e| {
            let flag = arg.map_or_else(|| "value".to_string(), |a| a.to_string());
            clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!(
                    "invalid value '{text}' for '{flag}': {e} \
                     [possible values: static, hint, adaptive, fixed:N]\n"
                ),
            )
            .with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            ["static", "hint", "adaptive", "fixed:N"]
                .into_iter()
                .map(PossibleValue::new),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all<E: ValueEnum>() -> Vec<String> {
        names_or_all::<E>(None)
    }

    #[test]
    fn each_enum_lists_exactly_what_the_library_accepts() {
        assert_eq!(
            all::<SchedulerVariant>(),
            maestro_bench::scheduler::VARIANTS
        );
        assert_eq!(all::<EngineVariant>(), maestro_bench::tpch::ENGINE_VARIANTS);
        assert_eq!(
            all::<MixedVariant>(),
            maestro_bench::mixed_bench::MIXED_VARIANTS
        );
        let modes: Vec<&str> = maestro_tpcc::driver::Mode::ALL
            .iter()
            .map(|m| m.name())
            .collect();
        assert_eq!(all::<TpccVariant>(), modes);
        let ccs: Vec<&str> = maestro_tpcc::driver::Cc::ALL
            .iter()
            .map(|c| c.name())
            .collect();
        assert_eq!(all::<TpccCc>(), ccs);
        for p in all::<Preset>() {
            assert!(
                maestro_scheduler::SchedulerConfig::preset(&p).is_ok(),
                "{p}"
            );
        }
    }

    #[test]
    fn granularity_parser_takes_fixed_n_and_rejects_the_rest() {
        let cmd = clap::Command::new("t");
        let parse = |s: &str| GranularityParser.parse_ref(&cmd, None, std::ffi::OsStr::new(s));
        assert_eq!(parse("fixed:3").unwrap(), Granularity::Fixed(3));
        assert_eq!(parse("hint").unwrap(), Granularity::Hint);
        let e = parse("sometimes").unwrap_err().to_string();
        assert!(e.contains("possible values"), "{e}");
    }
}
