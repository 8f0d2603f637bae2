package anthropic

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/coachd/coachd"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/anthropics/anthropic-sdk-go/bedrock"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/vertex"
)

// Claude on Amazon Bedrock and Google Vertex AI goes through the SDK's own
// bedrock and vertex options: they rewrite the Messages request to the
// platform's URL and body, sign it, and turn Bedrock's binary event stream
// back into the Messages SSE, so the adapter's whole stream path (events,
// usage, stop reasons, error mapping) serves all three.

// BedrockConfig configures Claude on Amazon Bedrock. Credentials come from
// the AWS default chain (environment, shared files, SSO, instance role)
// unless a static key pair is given.
type BedrockConfig struct {
	Config        // Model is a Bedrock model id; BaseURL overrides the regional endpoint
	Region string // AWS_REGION when empty
	// AccessKeyID and SecretAccessKey (and SessionToken) are static
	// credentials; empty uses the default chain.
	AccessKeyID, SecretAccessKey, SessionToken string
}

// NewBedrock returns a Model for Claude on Amazon Bedrock.
func NewBedrock(ctx context.Context, cfg BedrockConfig) (*Model, error) {
	var ac aws.Config
	if cfg.AccessKeyID != "" {
		// Built by hand: no shared config files are read.
		ac = aws.Config{Region: cfg.Region, Credentials: credentials.NewStaticCredentialsProvider(
			cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)}
	} else {
		var opts []func(*awsconfig.LoadOptions) error
		if cfg.Region != "" {
			opts = append(opts, awsconfig.WithRegion(cfg.Region))
		}
		var err error
		if ac, err = awsconfig.LoadDefaultConfig(ctx, opts...); err != nil {
			return nil, fmt.Errorf("bedrock: loading AWS configuration: %w", err)
		}
	}
	if ac.Region == "" {
		return nil, fmt.Errorf("bedrock: no region (set region in the agent file or AWS_REGION)")
	}
	// The SDK's middleware adds the credential to the request it sends,
	// not to the one its error keeps: a middleware after it records what
	// was sent, so an upstream quoting it is redacted.
	sent := &sentTokens{}
	opts := []option.RequestOption{bedrock.WithConfig(ac), option.WithMiddleware(sent.record)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	cfg.BaseURL, cfg.APIKey = "", ""
	m := newPlatform(cfg.Config, platformBedrock, opts)
	m.tokens = sent
	return m, nil
}

// VertexConfig configures Claude on Google Vertex AI. Credentials are the
// Application Default Credentials unless a token source is given.
type VertexConfig struct {
	Config         // Model is a Vertex model id; BaseURL overrides the regional endpoint
	Region  string // a Vertex region, "global", "us" or "eu"
	Project string // the Google Cloud project id
	// TokenSource supplies OAuth tokens; nil uses the default credentials.
	TokenSource oauth2.TokenSource
}

// NewVertex returns a Model for Claude on Google Vertex AI.
func NewVertex(ctx context.Context, cfg VertexConfig) (*Model, error) {
	if cfg.Region == "" {
		return nil, fmt.Errorf("vertex: no region (set region in the agent file or CLOUD_ML_REGION)")
	}
	creds := &google.Credentials{TokenSource: cfg.TokenSource, ProjectID: cfg.Project}
	if cfg.TokenSource == nil {
		var err error
		creds, err = google.FindDefaultCredentials(ctx, "https://www.googleapis.com/auth/cloud-platform")
		if err != nil {
			return nil, fmt.Errorf("vertex: finding Google credentials: %w", err)
		}
	}
	if cfg.Project == "" {
		cfg.Project = creds.ProjectID
	}
	if cfg.Project == "" {
		return nil, fmt.Errorf("vertex: no project (set project in the agent file or GOOGLE_CLOUD_PROJECT)")
	}
	// Google's transport adds the token below the SDK, where no error
	// keeps it: recorded here, an upstream quoting it is redacted.
	sent := &sentTokens{src: creds.TokenSource}
	creds.TokenSource = sent
	var opts []option.RequestOption
	if cfg.HTTPClient != nil {
		// Before the vertex option, which wraps it with authorization.
		// Its CheckRedirect is kept; the token would follow a redirect.
		opts = append(opts, option.WithHTTPClient(coachd.NoRedirects(cfg.HTTPClient)))
		cfg.HTTPClient = nil
	}
	opts = append(opts, vertex.WithCredentials(ctx, cfg.Region, cfg.Project, creds))
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	cfg.BaseURL, cfg.APIKey = "", ""
	m := newPlatform(cfg.Config, platformVertex, opts)
	m.tokens = sent
	return m, nil
}

// sentTokens remembers the last credentials a platform's own code sent
// (a refresh during a call leaves the older one in flight): as a token
// source (Vertex), or as a middleware after the one that signs (Bedrock).
type sentTokens struct {
	src  oauth2.TokenSource
	mu   sync.Mutex
	last [4]string
	next int
}

func (s *sentTokens) add(v string) {
	if v == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.last[:], v) {
		s.last[s.next] = v
		s.next = (s.next + 1) % len(s.last)
	}
}

func (s *sentTokens) Token() (*oauth2.Token, error) {
	tok, err := s.src.Token()
	if err == nil && tok != nil {
		s.add(tok.AccessToken)
	}
	return tok, err
}

// record notes a Bedrock request's bearer token (a Bedrock API key) and
// the session token of temporary credentials. A SigV4 signature is not
// kept: it is new for each request and signs only that one.
func (s *sentTokens) record(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		s.add(strings.TrimSpace(tok))
	}
	s.add(req.Header.Get("X-Amz-Security-Token"))
	return next(req)
}

// tokens are the access tokens recently sent.
func (s *sentTokens) tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.last[:])
}

// Platforms serving Claude besides the Anthropic API.
const (
	platformBedrock = "bedrock"
	platformVertex  = "vertex"
)

// newPlatform builds a Model whose client applies the platform's options
// after the common ones.
func newPlatform(cfg Config, platform string, opts []option.RequestOption) *Model {
	m := New(cfg)
	m.platform = platform
	m.client = newClient(cfg, opts...)
	return m
}
