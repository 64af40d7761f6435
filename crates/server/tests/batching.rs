//! Responses go out when the client waits for them (`maestro_server::batched`):
//! the extended protocol's answers to Parse/Bind/Describe/Execute are held
//! until a Sync or a Flush, then arrive together; a simple query's answer
//! and the startup's arrive at once. Raw protocol over a std socket, so the
//! test sees exactly what the server sent and when.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::Server;

/// One frontend message: its type byte and body.
fn message(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![kind];
    m.extend_from_slice(&(4 + body.len() as i32).to_be_bytes());
    m.extend_from_slice(body);
    m
}

fn parse(sql: &str) -> Vec<u8> {
    let mut body = b"\0".to_vec(); // the unnamed statement
    body.extend_from_slice(sql.as_bytes());
    body.extend_from_slice(&[0, 0, 0]); // NUL, no parameter types
    message(b'P', &body)
}

fn bind() -> Vec<u8> {
    // Unnamed portal and statement, no formats, no parameters, no result formats.
    message(b'B', &[0, 0, 0, 0, 0, 0, 0, 0])
}

fn execute() -> Vec<u8> {
    message(b'E', &[0, 0, 0, 0, 0])
}

/// The type bytes of the backend messages read until one of type `last`.
fn read_until(s: &mut TcpStream, last: u8) -> Vec<u8> {
    s.set_read_timeout(None).unwrap();
    let mut kinds = Vec::new();
    loop {
        let (kind, _) = common::read_message(s);
        kinds.push(kind);
        if kind == last {
            return kinds;
        }
    }
}

/// Whether any byte arrives within `wait` (generous: a server that sent
/// early is seen long before; one that holds is never seen).
fn arrives_within(s: &mut TcpStream, wait: Duration) -> bool {
    s.set_read_timeout(Some(wait)).unwrap();
    let mut b = [0u8; 1];
    match s.peek(&mut b) {
        Ok(n) => n > 0,
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => false,
        Err(e) => panic!("reading: {e}"),
    }
}

fn connect(server: &Server) -> TcpStream {
    let mut s = server.raw_startup();
    // The startup's answer arrives without anything more from the client.
    let kinds = read_until(&mut s, b'Z');
    assert_eq!(kinds.first(), Some(&b'R'), "{kinds:?}");
    s
}

#[test]
fn extended_protocol_answers_wait_for_sync_or_flush() {
    let server = Server::start();
    let mut s = connect(&server);
    let wait = Duration::from_millis(300);

    // Parse, Bind, Execute: nothing yet, since the client has not asked.
    let mut batch = parse("SELECT 1 + 1");
    batch.extend(bind());
    batch.extend(execute());
    s.write_all(&batch).unwrap();
    assert!(
        !arrives_within(&mut s, wait),
        "answers were sent before a Sync"
    );
    // Sync: everything, in order, ending with ReadyForQuery.
    s.write_all(&message(b'S', &[])).unwrap();
    assert_eq!(
        read_until(&mut s, b'Z'),
        [b'1', b'2', b'D', b'C', b'Z'],
        "ParseComplete, BindComplete, DataRow, CommandComplete, ReadyForQuery"
    );

    // Flush asks for what is pending without ending the transaction's
    // messages: ParseComplete arrives, no ReadyForQuery.
    s.write_all(&parse("SELECT 2")).unwrap();
    assert!(!arrives_within(&mut s, wait));
    s.write_all(&message(b'H', &[])).unwrap();
    assert_eq!(read_until(&mut s, b'1'), [b'1']);
    assert!(!arrives_within(&mut s, wait), "only what was pending");

    // An error in the extended protocol waits for the Sync too, then the
    // session is ready again.
    let mut batch = parse("SELECT * FROM no_such_table");
    batch.extend(bind());
    batch.extend(execute());
    s.write_all(&batch).unwrap();
    assert!(!arrives_within(&mut s, wait));
    s.write_all(&message(b'S', &[])).unwrap();
    assert_eq!(read_until(&mut s, b'Z'), [b'E', b'Z']);

    // A simple query's answer arrives at once.
    let mut q = b"SELECT 3".to_vec();
    q.push(0);
    s.write_all(&message(b'Q', &q)).unwrap();
    assert_eq!(read_until(&mut s, b'Z'), [b'T', b'D', b'C', b'Z']);

    // Terminate ends the session: the server closes the connection.
    s.write_all(&message(b'X', &[])).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut rest = Vec::new();
    assert_eq!(s.read_to_end(&mut rest).unwrap(), 0);
}
