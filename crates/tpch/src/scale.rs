//! Scale factors: the accepted range and the spec's row counts.

use crate::LoadError;

/// The smallest scale factor accepted.
pub const MIN_SCALE_FACTOR: f64 = 0.01;
/// The largest scale factor accepted (≈ 10 GB of TPC-H text, ~ 11 GB in memory).
pub const MAX_SCALE_FACTOR: f64 = 10.0;

/// Checks that `sf` is a finite number in `MIN_SCALE_FACTOR..=MAX_SCALE_FACTOR`.
pub fn validate_scale_factor(sf: f64) -> Result<f64, LoadError> {
    let reason = if sf.is_nan() {
        "not a number"
    } else if sf.is_infinite() {
        "not finite"
    } else if sf < MIN_SCALE_FACTOR {
        "below the minimum 0.01"
    } else if sf > MAX_SCALE_FACTOR {
        "above the maximum 10"
    } else {
        return Ok(sf);
    };
    Err(LoadError::InvalidScaleFactor { value: sf, reason })
}

/// The row count the TPC-H specification (§4.2.5) fixes for `table` at `sf`;
/// `None` for `lineitem` (about `6_000_000 × sf`, decided by the generator)
/// and for unknown tables.
pub fn spec_row_count(table: &str, sf: f64) -> Option<u64> {
    let scaled = |base: f64| (base * sf) as u64;
    Some(match table {
        "region" => 5,
        "nation" => 25,
        "supplier" => scaled(10_000.0),
        "customer" => scaled(150_000.0),
        "part" => scaled(200_000.0),
        "partsupp" => 4 * scaled(200_000.0),
        "orders" => scaled(1_500_000.0),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_and_bad_values() {
        for ok in [0.01, 0.1, 1.0, 3.5, 10.0] {
            assert_eq!(validate_scale_factor(ok).unwrap(), ok);
        }
        for bad in [0.0, -1.0, 0.009, 10.01, 100.0, f64::NAN, f64::INFINITY] {
            let err = validate_scale_factor(bad).unwrap_err();
            assert!(matches!(err, LoadError::InvalidScaleFactor { .. }), "{bad}");
            assert!(err.to_string().contains("scale factor"), "{err}");
        }
    }

    #[test]
    fn spec_counts() {
        assert_eq!(spec_row_count("orders", 1.0), Some(1_500_000));
        assert_eq!(spec_row_count("partsupp", 0.01), Some(8_000));
        assert_eq!(spec_row_count("nation", 10.0), Some(25));
        assert_eq!(spec_row_count("lineitem", 1.0), None);
    }
}
