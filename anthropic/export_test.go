package anthropic

import "github.com/coachd/coachd"

// SetSDKDecode makes m leave every stream's events to the SDK's decoder
// (the path a traced call takes), for tests that compare the two.
func SetSDKDecode(m *Model, on bool) { m.sdkDecode = on }

// FastDecode reports whether s reads its events with coachd's decoder.
func FastDecode(s coachd.ModelStream) bool {
	st, ok := s.(*stream)
	return ok && st.sse != nil
}
