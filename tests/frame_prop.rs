//! Property tests (docs/design.md §11) of the protocol's frame decoder,
//! which reads what any peer sends: hostile streams cut anywhere never
//! panic nor allocate past the 1 MiB cap, and frames round-trip.
//! `PROPTEST_CASES=N` runs N cases of each property instead, for a longer
//! hunt.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::pin::Pin;
use std::task::{Context, Poll};

use agents::protocol::{Frame, FrameError, MAX_FRAME, read_frame};
use proptest::prelude::*;

#[path = "common/prop.rs"]
mod property;
use property::cases;

// ---------------------------------------------------------------------------
// Allocation tracking: the frame decoder must never ask for more than the
// 1 MiB cap, whatever length a peer claims. The global allocator records the
// largest single request made while this thread has tracking on.

struct Tracking;

thread_local! {
    static TRACK: Cell<bool> = const { Cell::new(false) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // `try_with`: allocations during thread teardown find no slot.
    let _ = TRACK.try_with(|on| {
        if on.get() {
            let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
        }
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// bookkeeping touches only const-initialised thread-locals, which never
// allocate.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

/// The largest single allocation `f` made on this thread.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|l| l.set(0));
    TRACK.with(|t| t.set(true));
    let out = f();
    TRACK.with(|t| t.set(false));
    (out, LARGEST.with(Cell::get))
}

// ---------------------------------------------------------------------------
// The frame decoder.

/// An `AsyncRead` that hands its bytes over in the given chunk sizes.
struct Trickle {
    bytes: Vec<u8>,
    pos: usize,
    chunks: Vec<usize>,
    next: usize,
}

impl Trickle {
    fn new(bytes: Vec<u8>, chunks: Vec<usize>) -> Trickle {
        Trickle {
            bytes,
            pos: 0,
            chunks,
            next: 0,
        }
    }
}

impl tokio::io::AsyncRead for Trickle {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let chunk = this.chunks.get(this.next).copied().unwrap_or(usize::MAX).max(1);
        this.next += 1;
        let n = chunk.min(buf.remaining()).min(this.bytes.len() - this.pos);
        buf.put_slice(&this.bytes[this.pos..this.pos + n]);
        this.pos += n;
        Poll::Ready(Ok(()))
    }
}

/// Every frame in `stream`, and how reading ended.
fn read_all(stream: Vec<u8>, chunks: Vec<usize>) -> (Vec<Frame>, FrameError) {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async move {
        let mut r = Trickle::new(stream, chunks);
        let mut frames = Vec::new();
        loop {
            match read_frame(&mut r).await {
                Ok(f) => frames.push(f),
                Err(e) => return (frames, e),
            }
        }
    })
}

fn run_id() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_-]{1,64}"
}

fn payload() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..300)
}

fn frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        payload().prop_map(Frame::Control),
        (run_id(), any::<u64>(), payload()).prop_map(|(run, offset, bytes)| Frame::Output { run, offset, bytes }),
        (run_id(), any::<u64>(), any::<u16>(), any::<u16>(), payload()).prop_map(|(run, offset, rows, cols, bytes)| {
            Frame::Snapshot {
                run,
                offset,
                rows,
                cols,
                bytes,
            }
        }),
        (run_id(), payload()).prop_map(|(run, bytes)| Frame::Input { run, bytes }),
    ]
}

/// A hostile stream: noise, and length prefixes of every size (up to
/// `u32::MAX`) in front of bodies that may or may not be that long.
fn hostile_stream() -> impl Strategy<Value = Vec<u8>> {
    let length = prop_oneof![0..64u32, (MAX_FRAME as u32 - 2)..(MAX_FRAME as u32 + 2), any::<u32>(),];
    let segment = prop_oneof![
        payload(),
        (length, 1..5u8, payload()).prop_map(|(len, kind, body)| {
            let mut s = len.to_be_bytes().to_vec();
            s.push(kind);
            s.extend(body);
            s
        }),
    ];
    prop::collection::vec(segment, 0..6).prop_map(|s| s.concat())
}

/// The tracker is not blind: reading a frame of the full size allocates
/// the full size, once.
#[test]
fn the_allocation_tracker_sees_a_full_size_frame() {
    let mut wire = (MAX_FRAME as u32).to_be_bytes().to_vec();
    wire.push(1);
    wire.resize(4 + MAX_FRAME, b' ');
    let ((frames, end), largest) = largest_allocation(|| read_all(wire, vec![4096]));
    assert_eq!(frames.len(), 1);
    assert!(matches!(end, FrameError::Closed), "{end:?}");
    assert_eq!(largest, MAX_FRAME);
}

proptest! {
    #![proptest_config(cases(256))]

    /// Whatever a peer sends, in whatever pieces: no panic, and no single
    /// allocation past the 1 MiB cap (a claimed length above it is refused
    /// before any buffer is made).
    #[test]
    fn hostile_streams_never_panic_nor_allocate_past_the_cap(
        stream in hostile_stream(),
        chunks in prop::collection::vec(1..64usize, 0..16),
    ) {
        let len = stream.len();
        let ((frames, _end), largest) = largest_allocation(|| read_all(stream, chunks));
        prop_assert!(largest <= MAX_FRAME, "allocated {largest} bytes at once");
        prop_assert!(frames.len() <= len / 5);
    }

    /// Frames encoded back to back come out the same, however the stream
    /// is cut, and then the stream is cleanly closed.
    #[test]
    fn frames_round_trip_through_a_stream_cut_anywhere(
        sent in prop::collection::vec(frame(), 0..8),
        chunks in prop::collection::vec(1..40usize, 0..64),
    ) {
        let stream: Vec<u8> = sent.iter().flat_map(|f| f.encode().unwrap()).collect();
        let (got, end) = read_all(stream, chunks);
        prop_assert_eq!(got, sent);
        prop_assert!(matches!(end, FrameError::Closed), "{end:?}");
    }

    /// Any body either fails to decode or decodes to a frame that encodes
    /// back to exactly that body: one way to write each frame.
    #[test]
    fn any_body_decodes_to_an_error_or_re_encodes_to_itself(
        kind in 0..6u8,
        rest in prop::collection::vec(any::<u8>(), 0..200),
        id_len in 0..70u8,
    ) {
        // Often a plausible run id, so decoding gets past it.
        let mut body = vec![kind, id_len];
        body.extend(std::iter::repeat_n(b'r', id_len as usize));
        body.extend(rest);
        if let Ok(frame) = Frame::decode(&body) {
            let wire = frame.encode().unwrap();
            prop_assert_eq!(&wire[4..], &body[..]);
        }
        let _ = Frame::decode(&body[1..]);
    }
}
