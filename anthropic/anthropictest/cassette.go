package anthropictest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Interaction is one recorded request and its response, from a go-vcr
// cassette (the SDK ships them under toolrunner/testdata/cassettes).
type Interaction struct {
	Method, URL string
	// RequestHeader and RequestBody are what the recorded client sent.
	RequestHeader http.Header
	RequestBody   []byte
	// Reply serves the recorded response: its status, headers and body
	// (gunzipped when it was recorded compressed, and compressed again
	// for a client that accepts gzip).
	Reply Reply
}

type cassette struct {
	Version      int `yaml:"version"`
	Interactions []struct {
		Request struct {
			Body    string              `yaml:"body"`
			Headers map[string][]string `yaml:"headers"`
			URL     string              `yaml:"url"`
			Method  string              `yaml:"method"`
		} `yaml:"request"`
		Response struct {
			Body    string              `yaml:"body"`
			Headers map[string][]string `yaml:"headers"`
			Code    int                 `yaml:"code"`
		} `yaml:"response"`
	} `yaml:"interactions"`
}

// LoadCassette reads a go-vcr cassette file.
func LoadCassette(path string) ([]Interaction, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	its, err := ParseCassette(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return its, nil
}

// hopHeaders describe the recorded transfer, not the response; the fake
// sets its own.
var hopHeaders = []string{"Content-Length", "Content-Encoding", "Transfer-Encoding", "Connection", "Date"}

// ParseCassette reads go-vcr cassette YAML (version 1 or 2).
func ParseCassette(data []byte) ([]Interaction, error) {
	var c cassette
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("anthropictest: cassette: %w", err)
	}
	if c.Version < 1 || c.Version > 2 {
		return nil, fmt.Errorf("anthropictest: cassette version %d not supported", c.Version)
	}
	out := make([]Interaction, 0, len(c.Interactions))
	for i, it := range c.Interactions {
		reqHeader := http.Header{}
		for k, vs := range it.Request.Headers {
			reqHeader[http.CanonicalHeaderKey(k)] = vs
		}
		resHeader := http.Header{}
		for k, vs := range it.Response.Headers {
			resHeader[http.CanonicalHeaderKey(k)] = vs
		}
		reqBody, err := decodeBody([]byte(it.Request.Body), reqHeader)
		if err != nil {
			return nil, fmt.Errorf("anthropictest: interaction %d request: %w", i, err)
		}
		body, err := decodeBody([]byte(it.Response.Body), resHeader)
		if err != nil {
			return nil, fmt.Errorf("anthropictest: interaction %d response: %w", i, err)
		}
		gz := strings.EqualFold(resHeader.Get("Content-Encoding"), "gzip")
		for _, h := range hopHeaders {
			resHeader.Del(h)
		}
		reply := Reply{Header: resHeader, Gzip: gz}
		code := it.Response.Code
		switch {
		case code == 0:
			return nil, fmt.Errorf("anthropictest: interaction %d has no response code", i)
		case code != http.StatusOK:
			reply.Status, reply.Body = code, body
		case strings.HasPrefix(resHeader.Get("Content-Type"), "text/event-stream"):
			evs, err := ParseSSE(bytes.NewReader(body))
			if err != nil {
				return nil, fmt.Errorf("anthropictest: interaction %d: %w", i, err)
			}
			reply.Events = evs
			resHeader.Del("Content-Type")
		default:
			reply.Message = body
			resHeader.Del("Content-Type")
		}
		out = append(out, Interaction{Method: it.Request.Method, URL: it.Request.URL,
			RequestHeader: reqHeader, RequestBody: reqBody, Reply: reply})
	}
	return out, nil
}

// decodeBody gunzips a body recorded compressed. go-vcr stores bodies as
// recorded; a gzip body starts with the gzip magic bytes.
func decodeBody(b []byte, h http.Header) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxLine))
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	h.Set("Content-Encoding", "gzip")
	return out, nil
}
