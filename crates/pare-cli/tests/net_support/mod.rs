//! Connections from a chosen loopback address, for the tests where another address stands
//! for another client (all of 127.0.0.0/8 is loopback on Linux).

use std::net::{SocketAddr, TcpStream};

use socket2::{Domain, SockAddr, Socket, Type};

/// A TCP connection to `target` (`HOST:PORT`) from `source` (an IPv4 address).
pub fn connect_from(source: &str, target: &str) -> std::io::Result<TcpStream> {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    let source: SocketAddr = format!("{source}:0").parse().expect("an IPv4 address");
    socket.bind(&SockAddr::from(source))?;
    let target: SocketAddr = target.parse().expect("HOST:PORT");
    socket.connect(&SockAddr::from(target))?;
    Ok(socket.into())
}
