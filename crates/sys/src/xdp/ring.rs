//! The memory AF_XDP shares with the kernel: the UMEM and the single
//! producer / single consumer rings (TX descriptors, completed frames).

use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// An owned mapping, unmapped on drop.
pub struct Mapped {
    pub ptr: *mut u8,
    pub len: usize,
}

impl Mapped {
    /// Anonymous private memory (the UMEM).
    pub fn anonymous(len: usize) -> io::Result<Mapped> {
        // SAFETY: a fresh anonymous mapping; the pointer is checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapped { ptr: p.cast(), len })
    }

    fn shared(fd: &OwnedFd, len: usize, offset: u64) -> io::Result<Mapped> {
        // SAFETY: maps the socket's ring at the kernel's page offset; the
        // pointer is checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapped { ptr: p.cast(), len })
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned and nothing
        // borrows the mapping once its owner is dropped.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

/// `XDP_MMAP_OFFSETS`.
pub fn offsets(fd: &OwnedFd) -> io::Result<libc::xdp_mmap_offsets> {
    // SAFETY: all-zero is a valid xdp_mmap_offsets (plain integers).
    let mut off: libc::xdp_mmap_offsets = unsafe { std::mem::zeroed() };
    let mut len = size_of::<libc::xdp_mmap_offsets>() as libc::socklen_t;
    // SAFETY: `off` is writable for `len` bytes.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_XDP,
            libc::XDP_MMAP_OFFSETS,
            (&mut off as *mut libc::xdp_mmap_offsets).cast(),
            &mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(off)
}

/// One ring: the kernel's producer and consumer indices and the entries.
pub struct Ring {
    _map: Mapped,
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    entries: *mut u8,
    size: u32,
    /// Our index: next entry to produce (TX) or to consume (completion).
    local: u32,
    /// The other side's index as last read.
    cached: u32,
}

impl Ring {
    pub fn map(
        fd: &OwnedFd,
        off: &libc::xdp_ring_offset,
        size: u32,
        entry: usize,
        pgoff: u64,
    ) -> io::Result<Ring> {
        let len = off.desc as usize + size as usize * entry;
        let map = Mapped::shared(fd, len, pgoff)?;
        let base = map.ptr;
        // SAFETY: the offsets come from the kernel for this mapping and lie
        // inside it; the indices are 4-byte aligned u32s the kernel updates
        // concurrently, so they are read and written as atomics.
        let (producer, consumer, entries) = unsafe {
            (
                base.add(off.producer as usize) as *const AtomicU32,
                base.add(off.consumer as usize) as *const AtomicU32,
                base.add(off.desc as usize),
            )
        };
        Ok(Ring {
            _map: map,
            producer,
            consumer,
            entries,
            size,
            local: 0,
            cached: 0,
        })
    }

    fn load(p: *const AtomicU32) -> u32 {
        // SAFETY: `p` points into the live mapping (see `map`).
        unsafe { (*p).load(Ordering::Acquire) }
    }

    fn store(p: *const AtomicU32, v: u32) {
        // SAFETY: as `load`.
        unsafe { (*p).store(v, Ordering::Release) }
    }

    /// TX: descriptors we may still write.
    pub fn free_slots(&mut self) -> u32 {
        let mut free = self.size - self.local.wrapping_sub(self.cached);
        if free == 0 {
            self.cached = Self::load(self.consumer);
            free = self.size - self.local.wrapping_sub(self.cached);
        }
        free
    }

    /// TX: write one descriptor (after `free_slots` said there is room).
    pub fn push_desc(&mut self, d: libc::xdp_desc) {
        let i = (self.local & (self.size - 1)) as usize;
        // SAFETY: i < size and the ring holds `size` descriptors; the slot
        // is ours until the producer index is published past it.
        unsafe {
            (self.entries as *mut libc::xdp_desc)
                .add(i)
                .write_volatile(d);
        }
        self.local = self.local.wrapping_add(1);
    }

    /// TX: let the kernel see what was written.
    pub fn publish(&mut self) {
        Self::store(self.producer, self.local);
    }

    /// TX: descriptors published that the kernel has not consumed yet.
    pub fn pending(&mut self) -> u32 {
        self.cached = Self::load(self.consumer);
        Self::load(self.producer).wrapping_sub(self.cached)
    }

    /// Completion: move every completed frame address to `free`.
    pub fn consume_addrs(&mut self, free: &mut Vec<u64>) -> usize {
        let prod = Self::load(self.producer);
        let n = prod.wrapping_sub(self.local);
        for k in 0..n {
            let i = (self.local.wrapping_add(k) & (self.size - 1)) as usize;
            // SAFETY: entries between our consumer and the kernel's
            // producer index are written and ours to read.
            let addr = unsafe { (self.entries as *const u64).add(i).read_volatile() };
            free.push(addr);
        }
        self.local = prod;
        Self::store(self.consumer, prod);
        n as usize
    }
}
