//! Where the inbound octet stream stands against frame boundaries: how many octets of an
//! unfinished frame are buffered, and a number for each frame begun. The edge needs both
//! (to time out a frame that stalls, and to charge buffered octets to the memory budget)
//! without reaching into the core's buffer. It only follows the 4-octet length prefixes;
//! judging them stays the core's job.

use swp_core::frame::PREFIX_LEN;

/// The tracker.
#[derive(Debug, Clone, Default)]
pub struct FrameProgress {
    prefix: [u8; PREFIX_LEN],
    have_prefix: usize,
    body_left: u64,
    partial: usize,
    started: u64,
}

impl FrameProgress {
    /// Follows `data`, the next octets of the stream.
    pub fn feed(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            if self.have_prefix < PREFIX_LEN {
                if self.have_prefix == 0 {
                    self.started += 1;
                }
                let k = (PREFIX_LEN - self.have_prefix).min(data.len());
                self.prefix[self.have_prefix..self.have_prefix + k].copy_from_slice(&data[..k]);
                self.have_prefix += k;
                self.partial += k;
                data = &data[k..];
                if self.have_prefix == PREFIX_LEN {
                    self.body_left = u64::from(u32::from_be_bytes(self.prefix));
                    if self.body_left == 0 {
                        // A zero prefix is a framing error the core reports; it ends here.
                        self.end_frame();
                    }
                }
                continue;
            }
            let k = usize::try_from(self.body_left)
                .unwrap_or(usize::MAX)
                .min(data.len());
            self.body_left -= k as u64;
            self.partial += k;
            data = &data[k..];
            if self.body_left == 0 {
                self.end_frame();
            }
        }
    }

    fn end_frame(&mut self) {
        self.have_prefix = 0;
        self.partial = 0;
    }

    /// Octets of the unfinished frame received so far (0 between frames).
    pub fn partial(&self) -> usize {
        self.partial
    }

    /// How many frames have begun: changes exactly when a new frame starts, so the edge can
    /// start that frame's clock.
    pub fn started(&self) -> u64 {
        self.started
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_frames_split_anyhow() {
        let mut stream = Vec::new();
        for len in [3u32, 1, 70_000] {
            stream.extend_from_slice(&len.to_be_bytes());
            stream.extend(std::iter::repeat_n(7u8, len as usize));
        }
        for chunk in [1, 2, 5, 4096, stream.len()] {
            let mut p = FrameProgress::default();
            let mut seen = 0;
            for piece in stream.chunks(chunk) {
                p.feed(piece);
                seen += piece.len();
                if seen == 7 || seen == 12 || seen == stream.len() {
                    assert_eq!(p.partial(), 0, "chunk {chunk} at {seen}");
                }
            }
            assert_eq!(p.started(), 3);
        }
        let mut p = FrameProgress::default();
        p.feed(&[0, 0, 1, 0, 9, 9]);
        assert_eq!((p.partial(), p.started()), (6, 1));
        p.feed(&[0; 254]);
        assert_eq!((p.partial(), p.started()), (0, 1));
        p.feed(&[0, 0]);
        assert_eq!((p.partial(), p.started()), (2, 2));
    }
}
