package server

import "net/http"

// routes registers every route of the API. Admin routes need the admin key,
// /v1 routes a user API key; /healthz is open.
func (s *Server) routes() {
	user, admin := s.requireUser, s.requireAdmin
	mux := registrar{s}

	mux.Handle("GET /healthz", s.handleHealthz())
	mux.Handle("GET /readyz", s.handleReadyz())
	mux.Handle("GET /v1/openapi.json", s.handleOpenAPI())
	if s.metrics != nil {
		mux.Handle("GET /metrics", admin(s.metrics))
	}

	mux.Handle("POST /v1/users", admin(s.handleUserCreate()))
	mux.Handle("GET /v1/users/{id}", admin(s.handleUserGet()))
	mux.Handle("PATCH /v1/users/{id}", admin(s.handleUserUpdate()))
	mux.Handle("GET /v1/users", admin(s.handleUserList()))
	mux.Handle("DELETE /v1/users/{id}", admin(s.handleUserDelete()))
	mux.Handle("POST /v1/users/{id}/key", admin(s.handleUserKey(true)))
	mux.Handle("DELETE /v1/users/{id}/key", admin(s.handleUserKey(false)))

	mux.Handle("GET /v1/me", user(s.handleMe()))

	mux.Handle("POST /v1/sessions", user(s.handleSessionCreate()))
	mux.Handle("GET /v1/sessions", user(s.handleSessionList()))
	mux.Handle("GET /v1/sessions/{id}", user(s.handleSessionGet()))
	mux.Handle("DELETE /v1/sessions/{id}", user(s.handleSessionDelete()))
	mux.Handle("GET /v1/sessions/{id}/messages", user(s.handleMessageList()))
	// Authenticates itself: a header, or an EventSource client's ?token=.
	mux.Handle("GET /v1/sessions/{id}/stream", s.handleSessionStream())
	mux.Handle("POST /v1/sessions/{id}/stream-token", user(s.handleStreamToken()))
	mux.Handle("POST /v1/sessions/{id}/stop", user(s.handleSessionStop()))

	mux.Handle("GET /v1/notes", user(s.handleNoteList()))
	mux.Handle("POST /v1/notes", user(s.handleNoteCreate()))
	mux.Handle("GET /v1/notes/stats", user(s.handleNoteStats()))
	mux.Handle("GET /v1/notes/stats/summary", user(s.handleNoteStats())) // seed 001's name for it
	mux.Handle("GET /v1/notes/{id}", user(s.handleNoteGet()))
	mux.Handle("PUT /v1/notes/{id}", user(s.handleNoteUpdate()))
	mux.Handle("DELETE /v1/notes/{id}", user(s.handleNoteDelete()))
	mux.Handle("POST /v1/notes/{id}/pin", user(s.handleNotePin()))
	mux.Handle("POST /v1/notes/{id}/restore", user(s.handleNoteRestore()))

	// The stream checks its limits itself: its errors are SSE events.
	mux.Handle("POST /v1/chat/stream", s.requireUserStream(s.handleChatStream()))
	// useChat's resume: DefaultChatTransport's default reconnect URL.
	mux.Handle("GET /v1/chat/stream/{chat}/stream", s.requireUserStream(s.handleUIChatResume()))
	// Seed 004's EventSource: told why, in an event it can read.
	mux.Handle("GET /v1/chat/stream", s.handleChatStreamGet())
	mux.Handle("POST /v1/chat", user(s.handleChat())) // limits counted as the stream's
	// OpenAI's Chat Completions API: its error shape even for auth.
	mux.Handle("POST /v1/chat/completions", s.oaiAuth(s.handleChatCompletions()))
	mux.Handle("GET /v1/models", s.oaiAuth(s.handleModels()))
	mux.Handle("GET /v1/models/{model}", s.oaiAuth(s.handleModel()))

	mux.Handle("POST /v1/uploads", user(s.handleUploadCreate()))
	mux.Handle("GET /v1/uploads", user(s.handleUploadList()))
	mux.Handle("GET /v1/uploads/{id}", user(s.handleUploadGet()))
	mux.Handle("DELETE /v1/uploads/{id}", user(s.handleUploadDelete()))

	mux.Handle("GET /v1/tools", user(s.handleToolList()))
	mux.Handle("GET /v1/tools/schema", user(s.handleToolList())) // seed 000's name for it
	mux.Handle("POST /v1/tools/execute", user(s.limitedTools(s.handleToolExecute())))
	mux.Handle("POST /v1/chat/preflight", user(s.handlePreflight())) // limits counted in it
	// coachd as an MCP server (streamable HTTP, stateless): the user's tools and chat.
	mux.Handle("POST /v1/mcp", user(s.handleMCP()))
	mux.Handle("POST /v1/chat/record", user(s.handleRecord(false)))
	mux.Handle("POST /v1/chat/abort", user(s.handleRecord(true)))

	mux.Handle("POST /v1/reviews", user(s.limited(s.handleReviewCreate())))
	mux.Handle("GET /v1/reviews/{task_id}/history", user(s.handleReviewHistory()))

	mux.Handle("GET /v1/agents", user(s.handleAgentList()))
	mux.Handle("GET /v1/skills", user(s.handleSkillList()))
	mux.Handle("POST /v1/actions/validate", user(s.handleActionValidate()))
	mux.Handle("POST /v1/actions/validate/batch", user(s.handleActionValidateBatch()))
	mux.Handle("GET /v1/actions/schemas", user(s.handleActionSchemas()))
	// Seed 001's names for them (/api/coach/validate…).
	mux.Handle("POST /v1/validate", user(s.handleActionValidate()))
	mux.Handle("POST /v1/validate/batch", user(s.handleActionValidateBatch()))
	mux.Handle("GET /v1/validate/schemas", user(s.handleActionSchemas()))

	mux.Handle("GET /v1/schema", user(s.handleSchema()))
	mux.Handle("GET /v1/schema/tables", user(s.handleSchemaTables()))
	mux.Handle("GET /v1/schema/prompt", user(s.handleSchemaPrompt()))

	// Voice (issue 12): secrets minted here, audio spoken by the provider.
	mux.Handle("GET /v1/voice", user(s.handleVoiceInfo()))
	mux.Handle("POST /v1/realtime/session", user(s.voiceOn(s.handleRealtimeSession())))
	mux.Handle("POST /v1/realtime/token", user(s.voiceOn(s.handleRealtimeSession()))) // seed 001's name for it
	mux.Handle("POST /v1/tts", user(s.voiceOn(s.handleTTS())))
	mux.Handle("POST /v1/sessions/{id}/messages", user(s.handleTranscript()))
}

// registrar registers a route on the mux and remembers its pattern, so
// the OpenAPI document can be checked against what is served.
type registrar struct{ s *Server }

func (r registrar) Handle(pattern string, h http.Handler) {
	r.s.mux.Handle(pattern, h)
	r.s.patterns = append(r.s.patterns, pattern)
}
