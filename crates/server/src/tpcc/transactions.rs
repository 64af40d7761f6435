//! The five transactions' steps (clause 2.4–2.8) as statements of one SQL
//! transaction ([`Txn`]); what they return is the driver's [`TxnOutput`],
//! as the row engines return it.

use maestro_sql::ParamValue;
use maestro_tpcc::random::{ORIGINAL, last_name};
use maestro_tpcc::txn::{
    CustomerSelector, DeliveryInput, MAX_ORDER_LINES, MIN_ORDER_LINES, NewOrderInput,
    OrderStatusInput, PaymentInput, StockLevelInput, TxnOutput, bad_credit_data, total_amount,
};
use maestro_tpcc::{DISTRICTS_PER_WAREHOUSE, Money, Rate};

use super::{Failure, Txn, fixed, int, text};

/// A money amount (cents) as a parameter.
fn money(cents: Money) -> ParamValue {
    ParamValue::Num {
        value: cents,
        scale: 2,
    }
}

fn id(v: impl Into<i64>) -> ParamValue {
    ParamValue::Int(v.into())
}

/// The one row a statement must give, or [`Failure::Missing`].
fn one<T>(rows: Vec<T>, what: &'static str) -> Result<T, Failure> {
    rows.into_iter().next().ok_or(Failure::Missing(what))
}

pub(super) fn new_order(t: &mut Txn, input: &NewOrderInput) -> Result<TxnOutput, Failure> {
    let s = &t.tpcc.statements;
    let (w, d) = (id(input.w_id), id(input.d_id));
    let lines = input.lines();
    if !(MIN_ORDER_LINES..=MAX_ORDER_LINES).contains(&lines.len()) {
        return Err(Failure::Invalid(format!(
            "a New-Order of {} lines",
            lines.len()
        )));
    }
    // The district first: its row is the hottest write, so a conflicting
    // pair meets before doing the line work.
    let district = one(
        t.returned(&s.district_next_order, &[w.clone(), d.clone()])?,
        "district",
    )?;
    let o_id = int(&district[0])? - 1;
    let d_tax = fixed(&district[1], 4)? as Rate;
    let w_tax = fixed(
        &one(
            t.rows(&s.warehouse_tax, std::slice::from_ref(&w))?,
            "warehouse",
        )?[0],
        4,
    )? as Rate;
    let customer = one(
        t.rows(
            &s.customer_discount,
            &[w.clone(), d.clone(), id(input.c_id)],
        )?,
        "customer",
    )?;
    let c_discount = fixed(&customer[0], 4)? as Rate;

    let mut item_ids: Vec<ParamValue> = lines.iter().map(|l| id(l.i_id)).collect();
    item_ids.resize(MAX_ORDER_LINES, id(lines[0].i_id));
    let mut items = std::collections::HashMap::new();
    for row in t.rows(&s.items, &item_ids)? {
        let original = text(&row[2])?.contains(ORIGINAL);
        items.insert(int(&row[0])?, (fixed(&row[1], 2)?, original));
    }
    // The 1 % rollback: an unused item (clause 2.4.2.3).
    if lines
        .iter()
        .any(|l| !items.contains_key(&i64::from(l.i_id)))
    {
        return Err(Failure::Rollback);
    }

    let now = ParamValue::Timestamp(t.now_us());
    let all_local = lines.iter().all(|l| l.supply_w_id == input.w_id);
    t.written(
        &s.insert_order,
        &[
            id(o_id),
            d.clone(),
            w.clone(),
            id(input.c_id),
            now,
            id(lines.len() as i64),
            id(i64::from(all_local)),
        ],
    )?;
    t.written(&s.insert_new_order, &[id(o_id), d.clone(), w.clone()])?;

    let stock_update = &s.stock_update[usize::from(input.d_id) - 1];
    let (mut amount, mut brand_lines) = (0, 0u8);
    let mut line_params = Vec::with_capacity(lines.len() * 9);
    for (n, line) in lines.iter().enumerate() {
        let remote = line.supply_w_id != input.w_id;
        let stock = one(
            t.returned(
                stock_update,
                &[
                    id(line.supply_w_id),
                    id(line.i_id),
                    id(line.quantity),
                    id(i64::from(remote)),
                ],
            )?,
            "stock",
        )?;
        let dist_info = text(&stock[0])?.to_string();
        let (price, item_original) = items[&i64::from(line.i_id)];
        brand_lines += u8::from(item_original && text(&stock[1])?.contains(ORIGINAL));
        let ol_amount = Money::from(line.quantity) * price;
        amount += ol_amount;
        line_params.extend([
            id(o_id),
            d.clone(),
            w.clone(),
            id(n as i64 + 1),
            id(line.i_id),
            id(line.supply_w_id),
            id(line.quantity),
            money(ol_amount),
            ParamValue::Str(dist_info),
        ]);
    }
    t.written(
        &s.insert_order_lines[lines.len() - MIN_ORDER_LINES],
        &line_params,
    )?;
    Ok(TxnOutput::NewOrder {
        o_id: o_id as u32,
        ol_cnt: lines.len() as u8,
        amount,
        total: total_amount(amount, c_discount, w_tax, d_tax),
        brand_lines,
    })
}

/// The customer a Payment or Order-Status names: by id, or the one at
/// position ⌈n/2⌉ of those with the last name, sorted by first name
/// (clause 2.5.2.2). Its id and balance.
fn customer(
    t: &mut Txn,
    w_id: u16,
    d_id: u8,
    selector: CustomerSelector,
) -> Result<(u16, Money), Failure> {
    let s = &t.tpcc.statements;
    let (w, d) = (id(w_id), id(d_id));
    match selector {
        CustomerSelector::Id(c_id) => {
            let row = one(t.rows(&s.customer_balance, &[w, d, id(c_id)])?, "customer")?;
            Ok((c_id, fixed(&row[0], 2)?))
        }
        CustomerSelector::LastName(number) => {
            let rows = t.rows(
                &s.customer_by_name,
                &[w, d, ParamValue::Str(last_name(number))],
            )?;
            let middle = rows.len().div_ceil(2).saturating_sub(1);
            let row = rows
                .into_iter()
                .nth(middle)
                .ok_or(Failure::Missing("customer by last name"))?;
            Ok((int(&row[0])? as u16, fixed(&row[1], 2)?))
        }
    }
}

pub(super) fn payment(t: &mut Txn, input: &PaymentInput) -> Result<TxnOutput, Failure> {
    let s = &t.tpcc.statements;
    let (w, d) = (id(input.w_id), id(input.d_id));
    let amount = money(input.h_amount);
    let w_name = one(
        t.returned(&s.warehouse_payment, &[w.clone(), amount.clone()])?,
        "warehouse",
    )?;
    let d_name = one(
        t.returned(&s.district_payment, &[w.clone(), d.clone(), amount.clone()])?,
        "district",
    )?;
    let h_data = format!("{}    {}", text(&w_name[0])?, text(&d_name[0])?);
    let (c_id, _) = customer(t, input.c_w_id, input.c_d_id, input.customer)?;
    let key = [id(input.c_w_id), id(input.c_d_id), id(c_id)];
    let paid = one(
        t.returned(
            &s.customer_payment,
            &[
                key[0].clone(),
                key[1].clone(),
                key[2].clone(),
                amount.clone(),
            ],
        )?,
        "customer",
    )?;
    let c_balance = fixed(&paid[0], 2)?;
    let bad_credit = text(&paid[1])? == "BC";
    if bad_credit {
        let data = bad_credit_data(text(&paid[2])?, c_id, input);
        let [cw, cd, cc] = key.clone();
        t.written(&s.customer_bad_credit, &[cw, cd, cc, ParamValue::Str(data)])?;
    }
    let now = ParamValue::Timestamp(t.now_us());
    let [cw, cd, cc] = key;
    t.written(
        &s.insert_history,
        &[cc, cd, cw, d, w, now, amount, ParamValue::Str(h_data)],
    )?;
    Ok(TxnOutput::Payment {
        c_id,
        c_balance,
        bad_credit,
    })
}

pub(super) fn order_status(t: &mut Txn, input: &OrderStatusInput) -> Result<TxnOutput, Failure> {
    let (c_id, c_balance) = customer(t, input.w_id, input.d_id, input.customer)?;
    let s = &t.tpcc.statements;
    let (w, d) = (id(input.w_id), id(input.d_id));
    let last = t.rows(&s.last_order, &[w.clone(), d.clone(), id(c_id)])?;
    let order = match last.into_iter().next() {
        None => None,
        Some(row) => {
            let o_id = int(&row[0])?;
            let carrier = match &row[1] {
                maestro_tpch::queries::Value::Null => None,
                v => Some(int(v)? as u8),
            };
            let lines = t.rows(&s.order_lines_of, &[w, d, id(o_id)])?;
            Some((o_id as u32, carrier, lines.len() as u8))
        }
    };
    Ok(TxnOutput::OrderStatus {
        c_id,
        c_balance,
        order,
    })
}

pub(super) fn delivery(t: &mut Txn, input: &DeliveryInput) -> Result<TxnOutput, Failure> {
    let s = &t.tpcc.statements;
    let w = id(input.w_id);
    let now = ParamValue::Timestamp(t.now_us());
    let mut delivered = [None; DISTRICTS_PER_WAREHOUSE as usize];
    for (slot, d_id) in delivered.iter_mut().zip(1..=DISTRICTS_PER_WAREHOUSE) {
        let d = id(d_id);
        let oldest = one(
            t.rows(&s.oldest_new_order, &[w.clone(), d.clone()])?,
            "MIN(no_o_id)",
        )?;
        // No undelivered order in this district: skipped (clause 2.7.4.2).
        if matches!(oldest[0], maestro_tpch::queries::Value::Null) {
            continue;
        }
        let o_id = int(&oldest[0])?;
        let order = [w.clone(), d.clone(), id(o_id)];
        // Another Delivery took it (a READ COMMITTED statement that waited
        // for that one's commit finds nothing left to delete).
        if t.written(&s.delete_new_order, &order)? != 1 {
            return Err(Failure::Taken);
        }
        let with = |v: ParamValue| {
            let mut p = order.to_vec();
            p.push(v);
            p
        };
        let customer = one(
            t.returned(&s.deliver_order, &with(id(input.o_carrier_id)))?,
            "order",
        )?;
        let mut amount: Money = 0;
        for line in t.returned(&s.deliver_lines, &with(now.clone()))? {
            amount += fixed(&line[0], 2)?;
        }
        t.written(
            &s.customer_delivery,
            &[w.clone(), d, id(int(&customer[0])?), money(amount)],
        )?;
        *slot = Some(o_id as u32);
    }
    Ok(TxnOutput::Delivery { delivered })
}

pub(super) fn stock_level(t: &mut Txn, input: &StockLevelInput) -> Result<TxnOutput, Failure> {
    let s = &t.tpcc.statements;
    let (w, d) = (id(input.w_id), id(input.d_id));
    let next = int(&one(
        t.rows(&s.district_next, &[w.clone(), d.clone()])?,
        "district",
    )?[0])?;
    let count = one(
        t.rows(
            &s.low_stock,
            &[w, d, id(next), id(next - 20), id(input.threshold)],
        )?,
        "COUNT",
    )?;
    Ok(TxnOutput::StockLevel {
        low_stock: int(&count[0])? as u32,
    })
}
