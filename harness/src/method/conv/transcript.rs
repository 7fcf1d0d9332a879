//! A vector's transcript with a bound on what it keeps: the first [`HEAD`] entries and the
//! last [`TAIL`] (a ring), what fell between counted (entries, octets of text, how many came
//! from the SUT) and shown as one note where it was cut. A SUT that floods the harness with
//! small frames then costs a fixed amount of memory per vector while the flood goes on, and
//! a fixed amount of report after it.

use crate::report::result::{Dir, TranscriptEntry};
use std::collections::VecDeque;

/// Entries kept from the start of a vector. The longest transcript of the catalog against
/// the reference holds 135 entries (`core_0016_burst_limit_exceeded`: 65 frames and their
/// notes) and most hold under 20, so 256 keeps every conformance vector whole, with room
/// for a SUT that says twice as much as the reference.
pub const HEAD: usize = 256;

/// Entries kept from the end once the head is full: how the vector ended (the last frames,
/// the timeout, the cut-off), which is what a reader of a flood looks for after the start.
pub const TAIL: usize = 64;

/// What the bound left out of a transcript.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Entries left out.
    pub entries: u64,
    /// Octets of their text.
    pub octets: u64,
    /// Of them, entries received from the SUT.
    pub received: u64,
    /// The time of the last one.
    pub last_t_ms: u64,
}

/// The words that tell the note of a cut from any other note (see [`is_cut`]).
const CUT_HERE: &str = " cut here: a transcript keeps the first ";

/// Whether `e` is the note of a cut, for renderers that show only the end of a transcript
/// and must still say that entries are missing.
pub fn is_cut(e: &TranscriptEntry) -> bool {
    e.dir == Dir::Note && e.data.starts_with('…') && e.data.contains(CUT_HERE)
}

impl Cut {
    fn add(&mut self, e: &TranscriptEntry) {
        self.entries += 1;
        self.octets += e.data.len() as u64;
        self.received += u64::from(e.dir == Dir::Received);
        self.last_t_ms = e.t_ms;
    }

    /// The note that stands where the entries were cut.
    pub fn note(&self) -> String {
        format!(
            "… {} entries ({} of transcript, {} of them received from the SUT){CUT_HERE}{HEAD} \
             entries and the last {TAIL}",
            thousands(self.entries),
            size(self.octets),
            thousands(self.received),
        )
    }
}

/// A vector's transcript as a method hands it over.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The entries kept, with the note of a cut in its place.
    pub entries: Vec<TranscriptEntry>,
    /// Whether anything came from the SUT while the vector ran, among the entries cut too:
    /// the early stop's reading of a silent SUT (`method::silence`).
    pub heard: bool,
}

impl From<Vec<TranscriptEntry>> for Recorded {
    /// A transcript a method built whole (codec, translate): it heard the SUT when it holds
    /// an entry received from it.
    fn from(entries: Vec<TranscriptEntry>) -> Self {
        let heard = entries.iter().any(|e| e.dir == Dir::Received);
        Recorded { entries, heard }
    }
}

/// The bounded log.
#[derive(Debug, Default)]
pub struct Transcript {
    head: Vec<TranscriptEntry>,
    tail: VecDeque<TranscriptEntry>,
    cut: Cut,
    heard: bool,
}

impl Transcript {
    /// Adds an entry; once [`HEAD`] are kept, the oldest of the last [`TAIL`] makes room.
    pub fn push(&mut self, e: TranscriptEntry) {
        self.heard |= e.dir == Dir::Received;
        if self.head.len() < HEAD {
            self.head.push(e);
            return;
        }
        if self.tail.len() >= TAIL {
            if let Some(old) = self.tail.pop_front() {
                self.cut.add(&old);
            }
        }
        self.tail.push_back(e);
    }

    /// Notes that the SUT answered with something the method logs in no `received` entry
    /// (an HTTP status line).
    pub fn mark_heard(&mut self) {
        self.heard = true;
    }

    /// The entries kept, in order (the cut not marked).
    pub fn kept(&self) -> impl Iterator<Item = &TranscriptEntry> {
        self.head.iter().chain(&self.tail)
    }

    /// What was cut so far.
    pub fn cut(&self) -> Cut {
        self.cut
    }

    /// The transcript so far, leaving it empty.
    pub fn take(&mut self) -> Recorded {
        let t = std::mem::take(self);
        let mut entries = t.head;
        entries.reserve(t.tail.len() + 1);
        if t.cut.entries > 0 {
            entries.push(TranscriptEntry {
                t_ms: t.cut.last_t_ms,
                dir: Dir::Note,
                data: t.cut.note(),
            });
        }
        entries.extend(t.tail);
        Recorded {
            entries,
            heard: t.heard,
        }
    }
}

/// `12345` as `12,345`.
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Octets in the unit a reader takes in at a glance.
fn size(octets: u64) -> String {
    const KB: u64 = 1000;
    const MB: u64 = KB * KB;
    match octets {
        n if n >= MB => format!("{:.1} MB", n as f64 / MB as f64),
        n if n >= KB => format!("{:.1} kB", n as f64 / KB as f64),
        n => format!("{n} octets"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(i: usize, dir: Dir) -> TranscriptEntry {
        TranscriptEntry {
            t_ms: i as u64,
            dir,
            data: format!("e{i}"),
        }
    }

    #[test]
    fn a_short_transcript_is_kept_whole() {
        let mut t = Transcript::default();
        for i in 0..HEAD {
            t.push(entry(i, Dir::Sent));
        }
        let r = t.take();
        assert_eq!(r.entries.len(), HEAD);
        assert!(!r.heard);
        assert!(r.entries.iter().all(|e| !e.data.contains("cut")));
    }

    #[test]
    fn a_flood_keeps_the_head_the_tail_and_counts_the_cut() {
        let mut t = Transcript::default();
        let n = 100_000;
        for i in 0..n {
            t.push(entry(i, if i == 300 { Dir::Received } else { Dir::Sent }));
            // Bounded while it happens, not only at the end.
            assert!(t.kept().count() <= HEAD + TAIL);
        }
        let cut = t.cut();
        assert_eq!(cut.entries as usize, n - HEAD - TAIL);
        assert_eq!(cut.received, 1);
        let r = t.take();
        assert!(r.heard, "the one entry received was cut, and still counts");
        assert_eq!(r.entries.len(), HEAD + 1 + TAIL);
        assert_eq!(r.entries[HEAD - 1].data, format!("e{}", HEAD - 1));
        assert_eq!(r.entries[HEAD + 1].data, format!("e{}", n - TAIL));
        assert_eq!(
            r.entries.last().map(|e| e.data.clone()),
            Some(format!("e{}", n - 1))
        );
        let note = &r.entries[HEAD];
        assert!(is_cut(note) && !is_cut(&r.entries[0]));
        assert!(
            note.data.starts_with("… 99,680 entries (")
                && note.data.contains("1 of them received from the SUT")
                && note.data.contains("the first 256 entries and the last 64"),
            "{}",
            note.data
        );
        // Taken: empty again.
        assert_eq!(t.take(), Recorded::default());
    }

    #[test]
    fn numbers_read_at_a_glance() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(size(12), "12 octets");
        assert_eq!(size(3_200_000), "3.2 MB");
        assert_eq!(size(4_500), "4.5 kB");
    }
}
