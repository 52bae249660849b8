// Package config is config.yaml: loading and validating it with viper
// (TOLLGATE_* and flags override it), writing edits back at the node level
// with yaml.v3 so comments and spelling survive, the profiles and the cache
// models they resolve to, and the live Settings the guard reads.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"tollgate/app/home"

	"github.com/spf13/viper"
)

// Modes a rewrite can be guarded in (ARCHITECTURE.md, "Modes and decisions").
const (
	ModeAsk  = "ask"
	ModeAuto = "auto"
	ModeOff  = "off"
)

// DefaultListen is the loopback address tollgate listens on unless told otherwise.
const DefaultListen = "127.0.0.1:47631"

// Config is the validated configuration of one tollgate home.
//
// It is read with viper from <home>/config.yaml, overridden by TOLLGATE_*
// environment variables, which flags override in turn. Profile names are
// case-insensitive (viper folds keys to lower case), so they are kept in lower
// case here; the file keeps whatever spelling the user wrote.
type Config struct {
	Home           string
	File           string // <home>/config.yaml
	Listen         string
	InsecureListen bool
	// MetricsListen is a loopback host:port serving the Prometheus page
	// without a token ("" = none; the API listener's /metrics needs it).
	MetricsListen  string
	AskTimeout     time.Duration
	Mode           string
	DefaultProfile string
	// ExportOTLP pushes the exports' figures to an OpenTelemetry collector
	// (export.otlp in config.yaml); zero: not configured here.
	ExportOTLP ExportOTLP
	// Watch is watch:, the following of the harnesses' log folders (on
	// unless turned off).
	Watch Watch
	// Profiles holds the raw keys of every profile, lower-cased by viper;
	// ProfileKeys turns them into a cache model on top of the built-in prices.
	Profiles map[string]map[string]any
}

// ExportOTLP is export.otlp: where and how often to push the figures, and
// the user.id label that lets a team split them by developer.
type ExportOTLP struct {
	Endpoint string            // base URL (http://collector:4318); /v1/metrics is appended
	Headers  map[string]string // e.g. an Authorization header
	Interval time.Duration     // default 60s
	User     string            // user.id (default $TOLLGATE_USER)
}

// Flags are the command-line values that override the file and environment.
// Empty strings and nil pointers mean "not given".
type Flags struct {
	Listen         string
	InsecureListen *bool
	Mode           string
	MetricsListen  string
}

// ConfigError is a configuration value that cannot be used. Its message names
// the key, the value and the file, so a user can fix it without guessing.
type ConfigError struct {
	File  string
	Key   string
	Value any
	Why   string
}

func (e *ConfigError) Error() string {
	if e.Value == nil {
		return fmt.Sprintf("config %s: %s: %s", e.File, e.Key, e.Why)
	}
	return fmt.Sprintf("config %s: %s: %v: %s", e.File, e.Key, e.Value, e.Why)
}

// defaultConfigYAML is written on first run. Every key is commented so the
// file documents itself; edits from the UI preserve these comments.
const defaultConfigYAML = `# tollgate configuration. Edit by hand or in Settings; comments are kept.
# Environment variables override these keys (TOLLGATE_LISTEN, TOLLGATE_MODE,
# TOLLGATE_ASKTIMEOUT, TOLLGATE_DEFAULTPROFILE); command-line flags override both.

# Loopback address of the API and browser UI; port 0 picks a free port.
listen: 127.0.0.1:47631

# How long a rewrite question waits for an answer before it is declined.
askTimeout: 120s

# Global default mode: ask (hold each rewrite for your answer), auto (allow and
# record its cost), off (allow without pricing).
mode: ask

# Follow the harnesses' log folders (Claude Code, Codex, dsh) and import what
# they append, so the dashboard is live from the first request. watch: false
# turns it off; folders adds more (harness: leave out to detect per file).
# watch:
#   enabled: true
#   folders:
#     - {path: ~/agent-logs, harness: claude-code}

# Profile used for requests that name no profile and match no built-in price.
defaultProfile: deepseek-flash

# Per-profile cache models and prices in USD per million tokens. Keys you set
# override the built-in price table for the same provider and model.
profiles:
  deepseek-flash:
    provider: deepseek
    model: deepseek-flash
    cacheKind: positional        # positional | breakpoint
    granularity: 64
    minimumPrefix: 64
    ttlSeconds: 3600
    # pricePerMTokens: 0.30          # full-price input (cache miss)
    # cacheHitPricePerMTokens: 0.006
    # cacheWritePricePerMTokens: 0   # 0: writes are not billed
    # outputPricePerMTokens: 1.20
    estimatedSummaryTokens: 4000
    # mode: ask                      # this profile's default mode
`

// LoadConfig reads <home>/config.yaml (writing the commented defaults first
// when it does not exist), applies TOLLGATE_* overrides and the flags, and
// validates every value.
func LoadConfig(dir string, flags Flags) (*Config, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating dir %s: %w", dir, err)
	}
	file := filepath.Join(dir, "config.yaml")
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		if err := home.WriteFileAtomic(file, []byte(defaultConfigYAML), 0o600); err != nil {
			return nil, fmt.Errorf("writing default config: %w", err)
		}
	}

	v := viper.New()
	v.SetConfigFile(file)
	v.SetConfigType("yaml")
	v.SetEnvPrefix("TOLLGATE")
	v.AutomaticEnv()
	v.SetDefault("listen", DefaultListen)
	v.SetDefault("askTimeout", "120s")
	v.SetDefault("mode", ModeAsk)
	v.SetDefault("defaultProfile", "")
	v.SetDefault("insecureListen", false)
	if err := v.ReadInConfig(); err != nil {
		return nil, &ConfigError{File: file, Key: "(file)", Why: "not valid YAML: " + err.Error()}
	}
	if flags.Listen != "" {
		v.Set("listen", flags.Listen)
	}
	if flags.InsecureListen != nil {
		v.Set("insecureListen", *flags.InsecureListen)
	}
	if flags.Mode != "" {
		v.Set("mode", flags.Mode)
	}
	if flags.MetricsListen != "" {
		v.Set("metricsListen", flags.MetricsListen)
	}

	cfg := &Config{Home: dir, File: file}
	bad := func(key string, value any, why string) error {
		return &ConfigError{File: file, Key: key, Value: value, Why: why}
	}

	cfg.Listen = strings.TrimSpace(v.GetString("listen"))
	if _, _, err := net.SplitHostPort(cfg.Listen); err != nil {
		return nil, bad("listen", cfg.Listen, "want host:port, e.g. 127.0.0.1:47631")
	}
	if ml := strings.TrimSpace(v.GetString("metricsListen")); ml != "" {
		host, _, err := net.SplitHostPort(ml)
		if err != nil {
			return nil, bad("metricsListen", ml, "want a loopback host:port, e.g. 127.0.0.1:9464")
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, bad("metricsListen", ml, "the page has no token: it listens on loopback only (127.0.0.1, ::1 or localhost)")
		}
		cfg.MetricsListen = ml
	}
	insecure := v.Get("insecureListen")
	switch b := insecure.(type) {
	case bool:
		cfg.InsecureListen = b
	case string:
		switch strings.ToLower(b) {
		case "true", "1", "yes":
			cfg.InsecureListen = true
		case "false", "0", "no", "":
		default:
			return nil, bad("insecureListen", b, "want true or false")
		}
	default:
		return nil, bad("insecureListen", insecure, "want true or false")
	}

	rawTimeout := v.Get("askTimeout")
	timeout, err := parseDuration(rawTimeout)
	if err != nil || timeout <= 0 {
		return nil, bad("askTimeout", rawTimeout, "want a positive duration such as 120s or 2m")
	}
	cfg.AskTimeout = timeout

	if ep := strings.TrimSpace(v.GetString("export.otlp.endpoint")); ep != "" {
		u, err := url.Parse(ep)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, bad("export.otlp.endpoint", ep, "want the collector's OTLP/HTTP base URL, e.g. http://127.0.0.1:4318")
		}
		cfg.ExportOTLP.Endpoint = strings.TrimSuffix(ep, "/")
	}
	cfg.ExportOTLP.Headers = v.GetStringMapString("export.otlp.headers")
	cfg.ExportOTLP.Interval = 60 * time.Second
	if raw := v.Get("export.otlp.interval"); raw != nil {
		d, err := parseDuration(raw)
		if err != nil || d < time.Second {
			return nil, bad("export.otlp.interval", raw, "want a duration of at least 1s, such as 60s")
		}
		cfg.ExportOTLP.Interval = d
	}
	cfg.ExportOTLP.User = strings.TrimSpace(v.GetString("export.otlp.user"))
	if cfg.ExportOTLP.User == "" {
		cfg.ExportOTLP.User = strings.TrimSpace(os.Getenv("TOLLGATE_USER"))
	}

	if cfg.Watch, err = parseWatch(file, v.Get("watch")); err != nil {
		return nil, err
	}

	cfg.Mode = strings.ToLower(strings.TrimSpace(v.GetString("mode")))
	if !ValidMode(cfg.Mode) {
		return nil, bad("mode", v.Get("mode"), "want ask, auto or off")
	}
	cfg.DefaultProfile = strings.ToLower(strings.TrimSpace(v.GetString("defaultProfile")))

	cfg.Profiles = map[string]map[string]any{}
	if raw := v.Get("profiles"); raw != nil {
		profiles, ok := raw.(map[string]any)
		if !ok {
			return nil, bad("profiles", raw, "want a map of profile name to settings")
		}
		names := make([]string, 0, len(profiles))
		for name := range profiles {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			keys, ok := profiles[name].(map[string]any)
			if profiles[name] == nil {
				keys, ok = map[string]any{}, true
			}
			if !ok {
				return nil, bad("profiles."+name, profiles[name], "want a map of settings")
			}
			if err := validateProfileKeys(file, name, keys); err != nil {
				return nil, err
			}
			cfg.Profiles[strings.ToLower(name)] = keys
		}
	}
	if cfg.DefaultProfile != "" {
		if _, ok := cfg.Profiles[cfg.DefaultProfile]; !ok {
			return nil, bad("defaultProfile", cfg.DefaultProfile, "no profile of that name under profiles:")
		}
	}
	return cfg, nil
}

// ValidMode reports whether m is one of ask, auto, off.
func ValidMode(m string) bool { return m == ModeAsk || m == ModeAuto || m == ModeOff }

func parseDuration(v any) (time.Duration, error) {
	switch d := v.(type) {
	case string:
		return time.ParseDuration(strings.TrimSpace(d))
	case int:
		return time.Duration(d) * time.Second, nil
	case float64:
		return time.Duration(d * float64(time.Second)), nil
	case time.Duration:
		return d, nil
	}
	return 0, fmt.Errorf("not a duration")
}

// IsLoopbackListen reports whether addr (host:port) names a loopback host.
func IsLoopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
