//! Small helpers for raw socket descriptors, shared by the packet, UDP and
//! TCP-info code: errno conversion and integer socket options.

use std::io;
use std::mem::size_of;
use std::os::fd::RawFd;

/// `rc < 0` → the thread's errno as an error.
pub(crate) fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// "Try again": nothing to read or no room to send right now, or a signal.
pub(crate) fn is_again(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR))
}

/// `SO_RCVTIMEO`: a blocking receive gives up (EAGAIN) after `d`
/// (rounded by the kernel to its tick; 0 would mean "never", so at least
/// 1 µs is set).
pub(crate) fn set_recv_timeout(fd: RawFd, d: std::time::Duration) -> io::Result<()> {
    let tv = libc::timeval {
        tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_usec: (d.subsec_micros().max(u32::from(d.as_secs() == 0))) as libc::suseconds_t,
    };
    // SAFETY: `tv` is a valid timeval and its exact size is passed.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            &tv as *const libc::timeval as *const libc::c_void,
            size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    cvt(rc).map(|_| ())
}

/// `setsockopt(fd, level, name, &value, sizeof(int))`.
pub(crate) fn set_int(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: `value` is a valid c_int and its exact size is passed; the
    // kernel checks `fd`.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &value as *const libc::c_int as *const libc::c_void,
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    cvt(rc).map(|_| ())
}

/// `getsockopt(fd, level, name)` for an integer option.
pub(crate) fn get_int(fd: RawFd, level: libc::c_int, name: libc::c_int) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` and `len` are valid and writable; `len` holds the
    // buffer size; the kernel checks `fd`.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            level,
            name,
            &mut value as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        )
    };
    cvt(rc).map(|_| value)
}

/// [`set_int`] and [`get_int`] as methods of every socket with a descriptor.
pub(crate) trait IntOption: std::os::fd::AsRawFd {
    fn set_int(&self, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
        set_int(self.as_raw_fd(), level, name, value)
    }

    fn get_int(&self, level: libc::c_int, name: libc::c_int) -> io::Result<libc::c_int> {
        get_int(self.as_raw_fd(), level, name)
    }
}

impl<T: std::os::fd::AsRawFd> IntOption for T {}

/// Sets a socket buffer (`opt`: `SO_RCVBUF` or `SO_SNDBUF`) to `bytes`,
/// forcing past `net.core.[rw]mem_max` with `force` (`SO_*BUFFORCE`) when
/// the cap cut it and CAP_NET_ADMIN allows; returns the size the kernel
/// granted (read back; the kernel doubles the request for its bookkeeping).
pub(crate) fn set_socket_buffer(
    fd: RawFd,
    opt: libc::c_int,
    force: libc::c_int,
    bytes: usize,
) -> std::io::Result<usize> {
    let want = bytes.min(i32::MAX as usize / 2) as libc::c_int;
    set_int(fd, libc::SOL_SOCKET, opt, want)?;
    let mut got = get_int(fd, libc::SOL_SOCKET, opt)?;
    if (got as usize) < bytes && set_int(fd, libc::SOL_SOCKET, force, want).is_ok() {
        got = get_int(fd, libc::SOL_SOCKET, opt).unwrap_or(got);
    }
    Ok(got.max(0) as usize)
}
