//! What a stored column is declared as: the column store's type plus what
//! SQL adds on top (a DECIMAL's precision, a VARCHAR's length). Mapped from
//! CREATE TABLE's types here; the values that go in are checked against it
//! by [`super::convert`].

use maestro_storage::column::{Column, DataType, DecimalColumn, MAX_SCALE, StrHeap};
use sqlparser::ast::{CharacterLength, DataType as AstType, ExactNumberInfo, TimezoneInfo};

use crate::error::{Result, SqlError};

/// A stored column's declared type (serde: the durable store's catalog
/// rows — reordering the variants changes the data directory's format).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ColumnType {
    Int32,
    Int64,
    /// `precision` digits in all (`None`: as many as an i64 holds), `scale`
    /// of them fractional.
    Decimal {
        precision: Option<u8>,
        scale: u8,
    },
    Date,
    /// At most `max_chars` characters (`None`: unlimited).
    Str {
        max_chars: Option<u32>,
    },
    /// `TIMESTAMP [WITHOUT TIME ZONE]`: microseconds since 1970-01-01
    /// 00:00:00 UTC in an `Int64` column.
    Timestamp,
    /// `SMALLINT`: an `Int32` column holding -32768..=32767.
    Int16,
    /// `BOOLEAN`: 0 or 1 in an `Int32` column (false orders before true,
    /// as in PostgreSQL); read as SQL booleans (`lower`'s stored vectors).
    Bool,
    /// A DOUBLE PRECISION column of a data directory written by the builds
    /// of 2026-11-28 that stored the `f64`'s own bits; recovery refuses
    /// such a catalog row (`store::durable`), since this build reads the
    /// stored integers as [`ColumnType::Float64`]'s ordered bits. Never
    /// made otherwise; it keeps its place so the logged variant numbers
    /// after it keep theirs.
    Float64Bits,
    /// A REAL column of such a data directory (as [`ColumnType::Float64Bits`]).
    Float32Bits,
    /// `DOUBLE PRECISION`: the double's ordered bits
    /// ([`crate::types::stored_double`]) in an `Int64` column, so integer
    /// comparisons of the stored values order them as doubles; read as
    /// doubles (`lower`'s encoded vectors).
    Float64,
    /// `REAL`: a double holding the shortest decimal that rounds to the
    /// `f32` of the value (so it prints as PostgreSQL prints the REAL),
    /// stored as [`ColumnType::Float64`] is.
    Float32,
}

/// A stored column: its name and declared type.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ColumnSpec {
    pub name: String,
    pub ty: ColumnType,
}

impl ColumnType {
    /// The declared type of an existing column-store column (a loaded
    /// table's): no precision or length limits beyond the storage's.
    pub fn of_data_type(t: DataType) -> ColumnType {
        match t {
            DataType::Int32 => ColumnType::Int32,
            DataType::Int64 => ColumnType::Int64,
            DataType::Decimal { scale } => ColumnType::Decimal {
                precision: None,
                scale,
            },
            DataType::Date => ColumnType::Date,
            DataType::Str | DataType::StrHeap => ColumnType::Str { max_chars: None },
        }
    }

    /// CREATE TABLE's type of a column.
    pub fn of_ast(t: &AstType) -> Result<ColumnType> {
        Ok(match t {
            AstType::Int(_) | AstType::Integer(_) | AstType::Int4(_) => ColumnType::Int32,
            AstType::BigInt(_) | AstType::Int8(_) => ColumnType::Int64,
            AstType::SmallInt(_) | AstType::Int2(_) => ColumnType::Int16,
            AstType::Bool | AstType::Boolean => ColumnType::Bool,
            AstType::DoublePrecision | AstType::Float8 | AstType::Double(ExactNumberInfo::None) => {
                ColumnType::Float64
            }
            AstType::Real | AstType::Float4 => ColumnType::Float32,
            // PostgreSQL: FLOAT(1)..FLOAT(24) is REAL, FLOAT(25)..FLOAT(53)
            // and bare FLOAT are DOUBLE PRECISION.
            AstType::Float(info) => match info {
                ExactNumberInfo::None => ColumnType::Float64,
                ExactNumberInfo::Precision(1..=24) => ColumnType::Float32,
                ExactNumberInfo::Precision(25..=53) => ColumnType::Float64,
                _ => {
                    return Err(SqlError::invalid(format!(
                        "precision for type float must be between 1 and 53 (got {t})"
                    )));
                }
            },
            AstType::Decimal(info) | AstType::Numeric(info) | AstType::Dec(info) => {
                let (precision, scale) = match info {
                    // PostgreSQL's bare NUMERIC keeps any scale; a stored
                    // decimal has one, so the client must choose it.
                    ExactNumberInfo::None => {
                        return Err(SqlError::unsupported(format!(
                            "{t} without a precision and scale (stored decimals have a \
                             fixed scale: declare {t}(p,s))"
                        )));
                    }
                    ExactNumberInfo::Precision(p) => (Some(*p), 0),
                    ExactNumberInfo::PrecisionAndScale(p, s) => {
                        if *s < 0 {
                            return Err(SqlError::unsupported(format!("a negative scale in {t}")));
                        }
                        (Some(*p), *s as u64)
                    }
                };
                if scale > u64::from(MAX_SCALE) {
                    return Err(SqlError::unsupported(format!(
                        "{t}: stored decimals have at most {MAX_SCALE} fractional digits"
                    )));
                }
                // An i64 holds 18 digits whole.
                let precision = match precision {
                    Some(p) if p == 0 || p > 18 || p < scale => {
                        return Err(SqlError::unsupported(format!(
                            "{t}: the precision must be between the scale and 18"
                        )));
                    }
                    p => p.map(|p| p as u8),
                };
                ColumnType::Decimal {
                    precision,
                    scale: scale as u8,
                }
            }
            AstType::Date => ColumnType::Date,
            AstType::Timestamp(None, TimezoneInfo::None | TimezoneInfo::WithoutTimeZone) => {
                ColumnType::Timestamp
            }
            AstType::Text | AstType::String(_) => ColumnType::Str { max_chars: None },
            AstType::Varchar(len) | AstType::CharacterVarying(len) | AstType::CharVarying(len) => {
                ColumnType::Str {
                    max_chars: max_chars(len.as_ref(), None)?,
                }
            }
            // CHAR without a length is CHAR(1), as in PostgreSQL; values are
            // not blank-padded here (documented in the README).
            AstType::Char(len) | AstType::Character(len) => ColumnType::Str {
                max_chars: max_chars(len.as_ref(), Some(1))?,
            },
            other => {
                return Err(SqlError::unsupported(format!(
                    "column type {other} (stored columns are SMALLINT, INTEGER, BIGINT, \
                     DECIMAL(p,s), REAL, DOUBLE PRECISION, BOOLEAN, DATE, TIMESTAMP, \
                     VARCHAR(n)/CHAR(n)/TEXT)"
                )));
            }
        })
    }

    /// The SQL type of the column's values.
    pub fn sql_type(self) -> crate::types::SqlType {
        match self {
            ColumnType::Timestamp => crate::types::SqlType::Timestamp,
            ColumnType::Bool => crate::types::SqlType::Bool,
            ColumnType::Float64
            | ColumnType::Float32
            | ColumnType::Float64Bits
            | ColumnType::Float32Bits => crate::types::SqlType::Double,
            other => crate::types::SqlType::of_column(other.data_type()),
        }
    }

    /// The column-store type holding it.
    pub fn data_type(self) -> DataType {
        match self {
            ColumnType::Int32 | ColumnType::Int16 | ColumnType::Bool => DataType::Int32,
            ColumnType::Int64 => DataType::Int64,
            ColumnType::Decimal { scale, .. } => DataType::Decimal { scale },
            ColumnType::Date => DataType::Date,
            ColumnType::Str { .. } => DataType::StrHeap,
            ColumnType::Timestamp
            | ColumnType::Float64
            | ColumnType::Float32
            | ColumnType::Float64Bits
            | ColumnType::Float32Bits => DataType::Int64,
        }
    }

    /// Whether a column of data type `dt` can hold this type: its own data
    /// type, or for text also dictionary-encoded strings (what loads
    /// choose for low-cardinality columns).
    pub fn stored_as(self, dt: DataType) -> bool {
        dt == self.data_type() || matches!((self, dt), (ColumnType::Str { .. }, DataType::Str))
    }

    /// An empty column of this type.
    pub fn empty_column(self) -> Column {
        match self.data_type() {
            DataType::Int32 => Column::Int32(Vec::new()),
            DataType::Int64 => Column::Int64(Vec::new()),
            DataType::Decimal { scale } => Column::Decimal(
                DecimalColumn::new(scale, Vec::new()).expect("the scale was checked"),
            ),
            DataType::Date => Column::Date(Vec::new()),
            DataType::Str | DataType::StrHeap => Column::StrHeap(StrHeap::new()),
        }
    }

    /// PostgreSQL's name of the type, for error messages.
    pub fn pg_name(self) -> &'static str {
        match self {
            ColumnType::Int32 => "integer",
            ColumnType::Int64 => "bigint",
            ColumnType::Decimal { .. } => "numeric",
            ColumnType::Date => "date",
            ColumnType::Str { .. } => "character varying",
            ColumnType::Timestamp => "timestamp without time zone",
            ColumnType::Int16 => "smallint",
            ColumnType::Bool => "boolean",
            ColumnType::Float64 | ColumnType::Float64Bits => "double precision",
            ColumnType::Float32 | ColumnType::Float32Bits => "real",
        }
    }

    /// Whether the stored integers are this type's encoding of other
    /// values (booleans, doubles' ordered bits) rather than the values
    /// themselves: such a column cannot be a key, whose checks compare
    /// stored values (a double's -0 and +0 are two that SQL calls equal);
    /// its index orders the encoding, which keeps the values' order, and an
    /// index scan encodes the statement's constants (`index_scan.rs`).
    pub fn is_encoded(self) -> bool {
        matches!(
            self,
            ColumnType::Bool
                | ColumnType::Float64
                | ColumnType::Float32
                | ColumnType::Float64Bits
                | ColumnType::Float32Bits
        )
    }
}

fn max_chars(len: Option<&CharacterLength>, default: Option<u32>) -> Result<Option<u32>> {
    match len {
        None | Some(CharacterLength::Max) => Ok(default),
        Some(CharacterLength::IntegerLength { length, .. }) => match u32::try_from(*length) {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(SqlError::invalid(format!(
                "length for type varchar must be at least 1 (got {length})"
            ))),
        },
    }
}
