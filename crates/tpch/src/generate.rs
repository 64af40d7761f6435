//! Generating one part of one table: run the `tpchgen` generator for
//! `part/parts` and append each row straight into typed column buffers.

use std::fmt::{Display, Write};

use maestro_storage::column::{ColumnBuilder, DictBuilder};
use tpchgen::distribution::Distributions;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};
use tpchgen::text::TextPool;

use crate::schema::{
    CustomerChunk, LineItemChunk, NationChunk, OrdersChunk, PartChunk, PartSuppChunk, RegionChunk,
    SupplierChunk,
};

/// What every part generator reads.
pub(crate) struct GenContext<'a> {
    pub scale_factor: f64,
    pub distributions: &'static Distributions,
    pub text_pool: &'a TextPool,
}

/// One generated part: its column buffers in schema order and its row count.
pub(crate) struct GeneratedPart {
    pub columns: Vec<ColumnBuilder>,
    pub rows: usize,
}

/// A `Display` value appended to a dictionary column through a scratch buffer.
fn push_display(dict: &mut DictBuilder, scratch: &mut String, value: impl Display) {
    scratch.clear();
    write!(scratch, "{value}").expect("writing to a String cannot fail");
    dict.push(scratch);
}

fn part_rows(rows: i64) -> usize {
    usize::try_from(rows).expect("row counts are not negative")
}

pub(crate) fn region(ctx: &GenContext) -> GeneratedPart {
    let generator =
        RegionGenerator::new_with_distributions_and_text_pool(ctx.distributions, ctx.text_pool);
    let mut c = RegionChunk::with_rows(5);
    for r in generator.iter() {
        c.r_regionkey.push(r.r_regionkey);
        c.r_name.push(r.r_name);
        c.r_comment.push(r.r_comment);
    }
    let rows = c.r_regionkey.len();
    GeneratedPart {
        columns: c.into_builders(),
        rows,
    }
}

pub(crate) fn nation(ctx: &GenContext) -> GeneratedPart {
    let generator =
        NationGenerator::new_with_distributions_and_text_pool(ctx.distributions, ctx.text_pool);
    let mut c = NationChunk::with_rows(25);
    for r in generator.iter() {
        c.n_nationkey.push(r.n_nationkey);
        c.n_name.push(r.n_name);
        c.n_regionkey.push(r.n_regionkey);
        c.n_comment.push(r.n_comment);
    }
    let rows = c.n_nationkey.len();
    GeneratedPart {
        columns: c.into_builders(),
        rows,
    }
}

pub(crate) fn supplier(ctx: &GenContext, part: i32, parts: i32) -> GeneratedPart {
    let sf = ctx.scale_factor;
    let generator = SupplierGenerator::new_with_distributions_and_text_pool(
        sf,
        part,
        parts,
        ctx.distributions,
        ctx.text_pool,
    );
    let mut c = SupplierChunk::with_rows(part_rows(SupplierGenerator::calculate_row_count(
        sf, part, parts,
    )));
    for r in generator.iter() {
        c.s_suppkey.push(r.s_suppkey);
        c.s_name.push_display(r.s_name);
        c.s_address.push_display(&r.s_address);
        c.s_nationkey.push(r.s_nationkey);
        c.s_phone.push_display(&r.s_phone);
        c.s_acctbal.push(r.s_acctbal.into_inner());
        c.s_comment.push(&r.s_comment);
    }
    let rows = c.s_suppkey.len();
    GeneratedPart {
        columns: c.into_builders(),
        rows,
    }
}

pub(crate) fn customer(ctx: &GenContext, part: i32, parts: i32) -> GeneratedPart {
    let sf = ctx.scale_factor;
    let generator = CustomerGenerator::new_with_distributions_and_text_pool(
        sf,
        part,
        parts,
        ctx.distributions,
        ctx.text_pool,
    );
    let mut c = CustomerChunk::with_rows(part_rows(CustomerGenerator::calculate_row_count(
        sf, part, parts,
    )));
    for r in generator.iter() {
        c.c_custkey.push(r.c_custkey);
        c.c_name.push_display(r.c_name);
        c.c_address.push_display(&r.c_address);
        c.c_nationkey.push(r.c_nationkey);
        c.c_phone.push_display(&r.c_phone);
        c.c_acctbal.push(r.c_acctbal.into_inner());
        c.c_mktsegment.push(r.c_mktsegment);
        c.c_comment.push(r.c_comment);
    }
    let rows = c.c_custkey.len();
    GeneratedPart {
        columns: c.into_builders(),
        rows,
    }
}

pub(crate) fn part(ctx: &GenContext, part: i32, parts: i32) -> GeneratedPart {
    let sf = ctx.scale_factor;
    let generator = PartGenerator::new_with_distributions_and_text_pool(
        sf,
        part,
        parts,
        ctx.distributions,
        ctx.text_pool,
    );
    let mut c = PartChunk::with_rows(part_rows(PartGenerator::calculate_row_count(
        sf, part, parts,
    )));
    let mut scratch = String::new();
    for r in generator.iter() {
        c.p_partkey.push(r.p_partkey);
        c.p_name.push_display(&r.p_name);
        push_display(&mut c.p_mfgr, &mut scratch, r.p_mfgr);
        push_display(&mut c.p_brand, &mut scratch, r.p_brand);
        c.p_type.push(r.p_type);
        c.p_size.push(r.p_size);
        c.p_container.push(r.p_container);
        c.p_retailprice.push(r.p_retailprice.into_inner());
        c.p_comment.push(r.p_comment);
    }
    let rows = c.p_partkey.len();
    GeneratedPart {
        columns: c.into_builders(),
        rows,
    }
}

/// Suppliers per part in PARTSUPP (the spec's fixed 4).
pub(crate) const SUPPLIERS_PER_PART: usize = 4;

pub(crate) fn partsupp(ctx: &GenContext, part: i32, parts: i32) -> GeneratedPart {
    let sf = ctx.scale_factor;
    let generator = PartSuppGenerator::new_with_text_pool(sf, part, parts, ctx.text_pool);
    // `calculate_row_count` counts parts; each has four suppliers.
    let expected = part_rows(PartSuppGenerator::calculate_row_count(sf, part, parts));
    let mut c = PartSuppChunk::with_rows(expected * SUPPLIERS_PER_PART);
    for r in generator.iter() {
        c.ps_partkey.push(r.ps_partkey);
        c.ps_suppkey.push(r.ps_suppkey);
        c.ps_availqty.push(r.ps_availqty);
        c.ps_supplycost.push(r.ps_supplycost.into_inner());
        c.ps_comment.push(r.ps_comment);
    }
    let rows = c.ps_partkey.len();
    GeneratedPart {
        columns: c.into_builders(),
        rows,
    }
}

pub(crate) fn orders(ctx: &GenContext, part: i32, parts: i32) -> GeneratedPart {
    let sf = ctx.scale_factor;
    let generator = OrderGenerator::new_with_distributions_and_text_pool(
        sf,
        part,
        parts,
        ctx.distributions,
        ctx.text_pool,
    );
    let mut c = OrdersChunk::with_rows(part_rows(OrderGenerator::calculate_row_count(
        sf, part, parts,
    )));
    let mut scratch = String::new();
    for r in generator.iter() {
        c.o_orderkey.push(r.o_orderkey);
        c.o_custkey.push(r.o_custkey);
        c.o_orderstatus.push(r.o_orderstatus.as_str());
        c.o_totalprice.push(r.o_totalprice.into_inner());
        c.o_orderdate.push(r.o_orderdate.to_unix_epoch());
        c.o_orderpriority.push(r.o_orderpriority);
        push_display(&mut c.o_clerk, &mut scratch, r.o_clerk);
        c.o_shippriority.push(r.o_shippriority);
        c.o_comment.push(r.o_comment);
    }
    let rows = c.o_orderkey.len();
    GeneratedPart {
        columns: c.into_builders(),
        rows,
    }
}

/// Lines per order are uniform in 1..=7: mean 4, variance 4.
const MEAN_LINES_PER_ORDER: usize = 4;

/// Rows to reserve for the lines of `orders` orders: the mean plus four
/// standard deviations (`sqrt(4 × orders)` each), so a part almost never grows.
fn lineitem_reserve(orders: usize) -> usize {
    let mean = orders * MEAN_LINES_PER_ORDER;
    mean + 4 * (mean as f64).sqrt() as usize + 16
}

pub(crate) fn lineitem(ctx: &GenContext, part: i32, parts: i32) -> GeneratedPart {
    let sf = ctx.scale_factor;
    let generator = LineItemGenerator::new_with_distributions_and_text_pool(
        sf,
        part,
        parts,
        ctx.distributions,
        ctx.text_pool,
    );
    let orders = part_rows(OrderGenerator::calculate_row_count(sf, part, parts));
    let mut c = LineItemChunk::with_rows(lineitem_reserve(orders));
    let money = 10i64.pow(u32::from(crate::schema::MONEY_SCALE));
    for r in generator.iter() {
        c.l_orderkey.push(r.l_orderkey);
        c.l_partkey.push(r.l_partkey);
        c.l_suppkey.push(r.l_suppkey);
        c.l_linenumber.push(r.l_linenumber);
        c.l_quantity.push(r.l_quantity * money);
        c.l_extendedprice.push(r.l_extendedprice.into_inner());
        c.l_discount.push(r.l_discount.into_inner());
        c.l_tax.push(r.l_tax.into_inner());
        c.l_returnflag.push(r.l_returnflag);
        c.l_linestatus.push(r.l_linestatus);
        c.l_shipdate.push(r.l_shipdate.to_unix_epoch());
        c.l_commitdate.push(r.l_commitdate.to_unix_epoch());
        c.l_receiptdate.push(r.l_receiptdate.to_unix_epoch());
        c.l_shipinstruct.push(r.l_shipinstruct);
        c.l_shipmode.push(r.l_shipmode);
        c.l_comment.push(r.l_comment);
    }
    let rows = c.l_orderkey.len();
    GeneratedPart {
        columns: c.into_builders(),
        rows,
    }
}
