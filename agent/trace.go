package agent

import (
	"context"

	"github.com/coachd/coachd"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Spans follow OpenTelemetry's GenAI semantic conventions: invoke_agent
// for a turn, chat for each model call, execute_tool for each tool. With no
// tracer provider configured (serve without --otlp-endpoint) they cost a
// no-op.
var tracer = otel.Tracer("github.com/coachd/coachd/agent")

func (t *Turn) startTurnSpan(ctx context.Context) (context.Context, trace.Span) {
	return tracer.Start(ctx, "invoke_agent "+t.agent.Name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "invoke_agent"),
			attribute.String("gen_ai.agent.name", t.agent.Name),
			attribute.String("gen_ai.conversation.id", t.sess.ID),
			attribute.String("coachd.user.id", t.req.User.ID),
		))
}

// The ends set their attributes only on a span that records: a no-op
// span takes them and drops them, after they were built.

func endTurnSpan(span trace.Span, stop string, u coachd.Usage, err *coachd.Error) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(
		attribute.String("coachd.stop_reason", stop),
		attribute.Int64("gen_ai.usage.input_tokens", u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens),
		attribute.Int64("gen_ai.usage.output_tokens", u.OutputTokens),
	)
	if err != nil {
		span.SetStatus(codes.Error, err.Code)
	}
}

func startChatSpan(ctx context.Context, req *coachd.ModelRequest) (context.Context, trace.Span) {
	return tracer.Start(ctx, "chat "+req.Model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.provider.name", "anthropic"),
			attribute.String("gen_ai.request.model", req.Model),
			attribute.Int64("gen_ai.request.max_tokens", req.MaxTokens),
		))
}

func endChatSpan(span trace.Span, resp *coachd.ModelResponse, err error) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(
		attribute.String("gen_ai.response.id", resp.ID),
		attribute.String("gen_ai.response.model", resp.Model),
		attribute.StringSlice("gen_ai.response.finish_reasons", []string{resp.StopReason}),
		attribute.Int64("gen_ai.usage.input_tokens", resp.Usage.InputTokens+resp.Usage.CacheReadInputTokens+resp.Usage.CacheCreationInputTokens),
		attribute.Int64("gen_ai.usage.output_tokens", resp.Usage.OutputTokens),
	)
	if err != nil {
		span.SetStatus(codes.Error, coachd.ErrorCode(err))
	}
}

func startToolSpan(ctx context.Context, c coachd.ToolCall) (context.Context, trace.Span) {
	return tracer.Start(ctx, "execute_tool "+c.Name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", c.Name),
			attribute.String("gen_ai.tool.call.id", c.ID),
		))
}
