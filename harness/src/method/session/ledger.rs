//! Which frame each refusal belongs to. Every frame the harness sends on a connection is
//! entered here with what its step expects of it; every error frame (and, where the manifest
//! says refusals come that way, every profile `*_ERR` message) the endpoint sends is
//! credited to exactly one of them: the frame whose msg_id it carries, else the one frame
//! still open, else to none, when several are open and nothing tells which. A refusal of
//! a frame whose step is not being judged is taken out of the stream and kept as a late
//! observation, so it can neither be read as the current step's reject nor be lost: the
//! step loop charges it to the step it belongs to, whenever it arrives.

use bytes::Bytes;
use std::collections::HashMap;

/// What a frame's step expects of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Taken: a refusal of it fails its step.
    Accept,
    /// Refused.
    Reject,
    /// Answered (perhaps with its profile's error message).
    Answer,
    /// Something else (a reply, a stream, silence): a refusal is the step judge's to read.
    Other,
    /// The manifest's probe (or another request the harness builds from the manifest).
    Probe,
}

/// Which of the endpoint's connections a frame went out on.
pub type Conn = u8;

/// One frame the harness sent.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The concrete step that sent it; `None` for probes.
    pub step: Option<usize>,
    /// The connection it went out on.
    pub conn: Conn,
    /// Its msg_id, when the octets decode far enough to have one.
    pub msg_id: Option<Bytes>,
    /// What its step expects.
    pub fate: Fate,
    /// Not yet settled: no refusal credited, no accept confirmed, its step not judged.
    pub open: bool,
    /// When it was sent (ms since the vector started).
    pub t_ms: u64,
}

/// Who a refusal is credited to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credit {
    /// Exactly this frame.
    Frame(usize),
    /// One of these open frames, and nothing tells which.
    Ambiguous(Vec<usize>),
    /// No frame is open and none carries its msg_id.
    Nobody,
}

/// A refusal as it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// An error frame with this code.
    Error(String),
    /// A profile's own error message (`CRED_ERR "expired"`), under `profile_errors`.
    ProfileErr {
        /// Its canonical code, when its `code` is one.
        canonical: Option<String>,
        /// How it reads in messages.
        what: String,
    },
}

impl Signal {
    /// A few words for messages.
    pub fn describe(&self) -> String {
        match self {
            Signal::Error(code) => format!("error frame {code}"),
            Signal::ProfileErr { what, .. } => what.clone(),
        }
    }

    /// The canonical code it carries, if any.
    pub fn code(&self) -> Option<&str> {
        match self {
            Signal::Error(c) => Some(c),
            Signal::ProfileErr { canonical, .. } => canonical.as_deref(),
        }
    }
}

/// A refusal credited to a frame whose step was not being judged when it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Late {
    /// The frame it is credited to (index into [`Ledger::frames`]).
    pub frame: usize,
    /// What arrived.
    pub signal: Signal,
    /// When (ms since the vector started).
    pub t_ms: u64,
    /// The other open frames it might have been for, when it carried no msg_id of ours
    /// and all of them expected to be taken alike.
    pub also_possible: Vec<usize>,
}

/// What confirmed a set of accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// A quiet window passed: a slow refusal may still come.
    Quiet,
    /// A probe sent after them was answered: the endpoint read them first, so this also
    /// proves every earlier quiet-window accept.
    Probe,
    /// Each was answered.
    Answers,
}

/// What the conversation does with an observation the ledger saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Hand it to the judge of the current step, with its credit.
    Keep(Credit),
    /// Taken out of the stream as a late observation.
    Taken(usize),
}

/// The most frames one vector enters; past it frames are not entered, and refusals that
/// would have been credited to them are left to the step judges (a bound, not a case).
const MAX_FRAMES: usize = 200_000;

/// Every frame of one vector, per connection.
#[derive(Debug, Default)]
pub struct Ledger {
    /// The frames, in the order they were sent.
    pub frames: Vec<Frame>,
    by_id: HashMap<(Conn, Bytes), Vec<usize>>,
    /// The concrete step being judged.
    pub current: Option<usize>,
    /// The connection in use.
    pub conn: Conn,
    late: Vec<Late>,
    /// Accepts were settled by a quiet window alone since the last answered probe: a
    /// refusal may still be on its way.
    pub unproven: bool,
    /// The endpoint's refusals never carry the refused frame's msg_id (manifest
    /// `error_frame.correlation: none`): a msg_id that happens to match proves nothing.
    pub uncorrelated: bool,
}

impl Ledger {
    /// An empty ledger; `uncorrelated` for an endpoint whose refusals never carry the
    /// refused frame's msg_id.
    pub fn new(uncorrelated: bool) -> Self {
        Ledger {
            uncorrelated,
            ..Ledger::default()
        }
    }

    /// Enters a frame sent now.
    pub fn sent(&mut self, step: Option<usize>, msg_id: Option<Bytes>, fate: Fate, t_ms: u64) {
        if self.frames.len() >= MAX_FRAMES {
            return;
        }
        let i = self.frames.len();
        if let Some(id) = &msg_id {
            self.by_id
                .entry((self.conn, id.clone()))
                .or_default()
                .push(i);
        }
        self.frames.push(Frame {
            step,
            conn: self.conn,
            msg_id,
            fate,
            open: true,
            t_ms,
        });
    }

    fn open_on_conn(&self) -> Vec<usize> {
        self.frames
            .iter()
            .enumerate()
            .filter(|(_, f)| f.open && f.conn == self.conn)
            .map(|(i, _)| i)
            .collect()
    }

    /// Who a refusal carrying `msg_id` on the connection in use is credited to.
    pub fn credit(&self, msg_id: &Bytes) -> Credit {
        let same = if self.uncorrelated {
            None
        } else {
            self.by_id.get(&(self.conn, msg_id.clone()))
        };
        if let Some(same) = same {
            let open: Vec<usize> = same
                .iter()
                .copied()
                .filter(|i| self.frames.get(*i).is_some_and(|f| f.open))
                .collect();
            return match (open.as_slice(), same.as_slice()) {
                ([one], _) => Credit::Frame(*one),
                ([], [one]) => Credit::Frame(*one),
                // The msg_id was sent more than once: the open ones, or, when all are
                // settled, any of them.
                ([], all) => Credit::Ambiguous(all.to_vec()),
                (several, _) => Credit::Ambiguous(several.to_vec()),
            };
        }
        match self.open_on_conn().as_slice() {
            [] => Credit::Nobody,
            [one] => Credit::Frame(*one),
            several => Credit::Ambiguous(several.to_vec()),
        }
    }

    fn is_current(&self, i: usize) -> bool {
        self.frames
            .get(i)
            .is_some_and(|f| f.fate == Fate::Probe || (f.step.is_some() && f.step == self.current))
    }

    /// Routes a refusal that arrived at `t_ms`: kept for the current step's judge, or taken
    /// as a late observation of the frame it is credited to.
    pub fn route(&mut self, msg_id: &Bytes, signal: Signal, t_ms: u64) -> Route {
        let credit = self.credit(msg_id);
        let taken = match &credit {
            Credit::Frame(i) if !self.is_current(*i) => Some((*i, Vec::new())),
            Credit::Ambiguous(c) => {
                // Every frame it may refuse expected to be taken (a probe too): whichever it
                // was, one of them was refused. It is charged to the first accept, naming
                // the others; with a frame of the current step among them, that step's
                // judge decides.
                let of_step = c.iter().any(|i| {
                    self.frames
                        .get(*i)
                        .is_some_and(|f| f.step.is_some() && f.step == self.current)
                });
                let taken_alike = c.iter().all(|i| {
                    self.frames
                        .get(*i)
                        .is_some_and(|f| matches!(f.fate, Fate::Accept | Fate::Probe))
                });
                let accepts: Vec<usize> = c
                    .iter()
                    .copied()
                    .filter(|i| self.frames.get(*i).is_some_and(|f| f.fate == Fate::Accept))
                    .collect();
                match accepts.split_first() {
                    Some((first, rest)) if !of_step && taken_alike => Some((*first, rest.to_vec())),
                    _ => None,
                }
            }
            _ => None,
        };
        match taken {
            Some((i, also_possible)) => {
                if let Some(f) = self.frames.get_mut(i) {
                    f.open = false;
                }
                self.late.push(Late {
                    frame: i,
                    signal,
                    t_ms,
                    also_possible,
                });
                Route::Taken(i)
            }
            None => Route::Keep(credit),
        }
    }

    /// Settles every frame of concrete step `step` but those whose fate is `keep_open`.
    pub fn settle_step(&mut self, step: usize, keep_open: Option<Fate>) {
        for f in &mut self.frames {
            if f.step == Some(step) && Some(f.fate) != keep_open {
                f.open = false;
            }
        }
    }

    /// Settles a frame (its refusal was judged).
    pub fn settle(&mut self, i: usize) {
        if let Some(f) = self.frames.get_mut(i) {
            f.open = false;
        }
    }

    /// Settles every open accept on the connection in use, confirmed by `proof`.
    pub fn confirm_accepts(&mut self, proof: Proof) {
        let mut any = false;
        for f in &mut self.frames {
            if f.open && f.conn == self.conn && f.fate == Fate::Accept {
                f.open = false;
                any = true;
            }
        }
        match proof {
            Proof::Probe => self.unproven = false,
            Proof::Quiet if any => self.unproven = true,
            Proof::Quiet | Proof::Answers => {}
        }
    }

    /// Settles the probes.
    pub fn settle_probes(&mut self) {
        for f in &mut self.frames {
            if f.fate == Fate::Probe {
                f.open = false;
            }
        }
    }

    /// The late observations so far, oldest first.
    pub fn take_late(&mut self) -> Vec<Late> {
        std::mem::take(&mut self.late)
    }

    /// Whether any frames are open on the connection in use, other than those of
    /// concrete step `step`.
    pub fn others_open(&self, step: usize) -> Vec<usize> {
        self.open_on_conn()
            .into_iter()
            .filter(|i| self.frames.get(*i).is_some_and(|f| f.step != Some(step)))
            .collect()
    }

    /// The concrete steps of these frames, for messages.
    pub fn steps_of(&self, frames: &[usize]) -> Vec<usize> {
        let mut s: Vec<usize> = frames
            .iter()
            .filter_map(|i| self.frames.get(*i).and_then(|f| f.step))
            .collect();
        s.sort_unstable();
        s.dedup();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }

    #[test]
    fn a_refusal_goes_to_the_frame_whose_msg_id_it_carries() {
        let mut l = Ledger::default();
        for (step, m) in [(0, "a"), (1, "b"), (2, "c")] {
            l.sent(Some(step), Some(id(m)), Fate::Accept, 0);
        }
        l.current = Some(3);
        l.sent(Some(3), Some(id("d")), Fate::Reject, 0);
        // The refusal of frame 1 arrives while step 3 waits for its own: it is step 1's.
        assert_eq!(
            l.route(&id("b"), Signal::Error("E".into()), 5),
            Route::Taken(1)
        );
        assert_eq!(
            l.route(&id("d"), Signal::Error("E".into()), 6),
            Route::Keep(Credit::Frame(3))
        );
        let late = l.take_late();
        assert_eq!(late.len(), 1);
        assert_eq!(late[0].frame, 1);
        assert!(l.take_late().is_empty(), "taken once");
    }

    #[test]
    fn without_a_msg_id_of_ours_the_one_open_frame_takes_it() {
        let mut l = Ledger::default();
        l.sent(Some(0), Some(id("a")), Fate::Accept, 0);
        l.confirm_accepts(Proof::Quiet);
        assert!(l.unproven);
        l.current = Some(1);
        l.sent(Some(1), None, Fate::Reject, 0);
        assert_eq!(l.credit(&id("zz")), Credit::Frame(1));
        // A late refusal of the accepted frame still carries its msg_id: still step 0's.
        assert_eq!(
            l.route(&id("a"), Signal::Error("E".into()), 9),
            Route::Taken(0)
        );
        l.settle_step(1, None);
        assert_eq!(l.credit(&id("zz")), Credit::Nobody);
    }

    #[test]
    fn several_open_and_no_msg_id_is_ambiguous_unless_all_expected_taken() {
        let mut l = Ledger::default();
        l.sent(Some(0), Some(id("a")), Fate::Accept, 0);
        l.sent(Some(1), Some(id("b")), Fate::Accept, 0);
        l.current = Some(2);
        // Both expected accept, neither is being judged: one of them was refused.
        match l.route(&id("x"), Signal::Error("E".into()), 1) {
            Route::Taken(0) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(l.take_late()[0].also_possible, vec![1]);
        // With the current step's frame among those open, its judge decides.
        l.sent(Some(2), Some(id("c")), Fate::Reject, 0);
        assert_eq!(
            l.route(&id("x"), Signal::Error("E".into()), 2),
            Route::Keep(Credit::Ambiguous(vec![1, 2]))
        );
    }

    #[test]
    fn a_msg_id_sent_twice_goes_to_the_open_one() {
        let mut l = Ledger::default();
        l.sent(Some(0), Some(id("a")), Fate::Accept, 0);
        l.confirm_accepts(Proof::Probe);
        assert!(!l.unproven);
        l.current = Some(1);
        l.sent(Some(1), Some(id("a")), Fate::Reject, 0);
        assert_eq!(l.credit(&id("a")), Credit::Frame(1));
        l.settle_step(1, None);
        assert_eq!(l.credit(&id("a")), Credit::Ambiguous(vec![0, 1]));
    }

    #[test]
    fn an_uncorrelated_endpoint_is_credited_by_open_frames_alone() {
        let mut l = Ledger::new(true);
        l.sent(Some(0), Some(id("a")), Fate::Accept, 0);
        l.confirm_accepts(Proof::Quiet);
        l.current = Some(1);
        l.sent(Some(1), Some(id("b")), Fate::Reject, 0);
        assert_eq!(l.credit(&id("a")), Credit::Frame(1));
    }

    #[test]
    fn connections_keep_their_own_frames() {
        let mut l = Ledger::default();
        l.sent(Some(0), Some(id("a")), Fate::Accept, 0);
        l.conn = 1;
        l.current = Some(1);
        l.sent(Some(1), Some(id("b")), Fate::Reject, 0);
        assert_eq!(
            l.credit(&id("a")),
            Credit::Frame(1),
            "not the other connection's"
        );
        assert_eq!(l.others_open(1), Vec::<usize>::new());
    }
}
