//! The four-letter-word checks are able to fail and to skip: a proxy in front of a real
//! ZooKeeper server answers every four-letter word with one canned text and passes all
//! other connections through.

use std::{
    io::{self, Read, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    thread,
};

use zk_spec::{Area, Outcome, Runner};
use zk_testkit::shared_standalone;

/// Starts the proxy; its address.
fn canned(answer: &'static str) -> SocketAddr {
    let upstream = shared_standalone().client_addr();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        for client in listener.incoming().flatten() {
            thread::spawn(move || serve(client, upstream, answer));
        }
    });
    addr
}

fn serve(mut client: TcpStream, upstream: SocketAddr, answer: &str) -> io::Result<()> {
    let mut first = [0u8; 4];
    client.read_exact(&mut first)?;
    if first.iter().all(u8::is_ascii_lowercase) {
        return client.write_all(answer.as_bytes());
    }
    let mut server = TcpStream::connect(upstream)?;
    server.write_all(&first)?;
    let (mut c2, mut s2) = (client.try_clone()?, server.try_clone()?);
    // Each direction's end is passed on, so closes reach the other side.
    thread::spawn(move || {
        let _ = io::copy(&mut s2, &mut c2);
        c2.shutdown(std::net::Shutdown::Both)
    });
    io::copy(&mut client, &mut server)?;
    server.shutdown(std::net::Shutdown::Both)
}

fn outcomes(answer: &'static str) -> Vec<(&'static str, Outcome)> {
    let report = Runner::new(canned(answer))
        .run_area(Area::FourLetter)
        .unwrap();
    report
        .results
        .into_iter()
        .map(|r| (r.check.id, r.outcome))
        .collect()
}

#[test]
fn a_server_answering_imok_to_every_word_fails_all_but_ruok() {
    let results = outcomes("imok");
    assert!(results.len() >= 8);
    for (id, outcome) in results {
        if id == "4lw.ruok" {
            assert_eq!(outcome, Outcome::Passed);
        } else {
            assert!(outcome.is_failed(), "{id}: {outcome:?}");
        }
    }
}

#[test]
fn words_outside_the_whitelist_are_skipped_with_the_reason() {
    for (id, outcome) in outcomes("ruok is not executed because it is not in the whitelist.\n") {
        match outcome {
            Outcome::Skipped(why) => assert!(why.contains("whitelist"), "{id}: {why}"),
            other => panic!("{id}: {other:?}"),
        }
    }
}
