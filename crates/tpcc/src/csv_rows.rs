//! How each table's rows print as CSV: the header of the spec's column names
//! and the fields in the same order.

use crate::export::{CsvRow, Line};
use crate::schema::*;

impl CsvRow for Warehouse {
    const HEADER: &'static str =
        "w_id,w_name,w_street_1,w_street_2,w_city,w_state,w_zip,w_tax,w_ytd";
    fn write(&self, l: &mut Line) {
        l.num(self.w_id).text(&self.w_name);
        l.text(&self.w_street_1).text(&self.w_street_2);
        l.text(&self.w_city).text(&self.w_state).text(&self.w_zip);
        l.rate(self.w_tax).money(self.w_ytd);
    }
}

impl CsvRow for District {
    const HEADER: &'static str = concat!(
        "d_id,d_w_id,d_name,d_street_1,d_street_2,d_city,d_state,d_zip,",
        "d_tax,d_ytd,d_next_o_id"
    );
    fn write(&self, l: &mut Line) {
        l.num(self.d_id).num(self.d_w_id).text(&self.d_name);
        l.text(&self.d_street_1).text(&self.d_street_2);
        l.text(&self.d_city).text(&self.d_state).text(&self.d_zip);
        l.rate(self.d_tax).money(self.d_ytd).num(self.d_next_o_id);
    }
}

impl CsvRow for Customer {
    const HEADER: &'static str = concat!(
        "c_id,c_d_id,c_w_id,c_first,c_middle,c_last,c_street_1,c_street_2,",
        "c_city,c_state,c_zip,c_phone,c_since,c_credit,c_credit_lim,c_discount,",
        "c_balance,c_ytd_payment,c_payment_cnt,c_delivery_cnt,c_data"
    );
    fn write(&self, l: &mut Line) {
        l.num(self.c_id).num(self.c_d_id).num(self.c_w_id);
        l.text(&self.c_first).text(&self.c_middle);
        l.text(&self.c_last).text(&self.c_street_1);
        l.text(&self.c_street_2).text(&self.c_city);
        l.text(&self.c_state).text(&self.c_zip);
        l.text(&self.c_phone).date(self.c_since);
        l.text(&self.c_credit).money(self.c_credit_lim);
        l.rate(self.c_discount).money(self.c_balance);
        l.money(self.c_ytd_payment).num(self.c_payment_cnt);
        l.num(self.c_delivery_cnt).text(&self.c_data);
    }
}

impl CsvRow for History {
    const HEADER: &'static str = "h_c_id,h_c_d_id,h_c_w_id,h_d_id,h_w_id,h_date,h_amount,h_data";
    fn write(&self, l: &mut Line) {
        l.num(self.h_c_id).num(self.h_c_d_id).num(self.h_c_w_id);
        l.num(self.h_d_id).num(self.h_w_id).date(self.h_date);
        l.money(self.h_amount).text(&self.h_data);
    }
}

impl CsvRow for NewOrder {
    const HEADER: &'static str = "no_o_id,no_d_id,no_w_id";
    fn write(&self, l: &mut Line) {
        l.num(self.no_o_id).num(self.no_d_id).num(self.no_w_id);
    }
}

impl CsvRow for Order {
    const HEADER: &'static str =
        "o_id,o_d_id,o_w_id,o_c_id,o_entry_d,o_carrier_id,o_ol_cnt,o_all_local";
    fn write(&self, l: &mut Line) {
        l.num(self.o_id).num(self.o_d_id).num(self.o_w_id);
        l.num(self.o_c_id).date(self.o_entry_d);
        l.opt(self.o_carrier_id).num(self.o_ol_cnt);
        l.num(self.o_all_local);
    }
}

impl CsvRow for OrderLine {
    const HEADER: &'static str = concat!(
        "ol_o_id,ol_d_id,ol_w_id,ol_number,ol_i_id,ol_supply_w_id,",
        "ol_delivery_d,ol_quantity,ol_amount,ol_dist_info"
    );
    fn write(&self, l: &mut Line) {
        l.num(self.ol_o_id).num(self.ol_d_id).num(self.ol_w_id);
        l.num(self.ol_number).num(self.ol_i_id);
        l.num(self.ol_supply_w_id).opt_date(self.ol_delivery_d);
        l.num(self.ol_quantity).money(self.ol_amount);
        l.bytes(&self.ol_dist_info);
    }
}

impl CsvRow for Item {
    const HEADER: &'static str = "i_id,i_im_id,i_name,i_price,i_data";
    fn write(&self, l: &mut Line) {
        l.num(self.i_id).num(self.i_im_id).text(&self.i_name);
        l.money(self.i_price).text(&self.i_data);
    }
}

impl CsvRow for Stock {
    const HEADER: &'static str = concat!(
        "s_i_id,s_w_id,s_quantity,s_dist_01,s_dist_02,s_dist_03,s_dist_04,",
        "s_dist_05,s_dist_06,s_dist_07,s_dist_08,s_dist_09,s_dist_10,",
        "s_ytd,s_order_cnt,s_remote_cnt,s_data"
    );
    fn write(&self, l: &mut Line) {
        l.num(self.s_i_id).num(self.s_w_id).num(self.s_quantity);
        for dist in self.s_dist.iter() {
            l.bytes(dist);
        }
        l.num(self.s_ytd).num(self.s_order_cnt);
        l.num(self.s_remote_cnt).text(&self.s_data);
    }
}
