//! Writes the answer-test fixture (`maestro_ch::fixture`) as `ch snapshot`
//! does: every table and Maestro's answers, into the directory given.
//!
//! `cargo run --release -p maestro-ch --example answer_fixture -- DIR`

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args_os()
        .nth(1)
        .ok_or("usage: answer_fixture DIR")?;
    let db = maestro_ch::fixture::fixture_database()?;
    let snap = db.snapshot()?;
    let written = maestro_ch::export::write_snapshot(&snap, std::path::Path::new(&dir))?;
    eprintln!("wrote {written:?}");
    Ok(())
}
