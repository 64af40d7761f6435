pub mod plans;
