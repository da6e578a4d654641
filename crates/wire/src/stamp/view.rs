//! What the Session-Sender and Session-Reflector packets share, written
//! once: `stamp_view!` defines a view type over a buffer and a mode with the
//! fields both packets start with (sequence number, timestamp, Error
//! Estimate, SSID), the HMAC and the TLV area, readers and writers; each
//! packet's module adds its own fields and MBZ layout in a further `impl`.
//! `stamp_repr!` gives a plain value its mode, length and `emit`, which
//! writes those shared fields and then the value's own (`emit_own`).

/// `stamp_view!(Name, layout type, layout function)`, after the type's doc
/// comment. Used in a child module of `stamp`: the paths go through `super`.
macro_rules! stamp_view {
    ($(#[$doc:meta])* $name:ident, $layout:ty, $layout_of:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name<T: AsRef<[u8]>> {
            buffer: T,
            mode: super::layout::Mode,
        }

        impl<T: AsRef<[u8]>> $name<T> {
            /// Wraps without checking; accessors panic on a buffer shorter
            /// than `mode.base_len()`.
            pub fn new_unchecked(buffer: T, mode: super::layout::Mode) -> Self {
                $name { buffer, mode }
            }

            /// Wraps a buffer of at least `mode.base_len()` bytes; afterwards
            /// no accessor can panic.
            pub fn new_checked(
                buffer: T,
                mode: super::layout::Mode,
            ) -> Result<Self, $crate::WireError> {
                super::layout::check_len(buffer.as_ref().len(), mode.base_len())?;
                Ok(Self::new_unchecked(buffer, mode))
            }

            pub fn mode(&self) -> super::layout::Mode {
                self.mode
            }

            pub fn into_inner(self) -> T {
                self.buffer
            }

            fn l(&self) -> &'static $layout {
                $layout_of(self.mode)
            }

            pub fn seq(&self) -> u32 {
                super::layout::rd32(self.buffer.as_ref(), self.l().seq.start)
            }

            /// The packet's transmit timestamp, in the format its Error
            /// Estimate's Z bit gives.
            pub fn timestamp(&self) -> [u8; 8] {
                super::layout::rd8x(self.buffer.as_ref(), self.l().timestamp.start)
            }

            pub fn error_estimate(&self) -> super::error_estimate::ErrorEstimate {
                super::error_estimate::ErrorEstimate(super::layout::rd16(
                    self.buffer.as_ref(),
                    self.l().error_estimate.start,
                ))
            }

            /// Session-Sender Identifier (RFC 8972 §3; MBZ in plain RFC 8762).
            pub fn ssid(&self) -> u16 {
                super::layout::rd16(self.buffer.as_ref(), self.l().ssid.start)
            }

            /// The HMAC field; `None` in unauthenticated mode.
            pub fn hmac(&self) -> Option<[u8; 16]> {
                match self.mode {
                    super::layout::Mode::Authenticated => Some(super::layout::rd16x(
                        self.buffer.as_ref(),
                        super::layout::HMAC_FIELD.start,
                    )),
                    super::layout::Mode::Unauthenticated => None,
                }
            }

            /// The bytes after the base packet (the TLV area; may be empty).
            pub fn tlv_bytes(&self) -> &[u8] {
                &self.buffer.as_ref()[self.mode.base_len()..]
            }

            pub fn tlvs(&self) -> super::tlv_repr::Tlvs<'_> {
                super::tlv_repr::Tlvs::new(self.tlv_bytes())
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $name<T> {
            fn put(&mut self, r: core::ops::Range<usize>, v: &[u8]) {
                self.buffer.as_mut()[r].copy_from_slice(v);
            }

            pub fn set_seq(&mut self, v: u32) {
                self.put(self.l().seq.clone(), &v.to_be_bytes());
            }

            pub fn set_timestamp(&mut self, v: [u8; 8]) {
                self.put(self.l().timestamp.clone(), &v);
            }

            pub fn set_error_estimate(&mut self, v: super::error_estimate::ErrorEstimate) {
                self.put(self.l().error_estimate.clone(), &v.0.to_be_bytes());
            }

            pub fn set_ssid(&mut self, v: u16) {
                self.put(self.l().ssid.clone(), &v.to_be_bytes());
            }

            /// Writes the HMAC field; does nothing in unauthenticated mode.
            pub fn set_hmac(&mut self, v: [u8; 16]) {
                if self.mode == super::layout::Mode::Authenticated {
                    self.put(super::layout::HMAC_FIELD, &v);
                }
            }

            pub fn tlv_bytes_mut(&mut self) -> &mut [u8] {
                let base = self.mode.base_len();
                &mut self.buffer.as_mut()[base..]
            }
        }
    };
}

/// `stamp_repr!(Repr, View)`: `mode`, `buffer_len` and `emit` of the plain
/// value `Repr` (fields `seq`, `timestamp`, `error_estimate`, `ssid`,
/// `hmac`), which writes through `View` and then calls the value's own
/// `emit_own(&self, &mut View<&mut [u8]>)` for the rest of its fields.
macro_rules! stamp_repr {
    ($repr:ident, $view:ident) => {
        impl $repr {
            /// Authenticated with an HMAC, unauthenticated without one.
            pub fn mode(&self) -> super::layout::Mode {
                super::layout::Mode::of_hmac(&self.hmac)
            }

            /// Bytes `emit` writes: 44 or 112.
            pub fn buffer_len(&self) -> usize {
                self.mode().base_len()
            }

            /// Writes the base packet (MBZ zeroed) to the start of `buf` and
            /// returns its length. Bytes beyond are untouched, as is all of
            /// `buf` on error.
            pub fn emit(&self, buf: &mut [u8]) -> Result<usize, $crate::WireError> {
                let n = self.buffer_len();
                super::layout::check_out(buf.len(), n)?;
                let mut p = $view::new_unchecked(&mut buf[..n], self.mode());
                p.clear_mbz();
                p.set_seq(self.seq);
                p.set_timestamp(self.timestamp);
                p.set_error_estimate(self.error_estimate);
                p.set_ssid(self.ssid);
                if let Some(h) = self.hmac {
                    p.set_hmac(h);
                }
                self.emit_own(&mut p);
                Ok(n)
            }
        }
    };
}
