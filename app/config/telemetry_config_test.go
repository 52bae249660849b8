package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The exports' settings: --metrics-listen is loopback only (its page has
// no token), export.otlp names a collector by URL; a bad value names its
// key and changes nothing.
func TestTelemetrySettings(t *testing.T) {
	for _, tc := range []struct {
		yaml, flag, key string
	}{
		{"metricsListen: 0.0.0.0:9464\n", "", "metricsListen"},
		{"", "192.168.1.5:9464", "metricsListen"},
		{"", "9464", "metricsListen"},
		{"export:\n  otlp:\n    endpoint: collector:4318\n", "", "export.otlp.endpoint"},
		{"export:\n  otlp:\n    endpoint: http://c:4318\n    interval: 10ms\n", "", "export.otlp.interval"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(tc.yaml), 0o600)
		_, err := LoadConfig(dir, Flags{MetricsListen: tc.flag})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), "config.yaml") {
			t.Errorf("%q / %q: %v, want an error naming %s", tc.yaml, tc.flag, err, tc.key)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(
		"metricsListen: 127.0.0.1:9464\nexport:\n  otlp:\n    endpoint: http://collector:4318/\n    interval: 30s\n    user: alice\n    headers:\n      Authorization: Bearer x\n"), 0o600)
	cfg, err := LoadConfig(dir, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.ExportOTLP
	if cfg.MetricsListen != "127.0.0.1:9464" || o.Endpoint != "http://collector:4318" || o.Interval != 30*time.Second || o.User != "alice" ||
		o.Headers["authorization"] != "Bearer x" {
		t.Fatalf("%+v %+v", cfg.MetricsListen, o)
	}
}
