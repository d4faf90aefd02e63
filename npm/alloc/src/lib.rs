//! The npm package's global allocator in wasm: small blocks from pages of one
//! size each, everything else from std's allocator (dlmalloc in wasm).
//!
//! A parsed vault is mostly small strings and vectors (ids, titles, tool
//! names, frontmatter keys, edge targets: about 26 allocations per note), and
//! `Plan.free()` gives them all back at once. A block of at most
//! [`MAX_SMALL`] bytes (alignment at most [`ALIGN`]) is rounded up to a
//! multiple of 16 and served from a 64 KiB page that holds blocks of that
//! size only: from the page's free list, else carved from its untouched
//! rest. The page is found from a block's address (pages are aligned to their
//! size) and the layout `dealloc` is given says the size, so blocks carry no
//! header. A page whose blocks are all free again goes back to a pool of
//! empty pages and is carved from its start by the next size that needs
//! one, so a plan parsed after the last was freed is laid out in order again
//! (free lists alone hand blocks back scattered, which made parsing slower
//! than dlmalloc). Pages are never returned to the inner allocator (wasm
//! memory never shrinks anyway).
//!
//! Single-threaded: the npm build has no wasm threads. The state sits behind
//! an `UnsafeCell`; `Global` is only `Sync` (and only installed) where
//! there are no threads.
//!
//! Written here because the maintained allocators (dlmalloc itself, talc)
//! measured slower on a parse's many small blocks. A proptest of random
//! alloc/free/realloc sequences guards it; its pointer work is checked by
//! Miri with strict provenance: the `miri` step of `scripts/test` (CI) runs
//!
//! ```text
//! MIRIFLAGS="-Zmiri-disable-isolation -Zmiri-strict-provenance" \
//!     cargo +nightly miri test -p planvault-npm-alloc --lib
//! ```

// The one crate of the workspace that needs `unsafe` (raw pages and a
// `GlobalAlloc`); every block says why it is sound (`SAFETY:`).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;
use std::ptr;

/// Size step, and the largest alignment served from pages.
pub const ALIGN: usize = 16;
/// The largest block served from pages.
pub const MAX_SMALL: usize = 2048;
const CLASSES: usize = MAX_SMALL / ALIGN;
/// Page size and alignment.
pub const PAGE: usize = 64 * 1024;
/// Bytes at the start of a page taken by its header (a multiple of ALIGN).
const HEADER: usize = 64;

/// A free block's first word: the next free block of its page.
struct FreeBlock {
    next: *mut FreeBlock,
}

/// The start of every page.
struct Page {
    free: *mut FreeBlock,
    /// The untouched rest of the page: `[bump, end)`.
    bump: *mut u8,
    end: *mut u8,
    /// Blocks handed out and not given back.
    live: usize,
    /// Neighbours in its class's list of pages with room, or (`next` only)
    /// in the pool of empty pages.
    prev: *mut Page,
    next: *mut Page,
    /// Whether the page is in its class's list.
    listed: bool,
    /// Every page ever taken, for `Drop`.
    all_next: *mut Page,
}

// Blocks are carved from `HEADER` on: the header must fit before them, and
// keep them `ALIGN`-aligned.
const _: () = assert!(size_of::<Page>() <= HEADER && HEADER % ALIGN == 0);

struct State {
    /// Per size class, the pages that may have room (the first is tried
    /// first; a page found full leaves the list until a block comes back).
    pages: [*mut Page; CLASSES],
    /// Empty pages, ready for any class.
    pool: *mut Page,
    all: *mut Page,
}

/// Size-class pages over an inner allocator. See the module docs.
pub struct SizeClasses<A: GlobalAlloc> {
    inner: A,
    state: UnsafeCell<State>,
}

/// The size class of a layout (`None`: the inner allocator serves it).
#[inline]
fn class_of(layout: Layout) -> Option<usize> {
    let size = layout.size();
    if size > MAX_SMALL || layout.align() > ALIGN {
        return None;
    }
    // Zero-sized requests still get a distinct, freeable block.
    Some(size.max(1).div_ceil(ALIGN) - 1)
}

#[inline]
fn class_size(class: usize) -> usize {
    (class + 1) * ALIGN
}

/// The page a block lies in. The address is masked, not rebuilt from an
/// integer, so the pointer keeps the page allocation's provenance (Miri
/// checks this with `-Zmiri-strict-provenance`).
#[inline]
fn page_of(block: *mut u8) -> *mut Page {
    block.map_addr(|addr| addr & !(PAGE - 1)).cast()
}

impl<A: GlobalAlloc> SizeClasses<A> {
    pub const fn new(inner: A) -> Self {
        SizeClasses {
            inner,
            state: UnsafeCell::new(State {
                pages: [ptr::null_mut(); CLASSES],
                pool: ptr::null_mut(),
                all: ptr::null_mut(),
            }),
        }
    }

    /// A block of `class`. Safety: no other call into `self` is running.
    #[inline]
    unsafe fn alloc_small(&self, class: usize) -> *mut u8 {
        let state = &mut *self.state.get();
        let size = class_size(class);
        loop {
            let page = state.pages[class];
            if page.is_null() {
                if !self.take_page(state, class) {
                    return ptr::null_mut();
                }
                continue;
            }
            let free = (*page).free;
            if !free.is_null() {
                (*page).free = (*free).next;
                (*page).live += 1;
                return free.cast();
            }
            let block = (*page).bump;
            if (*page).end.addr() - block.addr() >= size {
                (*page).bump = block.add(size);
                (*page).live += 1;
                return block;
            }
            // Full: out of the list until one of its blocks comes back.
            unlink(state, class, page);
        }
    }

    /// Put an empty page (from the pool, else new) first in `class`'s list.
    #[cold]
    unsafe fn take_page(&self, state: &mut State, class: usize) -> bool {
        let page = if state.pool.is_null() {
            // SAFETY: PAGE is a power of two, a valid size and alignment.
            let page = self
                .inner
                .alloc(Layout::from_size_align_unchecked(PAGE, PAGE))
                .cast::<Page>();
            if page.is_null() {
                return false;
            }
            page.write(Page {
                free: ptr::null_mut(),
                bump: page.cast::<u8>().add(HEADER),
                end: page.cast::<u8>().add(PAGE),
                live: 0,
                prev: ptr::null_mut(),
                next: ptr::null_mut(),
                listed: false,
                all_next: state.all,
            });
            state.all = page;
            page
        } else {
            let page = state.pool;
            state.pool = (*page).next;
            page
        };
        link(state, class, page);
        true
    }

    /// Safety: `block` came from `alloc_small(class)`; no other call runs.
    #[inline]
    unsafe fn free_small(&self, block: *mut u8, class: usize) {
        let state = &mut *self.state.get();
        let page = page_of(block);
        (*page).live -= 1;
        if (*page).live == 0 {
            // Empty: back to the pool, to be carved from its start again.
            if (*page).listed {
                unlink(state, class, page);
            }
            (*page).free = ptr::null_mut();
            (*page).bump = page.cast::<u8>().add(HEADER);
            (*page).next = state.pool;
            state.pool = page;
            return;
        }
        let block = block.cast::<FreeBlock>();
        (*block).next = (*page).free;
        (*page).free = block;
        if !(*page).listed {
            link(state, class, page);
        }
    }
}

/// Put `page` first in `class`'s list.
#[inline]
unsafe fn link(state: &mut State, class: usize, page: *mut Page) {
    let head = state.pages[class];
    (*page).prev = ptr::null_mut();
    (*page).next = head;
    (*page).listed = true;
    if !head.is_null() {
        (*head).prev = page;
    }
    state.pages[class] = page;
}

/// Take `page` out of `class`'s list.
#[inline]
unsafe fn unlink(state: &mut State, class: usize, page: *mut Page) {
    let (prev, next) = ((*page).prev, (*page).next);
    if prev.is_null() {
        state.pages[class] = next;
    } else {
        (*prev).next = next;
    }
    if !next.is_null() {
        (*next).prev = prev;
    }
    (*page).listed = false;
    (*page).prev = ptr::null_mut();
    (*page).next = ptr::null_mut();
}

impl<A: GlobalAlloc> Drop for SizeClasses<A> {
    fn drop(&mut self) {
        let mut page = self.state.get_mut().all;
        while !page.is_null() {
            // SAFETY: every page came from `inner` with this layout.
            unsafe {
                let next = (*page).all_next;
                self.inner
                    .dealloc(page.cast(), Layout::from_size_align_unchecked(PAGE, PAGE));
                page = next;
            }
        }
    }
}

// SAFETY: every block handed out is `ALIGN`-aligned (pages are, the header
// and block sizes are multiples of it), at least as large as asked, inside
// its page, and owned by one caller until given back; the callers must not
// call in concurrently (see `Global`).
unsafe impl<A: GlobalAlloc> GlobalAlloc for SizeClasses<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match class_of(layout) {
            Some(class) => self.alloc_small(class),
            None => self.inner.alloc(layout),
        }
    }

    #[inline]
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        match class_of(layout) {
            Some(class) => self.free_small(block, class),
            None => self.inner.dealloc(block, layout),
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match class_of(layout) {
            Some(class) => {
                let block = self.alloc_small(class);
                if !block.is_null() {
                    ptr::write_bytes(block, 0, layout.size());
                }
                block
            }
            None => self.inner.alloc_zeroed(layout),
        }
    }

    #[inline]
    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size` makes a valid layout.
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        match (class_of(layout), class_of(new_layout)) {
            (Some(old), Some(new)) if old == new => block,
            (None, None) => self.inner.realloc(block, layout, new_size),
            _ => {
                let moved = self.alloc(new_layout);
                if !moved.is_null() {
                    ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                    self.dealloc(block, layout);
                }
                moved
            }
        }
    }
}

/// The allocator installed in the wasm build.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
pub struct Global(SizeClasses<std::alloc::System>);

// SAFETY: wasm32 without the atomics feature has no threads, so no two
// calls into the allocator ever overlap.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
unsafe impl Sync for Global {}

#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
// SAFETY: forwards to `SizeClasses`, whose contract `Global`'s `Sync` meets.
unsafe impl GlobalAlloc for Global {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.0.alloc(layout)
    }
    #[inline]
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        self.0.dealloc(block, layout)
    }
    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.0.alloc_zeroed(layout)
    }
    #[inline]
    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.0.realloc(block, layout, new_size)
    }
}

/// The allocator the npm package installs (`#[global_allocator]` in
/// `planvault-wasm`).
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
impl Global {
    pub const fn new() -> Self {
        Global(SizeClasses::new(std::alloc::System))
    }
}

#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
impl Default for Global {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::alloc::System;

    #[derive(Debug, Clone)]
    enum Op {
        Alloc {
            size: usize,
            align_log: u32,
            zeroed: bool,
        },
        Free(usize),
        Realloc(usize, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        let size = prop_oneof![0usize..64, 0usize..600, 1900usize..2200, 0usize..5000];
        prop_oneof![
            4 => (size.clone(), 0u32..6, any::<bool>()).prop_map(|(size, align_log, zeroed)| Op::Alloc { size, align_log, zeroed }),
            3 => any::<usize>().prop_map(Op::Free),
            3 => (any::<usize>(), size).prop_map(|(i, size)| Op::Realloc(i, size)),
        ]
    }

    struct Live {
        block: *mut u8,
        layout: Layout,
        fill: u8,
    }

    fn fill(live: &Live) {
        // SAFETY: the block holds `layout.size()` bytes.
        unsafe { ptr::write_bytes(live.block, live.fill, live.layout.size()) };
    }

    fn intact(live: &Live, len: usize) -> bool {
        // SAFETY: the block holds at least `len` bytes.
        all_bytes_are(
            unsafe { std::slice::from_raw_parts(live.block, len) },
            live.fill,
        )
    }

    /// Every byte of `bytes` is `value`: compared as slices (one `memcmp`
    /// per chunk, which Miri runs natively instead of interpreting a loop
    /// over every byte: the Miri step took minutes on those loops).
    fn all_bytes_are(bytes: &[u8], value: u8) -> bool {
        let expected = [value; 256];
        bytes
            .chunks(expected.len())
            .all(|chunk| chunk == &expected[..chunk.len()])
    }

    /// Under Miri (`cargo +nightly miri test -p planvault-npm-alloc`, which
    /// checks the pointer work for undefined behaviour) far fewer and shorter
    /// sequences: it interprets every byte compare.
    const CASES: u32 = if cfg!(miri) { 4 } else { 400 };
    const MAX_OPS: usize = if cfg!(miri) { 60 } else { 400 };

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]

        /// Any sequence of allocations, frees and reallocations: every block
        /// is aligned, keeps its bytes (through reallocation too), and no two
        /// live blocks overlap.
        #[test]
        fn blocks_are_aligned_disjoint_and_keep_their_bytes(ops in prop::collection::vec(op(), 1..MAX_OPS)) {
            let heap = SizeClasses::new(System);
            let mut live: Vec<Live> = Vec::new();
            let mut next_fill = 1u8;
            for op in ops {
                next_fill = next_fill.wrapping_add(1).max(1);
                match op {
                    Op::Alloc { size, align_log, zeroed } => {
                        let layout = Layout::from_size_align(size, 1 << align_log).unwrap();
                        // SAFETY: a valid layout; blocks are freed with it below.
                        let block = unsafe { if zeroed { heap.alloc_zeroed(layout) } else { heap.alloc(layout) } };
                        prop_assert!(!block.is_null());
                        prop_assert_eq!(block as usize % layout.align(), 0);
                        if zeroed {
                            // SAFETY: `size` bytes were just allocated.
                            let bytes = unsafe { std::slice::from_raw_parts(block, size) };
                            prop_assert!(all_bytes_are(bytes, 0), "not zeroed");
                        }
                        let one = Live { block, layout, fill: next_fill };
                        fill(&one);
                        live.push(one);
                    }
                    Op::Free(i) if !live.is_empty() => {
                        let one = live.swap_remove(i % live.len());
                        prop_assert!(intact(&one, one.layout.size()));
                        // SAFETY: allocated by `heap` with this layout.
                        unsafe { heap.dealloc(one.block, one.layout) };
                    }
                    Op::Realloc(i, size) if !live.is_empty() => {
                        let at = i % live.len();
                        let old = &live[at];
                        // SAFETY: allocated by `heap` with this layout; the new
                        // size with the same alignment is a valid layout.
                        let block = unsafe { heap.realloc(old.block, old.layout, size) };
                        prop_assert!(!block.is_null());
                        let moved = Live { block, layout: Layout::from_size_align(size, old.layout.align()).unwrap(), fill: old.fill };
                        prop_assert_eq!(block as usize % moved.layout.align(), 0);
                        prop_assert!(intact(&moved, old.layout.size().min(size)));
                        live[at] = Live { fill: next_fill, ..moved };
                        fill(&live[at]);
                    }
                    _ => {}
                }
                // Disjoint, and every live block still holds its own bytes.
                let mut spans: Vec<(usize, usize)> = live.iter().map(|l| (l.block as usize, l.block as usize + l.layout.size().max(1))).collect();
                spans.sort_unstable();
                prop_assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0), "overlapping blocks");
                for one in &live {
                    prop_assert!(intact(one, one.layout.size()));
                }
            }
            for one in live {
                // SAFETY: allocated by `heap` with this layout.
                unsafe { heap.dealloc(one.block, one.layout) };
            }
        }
    }

    #[test]
    fn one_odd_byte_past_the_first_chunk_is_seen() {
        let mut bytes = vec![7u8; 600];
        assert!(all_bytes_are(&bytes, 7));
        bytes[599] = 8;
        assert!(!all_bytes_are(&bytes, 7));
        assert!(!all_bytes_are(&bytes[..300], 8));
        assert!(all_bytes_are(&[], 8));
    }

    #[test]
    fn blocks_of_one_size_share_a_page_and_are_reused() {
        let heap = SizeClasses::new(System);
        let layout = Layout::from_size_align(24, 8).unwrap();
        // SAFETY: every block is freed with the layout it was allocated with.
        unsafe {
            let keep = heap.alloc(layout);
            let a = heap.alloc(layout);
            assert_eq!(
                a as usize - keep as usize,
                32,
                "24 bytes take a 32-byte block after the first"
            );
            heap.dealloc(a, layout);
            let b = heap.alloc(Layout::from_size_align(32, 8).unwrap());
            assert_eq!(
                a, b,
                "24 and 32 bytes share the 32-byte page; a freed block is reused"
            );
            let c = heap.realloc(b, Layout::from_size_align(32, 8).unwrap(), 17);
            assert_eq!(b, c, "shrinking within the class keeps the block");
            heap.dealloc(c, Layout::from_size_align(17, 8).unwrap());
            heap.dealloc(keep, layout);
        }
    }

    #[test]
    fn everything_freed_is_laid_out_in_order_again() {
        let heap = SizeClasses::new(System);
        let sizes = [24usize, 100, 24, 1200, 7, 300];
        let layouts: Vec<Layout> = sizes
            .iter()
            .map(|&s| Layout::from_size_align(s, 8).unwrap())
            .collect();
        let round = |heap: &SizeClasses<System>| -> Vec<*mut u8> {
            // SAFETY: a valid layout per block.
            (0..if cfg!(miri) { 200 } else { 2000 })
                .map(|i| unsafe { heap.alloc(layouts[i % layouts.len()]) })
                .collect()
        };
        let first = round(&heap);
        // Freed in allocation order, as dropping a plan does.
        for (i, &block) in first.iter().enumerate() {
            // SAFETY: allocated above with this layout.
            unsafe { heap.dealloc(block, layouts[i % layouts.len()]) };
        }
        let second = round(&heap);
        // The same pages, each carved from its start in order again (not
        // the blocks handed back last first).
        let mut by_page: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for &block in &second {
            by_page
                .entry(block.addr() & !(PAGE - 1))
                .or_default()
                .push(block.addr());
        }
        for blocks in by_page.values() {
            assert!(
                blocks.windows(2).all(|w| w[0] < w[1]),
                "a page is carved in address order"
            );
        }
        let pages = |v: &[*mut u8]| {
            v.iter()
                .map(|x| x.addr() & !(PAGE - 1))
                .collect::<std::collections::BTreeSet<_>>()
        };
        assert_eq!(
            pages(&first),
            pages(&second),
            "no new pages for the same load"
        );
        for (i, &block) in second.iter().enumerate() {
            // SAFETY: allocated above with this layout.
            unsafe { heap.dealloc(block, layouts[i % layouts.len()]) };
        }
    }
}
