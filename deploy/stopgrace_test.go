package deploy_test

import (
	"os"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// On docker compose stop (or a redeploy), compose sends SIGTERM and kills
// the container stop_grace_period later: 10 s unless the file says
// otherwise, exactly coachd's default --shutdown-grace. coachd lets running
// turns finish for that grace, then ends the open streams with a
// retryable server_shutdown and stops the turns still running, storing
// what they said and settling their reservations, within a few seconds
// more. Killed at the grace, a replica did none of that: its clients' streams
// were cut without the event that tells them to resume, and the partial
// replies were lost. The replicas must be given the grace and the drain.
func TestComposeStopGrace(t *testing.T) {
	data, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]struct {
			StopGracePeriod string            `yaml:"stop_grace_period"`
			Environment     map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"coachd1", "coachd2"} {
		s := f.Services[name]
		grace := 10 * time.Second // coachd serve's --shutdown-grace default
		if v := s.Environment["COACHD_SHUTDOWN_GRACE"]; v != "" {
			if grace, err = time.ParseDuration(v); err != nil {
				t.Fatalf("%s: COACHD_SHUTDOWN_GRACE %q: %v", name, v, err)
			}
		}
		stop := 10 * time.Second // compose's default
		if s.StopGracePeriod != "" {
			if stop, err = time.ParseDuration(s.StopGracePeriod); err != nil {
				t.Fatalf("%s: stop_grace_period %q: %v", name, s.StopGracePeriod, err)
			}
		}
		// The drain after the grace: 2 s for the streams to end, up to
		// 10 s for the stopped turns to be stored and settled.
		if want := grace + 12*time.Second; stop < want {
			t.Errorf("%s: stop_grace_period %s, want at least %s (--shutdown-grace %s and the drain after it)", name, stop, want, grace)
		}
	}
}
