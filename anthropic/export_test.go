package anthropic

import (
	"github.com/coachd/coachd"

	"github.com/anthropics/anthropic-sdk-go/option"
)

// SetSDKDecode makes m leave every stream's events to the SDK's decoder
// (the path a traced call takes), for tests that compare the two.
func SetSDKDecode(m *Model, on bool) { m.sdkDecode = on }

// FastDecode reports whether s reads its events with coachd's decoder.
func FastDecode(s coachd.ModelStream) bool {
	st, ok := s.(*stream)
	return ok && st.sse != nil
}

// SDKStream reports whether s holds a stream the SDK made: its streaming
// method sent the call, or its decoder reads the events.
func SDKStream(s coachd.ModelStream) bool {
	st, ok := s.(*stream)
	return ok && st.sdk != nil
}

// NewWithClientOptions is New with extra SDK client options (a tracer
// provider), applied last.
func NewWithClientOptions(cfg Config, opts ...option.RequestOption) *Model {
	m := New(cfg)
	m.client = newClient(m.cfg, opts...)
	return m
}

// BodyCap is the capacity the Model's next body buffer gets.
func (m *Model) BodyCap() int { return m.bodyCap(&coachd.ModelRequest{}) }
