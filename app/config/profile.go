package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"

	"tollgate/pricing"
)

// profileKey describes one key a profile may set. Canonical is the spelling
// written to config.yaml; viper hands keys back lower-cased.
type profileKey struct {
	Canonical string
	Kind      keyKind
}

type keyKind int

const (
	kindString    keyKind = iota
	kindPrice             // a non-negative number, USD per million tokens
	kindTokens            // a non-negative whole number
	kindPositive          // a whole number > 0
	kindCacheKind         // positional | breakpoint
	kindMode              // ask | auto | off
	kindBool
	kindOffPeak // {days, utc, factor}
)

// ProfileKeys lists every key a profile understands, in the order the
// settings page shows them.
var profileKeys = []profileKey{
	{"provider", kindString},
	{"model", kindString},
	{"cacheKind", kindCacheKind},
	{"granularity", kindPositive},
	{"minimumPrefix", kindTokens},
	{"ttlSeconds", kindTokens},
	{"pricePerMTokens", kindPrice},
	{"cacheHitPricePerMTokens", kindPrice},
	{"cacheWritePricePerMTokens", kindPrice},
	{"cacheWrite1hPricePerMTokens", kindPrice},
	{"outputPricePerMTokens", kindPrice},
	{"estimatedSummaryTokens", kindTokens},
	{"offPeak", kindOffPeak},
	{"mode", kindMode},
	{"guardManual", kindBool},
}

func lookupProfileKey(lower string) (profileKey, bool) {
	for _, k := range profileKeys {
		if strings.EqualFold(k.Canonical, lower) {
			return k, true
		}
	}
	return profileKey{}, false
}

// validateProfileKeys checks the values of one profile. Unknown keys are kept
// (the file may carry keys of a newer tollgate) but logged, because a
// misspelt price key would otherwise be ignored without a word.
func validateProfileKeys(file, profile string, keys map[string]any) error {
	for key, value := range keys {
		spec, ok := lookupProfileKey(key)
		if !ok {
			slog.Warn("config: unknown profile key ignored", "file", file, "key", "profiles."+profile+"."+key)
			continue
		}
		if err := checkKeyValue(spec, value); err != nil {
			key := "profiles." + profile + "." + spec.Canonical
			var sub *subkeyError
			if errors.As(err, &sub) {
				return &ConfigError{File: file, Key: key + "." + sub.Key, Why: sub.Why}
			}
			return &ConfigError{File: file, Key: key, Value: value, Why: err.Error()}
		}
	}
	return nil
}

// MaxPricePerMTokens bounds a profile's prices: today's dearest models
// charge hundreds of USD per million tokens; a thousand times that is a typo,
// and a price such as 1e308 would overflow every cost to +Inf.
const MaxPricePerMTokens = 100_000

// subkeyError names a key inside a structured value (offPeak.factor).
type subkeyError struct{ Key, Why string }

func (e *subkeyError) Error() string { return e.Key + ": " + e.Why }

func checkKeyValue(spec profileKey, value any) error {
	switch spec.Kind {
	case kindString:
		if _, ok := value.(string); !ok {
			return fmt.Errorf("want text")
		}
	case kindPrice:
		f, ok := toFloat(value)
		if !ok || !(f >= 0) || f > MaxPricePerMTokens {
			return fmt.Errorf("want a price from 0 to %g USD per million tokens", float64(MaxPricePerMTokens))
		}
	case kindTokens, kindPositive:
		f, ok := toFloat(value)
		if !ok || f != math.Trunc(f) || f < 0 || f > 1<<53 {
			return fmt.Errorf("want a whole number of tokens ≥ 0")
		}
		if spec.Kind == kindPositive && f == 0 {
			return fmt.Errorf("want a whole number > 0")
		}
	case kindCacheKind:
		s, _ := value.(string)
		if s != "positional" && s != "breakpoint" {
			return fmt.Errorf("want positional or breakpoint")
		}
	case kindMode:
		s, _ := value.(string)
		if !ValidMode(strings.ToLower(s)) {
			return fmt.Errorf("want ask, auto or off")
		}
	case kindBool:
		if _, ok := value.(bool); !ok {
			return fmt.Errorf("want true or false")
		}
	case kindOffPeak:
		if _, ok := value.(map[string]any); !ok {
			return fmt.Errorf("want {days: [mon-fri], utc: [\"00:00-01:00\"], factor: 0.5}")
		}
		// An invalid window is refused here: loaded, it would fail every
		// pricing of the profile and store its requests at zero cost.
		w, err := offPeakWindow(value)
		if err != nil {
			return err
		}
		m := pricing.CacheModel{Kind: pricing.Positional, Granularity: 1, TTLSeconds: 300, OffPeak: w}
		if err := m.Validate(); err != nil {
			var fe *pricing.FieldError
			if errors.As(err, &fe) {
				return &subkeyError{Key: strings.TrimPrefix(fe.Field, "offPeak."), Why: fe.Message}
			}
			return err
		}
	}
	return nil
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		return f, err == nil
	}
	return 0, false
}

// PricedBy says where a request's prices came from (ARCHITECTURE.md, "The API").
type PricedBy string

const (
	PricedByProfile PricedBy = "profile" // the profile the request named
	PricedByBuiltin PricedBy = "builtin" // the built-in table, by provider + model
	PricedByDefault PricedBy = "default" // the default profile: flagged in the UI
	PricedByNone    PricedBy = "none"    // nothing applied: costs are zero
)

// ProfileModel builds a profile's cache model: the built-in entry for its
// provider and model (when there is one), then every key the profile sets.
// A profile's own keys win.
func ProfileModel(keys map[string]any) (pricing.CacheModel, error) {
	provider, _ := keys["provider"].(string)
	model, _ := keys["model"].(string)
	m, ok := pricing.Builtin(provider, model)
	if !ok {
		// No built-in entry: an exact positional cache with a 5-minute TTL
		// until the profile says otherwise; prices are whatever it sets.
		m = pricing.CacheModel{Kind: pricing.Positional, Granularity: 1, TTLSeconds: 300}
	}
	for key, value := range keys {
		spec, ok := lookupProfileKey(key)
		if !ok {
			continue
		}
		f, _ := toFloat(value)
		switch spec.Canonical {
		case "cacheKind":
			s, _ := value.(string)
			m.Kind = pricing.CacheKind(s)
		case "granularity":
			m.Granularity = int64(f)
		case "minimumPrefix":
			m.MinimumPrefix = int64(f)
		case "ttlSeconds":
			m.TTLSeconds = int64(f)
		case "pricePerMTokens":
			m.PricePerMTokens = f
		case "cacheHitPricePerMTokens":
			m.CacheHitPricePerMTokens = f
		case "cacheWritePricePerMTokens":
			m.CacheWritePricePerMTokens = f
		case "cacheWrite1hPricePerMTokens":
			m.CacheWrite1hPricePerMTokens = f
		case "outputPricePerMTokens":
			m.OutputPricePerMTokens = f
		case "estimatedSummaryTokens":
			m.EstimatedSummaryTokens = int64(f)
		case "offPeak":
			w, err := offPeakWindow(value)
			if err != nil {
				return m, fmt.Errorf("offPeak: %w", err)
			}
			m.OffPeak = w
		}
	}
	if err := m.Validate(); err != nil {
		return m, err
	}
	return m, nil
}

func offPeakWindow(v any) (*pricing.PriceWindow, error) {
	raw, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want {days, utc, factor}")
	}
	var w pricing.PriceWindow
	for k, x := range raw {
		switch strings.ToLower(k) {
		case "days", "utc":
			list, ok := x.([]any)
			if !ok {
				return nil, fmt.Errorf("%s: want a list", k)
			}
			for _, item := range list {
				s, ok := item.(string)
				if !ok {
					return nil, fmt.Errorf("%s: want text items", k)
				}
				if strings.ToLower(k) == "days" {
					w.Days = append(w.Days, s)
				} else {
					w.UTC = append(w.UTC, s)
				}
			}
		case "factor":
			f, ok := toFloat(x)
			if !ok {
				return nil, fmt.Errorf("factor: want a number")
			}
			w.Factor = f
		}
	}
	return &w, nil
}

// ResolveModel prices a request per ARCHITECTURE.md, "The API": the profile the request
// names; else the built-in table by provider + model; else the default
// profile (flagged "default" so the UI can say so).
func (s *Settings) ResolveModel(profile, provider, model string) (pricing.CacheModel, PricedBy, error) {
	profiles := s.Profiles()
	if keys, ok := profiles[strings.ToLower(profile)]; ok && profile != "" {
		m, err := ProfileModel(keys)
		if err != nil {
			return m, PricedByProfile, fmt.Errorf("profiles.%s.%w", strings.ToLower(profile), err)
		}
		return m, PricedByProfile, nil
	}
	if m, ok := pricing.Builtin(provider, model); ok && model != "" {
		return m, PricedByBuiltin, nil
	}
	if m, ok := pricing.Builtin("", profile); ok && profile != "" {
		return m, PricedByBuiltin, nil
	}
	if def := s.DefaultProfile(); def != "" {
		if keys, ok := profiles[def]; ok {
			m, err := ProfileModel(keys)
			if err != nil {
				return m, PricedByDefault, fmt.Errorf("profiles.%s.%w", def, err)
			}
			return m, PricedByDefault, nil
		}
	}
	return pricing.CacheModel{Kind: pricing.Positional, Granularity: 1, TTLSeconds: 300}, PricedByNone, nil
}
