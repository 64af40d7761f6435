//! The committed reference answers (`crates/tpch/answers/`, DuckDB on the same
//! data, see its README): which parameter sets exist, and each set's CSV.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::check::{Answer, Mismatch, parse_csv};
use super::params::{ParamError, QueryParams};

/// The directory of the SF 0.01 answers in this source tree.
pub fn answers_dir() -> PathBuf {
    answers_dir_at(ANSWERS_SCALE_FACTOR).expect("SF 0.01 answers are committed")
}

/// The scale factor of [`answers_dir`]'s answers.
pub const ANSWERS_SCALE_FACTOR: f64 = 0.01;

/// The scale factors with committed answers (`answers/sf<SF>/`).
pub const ANSWER_SCALE_FACTORS: [f64; 2] = [0.01, 0.1];

/// The directory of the answers at scale factor `sf` in this source tree, if
/// answers at that scale factor are committed (see [`ANSWER_SCALE_FACTORS`]).
pub fn answers_dir_at(sf: f64) -> Option<PathBuf> {
    let label = match sf {
        0.01 => "sf0.01",
        0.1 => "sf0.1",
        _ => return None,
    };
    Some(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("answers")
            .join(label),
    )
}

/// The directory of the answers after `pairs` refresh pairs (RF1 then RF2
/// of sets 1..=pairs, `answers/refreshed.py`) at scale factor `sf`, if
/// committed: `answers/sf<SF>-refresh<pairs>/`.
pub fn refreshed_answers_dir(sf: f64, pairs: u32) -> Option<PathBuf> {
    let base = answers_dir_at(sf)?;
    let name = format!("{}-refresh{pairs}", base.file_name()?.to_str()?);
    let dir = base.with_file_name(name);
    dir.join("params.json").is_file().then_some(dir)
}

/// One parameter set with a reference answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerSet {
    pub query: u8,
    /// `validation`, `random1`…
    pub set: String,
    /// `(name, value)` as in the spec's SQL.
    pub params: Vec<(String, String)>,
}

impl AnswerSet {
    /// The parameters as [`QueryParams`] (validation values, then overridden).
    pub fn query_params(&self, sf: f64) -> Result<QueryParams, ParamError> {
        let mut p = QueryParams::validation(self.query, sf)?;
        for (name, value) in &self.params {
            p.set(name, value)?;
        }
        p.check()?;
        Ok(p)
    }

    /// The reference answer of this set in `dir`.
    pub fn answer(&self, dir: &Path) -> Result<Answer, Mismatch> {
        let path = dir.join(format!("q{}_{}.csv", self.query, self.set));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Mismatch(format!("{}: {e}", path.display())))?;
        parse_csv(&text).map_err(|e| Mismatch(format!("{}: {e}", path.display())))
    }
}

/// The parameter sets listed in `dir/params.json`.
pub fn answer_sets(dir: &Path) -> Result<Vec<AnswerSet>, Mismatch> {
    let path = dir.join("params.json");
    let bad = |why: String| Mismatch(format!("{}: {why}", path.display()));
    let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
    let json: Json = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let entries = json
        .as_array()
        .ok_or_else(|| bad("not a JSON array".into()))?;
    entries
        .iter()
        .map(|e| {
            let query = e["query"]
                .as_u64()
                .and_then(|q| u8::try_from(q).ok())
                .ok_or_else(|| bad(format!("entry without a query number: {e}")))?;
            let set = e["set"]
                .as_str()
                .ok_or_else(|| bad(format!("entry without a set name: {e}")))?
                .to_string();
            let params = e["params"]
                .as_object()
                .ok_or_else(|| bad(format!("entry without params: {e}")))?
                .iter()
                .map(|(k, v)| {
                    Ok((
                        k.clone(),
                        v.as_str()
                            .ok_or_else(|| bad(format!("{k} is not a string")))?
                            .to_string(),
                    ))
                })
                .collect::<Result<Vec<_>, Mismatch>>()?;
            Ok(AnswerSet { query, set, params })
        })
        .collect()
}

/// dbgen's official SF 1 answer to query `q` (validation parameters), as the
/// `tpchgen` crate ships it; compare with [`super::check::compare_official`].
pub fn official_sf1(q: u8) -> Option<&'static str> {
    tpchgen::q_and_a::answers_sf1::answer(i32::from(q))
}
