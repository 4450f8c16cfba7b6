//! Frames: `u32 length` (big endian, of what follows) + `u8 kind` + payload.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The cap on one frame (kind byte + payload). docs/design.md §5: 1 MiB, so a peer
/// cannot make us allocate more than that per read.
pub const MAX_FRAME: usize = 1 << 20;

const KIND_CONTROL: u8 = 1;
const KIND_OUTPUT: u8 = 2;
const KIND_SNAPSHOT: u8 = 3;
const KIND_INPUT: u8 = 4;
const KIND_SCREEN: u8 = 5;

/// Run ids on the wire are short ASCII (ULIDs, 26 bytes); anything longer is malformed.
const MAX_RUN_ID: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// One JSON-RPC 2.0 message.
    Control(Vec<u8>),
    /// Raw output bytes of a run, starting at `offset` in its output log.
    Output { run: String, offset: u64, bytes: Vec<u8> },
    /// A screen that stands in for the output before `offset` (a slow client
    /// skipped ahead, or a client asked to start from the current screen).
    Snapshot {
        run: String,
        offset: u64,
        rows: u16,
        cols: u16,
        bytes: Vec<u8>,
    },
    /// Bytes typed into a run's terminal.
    Input { run: String, bytes: Vec<u8> },
    /// A screen update (`protocol::screen::ScreenUpdate`, encoded) of the
    /// screen subscription `sub` of a run.
    Screen { run: String, sub: u64, bytes: Vec<u8> },
}

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("connection closed")]
    Closed,
    #[error("frame of {0} bytes exceeds the {MAX_FRAME}-byte cap")]
    TooLarge(usize),
    #[error("malformed frame: {0}")]
    Malformed(&'static str),
    #[error("a frame was begun and not finished within {0} s")]
    Stalled(u64),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Frame {
    pub fn control(value: &impl serde::Serialize) -> Frame {
        // Serializing our own message types cannot fail: they hold no maps with
        // non-string keys and no failing Serialize impls.
        Frame::Control(serde_json::to_vec(value).expect("control messages serialize"))
    }

    /// [`Frame::control`] of a message about `size` bytes long, written
    /// into a buffer of that size rather than one grown as it is written.
    pub fn control_of_size(value: &impl serde::Serialize, size: usize) -> Frame {
        let mut json = Vec::with_capacity(size);
        serde_json::to_writer(&mut json, value).expect("control messages serialize");
        Frame::Control(json)
    }

    /// Encodes the frame, header included.
    pub fn encode(&self) -> Result<Vec<u8>, FrameError> {
        // The length first, filled in last; the whole frame in one buffer
        // of its size (a list's page is most of a MiB).
        let mut body = Vec::with_capacity(4 + 1 + 64 + self.payload_len());
        body.extend_from_slice(&[0; 4]);
        match self {
            Frame::Control(json) => {
                body.push(KIND_CONTROL);
                body.extend_from_slice(json);
            }
            Frame::Output { run, offset, bytes } => {
                body.push(KIND_OUTPUT);
                put_run(&mut body, run)?;
                body.extend_from_slice(&offset.to_be_bytes());
                body.extend_from_slice(bytes);
            }
            Frame::Snapshot {
                run,
                offset,
                rows,
                cols,
                bytes,
            } => {
                body.push(KIND_SNAPSHOT);
                put_run(&mut body, run)?;
                body.extend_from_slice(&offset.to_be_bytes());
                body.extend_from_slice(&rows.to_be_bytes());
                body.extend_from_slice(&cols.to_be_bytes());
                body.extend_from_slice(bytes);
            }
            Frame::Input { run, bytes } => {
                body.push(KIND_INPUT);
                put_run(&mut body, run)?;
                body.extend_from_slice(bytes);
            }
            Frame::Screen { run, sub, bytes } => {
                body.push(KIND_SCREEN);
                put_run(&mut body, run)?;
                body.extend_from_slice(&sub.to_be_bytes());
                body.extend_from_slice(bytes);
            }
        }
        let len = body.len() - 4;
        if len > MAX_FRAME {
            return Err(FrameError::TooLarge(len));
        }
        body[..4].copy_from_slice(&(len as u32).to_be_bytes());
        Ok(body)
    }

    /// The size of what the frame carries, its header aside.
    fn payload_len(&self) -> usize {
        match self {
            Frame::Control(bytes)
            | Frame::Output { bytes, .. }
            | Frame::Snapshot { bytes, .. }
            | Frame::Input { bytes, .. }
            | Frame::Screen { bytes, .. } => bytes.len(),
        }
    }

    /// Decodes one frame body (kind byte + payload), as read after the length.
    pub fn decode(body: &[u8]) -> Result<Frame, FrameError> {
        let (&kind, rest) = body.split_first().ok_or(FrameError::Malformed("empty frame"))?;
        match kind {
            KIND_CONTROL => Ok(Frame::Control(rest.to_vec())),
            KIND_OUTPUT => {
                let (run, rest) = take_run(rest)?;
                let (offset, bytes) = take_u64(rest)?;
                Ok(Frame::Output {
                    run,
                    offset,
                    bytes: bytes.to_vec(),
                })
            }
            KIND_SNAPSHOT => {
                let (run, rest) = take_run(rest)?;
                let (offset, rest) = take_u64(rest)?;
                if rest.len() < 4 {
                    return Err(FrameError::Malformed("snapshot size truncated"));
                }
                let rows = u16::from_be_bytes([rest[0], rest[1]]);
                let cols = u16::from_be_bytes([rest[2], rest[3]]);
                Ok(Frame::Snapshot {
                    run,
                    offset,
                    rows,
                    cols,
                    bytes: rest[4..].to_vec(),
                })
            }
            KIND_INPUT => {
                let (run, bytes) = take_run(rest)?;
                Ok(Frame::Input {
                    run,
                    bytes: bytes.to_vec(),
                })
            }
            KIND_SCREEN => {
                let (run, rest) = take_run(rest)?;
                let (sub, bytes) = take_u64(rest)?;
                Ok(Frame::Screen {
                    run,
                    sub,
                    bytes: bytes.to_vec(),
                })
            }
            _ => Err(FrameError::Malformed("unknown frame kind")),
        }
    }
}

fn put_run(body: &mut Vec<u8>, run: &str) -> Result<(), FrameError> {
    if run.is_empty() || run.len() > MAX_RUN_ID {
        return Err(FrameError::Malformed("run id length"));
    }
    body.push(run.len() as u8);
    body.extend_from_slice(run.as_bytes());
    Ok(())
}

fn take_run(rest: &[u8]) -> Result<(String, &[u8]), FrameError> {
    let (&len, rest) = rest.split_first().ok_or(FrameError::Malformed("run id missing"))?;
    let len = len as usize;
    if len == 0 || len > MAX_RUN_ID || rest.len() < len {
        return Err(FrameError::Malformed("run id length"));
    }
    let id = &rest[..len];
    if !id.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_') {
        return Err(FrameError::Malformed("run id characters"));
    }
    // Checked ASCII just above.
    let id = String::from_utf8(id.to_vec()).map_err(|_| FrameError::Malformed("run id"))?;
    Ok((id, &rest[len..]))
}

fn take_u64(rest: &[u8]) -> Result<(u64, &[u8]), FrameError> {
    if rest.len() < 8 {
        return Err(FrameError::Malformed("offset truncated"));
    }
    let mut b = [0u8; 8];
    b.copy_from_slice(&rest[..8]);
    Ok((u64::from_be_bytes(b), &rest[8..]))
}

/// Reads one frame. A clean end of stream before a frame starts is `Closed`;
/// an end in the middle of one is an I/O error (truncated frame).
pub async fn read_frame<R: AsyncRead + Unpin>(r: &mut R) -> Result<Frame, FrameError> {
    read_frame_within(r, None).await
}

/// [`read_frame`], a frame once begun to be finished `within` this long
/// (a peer that stalls mid-frame holds nothing for ever). The body grows
/// as its bytes arrive: a length alone reserves no memory.
pub async fn read_frame_within<R: AsyncRead + Unpin>(
    r: &mut R,
    within: Option<std::time::Duration>,
) -> Result<Frame, FrameError> {
    let mut len = [0u8; 4];
    match r.read_u8().await {
        Ok(first) => len[0] = first,
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(e) => return Err(e.into()),
    }
    let rest = async {
        r.read_exact(&mut len[1..]).await?;
        let len = u32::from_be_bytes(len) as usize;
        if len > MAX_FRAME {
            return Err(FrameError::TooLarge(len));
        }
        Frame::decode(&read_body(r, len).await?)
    };
    match within {
        Some(limit) => tokio::time::timeout(limit, rest)
            .await
            .map_err(|_| FrameError::Stalled(limit.as_secs()))?,
        None => rest.await,
    }
}

/// What a frame's body reserves before its bytes arrive.
const FIRST_READ: usize = 64 * 1024;

/// A body of `len` bytes, its buffer doubled as bytes arrive and never
/// past `len`.
async fn read_body<R: AsyncRead + Unpin>(r: &mut R, len: usize) -> Result<Vec<u8>, FrameError> {
    let mut body = Vec::with_capacity(len.min(FIRST_READ));
    while body.len() < len {
        if body.len() == body.capacity() {
            let grown = (body.capacity() * 2).min(len);
            body.reserve_exact(grown - body.len());
        }
        // Into the room there is (never grown here), and no byte past this
        // frame's.
        let left = (len - body.len()) as u64;
        if (&mut *r).take(left).read_buf(&mut body).await? == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
        }
    }
    Ok(body)
}

pub async fn write_frame<W: AsyncWrite + Unpin>(w: &mut W, frame: &Frame) -> Result<(), FrameError> {
    let bytes = frame.encode()?;
    w.write_all(&bytes).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(frame: Frame) {
        let bytes = frame.encode().unwrap();
        assert_eq!(Frame::decode(&bytes[4..]).unwrap(), frame);
    }

    #[test]
    fn every_kind_round_trips() {
        roundtrip(Frame::Control(br#"{"jsonrpc":"2.0"}"#.to_vec()));
        roundtrip(Frame::Output {
            run: "01ABC".into(),
            offset: 1 << 40,
            bytes: vec![0, 27, 255],
        });
        roundtrip(Frame::Snapshot {
            run: "r".into(),
            offset: 7,
            rows: 50,
            cols: 200,
            bytes: b"\x1b[H".to_vec(),
        });
        roundtrip(Frame::Input {
            run: "r".into(),
            bytes: b"\x01d".to_vec(),
        });
        roundtrip(Frame::Screen {
            run: "r".into(),
            sub: 3,
            bytes: vec![1, 2],
        });
    }

    #[test]
    fn malformed_bodies_are_errors_not_panics() {
        for body in [
            &[][..],
            &[9][..],
            &[KIND_OUTPUT][..],
            &[KIND_OUTPUT, 3, b'a'][..],
            &[KIND_OUTPUT, 1, b'a', 0, 0][..],
            &[KIND_SNAPSHOT, 1, b'a', 0, 0, 0, 0, 0, 0, 0, 1, 0][..],
            &[KIND_INPUT, 1, b'/'][..],
            &[KIND_SCREEN, 1, b'a', 0, 0][..],
        ] {
            assert!(Frame::decode(body).is_err(), "{body:?}");
        }
    }

    #[test]
    fn oversized_frames_are_refused_before_allocation() {
        let mut wire = ((MAX_FRAME + 1) as u32).to_be_bytes().to_vec();
        wire.push(KIND_CONTROL);
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let err = rt.block_on(read_frame(&mut &wire[..])).unwrap_err();
        assert!(matches!(err, FrameError::TooLarge(_)));
    }

    #[test]
    fn a_truncated_frame_is_an_error() {
        let mut wire = Frame::Control(b"{}".to_vec()).encode().unwrap();
        wire.pop();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        assert!(rt.block_on(read_frame(&mut &wire[..])).is_err());
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_decoder() {
        // A cheap deterministic fuzz: every prefix of a pseudo-random stream.
        let mut x: u32 = 0x1234_5678;
        let bytes: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x & 0xff) as u8
            })
            .collect();
        for start in 0..64 {
            for end in (start..bytes.len()).step_by(61) {
                let _ = Frame::decode(&bytes[start..end]);
            }
        }
    }
}
