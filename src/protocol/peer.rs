//! Who is at the other end of a Unix socket: the daemon's and every run's
//! socket take only their own user (SO_PEERCRED).

use tokio::net::UnixStream;

/// The peer of a Unix socket runs as our user.
pub fn is_same_user(stream: &UnixStream) -> bool {
    match stream.peer_cred() {
        Ok(cred) => cred.uid() == nix::unistd::getuid().as_raw(),
        Err(_) => false,
    }
}
