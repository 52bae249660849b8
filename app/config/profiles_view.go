package config

import (
	"sort"
	"strings"

	"tollgate/pricing"
)

// FieldName lets the API answer a 400 that names the config key.
func (e *ConfigError) FieldName() string { return e.Key }

// GuardManual: a profile with `guardManual: true` asks about compactions
// the user typed too; by default they are allowed (reason manual).
func (s *Settings) GuardManual(profile string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	b, _ := s.cfg.Profiles[strings.ToLower(profile)]["guardmanual"].(bool)
	return b
}

// ProfileView is one profile as the Settings page shows it: the keys the
// file sets (canonical spelling) and the cache model they resolve to.
type ProfileView struct {
	Name    string             `json:"name"`
	Keys    map[string]any     `json:"keys"`
	Model   pricing.CacheModel `json:"model"`
	Builtin bool               `json:"builtin"` // a built-in price entry underlies it
	Source  string             `json:"source,omitempty"`
	Mode    string             `json:"mode,omitempty"`
	Error   string             `json:"error,omitempty"`
	Default bool               `json:"default"`
}

// ProfilesPage is GET /v1/profiles.
type ProfilesPage struct {
	Profiles          []ProfileView          `json:"profiles"`
	DefaultProfile    string                 `json:"defaultProfile"`
	Mode              string                 `json:"mode"`
	AskTimeoutSeconds float64                `json:"askTimeoutSeconds"`
	Keys              []string               `json:"keys"` // every key a profile understands, in order
	Builtins          []pricing.BuiltinPrice `json:"builtins"`
}

func (s *Settings) profileView(name string, keys map[string]any) ProfileView {
	v := ProfileView{Name: name, Keys: map[string]any{}, Default: name == s.DefaultProfile()}
	for k, val := range keys {
		if spec, ok := lookupProfileKey(k); ok {
			v.Keys[spec.Canonical] = val
		} else {
			v.Keys[k] = val
		}
	}
	provider, _ := keys["provider"].(string)
	model, _ := keys["model"].(string)
	if _, ok := pricing.Builtin(provider, model); ok {
		v.Builtin = true
		for _, b := range pricing.BuiltinPrices() {
			if strings.EqualFold(b.Model, model) {
				v.Source = b.Source + " (" + b.Date + ")"
				break
			}
		}
	}
	m, err := ProfileModel(keys)
	v.Model = m
	if err != nil {
		v.Error = err.Error()
	}
	v.Mode, _ = keys["mode"].(string)
	return v
}

// ProfilesView is the Settings page's data.
func (s *Settings) ProfilesView() any {
	profiles := s.Profiles()
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	page := ProfilesPage{DefaultProfile: s.DefaultProfile(), Mode: s.GlobalMode(), AskTimeoutSeconds: s.AskTimeout().Seconds(), Builtins: pricing.BuiltinPrices()}
	for _, n := range names {
		page.Profiles = append(page.Profiles, s.profileView(n, profiles[n]))
	}
	if page.Profiles == nil {
		page.Profiles = []ProfileView{}
	}
	for _, k := range profileKeys {
		page.Keys = append(page.Keys, k.Canonical)
	}
	return page
}

// ProfileView returns one profile's view.
func (s *Settings) ProfileView(name string) (any, bool) {
	keys, ok := s.Profiles()[strings.ToLower(name)]
	if !ok {
		return nil, false
	}
	return s.profileView(strings.ToLower(name), keys), true
}
