package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/voice"
)

// voiceConfig configures realtime voice and text to speech. Voice is on
// only when a provider key is set; the key comes from the environment or
// a file, never from a flag (flags show in ps).
type voiceConfig struct {
	APIKey             string
	KeyFile            string
	ProviderURL        string
	Model              string
	Voice              string
	TranscriptionModel string
	TTSModel           string
	SecretTTL          time.Duration
}

func (c *voiceConfig) register(fs *flag.FlagSet, env *envDefaults) {
	getenv := env.getenv
	// Trimmed as --voice-key-file's is.
	c.APIKey = strings.TrimSpace(envOr(getenv, "COACHD_OPENAI_API_KEY", getenv("OPENAI_API_KEY")))
	fs.StringVar(&c.KeyFile, "voice-key-file", getenv("COACHD_OPENAI_API_KEY_FILE"),
		"file holding the voice provider's API key (instead of COACHD_OPENAI_API_KEY or OPENAI_API_KEY); voice is off without a key (env COACHD_OPENAI_API_KEY_FILE)")
	urlVar(fs, &c.ProviderURL, "voice-provider-url", envOr(getenv, "COACHD_VOICE_PROVIDER_URL", voice.DefaultBaseURL),
		"voice provider base `URL`, OpenAI Realtime compatible (env COACHD_VOICE_PROVIDER_URL)")
	fs.StringVar(&c.Model, "voice-model", envOr(getenv, "COACHD_VOICE_MODEL", voice.DefaultModel), "realtime model of agents that name none (env COACHD_VOICE_MODEL)")
	fs.StringVar(&c.Voice, "voice", envOr(getenv, "COACHD_VOICE", voice.DefaultVoice), "voice of agents that name none (env COACHD_VOICE)")
	fs.StringVar(&c.TranscriptionModel, "voice-transcription-model", envOr(getenv, "COACHD_VOICE_TRANSCRIPTION_MODEL", voice.DefaultTranscriptionModel),
		"speech-to-text model of realtime sessions (env COACHD_VOICE_TRANSCRIPTION_MODEL)")
	fs.StringVar(&c.TTSModel, "tts-model", envOr(getenv, "COACHD_TTS_MODEL", voice.DefaultTTSModel), "text-to-speech model of POST /v1/tts (env COACHD_TTS_MODEL)")
	fs.DurationVar(&c.SecretTTL, "voice-secret-ttl", env.Duration("COACHD_VOICE_SECRET_TTL", voice.DefaultSecretTTL),
		"how long a minted realtime secret can open a connection, 10s to 2h (env COACHD_VOICE_SECRET_TTL)")
}

// check validates the flags and reads the key file.
func (c *voiceConfig) check() error {
	if c.KeyFile != "" {
		b, err := os.ReadFile(c.KeyFile)
		if err != nil {
			return fmt.Errorf("--voice-key-file: %v", err)
		}
		c.APIKey = strings.TrimSpace(string(b))
		if c.APIKey == "" {
			return fmt.Errorf("--voice-key-file %s is empty", c.KeyFile)
		}
	}
	u, err := url.Parse(c.ProviderURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return fmt.Errorf("--voice-provider-url must be an http(s) origin like %s, not %q", voice.DefaultBaseURL, maskDSN(c.ProviderURL))
	}
	if !coachd.ValidVoice(c.Voice) {
		return fmt.Errorf("--voice must be one of %s, not %q", strings.Join(coachd.Voices, ", "), c.Voice)
	}
	for name, m := range map[string]string{"--voice-model": c.Model, "--voice-transcription-model": c.TranscriptionModel, "--tts-model": c.TTSModel} {
		if !coachd.ValidVoiceModel(m) {
			return fmt.Errorf("%s %q is not a model name", name, m)
		}
	}
	if c.SecretTTL < 10*time.Second || c.SecretTTL > 2*time.Hour {
		return fmt.Errorf("--voice-secret-ttl must be from 10s to 2h, not %s", c.SecretTTL)
	}
	return nil
}

// origin is the provider's origin, which the UI's CSP lets the browser
// connect to; "" when voice is off.
func (c voiceConfig) origin() string {
	if c.APIKey == "" {
		return ""
	}
	u, _ := url.Parse(c.ProviderURL)
	return u.Scheme + "://" + u.Host
}

// build returns the provider client, or nil when no key is set.
func (c voiceConfig) build(logger *slog.Logger) *voice.Client {
	if c.APIKey == "" {
		return nil
	}
	return voice.New(voice.Config{
		APIKey: c.APIKey, BaseURL: c.origin(), Model: c.Model, Voice: c.Voice,
		TranscriptionModel: c.TranscriptionModel, TTSModel: c.TTSModel, SecretTTL: c.SecretTTL,
		Logger: logger.With("component", "voice"),
	})
}

// LogValue masks the key.
func (c voiceConfig) LogValue() slog.Value {
	if c.APIKey == "" {
		return slog.GroupValue(slog.Bool("enabled", false))
	}
	return slog.GroupValue(
		slog.Bool("enabled", true), slog.String("api_key", "(set)"), slog.String("provider_url", maskDSN(c.ProviderURL)),
		slog.String("model", c.Model), slog.String("voice", c.Voice),
		slog.String("transcription_model", c.TranscriptionModel), slog.String("tts_model", c.TTSModel),
	)
}
