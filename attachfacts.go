package coachd

import "weak"

// attachmentFacts is what a history asks of an image or document block's
// source, read once (LearnAttachment): its media type, its sizes
// (AttachmentSizes), a PDF's page count (AttachmentPages) and whether it
// is written as it is (Block.AsIs). A
// turn asks them about five times a round of each photo it re-sends, and
// each read scanned the photo's megabytes of base64.
//
// The facts hold for the one source they were read from: src, a weak
// pointer to its first byte, and n, its length. A copy of the block whose
// Source is then replaced (OmitAttachmentData, a compaction, a recorded
// block) has another first byte or length, and its facts are not used;
// the pointer being weak, such a copy neither keeps the old source's
// megabytes alive nor, once they are freed, matches a new source that
// takes their place. Sources are never changed in place.
type attachmentFacts struct {
	src        weak.Pointer[byte]
	n          int
	mediaType  string
	size, sent int
	pages      int  // of a PDF; 0 when not known
	ok         bool // an attachment's source that AttachmentSizes reads
	asIs       bool // rawAsIs(source)
}

// LearnAttachment reads b's source once, if b is an image or document
// block, and keeps what AttachmentSizes, AttachmentInfo, AttachmentSent,
// AttachmentPages and Block.AsIs ask of it (Go only, never in its JSON):
// for a block that a history will re-send on many turns, as it is
// accepted or cached. b must not be shared yet.
func LearnAttachment(b *Block) {
	if !AttachmentLearned(*b) {
		learnAttachment(b, 0)
	}
}

// learnAttachment is LearnAttachment, with a PDF's page count when the
// caller found it (pages > 0).
func learnAttachment(b *Block, pages int) {
	if (b.Type != BlockImage && b.Type != BlockDocument) || len(b.Source) == 0 {
		return
	}
	b.facts = nil
	f := &attachmentFacts{src: weak.Make(&b.Source[0]), n: len(b.Source), asIs: rawAsIs(b.Source)}
	f.mediaType, f.size, f.sent, f.ok = AttachmentSizes(*b)
	if f.ok && f.mediaType == MediaPDF {
		if pages <= 0 {
			pages = AttachmentPages(*b)
		}
		f.pages = pages
	}
	b.facts = f
}

// AttachmentLearned reports whether b's facts are known for the source it
// has now (LearnAttachment): whether a history reads it again.
func AttachmentLearned(b Block) bool { return b.knownFacts() != nil }

// knownFacts returns the facts LearnAttachment kept of b's source, nil
// when there are none for the source b has now.
func (b *Block) knownFacts() *attachmentFacts {
	f := b.facts
	if f == nil || len(b.Source) != f.n || f.n == 0 || f.src.Value() != &b.Source[0] {
		return nil
	}
	return f
}

// SourceAsIs reports whether b's Source is empty or valid JSON that
// json.Marshal writes as it is (as Block.AsIs asks of each raw field): as
// LearnAttachment found it, when it did, without a scan of the source.
func (b *Block) SourceAsIs() bool {
	if f := b.knownFacts(); f != nil {
		return f.asIs
	}
	return rawAsIs(b.Source)
}
