//! The version header each side writes as soon as a stream opens, so a
//! mismatch is a clear error instead of a garbled session.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

/// Bumped whenever a frame layout or a method's meaning changes incompatibly.
pub const PROTOCOL_VERSION: u32 = 1;

/// A header is one short line; anything longer is not our peer.
const MAX_HEADER: usize = 128;

#[derive(Debug, thiserror::Error)]
pub enum HeaderError {
    #[error("peer speaks protocol {peer}, this is {ours} (binary {binary})")]
    Mismatch {
        peer: String,
        ours: u32,
        binary: &'static str,
    },
    #[error("peer did not send an agents header")]
    NotAgents,
    #[error("peer closed the connection before its header")]
    Closed,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

fn our_header() -> String {
    format!("agents/{PROTOCOL_VERSION} {}\n", env!("CARGO_PKG_VERSION"))
}

/// Writes our header and reads the peer's. Returns the peer's binary version.
pub async fn exchange_headers<R, W>(reader: &mut R, writer: &mut W) -> Result<String, HeaderError>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    writer.write_all(our_header().as_bytes()).await?;
    writer.flush().await?;
    let mut line = Vec::new();
    let mut limited = (&mut *reader).take(MAX_HEADER as u64);
    limited.read_until(b'\n', &mut line).await?;
    if line.is_empty() {
        return Err(HeaderError::Closed);
    }
    if line.last() != Some(&b'\n') {
        return Err(HeaderError::NotAgents);
    }
    let line = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
    let rest = line.strip_prefix("agents/").ok_or(HeaderError::NotAgents)?;
    let (proto, binary) = rest.split_once(' ').unwrap_or((rest, ""));
    if proto != PROTOCOL_VERSION.to_string() {
        return Err(HeaderError::Mismatch {
            peer: proto.to_string(),
            ours: PROTOCOL_VERSION,
            binary: env!("CARGO_PKG_VERSION"),
        });
    }
    Ok(binary.to_string())
}

use tokio::io::AsyncReadExt;

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn exchange(peer_sends: Option<&[u8]>) -> Result<String, HeaderError> {
        let (a, b) = tokio::io::duplex(1024);
        let (ar, mut aw) = tokio::io::split(a);
        let (br, mut bw) = tokio::io::split(b);
        let mut ar = BufReader::new(ar);
        match peer_sends {
            Some(bytes) => {
                bw.write_all(bytes).await.unwrap();
                exchange_headers(&mut ar, &mut aw).await
            }
            None => {
                let mut br = BufReader::new(br);
                let (ra, rb) = tokio::join!(exchange_headers(&mut ar, &mut aw), exchange_headers(&mut br, &mut bw));
                rb.unwrap();
                ra
            }
        }
    }

    #[tokio::test]
    async fn matching_headers_pass_and_others_fail() {
        assert_eq!(exchange(None).await.unwrap(), env!("CARGO_PKG_VERSION"));
        assert!(matches!(
            exchange(Some(b"agents/999 9.9.9\n")).await,
            Err(HeaderError::Mismatch { .. })
        ));
        assert!(matches!(
            exchange(Some(b"SSH-2.0-OpenSSH\n")).await,
            Err(HeaderError::NotAgents)
        ));
    }
}
