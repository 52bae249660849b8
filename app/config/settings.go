package config

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// Settings is the configuration a running tollgate reads and changes. Every
// change is written to config.yaml first (at the node level) and then made
// live, so what runs is always what the file says.
type Settings struct {
	mu  sync.RWMutex
	cfg *Config

	cacheMu  sync.Mutex
	cache    map[string]resolvedModel
	cacheGen uint64
}

// NewSettings wraps a loaded configuration.
func NewSettings(cfg *Config) *Settings { return &Settings{cfg: cfg} }

// GlobalMode is the global default mode.
func (s *Settings) GlobalMode() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cfg.Mode
}

// AskTimeout is how long a question waits for an answer.
func (s *Settings) AskTimeout() time.Duration {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cfg.AskTimeout
}

// SetGlobalMode writes mode: to config.yaml and makes it live.
func (s *Settings) SetGlobalMode(mode string) error {
	if !ValidMode(mode) {
		return fmt.Errorf("mode: %q: want ask, auto or off", mode)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := editYAML(s.cfg.File, func(root *yaml.Node) error {
		return setPath(root, []string{"mode"}, mode)
	}); err != nil {
		return err
	}
	s.cfg.Mode = mode
	return nil
}

// SetAskTimeout writes askTimeout: to config.yaml and makes it live.
func (s *Settings) SetAskTimeout(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("askTimeout: %s: want a positive duration", d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := editYAML(s.cfg.File, func(root *yaml.Node) error {
		return setPath(root, []string{"askTimeout"}, d.String())
	}); err != nil {
		return err
	}
	s.cfg.AskTimeout = d
	return nil
}

// ProfileMode is a profile's own default mode, if it sets one.
func (s *Settings) ProfileMode(profile string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys, ok := s.cfg.Profiles[strings.ToLower(profile)]
	if !ok {
		return "", false
	}
	m, ok := keys["mode"].(string)
	return strings.ToLower(m), ok && m != ""
}

// SetProfileMode sets (or, with "", clears) a profile's default mode.
func (s *Settings) SetProfileMode(profile, mode string) error {
	if mode != "" && !ValidMode(mode) {
		return fmt.Errorf("mode: %q: want ask, auto or off", mode)
	}
	var v any = mode
	if mode == "" {
		v = nil
	}
	return s.SetProfileKeys(profile, map[string]any{"mode": v})
}

// Profiles returns a copy of every profile's keys.
func (s *Settings) Profiles() map[string]map[string]any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]map[string]any, len(s.cfg.Profiles))
	for name, keys := range s.cfg.Profiles {
		cp := make(map[string]any, len(keys))
		for k, v := range keys {
			cp[k] = v
		}
		out[name] = cp
	}
	return out
}

// DefaultProfile names the profile used when nothing else prices a request.
func (s *Settings) DefaultProfile() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cfg.DefaultProfile
}

// SetProfileKeys validates and writes keys of one profile (creating it);
// a nil value removes the key. Nothing is written when any value is invalid.
func (s *Settings) SetProfileKeys(profile string, keys map[string]any) error {
	name := strings.ToLower(strings.TrimSpace(profile))
	if name == "" || strings.ContainsAny(name, ".\n\t ") {
		return &ConfigError{File: s.cfg.File, Key: "profiles", Value: profile, Why: "a profile name needs letters, digits or '-', no spaces or dots"}
	}
	canonical := map[string]any{}
	for key, value := range keys {
		spec, ok := lookupProfileKey(key)
		if !ok {
			return &ConfigError{File: s.cfg.File, Key: "profiles." + name + "." + key, Why: "unknown key"}
		}
		if value != nil {
			if err := checkKeyValue(spec, value); err != nil {
				return &ConfigError{File: s.cfg.File, Key: "profiles." + name + "." + spec.Canonical, Value: value, Why: err.Error()}
			}
		}
		canonical[spec.Canonical] = value
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := editYAML(s.cfg.File, func(root *yaml.Node) error {
		for key, value := range canonical {
			path := []string{"profiles", name, key}
			if value == nil {
				deletePath(root, path)
				continue
			}
			if err := setPath(root, path, value); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	live := s.cfg.Profiles[name]
	if live == nil {
		live = map[string]any{}
	}
	next := make(map[string]any, len(live)+len(canonical))
	for k, v := range live {
		next[k] = v
	}
	for key, value := range canonical {
		lower := strings.ToLower(key)
		if value == nil {
			delete(next, lower)
		} else {
			next[lower] = value
		}
	}
	s.cfg.Profiles[name] = next
	s.forgetResolved()
	return nil
}
