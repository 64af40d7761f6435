//! The substitution parameters of the 22 queries (TPC-H clause 2.4.x.3), with
//! the spec's validation values as defaults, checking of user-given values, and
//! random draws by the spec's rules (as qgen's `varsub.c` draws them).
//!
//! Value lists (regions, nations, segments, ship modes, colors, types,
//! containers) come from `tpchgen`'s copy of dbgen's `dists.dss`, the same lists
//! the data was generated from.

use std::fmt;

use maestro_storage::column::{Date, Decimal};
use tpchgen::distribution::Distributions;

/// Fractional digits of Q11's FRACTION (0.0001 / SF down to SF 10⁴ exactly).
pub const FRACTION_SCALE: u8 = 10;

/// A parameter's typed value.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Int(i64),
    Decimal(Decimal),
    Date(Date),
    Str(String),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(v) => write!(f, "{v}"),
            ParamValue::Decimal(d) => write!(f, "{d}"),
            ParamValue::Date(d) => write!(f, "{d}"),
            ParamValue::Str(s) => write!(f, "{s}"),
        }
    }
}

/// Why a query number or a parameter was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamError {
    /// Not a query number in 1..=22.
    UnknownQuery(String),
    /// The query has no parameter of this name.
    UnknownName {
        query: u8,
        name: String,
        known: Vec<&'static str>,
    },
    /// The value is outside the parameter's domain.
    InvalidValue {
        query: u8,
        name: &'static str,
        value: String,
        expected: String,
    },
    /// Values that must differ, or agree, do not (Q7's two nations, Q8's region).
    Inconsistent { query: u8, reason: String },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::UnknownQuery(q) => {
                write!(f, "unknown query {q:?}: expected a number from 1 to 22")
            }
            ParamError::UnknownName { query, name, known } => write!(
                f,
                "Q{query} has no parameter {name:?}; its parameters are {}",
                known.join(", ")
            ),
            ParamError::InvalidValue {
                query,
                name,
                value,
                expected,
            } => write!(
                f,
                "Q{query} {name}={value:?} is invalid: expected {expected}"
            ),
            ParamError::Inconsistent { query, reason } => write!(f, "Q{query}: {reason}"),
        }
    }
}

impl std::error::Error for ParamError {}

/// The domain of one parameter: what a user may give, and what a random draw
/// picks from (uniformly).
#[derive(Clone, Copy, Debug)]
enum Domain {
    /// An integer in `[lo, hi]`; random draws from `[draw_lo, draw_hi]`.
    Int {
        lo: i64,
        hi: i64,
        draw_lo: i64,
        draw_hi: i64,
    },
    /// A decimal with 2 digits in `[lo, hi]` hundredths.
    Hundredths { lo: i64, hi: i64 },
    /// Any day in `[lo, hi]` (`YYYY-MM-DD`).
    Day { lo: &'static str, hi: &'static str },
    /// The first of a month from `lo` to `hi` (`YYYY-MM`).
    MonthStart { lo: &'static str, hi: &'static str },
    /// January 1 of a year in `[lo, hi]`.
    YearStart { lo: i32, hi: i32 },
    /// One of a list of strings.
    OneOf(List),
    /// `Brand#MN` with M, N in 1..=5.
    Brand,
    /// Q11's FRACTION: a decimal in (0, 1]; drawn as 0.0001 / SF.
    Fraction,
}

/// The value lists of [`Domain::OneOf`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Region,
    Nation,
    Segment,
    ShipMode,
    Color,
    /// The last syllable of a part type (`BRASS`, …).
    TypeSyllable3,
    /// A whole part type (`ECONOMY ANODIZED STEEL`, …).
    Type,
    /// The first two syllables of a part type (`MEDIUM POLISHED`, …).
    TypeSyllables12,
    /// A whole container (`MED BOX`, …).
    Container,
    Word1,
    Word2,
}

impl List {
    fn values(self) -> Vec<String> {
        let d = Distributions::static_default();
        let all = |dist: &tpchgen::distribution::Distribution| {
            dist.get_values().iter().map(|s| s.to_string()).collect()
        };
        let words = |n: usize, take: fn(&[&str]) -> String| {
            let mut v: Vec<String> = d
                .part_types()
                .get_values()
                .iter()
                .map(|t| take(&t.split(' ').collect::<Vec<_>>()))
                .collect();
            v.sort();
            v.dedup();
            debug_assert!(v.len() == n, "{v:?}");
            v
        };
        match self {
            List::Region => all(d.regions()),
            List::Nation => all(d.nations()),
            List::Segment => all(d.market_segments()),
            List::ShipMode => all(d.ship_modes()),
            List::Color => all(d.part_colors()),
            List::Type => all(d.part_types()),
            List::Container => all(d.part_containers()),
            List::TypeSyllable3 => words(5, |w| w[2].to_string()),
            List::TypeSyllables12 => words(30, |w| format!("{} {}", w[0], w[1])),
            List::Word1 => ["special", "pending", "unusual", "express"]
                .map(String::from)
                .to_vec(),
            List::Word2 => ["packages", "requests", "accounts", "deposits"]
                .map(String::from)
                .to_vec(),
        }
    }
}

/// The region of nation `name` (dbgen's nation → region key), if a nation.
pub fn region_of_nation(name: &str) -> Option<String> {
    let d = Distributions::static_default();
    let nations = d.nations();
    (0..nations.size())
        .find(|&i| nations.get_value(i) == name)
        .map(|i| {
            d.regions()
                .get_value(nations.get_weight(i) as usize)
                .to_string()
        })
}

struct ParamSpec {
    name: &'static str,
    domain: Domain,
    /// The validation value (clause 2.4.x.4); `None` for Q11's FRACTION,
    /// whose validation value depends on the scale factor.
    validation: Option<&'static str>,
}

const fn p(name: &'static str, domain: Domain, validation: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        domain,
        validation: Some(validation),
    }
}

const fn int(lo: i64, hi: i64) -> Domain {
    Domain::Int {
        lo,
        hi,
        draw_lo: lo,
        draw_hi: hi,
    }
}

const SIZE: Domain = int(1, 50);
const COUNTRY_CODE: Domain = int(10, 34);
const YEAR: Domain = Domain::YearStart { lo: 1993, hi: 1997 };
const NATION: Domain = Domain::OneOf(List::Nation);

/// The parameters of query `q` (1-based index into this table).
fn specs(q: u8) -> &'static [ParamSpec] {
    const Q: [&[ParamSpec]; 22] = [
        &[p("DELTA", int(60, 120), "90")],
        &[
            p("SIZE", SIZE, "15"),
            p("TYPE", Domain::OneOf(List::TypeSyllable3), "BRASS"),
            p("REGION", Domain::OneOf(List::Region), "EUROPE"),
        ],
        &[
            p("SEGMENT", Domain::OneOf(List::Segment), "BUILDING"),
            p(
                "DATE",
                Domain::Day {
                    lo: "1995-03-01",
                    hi: "1995-03-31",
                },
                "1995-03-15",
            ),
        ],
        &[p(
            "DATE",
            Domain::MonthStart {
                lo: "1993-01",
                hi: "1997-10",
            },
            "1993-07-01",
        )],
        &[
            p("REGION", Domain::OneOf(List::Region), "ASIA"),
            p("DATE", YEAR, "1994-01-01"),
        ],
        &[
            p("DATE", YEAR, "1994-01-01"),
            p("DISCOUNT", Domain::Hundredths { lo: 2, hi: 9 }, "0.06"),
            p("QUANTITY", int(24, 25), "24"),
        ],
        &[
            p("NATION1", NATION, "FRANCE"),
            p("NATION2", NATION, "GERMANY"),
        ],
        &[
            p("NATION", NATION, "BRAZIL"),
            p("REGION", Domain::OneOf(List::Region), "AMERICA"),
            p("TYPE", Domain::OneOf(List::Type), "ECONOMY ANODIZED STEEL"),
        ],
        &[p("COLOR", Domain::OneOf(List::Color), "green")],
        &[p(
            "DATE",
            Domain::MonthStart {
                lo: "1993-02",
                hi: "1995-01",
            },
            "1993-10-01",
        )],
        &[
            p("NATION", NATION, "GERMANY"),
            ParamSpec {
                name: "FRACTION",
                domain: Domain::Fraction,
                validation: None,
            },
        ],
        &[
            p("SHIPMODE1", Domain::OneOf(List::ShipMode), "MAIL"),
            p("SHIPMODE2", Domain::OneOf(List::ShipMode), "SHIP"),
            p("DATE", YEAR, "1994-01-01"),
        ],
        &[
            p("WORD1", Domain::OneOf(List::Word1), "special"),
            p("WORD2", Domain::OneOf(List::Word2), "requests"),
        ],
        &[p(
            "DATE",
            Domain::MonthStart {
                lo: "1993-01",
                hi: "1997-12",
            },
            "1995-09-01",
        )],
        &[p(
            "DATE",
            Domain::MonthStart {
                lo: "1993-01",
                hi: "1997-10",
            },
            "1996-01-01",
        )],
        &[
            p("BRAND", Domain::Brand, "Brand#45"),
            p(
                "TYPE",
                Domain::OneOf(List::TypeSyllables12),
                "MEDIUM POLISHED",
            ),
            p("SIZE1", SIZE, "49"),
            p("SIZE2", SIZE, "14"),
            p("SIZE3", SIZE, "23"),
            p("SIZE4", SIZE, "45"),
            p("SIZE5", SIZE, "19"),
            p("SIZE6", SIZE, "3"),
            p("SIZE7", SIZE, "36"),
            p("SIZE8", SIZE, "9"),
        ],
        &[
            p("BRAND", Domain::Brand, "Brand#23"),
            p("CONTAINER", Domain::OneOf(List::Container), "MED BOX"),
        ],
        // The validation value 300 lies below the random range [312, 315];
        // users may give any quantity an order could reach.
        &[p(
            "QUANTITY",
            Domain::Int {
                lo: 1,
                hi: 400,
                draw_lo: 312,
                draw_hi: 315,
            },
            "300",
        )],
        &[
            p("QUANTITY1", int(1, 10), "1"),
            p("QUANTITY2", int(10, 20), "10"),
            p("QUANTITY3", int(20, 30), "20"),
            p("BRAND1", Domain::Brand, "Brand#12"),
            p("BRAND2", Domain::Brand, "Brand#23"),
            p("BRAND3", Domain::Brand, "Brand#34"),
        ],
        &[
            p("COLOR", Domain::OneOf(List::Color), "forest"),
            p("DATE", YEAR, "1994-01-01"),
            p("NATION", NATION, "CANADA"),
        ],
        &[p("NATION", NATION, "SAUDI ARABIA")],
        &[
            p("I1", COUNTRY_CODE, "13"),
            p("I2", COUNTRY_CODE, "31"),
            p("I3", COUNTRY_CODE, "23"),
            p("I4", COUNTRY_CODE, "29"),
            p("I5", COUNTRY_CODE, "30"),
            p("I6", COUNTRY_CODE, "18"),
            p("I7", COUNTRY_CODE, "17"),
        ],
    ];
    Q[usize::from(q) - 1]
}

/// Groups of parameters that must all differ.
fn distinct_groups(q: u8) -> &'static [&'static [&'static str]] {
    match q {
        7 => &[&["NATION1", "NATION2"]],
        12 => &[&["SHIPMODE1", "SHIPMODE2"]],
        16 => &[&[
            "SIZE1", "SIZE2", "SIZE3", "SIZE4", "SIZE5", "SIZE6", "SIZE7", "SIZE8",
        ]],
        22 => &[&["I1", "I2", "I3", "I4", "I5", "I6", "I7"]],
        _ => &[],
    }
}

/// Parses a query number `1`..=`22` (also `q7`/`Q7`).
pub fn parse_query_number(s: &str) -> Result<u8, ParamError> {
    let digits = s.strip_prefix(['q', 'Q']).unwrap_or(s);
    match digits.parse::<u8>() {
        Ok(q @ 1..=22) => Ok(q),
        _ => Err(ParamError::UnknownQuery(s.to_string())),
    }
}

/// One query's parameter values.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryParams {
    query: u8,
    values: Vec<(&'static str, ParamValue)>,
}

impl QueryParams {
    /// The spec's validation values of query `q` at scale factor `sf` (Q11's
    /// FRACTION is 0.0001 / SF, as `qgen -d` writes it).
    pub fn validation(q: u8, sf: f64) -> Result<QueryParams, ParamError> {
        check_query(q)?;
        let values = specs(q)
            .iter()
            .map(|s| {
                let v = match s.validation {
                    Some(text) => parse(q, s, text).expect("validation values are valid"),
                    None => fraction_for(sf),
                };
                (s.name, v)
            })
            .collect();
        Ok(QueryParams { query: q, values })
    }

    /// Values drawn by the spec's rules, reproducibly from `seed`.
    pub fn random(q: u8, sf: f64, seed: u64) -> Result<QueryParams, ParamError> {
        check_query(q)?;
        let mut rng = fastrand::Rng::with_seed(seed ^ (u64::from(q) << 56));
        loop {
            let mut values: Vec<(&'static str, ParamValue)> = specs(q)
                .iter()
                .map(|s| (s.name, draw(&mut rng, s, sf)))
                .collect();
            if q == 8 {
                // REGION is the chosen nation's region, not a free draw.
                let nation = values[0].1.to_string();
                let region = region_of_nation(&nation).expect("a nation has a region");
                values[1].1 = ParamValue::Str(region);
            }
            let params = QueryParams { query: q, values };
            // Distinct groups are drawn by rejection, as qgen does.
            if params.check().is_ok() {
                return Ok(params);
            }
        }
    }

    pub fn query(&self) -> u8 {
        self.query
    }

    /// The parameter names of query `q`, in the spec's order.
    pub fn names(q: u8) -> Result<Vec<&'static str>, ParamError> {
        check_query(q)?;
        Ok(specs(q).iter().map(|s| s.name).collect())
    }

    /// Sets `name` from its text; checks the value's domain (not the
    /// consistency across parameters: see [`QueryParams::check`]).
    pub fn set(&mut self, name: &str, text: &str) -> Result<(), ParamError> {
        let q = self.query;
        let Some(spec) = specs(q).iter().find(|s| s.name.eq_ignore_ascii_case(name)) else {
            return Err(ParamError::UnknownName {
                query: q,
                name: name.to_string(),
                known: specs(q).iter().map(|s| s.name).collect(),
            });
        };
        let value = parse(q, spec, text)?;
        let slot = self
            .values
            .iter_mut()
            .find(|(n, _)| *n == spec.name)
            .expect("every spec has a value");
        slot.1 = value;
        Ok(())
    }

    /// Consistency across parameters: distinct groups differ; Q8's region is
    /// the nation's.
    pub fn check(&self) -> Result<(), ParamError> {
        for group in distinct_groups(self.query) {
            for (i, a) in group.iter().enumerate() {
                for b in &group[i + 1..] {
                    if self.get(a) == self.get(b) {
                        return Err(ParamError::Inconsistent {
                            query: self.query,
                            reason: format!("{a} and {b} must differ (both {})", self.get(a)),
                        });
                    }
                }
            }
        }
        if self.query == 8 {
            let (nation, region) = (self.str("NATION"), self.str("REGION"));
            let actual = region_of_nation(nation).expect("NATION was checked");
            if actual != region {
                return Err(ParamError::Inconsistent {
                    query: 8,
                    reason: format!("NATION {nation} lies in {actual}, not in REGION {region}"),
                });
            }
        }
        Ok(())
    }

    /// The value of `name`; panics on a name the query does not have (a bug
    /// in the query's code, never user input).
    pub fn get(&self, name: &str) -> &ParamValue {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("Q{} has no parameter {name}", self.query))
    }

    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            ParamValue::Int(v) => *v,
            other => panic!("Q{} {name} is {other:?}, not an integer", self.query),
        }
    }

    pub fn decimal(&self, name: &str) -> Decimal {
        match self.get(name) {
            ParamValue::Decimal(v) => *v,
            other => panic!("Q{} {name} is {other:?}, not a decimal", self.query),
        }
    }

    pub fn date(&self, name: &str) -> Date {
        match self.get(name) {
            ParamValue::Date(v) => *v,
            other => panic!("Q{} {name} is {other:?}, not a date", self.query),
        }
    }

    pub fn str(&self, name: &str) -> &str {
        match self.get(name) {
            ParamValue::Str(v) => v,
            other => panic!("Q{} {name} is {other:?}, not a string", self.query),
        }
    }

    /// `(name, value)` in the spec's order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &ParamValue)> {
        self.values.iter().map(|(n, v)| (*n, v))
    }
}

impl fmt::Display for QueryParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.iter().map(|(n, v)| format!("{n}={v}")).collect();
        write!(f, "{}", parts.join(" "))
    }
}

fn check_query(q: u8) -> Result<(), ParamError> {
    if (1..=22).contains(&q) {
        Ok(())
    } else {
        Err(ParamError::UnknownQuery(q.to_string()))
    }
}

fn fraction_for(sf: f64) -> ParamValue {
    let unit = Decimal::unit(FRACTION_SCALE) as f64;
    let value = ((0.0001 / sf) * unit).round().clamp(1.0, unit) as i64;
    ParamValue::Decimal(Decimal {
        value,
        scale: FRACTION_SCALE,
    })
}

fn parse(q: u8, spec: &ParamSpec, text: &str) -> Result<ParamValue, ParamError> {
    let invalid = |expected: String| ParamError::InvalidValue {
        query: q,
        name: spec.name,
        value: text.to_string(),
        expected,
    };
    let day = |s: &str| Date::parse(s).expect("domain bounds are dates");
    match spec.domain {
        Domain::Int { lo, hi, .. } => match text.trim().parse::<i64>() {
            Ok(v) if (lo..=hi).contains(&v) => Ok(ParamValue::Int(v)),
            _ => Err(invalid(format!("an integer from {lo} to {hi}"))),
        },
        Domain::Hundredths { lo, hi } => match Decimal::parse(text.trim(), 2) {
            Ok(d) if (lo..=hi).contains(&d.value) => Ok(ParamValue::Decimal(d)),
            _ => Err(invalid(format!(
                "a decimal from {} to {} with at most 2 digits after the point",
                Decimal {
                    value: lo,
                    scale: 2
                },
                Decimal {
                    value: hi,
                    scale: 2
                }
            ))),
        },
        Domain::Day { lo, hi } => match Date::parse(text.trim()) {
            Ok(d) if d >= day(lo) && d <= day(hi) => Ok(ParamValue::Date(d)),
            _ => Err(invalid(format!("a date from {lo} to {hi} (YYYY-MM-DD)"))),
        },
        Domain::MonthStart { lo, hi } => match Date::parse(text.trim()) {
            Ok(d)
                if d.ymd().2 == 1
                    && d >= day(&format!("{lo}-01"))
                    && d <= day(&format!("{hi}-01")) =>
            {
                Ok(ParamValue::Date(d))
            }
            _ => Err(invalid(format!(
                "the first day of a month from {lo} to {hi} (YYYY-MM-01)"
            ))),
        },
        Domain::YearStart { lo, hi } => match Date::parse(text.trim()) {
            Ok(d) if d.ymd().1 == 1 && d.ymd().2 == 1 && (lo..=hi).contains(&d.year()) => {
                Ok(ParamValue::Date(d))
            }
            _ => Err(invalid(format!("January 1 of a year from {lo} to {hi}"))),
        },
        Domain::OneOf(list) => {
            let values = list.values();
            if values.iter().any(|v| v == text) {
                Ok(ParamValue::Str(text.to_string()))
            } else {
                Err(invalid(format!("one of: {}", values.join(", "))))
            }
        }
        Domain::Brand => {
            let ok = text.len() == 8
                && text.starts_with("Brand#")
                && text[6..].bytes().all(|b| (b'1'..=b'5').contains(&b));
            if ok {
                Ok(ParamValue::Str(text.to_string()))
            } else {
                Err(invalid("Brand#MN with M and N from 1 to 5".into()))
            }
        }
        Domain::Fraction => match Decimal::parse(text.trim(), FRACTION_SCALE) {
            Ok(d) if d.value > 0 && d.value <= Decimal::unit(FRACTION_SCALE) => {
                Ok(ParamValue::Decimal(d))
            }
            _ => Err(invalid(format!(
                "a decimal in (0, 1] with at most {FRACTION_SCALE} digits after the point"
            ))),
        },
    }
}

fn draw(rng: &mut fastrand::Rng, spec: &ParamSpec, sf: f64) -> ParamValue {
    let day = |s: &str| Date::parse(s).expect("domain bounds are dates");
    match spec.domain {
        Domain::Int {
            draw_lo, draw_hi, ..
        } => ParamValue::Int(rng.i64(draw_lo..=draw_hi)),
        Domain::Hundredths { lo, hi } => ParamValue::Decimal(Decimal {
            value: rng.i64(lo..=hi),
            scale: 2,
        }),
        Domain::Day { lo, hi } => {
            let (lo, hi) = (day(lo), day(hi));
            ParamValue::Date(lo.add_days(rng.i32(0..=hi.days() - lo.days())))
        }
        Domain::MonthStart { lo, hi } => {
            let (lo, hi) = (day(&format!("{lo}-01")), day(&format!("{hi}-01")));
            let months = (hi.year() - lo.year()) * 12 + hi.ymd().1 as i32 - lo.ymd().1 as i32;
            ParamValue::Date(lo.add_months(rng.i32(0..=months)))
        }
        Domain::YearStart { lo, hi } => {
            ParamValue::Date(Date::from_ymd(rng.i32(lo..=hi), 1, 1).expect("January 1 is a date"))
        }
        Domain::OneOf(list) => {
            let values = list.values();
            ParamValue::Str(values[rng.usize(..values.len())].clone())
        }
        Domain::Brand => ParamValue::Str(format!("Brand#{}{}", rng.u8(1..=5), rng.u8(1..=5))),
        Domain::Fraction => fraction_for(sf),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_values_are_the_specs() {
        let q2 = QueryParams::validation(2, 1.0).unwrap();
        assert_eq!(q2.to_string(), "SIZE=15 TYPE=BRASS REGION=EUROPE");
        let q11 = QueryParams::validation(11, 0.01).unwrap();
        assert_eq!(q11.decimal("FRACTION").to_string(), "0.0100000000");
        assert_eq!(
            QueryParams::validation(11, 1.0)
                .unwrap()
                .decimal("FRACTION"),
            Decimal::parse("0.0001", FRACTION_SCALE).unwrap()
        );
        for q in 1..=22 {
            QueryParams::validation(q, 1.0).unwrap().check().unwrap();
        }
    }

    #[test]
    fn lists_have_the_specs_sizes() {
        assert_eq!(List::Region.values().len(), 5);
        assert_eq!(List::Nation.values().len(), 25);
        assert_eq!(List::Color.values().len(), 92);
        assert_eq!(List::Type.values().len(), 150);
        assert_eq!(List::TypeSyllable3.values().len(), 5);
        assert_eq!(List::TypeSyllables12.values().len(), 30);
        assert_eq!(List::Container.values().len(), 40);
        assert_eq!(region_of_nation("BRAZIL").as_deref(), Some("AMERICA"));
        assert_eq!(
            region_of_nation("SAUDI ARABIA").as_deref(),
            Some("MIDDLE EAST")
        );
    }

    #[test]
    fn random_draws_are_valid_and_reproducible() {
        for seed in 0..50 {
            for q in 1..=22 {
                let a = QueryParams::random(q, 1.0, seed).unwrap();
                assert_eq!(a, QueryParams::random(q, 1.0, seed).unwrap());
                a.check().unwrap();
                // Every drawn value reads back through `set`.
                let mut b = QueryParams::validation(q, 1.0).unwrap();
                for (name, value) in a.iter() {
                    b.set(name, &value.to_string())
                        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
                }
                assert_eq!(a, b, "seed {seed}");
            }
        }
    }

    #[test]
    fn bad_input_is_refused_with_a_reason() {
        assert!(parse_query_number("23").is_err());
        assert!(parse_query_number("0").is_err());
        assert_eq!(parse_query_number("Q7"), Ok(7));
        let mut q1 = QueryParams::validation(1, 1.0).unwrap();
        assert!(matches!(
            q1.set("DELTA", "121"),
            Err(ParamError::InvalidValue { .. })
        ));
        assert!(matches!(
            q1.set("COLOR", "red"),
            Err(ParamError::UnknownName { .. })
        ));
        q1.set("delta", "60").unwrap();
        assert_eq!(q1.int("DELTA"), 60);
        let mut q4 = QueryParams::validation(4, 1.0).unwrap();
        assert!(q4.set("DATE", "1993-07-02").is_err());
        assert!(q4.set("DATE", "1997-11-01").is_err());
        let mut q7 = QueryParams::validation(7, 1.0).unwrap();
        q7.set("NATION2", "FRANCE").unwrap();
        assert!(matches!(q7.check(), Err(ParamError::Inconsistent { .. })));
        let mut q8 = QueryParams::validation(8, 1.0).unwrap();
        q8.set("REGION", "ASIA").unwrap();
        assert!(q8.check().is_err());
        let mut q16 = QueryParams::validation(16, 1.0).unwrap();
        assert!(q16.set("BRAND", "Brand#61").is_err());
        let e = q16.set("TYPE", "MEDIUM").unwrap_err().to_string();
        assert!(e.contains("MEDIUM POLISHED"), "{e}");
    }
}
