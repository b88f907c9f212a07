//! The project's demo: starts a real ZooKeeper 3.8 ensemble on 127.0.0.1 and shows
//!
//! 1. the wire protocol: a handshake and create / getData / delete, frame by frame, in hex;
//! 2. the session: a client that survives the death of its server with the same session;
//! 3. the recipes: processes that contend for a lock and elect a leader, while the leader
//!    process is killed and then a ZooKeeper server; the failover shows as it happens.
//!
//! Run it with `cargo run --release -p conformance --bin demo`; add `-- --tls` for an
//! ensemble with secure client ports (certificates made for the run) that parts 2 and 3
//! reach over mutual TLS.

mod contender;
mod scenario;
mod transport;

use conformance::ephemeral_owner;
use std::time::{Duration, Instant};

use bytes::Bytes;
use conformance::{
    raw::{hex, RawConnection},
    Ensemble, ServerTls, TestCerts,
};
use transport::Transport;
use zk_proto::{
    decode_reply, jute::Record, Acl, ConnectRequest, ConnectResponse, CreateMode, CreateRequest,
    DeleteRequest, ErrorCode, GetDataRequest, ReplyHeader, Request, Response,
};
use zk_session::{CreateOptions, SessionState, Version};

/// Prints a frame sent or received, in hex.
fn show(arrow: &str, what: &str, frame: &[u8]) {
    println!("  {arrow} {what:<9} {}", hex(frame, 14));
}

/// Sends `req` and prints the frame; reads its reply, printing the frame, and decodes it.
fn exchange(
    raw: &mut RawConnection,
    name: &str,
    xid: i32,
    req: &Request,
) -> Result<(ReplyHeader, Option<Response>), String> {
    show(
        "->",
        name,
        &raw.send_request(xid, req).map_err(|e| e.to_string())?,
    );
    let frame = raw
        .recv_frame()
        .map_err(|e| e.to_string())?
        .ok_or("server closed the connection")?;
    show("<-", name, &framed(&frame));
    decode_reply(frame, req.op_code()).map_err(|e| e.to_string())
}

/// The frame as it was on the wire, length prefix included.
fn framed(body: &[u8]) -> Vec<u8> {
    let mut framed = (body.len() as u32).to_be_bytes().to_vec();
    framed.extend_from_slice(body);
    framed
}

fn protocol_demo(ens: &Ensemble) -> Result<(), String> {
    let addr = ens.server(0).client_addr();
    println!("\n== 1. The wire protocol, by hand with zk-proto, against {addr} (plain TCP)");
    let mut raw = RawConnection::connect(addr).map_err(|e| e.to_string())?;
    let connect = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout: 10_000,
        session_id: 0,
        passwd: Bytes::from_static(&[0; 16]),
        read_only: false,
    };
    show(
        "->",
        "connect",
        &raw.send_connect(&connect).map_err(|e| e.to_string())?,
    );
    let frame = raw
        .recv_frame()
        .map_err(|e| e.to_string())?
        .ok_or("server closed the connection")?;
    show("<-", "connect", &framed(&frame));
    let resp =
        ConnectResponse::decode_exact(frame, "ConnectResponse").map_err(|e| e.to_string())?;
    println!(
        "     session {:#x}, negotiated timeout {} ms",
        resp.session_id, resp.timeout
    );
    let steps: Vec<(&str, Request)> = vec![
        (
            "create",
            Request::Create(CreateRequest {
                path: "/demo".into(),
                data: Some(Bytes::from_static(b"hello")),
                acl: Acl::open_unsafe(),
                mode: CreateMode::Persistent,
            }),
        ),
        (
            "getData",
            Request::GetData(GetDataRequest {
                path: "/demo".into(),
                watch: false,
            }),
        ),
        (
            "delete",
            Request::Delete(DeleteRequest {
                path: "/demo".into(),
                version: -1,
            }),
        ),
        (
            "getData",
            Request::GetData(GetDataRequest {
                path: "/demo".into(),
                watch: false,
            }),
        ),
        ("close", Request::CloseSession),
    ];
    for (xid, (name, req)) in (1..).zip(steps) {
        let (hdr, body) = exchange(&mut raw, name, xid, &req)?;
        println!(
            "     xid {} zxid {:#x} {} {}",
            hdr.xid,
            hdr.zxid,
            ErrorCode::from_code(hdr.err),
            body.map(|b| format!("{b:?}")).unwrap_or_default()
        );
    }
    Ok(())
}

async fn session_demo(ens: &Ensemble, transport: &Transport) -> Result<(), String> {
    println!(
        "\n== 2. A zk-session client over {} across the death of its server",
        transport.name()
    );
    let c = transport
        .builder(&transport.connect_string(ens))?
        .session_timeout(Duration::from_secs(20))
        .connect()
        .await
        .map_err(|e| e.to_string())?;
    let server = c.connected_server().unwrap_or_default();
    println!("  session {:#x} connected to {server}", ephemeral_owner(&c));
    if let Transport::Tls { .. } = transport {
        let ids = c.who_am_i().await.map_err(|e| e.to_string())?;
        let ids: Vec<String> = ids
            .iter()
            .map(|i| format!("{}:{}", i.auth_scheme, i.user))
            .collect();
        println!(
            "  the server knows us by our certificate: {}",
            ids.join(", ")
        );
    }
    c.create("/demo-ephemeral", b"mine", CreateOptions::ephemeral())
        .await
        .map_err(|e| e.to_string())?;
    let (_, _, watch) = c
        .get_data_watch("/demo-ephemeral")
        .await
        .map_err(|e| e.to_string())?;
    let mut events = c.session_events();
    let victim = (0..ens.len())
        .find(|&i| {
            transport
                .port(ens.server(i))
                .is_some_and(|p| server.ends_with(&format!(":{p}")))
        })
        .ok_or("connected to an unknown server")?;
    println!("  kill -9 server {victim} ({server})");
    let t0 = Instant::now();
    tokio::task::block_in_place(|| ens.server(victim).kill9());
    while let Some(ev) = events.next().await {
        println!("  +{:>5} ms  {ev:?}", t0.elapsed().as_millis());
        if c.state() == SessionState::Connected {
            break;
        }
    }
    println!(
        "  same session {:#x}, now on {}",
        ephemeral_owner(&c),
        c.connected_server().unwrap_or_default()
    );
    c.set_data("/demo-ephemeral", b"still mine", Version::Any)
        .await
        .map_err(|e| e.to_string())?;
    let ev = tokio::time::timeout(Duration::from_secs(5), watch)
        .await
        .map_err(|_| "watch did not fire")?
        .map_err(|e| e.to_string())?;
    println!("  the watch set before the kill fired: {ev:?}");
    c.close().await.map_err(|e| e.to_string())?;
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // The recipe part starts this program again as its contending processes.
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 5 && (args[1] == "lock" || args[1] == "elect") {
        let (hosts, path, name) = (&args[2], &args[3], &args[4]);
        let transport = Transport::from_env();
        if args[1] == "lock" {
            contender::lock_loop(&transport, hosts, path, name).await;
        } else {
            contender::elect_loop(&transport, hosts, path, name).await;
        }
        return;
    }
    let tls = match &args[1..] {
        [] => false,
        [flag] if flag == "--tls" => true,
        _ => {
            eprintln!("usage: demo [--tls]");
            std::process::exit(2);
        }
    };
    // The certificates live (in a scratch directory) until the demo ends.
    let (certs, transport) = match tls.then(TestCerts::generate).transpose() {
        Ok(Some(certs)) => {
            let t = Transport::tls(&certs);
            (Some(certs), t)
        }
        Ok(None) => (None, Transport::Plain),
        Err(e) => {
            eprintln!("could not make certificates: {e}");
            std::process::exit(2);
        }
    };
    println!("Starting a 3-node ZooKeeper 3.8 ensemble on 127.0.0.1 (installs it if missing)…");
    let start = || match &certs {
        Some(c) => Ensemble::builder().tls(ServerTls::from_certs(c)).start(),
        None => Ensemble::start(3),
    };
    let ens = match tokio::task::block_in_place(start) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("could not start ZooKeeper: {e}");
            std::process::exit(2);
        }
    };
    println!("ensemble: {}", ens.connect_string());
    if tls {
        println!(
            "secure client ports (TLS, client certificates required): {}",
            ens.secure_connect_string()
        );
    }
    let mut result = tokio::task::block_in_place(|| protocol_demo(&ens));
    if result.is_ok() {
        result = session_demo(&ens, &transport).await;
    }
    if result.is_ok() {
        result = tokio::task::block_in_place(|| scenario::run(&ens, &transport));
    }
    if let Err(e) = result {
        eprintln!("demo failed: {e}");
        std::process::exit(1);
    }
    println!("\ndone; stopping the ensemble");
}
