//! A hostile count costs no more memory than the frame that carries it: decoding reserves at
//! most the frame's size up front, whatever count the bytes claim.
//!
//! Its own test binary, because it counts allocations with a global allocator.

// A GlobalAlloc is an unsafe trait: counting allocations cannot be done without it.
#![allow(unsafe_code)]

use std::{
    alloc::{GlobalAlloc, Layout, System},
    sync::atomic::{AtomicUsize, Ordering},
};

use bytes::{BufMut, BytesMut};
use zk_proto::{decode_reply, OpCode, DEFAULT_MAX_FRAME_LEN};

/// The system allocator, remembering the largest single allocation.
struct Largest;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Largest = Largest;

#[test]
fn a_hostile_child_count_reserves_no_more_than_the_frame() {
    // A full-size getChildren reply whose count says 262,143 names (4 bytes each would fit),
    // but whose first name has a length far past the end.
    let mut frame = BytesMut::with_capacity(DEFAULT_MAX_FRAME_LEN);
    frame.put_i32(1); // xid
    frame.put_i64(1); // zxid
    frame.put_i32(0); // err
    let count = (DEFAULT_MAX_FRAME_LEN - frame.len() - 4) / 4;
    frame.put_i32(count as i32);
    frame.resize(DEFAULT_MAX_FRAME_LEN, 0x7f);
    let frame = frame.freeze();

    LARGEST.store(0, Ordering::Relaxed);
    let r = decode_reply(frame.clone(), OpCode::GetChildren);
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(r.is_err(), "{r:?}");
    // One String is 24 bytes: reserving `count` of them would take about 6 MiB.
    assert!(
        largest <= frame.len(),
        "largest allocation {largest} bytes for a {} byte frame",
        frame.len()
    );
}
