package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"tollgate/pricing"
)

// Rewrite triggers (ARCHITECTURE.md, "The API").
const (
	TriggerPressure        = "pressure"
	TriggerContextOverflow = "context-overflow"
	TriggerManual          = "manual"
)

// RewriteRequest is the body of POST /v1/sessions/{session}/rewrites: a
// harness asks before it rewrites its model-visible context.
type RewriteRequest struct {
	Engine  string `json:"engine"`
	Profile string `json:"profile"`
	// Turn is an opaque string from the harness; a JSON number is accepted
	// and kept as its text ("17").
	Turn            string  `json:"turn"`
	Trigger         string  `json:"trigger"` // required: pressure | context-overflow | manual
	DeadlineSeconds float64 `json:"deadlineSeconds"`
	IdleSeconds     float64 `json:"idleSeconds"` // since the last routed request; absent = 0
	ContextWindow   int64   `json:"contextWindow"`
	ThresholdTokens int64   `json:"thresholdTokens"`
	EnvelopeTokens  int64   `json:"envelopeTokens"` // required
	// Surface is the model-visible history after the envelope, in order
	// (required, may be empty). Unit ids and kinds are substrings of the
	// decoded body, which they keep alive.
	Surface []pricing.Unit `json:"surface"`
	Plan    pricing.Plan   `json:"plan"` // required
	// Wait is how long the harness will hold the request for an answer;
	// nil = absent (the server default), 0 = answer 202 at once.
	Wait *int `json:"wait,omitempty"`
	// CacheModel optionally overrides the profile's pricing keys (used by
	// `tollgate quote`); see ApplyCacheModel. It is kept as raw JSON so that
	// only the keys present override.
	CacheModel json.RawMessage `json:"cacheModel,omitempty"`
	// Prediction is the harness's own account of the cold tokens the next
	// request will re-read (optional; the Claude Code hook sends it): a
	// band and its parts, shown in the dialog and stored with the rewrite.
	Prediction *ColdPrediction `json:"prediction,omitempty"`
}

// ColdPrediction is a harness's predicted cold tokens of the request after
// a rewrite: the figure (the plan's checkpoint plus restored tokens), the
// band it may fall in, and its parts.
type ColdPrediction struct {
	Low   int64      `json:"low"`
	High  int64      `json:"high"`
	Parts []ColdPart `json:"parts,omitempty"`
	// CacheExpiredSeconds is how long ago the conversation's cache expired
	// (0: still warm): the rewrite then costs little extra.
	CacheExpiredSeconds float64 `json:"cacheExpiredSeconds,omitempty"`
}

// ColdPart is one part of a prediction: "summary", "files" (Count files),
// "plan+skills", "base", "manual".
type ColdPart struct {
	Name   string `json:"name"`
	Tokens int64  `json:"tokens"`
	Count  int    `json:"count,omitempty"`
}

// maxPredictionParts bounds a prediction's parts.
const maxPredictionParts = 16

// check validates a prediction; errors name the field under p.
func (c *ColdPrediction) check(p path) error {
	switch {
	case c.Low < 0 || c.Low > 1<<50:
		return fieldErr(p.child("low"), fmt.Sprintf("must be between 0 and 2^50, not %d", c.Low))
	case c.High < c.Low || c.High > 1<<50:
		return fieldErr(p.child("high"), fmt.Sprintf("must be between low (%d) and 2^50, not %d", c.Low, c.High))
	case len(c.Parts) > maxPredictionParts:
		return fieldErr(p.child("parts"), fmt.Sprintf("must have at most %d parts, not %d", maxPredictionParts, len(c.Parts)))
	case c.CacheExpiredSeconds < 0 || math.IsNaN(c.CacheExpiredSeconds) || math.IsInf(c.CacheExpiredSeconds, 0):
		return fieldErr(p.child("cacheExpiredSeconds"), "must be a number of seconds ≥ 0")
	}
	for i, x := range c.Parts {
		pp := path{parent: p.child("parts").String(), index: i, name: ""}
		switch {
		case x.Name == "" || len(x.Name) > 32:
			return fieldErr(pp.child("name"), "must be a name of 1 to 32 bytes")
		case x.Tokens < 0 || x.Tokens > 1<<50:
			return fieldErr(pp.child("tokens"), fmt.Sprintf("must be between 0 and 2^50, not %d", x.Tokens))
		case x.Count < 0:
			return fieldErr(pp.child("count"), fmt.Sprintf("must be ≥ 0, not %d", x.Count))
		}
	}
	return nil
}

// FieldError is a bad request body, naming the field by its JSON path
// (e.g. "surface[3].tokens").
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// ToQuoteRequest turns the body into a pricing request under model, priced
// at `at`. The surface is shared, not copied.
func (r RewriteRequest) ToQuoteRequest(model pricing.CacheModel, at time.Time) pricing.QuoteRequest {
	return pricing.QuoteRequest{
		Model:           model,
		EnvelopeTokens:  r.EnvelopeTokens,
		Units:           r.Surface,
		Plan:            r.Plan,
		ContextWindow:   r.ContextWindow,
		ThresholdTokens: r.ThresholdTokens,
		IdleSeconds:     r.IdleSeconds,
		At:              at,
	}
}

// ApplyCacheModel returns base with the keys of the body's cacheModel
// object laid over it (base itself is not changed). Without a cacheModel it
// returns base.
func (r RewriteRequest) ApplyCacheModel(base pricing.CacheModel) (pricing.CacheModel, error) {
	if len(r.CacheModel) == 0 || string(r.CacheModel) == "null" {
		return base, nil
	}
	m := base
	if base.OffPeak != nil { // decoding into a shared window would change the caller's
		w := *base.OffPeak
		w.Days = append([]string(nil), w.Days...)
		w.UTC = append([]string(nil), w.UTC...)
		w.AllDay = append([]string(nil), w.AllDay...)
		m.OffPeak = &w
	}
	if err := json.Unmarshal(r.CacheModel, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return base, &FieldError{Field: "cacheModel." + te.Field, Message: "must be a " + jsonKind(te.Type.String()) + ", not a " + te.Value}
		}
		return base, &FieldError{Field: "cacheModel", Message: err.Error()}
	}
	return m, nil
}

func jsonKind(goType string) string {
	switch goType {
	case "int64", "int", "float64":
		return "number"
	case "string", "pricing.CacheKind":
		return "string"
	case "[]string":
		return "list of strings"
	case "bool":
		return "boolean"
	}
	return "JSON object"
}

// DecodeRewriteRequest decodes and checks a rewrite body. It accepts what
// encoding/json accepts and decodes it to the same values (unknown fields are
// ignored, keys match case-insensitively, a repeated key's last value wins);
// on top of that, trigger, envelopeTokens, surface and plan are required,
// every unit needs id and tokens, a prune id and tokensAfter, a summary
// start and end, trigger must be one of the three known, and cacheModel an
// object. Errors are *FieldError.
//
// It is a hand-written scanner, several times faster than encoding/json on
// a 5,000-unit surface: the gate's round trip must stay within 2× of a plain
// encoding/json decode of the same body.
func DecodeRewriteRequest(body []byte) (RewriteRequest, error) {
	var r RewriteRequest
	d := decoder{s: string(body)} // one copy; every id and kind is a substring of it
	err := d.request(&r)
	return r, err
}

// maxDepth is encoding/json's nesting limit, kept so that both accept the same bodies.
const maxDepth = 10000

type decoder struct {
	s string
	i int
}

// path names a field for errors without building strings on the happy path:
// parent[index].name, with index < 0 meaning none.
type path struct {
	parent string
	index  int
	name   string
}

func (p path) String() string {
	var b strings.Builder
	b.WriteString(p.parent)
	if p.index >= 0 {
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(p.index))
		b.WriteByte(']')
	}
	if p.name != "" {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p.name)
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}

func field(name string) path            { return path{index: -1, name: name} }
func (p path) child(name string) path   { return path{parent: p.String(), index: -1, name: name} }
func fieldErr(p path, msg string) error { return &FieldError{Field: p.String(), Message: msg} }
func (d *decoder) syntax(p path, what string) error {
	return &FieldError{Field: p.String(), Message: fmt.Sprintf("invalid JSON at offset %d: %s", d.i, what)}
}

func (d *decoder) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end. Compact bodies
// take the first, inlined branch.
func (d *decoder) peek() byte {
	if d.i < len(d.s) && d.s[d.i] > ' ' {
		return d.s[d.i]
	}
	d.ws()
	if d.i < len(d.s) {
		return d.s[d.i]
	}
	return 0
}

// kind names the JSON kind of the value starting with c, for type errors.
func kind(c byte) string {
	switch c {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case 0:
		return "end of input"
	}
	if c == '-' || (c >= '0' && c <= '9') {
		return "number"
	}
	return fmt.Sprintf("character %q", c)
}

func (d *decoder) typeErr(p path, want string) error {
	c := d.peek()
	if k := kind(c); strings.HasPrefix(k, "character") || c == 0 {
		return d.syntax(p, "unexpected "+k)
	}
	return fieldErr(p, "must be "+want+", not "+articled(kind(c)))
}

func articled(k string) string {
	if k == "array" || k == "object" {
		return "an " + k
	}
	return "a " + k
}

// literal consumes true, false or null.
func (d *decoder) literal(p path, lit string) error {
	if strings.HasPrefix(d.s[d.i:], lit) {
		d.i += len(lit)
		return nil
	}
	return d.syntax(p, "invalid literal")
}

// null consumes a null if one is next.
func (d *decoder) null(p path) (bool, error) {
	if d.peek() != 'n' {
		return false, nil
	}
	return true, d.literal(p, "null")
}

// str reads a string. The common case — no escapes, valid UTF-8 — is a
// substring of the body; anything else goes through encoding/json so that
// escapes and invalid UTF-8 come out exactly as it decodes them.
func (d *decoder) str(p path) (string, error) {
	if d.peek() != '"' {
		return "", d.typeErr(p, "a string")
	}
	start := d.i + 1
	ascii := true
	for j := start; j < len(d.s); j++ {
		switch byteClass[d.s[j]] {
		case plain:
			continue
		case quote:
			v := d.s[start:j]
			if ascii || utf8.ValidString(v) {
				d.i = j + 1
				return v, nil
			}
		case nonASCII:
			ascii = false
			continue
		}
		break // an escape or a control character
	}
	return d.slowString(p)
}

// Byte classes inside a string, looked up in one load per byte.
const (
	plain = iota
	quote
	special // backslash or control character: the slow path
	nonASCII
)

var byteClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == '"':
			t[c] = quote
		case c == '\\' || c < 0x20:
			t[c] = special
		case c >= utf8.RuneSelf:
			t[c] = nonASCII
		}
	}
	return t
}()

func (d *decoder) slowString(p path) (string, error) {
	start := d.i
	j := start + 1
	for {
		if j >= len(d.s) {
			d.i = j
			return "", d.syntax(p, "unterminated string")
		}
		c := d.s[j]
		switch {
		case c == '"':
			j++
			var v string
			if err := json.Unmarshal([]byte(d.s[start:j]), &v); err != nil {
				return "", d.syntax(p, "invalid string")
			}
			d.i = j
			return v, nil
		case c < 0x20:
			d.i = j
			return "", d.syntax(p, "control character in string")
		case c == '\\':
			if j+1 >= len(d.s) {
				d.i = j
				return "", d.syntax(p, "unterminated string")
			}
			switch d.s[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(d.s) || !isHex4(d.s[j+2:j+6]) {
					d.i = j
					return "", d.syntax(p, "invalid \\u escape")
				}
				j += 6
			default:
				d.i = j
				return "", d.syntax(p, "invalid escape")
			}
		default:
			j++
		}
	}
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// number consumes a number and returns its literal, checking the grammar.
func (d *decoder) number(p path, want string) (string, error) {
	c := d.peek()
	if c != '-' && (c < '0' || c > '9') {
		return "", d.typeErr(p, want)
	}
	s, start := d.s, d.i
	j := start
	if s[j] == '-' {
		j++
	}
	digits := func() bool {
		k := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j > k
	}
	switch {
	case j < len(s) && s[j] == '0':
		j++
	case !digits():
		d.i = j
		return "", d.syntax(p, "invalid number")
	}
	if j < len(s) && s[j] == '.' {
		j++
		if !digits() {
			d.i = j
			return "", d.syntax(p, "invalid number")
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if !digits() {
			d.i = j
			return "", d.syntax(p, "invalid number")
		}
	}
	d.i = j
	return s[start:j], nil
}

// int64 reads an integer. Like encoding/json it refuses fractions and
// exponents ("1.0", "1e3") and values beyond 64 bits.
func (d *decoder) int64(p path) (int64, error) {
	lit, err := d.number(p, "an integer")
	if err != nil {
		return 0, err
	}
	if n := len(lit); n > 0 && n <= 18 && lit[0] != '-' {
		var v int64
		for i := 0; i < n; i++ {
			c := lit[i]
			if c < '0' || c > '9' {
				return 0, fieldErr(p, "must be an integer, not "+lit)
			}
			v = v*10 + int64(c-'0')
		}
		return v, nil
	}
	v, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		return 0, fieldErr(p, "must be an integer of at most 64 bits, not "+lit)
	}
	return v, nil
}

func (d *decoder) float(p path) (float64, error) {
	lit, err := d.number(p, "a number")
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return 0, fieldErr(p, "must be a number of at most 64 bits, not "+lit)
	}
	return v, nil
}

func (d *decoder) bool(p path) (bool, error) {
	switch d.peek() {
	case 't':
		return true, d.literal(p, "true")
	case 'f':
		return false, d.literal(p, "false")
	}
	return false, d.typeErr(p, "a boolean")
}

// skip consumes any value, checking its syntax; depth is that of the
// container holding it.
func (d *decoder) skip(p path, depth int) error {
	switch c := d.peek(); c {
	case '"':
		_, err := d.str(p)
		return err
	case 't':
		return d.literal(p, "true")
	case 'f':
		return d.literal(p, "false")
	case 'n':
		return d.literal(p, "null")
	case '{':
		if depth+1 > maxDepth {
			return d.syntax(p, "exceeded max depth")
		}
		d.i++
		for first := true; ; first = false {
			_, done, err := d.key(p, first)
			if err != nil || done {
				return err
			}
			if err := d.skip(p, depth+1); err != nil {
				return err
			}
		}
	case '[':
		if depth+1 > maxDepth {
			return d.syntax(p, "exceeded max depth")
		}
		d.i++
		for first := true; ; first = false {
			done, err := d.next(p, first)
			if err != nil || done {
				return err
			}
			if err := d.skip(p, depth+1); err != nil {
				return err
			}
		}
	default:
		_, err := d.number(p, "a value")
		return err
	}
}

// key reads the next key of an object whose '{' is consumed, with the ':'
// after it; done reports the closing '}'.
func (d *decoder) key(p path, first bool) (key string, done bool, err error) {
	c := d.peek()
	switch {
	case c == '}':
		d.i++
		return "", true, nil
	case !first && c == ',':
		d.i++
		c = d.peek()
	case !first && c == 0 && d.i >= len(d.s):
		return "", false, d.syntax(p, "unexpected end of input")
	case !first:
		return "", false, d.syntax(p, "expected , or }")
	}
	if c != '"' {
		if d.i >= len(d.s) {
			return "", false, d.syntax(p, "unexpected end of input")
		}
		return "", false, d.syntax(p, "expected a key")
	}
	if key, err = d.str(p); err != nil {
		return "", false, err
	}
	if d.peek() != ':' {
		return "", false, d.syntax(p, "expected :")
	}
	d.i++
	return key, false, nil
}

// next moves to the next element of an array whose '[' is consumed; done
// reports the closing ']'.
func (d *decoder) next(p path, first bool) (done bool, err error) {
	c := d.peek()
	if first {
		if c == ']' {
			d.i++
			return true, nil
		}
		return false, nil
	}
	switch c {
	case ']':
		d.i++
		return true, nil
	case ',':
		d.i++
		if d.peek() == ']' {
			return false, d.syntax(p, "trailing comma")
		}
		return false, nil
	case 0:
		return false, d.syntax(p, "unexpected end of input")
	}
	return false, d.syntax(p, "expected , or ]")
}

// match maps a key to one of names as encoding/json does: an exact match
// first, else a case-insensitive one (Unicode simple folding).
func match(key string, names ...string) string {
	for _, n := range names {
		if key == n {
			return n
		}
	}
	ascii := true
	for i := 0; i < len(key); i++ {
		ascii = ascii && key[i] < utf8.RuneSelf
	}
	for _, n := range names {
		// An ASCII key can only fold to a name of its length; other keys
		// may (the Kelvin sign folds to k).
		if (!ascii || len(key) == len(n)) && strings.EqualFold(key, n) {
			return n
		}
	}
	return ""
}

var (
	requestKeys = []string{"engine", "profile", "turn", "trigger", "deadlineSeconds", "idleSeconds", "contextWindow",
		"thresholdTokens", "envelopeTokens", "surface", "plan", "wait", "cacheModel", "prediction"}
	unitKeys      = []string{"id", "tokens", "kind", "breakpoint"}
	planKeys      = []string{"prune", "summarize"}
	pruneKeys     = []string{"id", "tokensAfter"}
	summarizeKeys = []string{"start", "end", "estimatedTokens", "instructionTokens", "restoredTokens", "sameFamily"}
)

func (d *decoder) request(r *RewriteRequest) error {
	root := path{index: -1}
	if d.peek() != '{' {
		if d.peek() == 0 {
			return d.syntax(root, "empty body")
		}
		return fieldErr(root, "must be a JSON object")
	}
	d.i++
	var hasTrigger, hasEnvelope, hasSurface, hasPlan bool
	for first := true; ; first = false {
		key, done, err := d.key(root, first)
		if err != nil {
			return err
		}
		if done {
			break
		}
		name := match(key, requestKeys...)
		p := field(name)
		if null, err := d.null(p); err != nil {
			return err
		} else if null {
			// null leaves a value as it was and clears a list or pointer,
			// as encoding/json does.
			switch name {
			case "surface":
				r.Surface, hasSurface = nil, false
			case "wait":
				r.Wait = nil
			case "cacheModel":
				r.CacheModel = json.RawMessage("null")
			case "prediction":
				r.Prediction = nil
			}
			continue
		}
		switch name {
		case "engine":
			r.Engine, err = d.str(p)
		case "profile":
			r.Profile, err = d.str(p)
		case "trigger":
			r.Trigger, err = d.str(p)
			hasTrigger = true
		case "turn":
			switch c := d.peek(); {
			case c == '"':
				r.Turn, err = d.str(p)
			case c == '-' || c >= '0' && c <= '9':
				r.Turn, err = d.number(p, "a string or a number")
			default:
				err = d.typeErr(p, "a string or a number")
			}
		case "deadlineSeconds":
			r.DeadlineSeconds, err = d.float(p)
		case "idleSeconds":
			r.IdleSeconds, err = d.float(p)
		case "contextWindow":
			r.ContextWindow, err = d.int64(p)
		case "thresholdTokens":
			r.ThresholdTokens, err = d.int64(p)
		case "envelopeTokens":
			r.EnvelopeTokens, err = d.int64(p)
			hasEnvelope = true
		case "wait":
			var lit string
			if lit, err = d.number(p, "an integer"); err == nil {
				var v int64
				if v, err = strconv.ParseInt(lit, 10, strconv.IntSize); err != nil {
					err = fieldErr(p, "must be an integer, not "+lit)
				} else {
					if r.Wait == nil {
						r.Wait = new(int)
					}
					*r.Wait = int(v)
				}
			}
		case "cacheModel":
			if d.peek() != '{' {
				return d.typeErr(p, "an object of pricing keys")
			}
			start := d.i
			if err = d.skip(p, 1); err == nil {
				r.CacheModel = json.RawMessage(d.s[start:d.i])
			}
		case "prediction":
			// Small and rare: encoding/json decodes it, then it is checked.
			if d.peek() != '{' {
				return d.typeErr(p, "a prediction object")
			}
			start := d.i
			if err = d.skip(p, 1); err == nil {
				if r.Prediction == nil {
					r.Prediction = new(ColdPrediction)
				}
				if jerr := json.Unmarshal([]byte(d.s[start:d.i]), r.Prediction); jerr != nil {
					var te *json.UnmarshalTypeError
					if errors.As(jerr, &te) {
						return fieldErr(p.child(te.Field), "must be a "+jsonKind(te.Type.String()))
					}
					return fieldErr(p, jerr.Error())
				}
			}
		case "surface":
			err = d.surface(r, p)
			hasSurface = true
		case "plan":
			err = d.plan(&r.Plan, p)
			hasPlan = true
		default:
			err = d.skip(field(key), 1)
		}
		if err != nil {
			return err
		}
	}
	if d.ws(); d.i < len(d.s) {
		return d.syntax(root, "data after the top-level object")
	}
	switch {
	case !hasTrigger:
		return fieldErr(field("trigger"), "is required")
	case !hasEnvelope:
		return fieldErr(field("envelopeTokens"), "is required")
	case !hasSurface:
		return fieldErr(field("surface"), "is required")
	case !hasPlan:
		return fieldErr(field("plan"), "is required")
	}
	switch r.Trigger {
	case TriggerPressure, TriggerContextOverflow, TriggerManual:
	default:
		return fieldErr(field("trigger"), fmt.Sprintf("must be one of %q, %q, %q, not %q", TriggerPressure, TriggerContextOverflow, TriggerManual, r.Trigger))
	}
	if r.Prediction != nil {
		return r.Prediction.check(field("prediction"))
	}
	return nil
}

// surface decodes the hot array in place, reusing earlier elements exactly as
// encoding/json does when a key repeats.
func (d *decoder) surface(r *RewriteRequest, p path) error {
	if d.peek() != '[' {
		return d.typeErr(p, "an array of units")
	}
	d.i++
	units := r.Surface
	if units == nil {
		// Size the list once: at most one unit per '{' left in the body
		// (a vectorized count), and at least 24 bytes per unit.
		rest := d.s[d.i:]
		units = make([]pricing.Unit, 0, min(strings.Count(rest, "{"), len(rest)/24+1))
	}
	i := 0
	for first := true; ; first = false {
		done, err := d.next(p, first)
		if err != nil {
			return err
		}
		if done {
			break
		}
		if i < cap(units) {
			units = units[:i+1]
		} else {
			units = append(units[:i], pricing.Unit{})
		}
		if !d.fastUnit(&units[i]) {
			if err := d.unit(&units[i], p, i); err != nil {
				return err
			}
		}
		i++
	}
	if i == 0 {
		units = []pricing.Unit{}
	}
	r.Surface = units[:i]
	return nil
}

// fastUnit decodes the common shape of a unit — ASCII keys spelled as
// documented, unescaped strings, plain integers, unknown keys with plain
// string values — with the body and position in registers. On anything else
// it returns false and leaves d.i alone; unit then decodes the same object
// the general way (re-setting the same fields to the same values).
func (d *decoder) fastUnit(u *pricing.Unit) bool {
	s, j := d.s, d.i
	if j >= len(s) || s[j] != '{' {
		return false
	}
	j++
	var hasID, hasTokens bool
	for {
		for j < len(s) && (s[j] == ' ' || s[j] == '\n' || s[j] == '\t' || s[j] == '\r') {
			j++
		}
		if j >= len(s) || s[j] != '"' {
			return false
		}
		j++
		k := j
		for j < len(s) && byteClass[s[j]] == plain {
			j++
		}
		if j >= len(s) || s[j] != '"' {
			return false
		}
		key := s[k:j]
		j++
		for j < len(s) && (s[j] == ' ' || s[j] == '\n' || s[j] == '\t' || s[j] == '\r') {
			j++
		}
		if j >= len(s) || s[j] != ':' {
			return false
		}
		j++
		for j < len(s) && (s[j] == ' ' || s[j] == '\n' || s[j] == '\t' || s[j] == '\r') {
			j++
		}
		if j >= len(s) {
			return false
		}
		switch key {
		case "tokens":
			k := j
			var v int64
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				v = v*10 + int64(s[j]-'0')
				j++
			}
			if n := j - k; n == 0 || n > 18 || (n > 1 && s[k] == '0') ||
				(j < len(s) && (s[j] == '.' || s[j] == 'e' || s[j] == 'E')) {
				return false
			}
			u.Tokens, hasTokens = v, true
		case "breakpoint":
			switch {
			case strings.HasPrefix(s[j:], "true"):
				u.Breakpoint, j = true, j+4
			case strings.HasPrefix(s[j:], "false"):
				u.Breakpoint, j = false, j+5
			default:
				return false
			}
		default:
			if s[j] != '"' {
				return false
			}
			j++
			k := j
			for j < len(s) && byteClass[s[j]] == plain {
				j++
			}
			if j >= len(s) || s[j] != '"' {
				return false
			}
			switch key {
			case "id":
				u.ID, hasID = s[k:j], true
			case "kind":
				u.Kind = s[k:j]
			default:
				if match(key, unitKeys...) != "" {
					return false // a folded spelling of a known key
				}
			}
			j++
		}
		for j < len(s) && (s[j] == ' ' || s[j] == '\n' || s[j] == '\t' || s[j] == '\r') {
			j++
		}
		if j >= len(s) {
			return false
		}
		if s[j] == '}' {
			if !hasID || !hasTokens {
				return false
			}
			d.i = j + 1
			return true
		}
		if s[j] != ',' {
			return false
		}
		j++
	}
}

func (d *decoder) unit(u *pricing.Unit, list path, i int) error {
	if d.peek() != '{' {
		return d.typeErr(path{parent: "surface", index: i}, "a unit object")
	}
	d.i++
	var hasID, hasTokens bool
	for first := true; ; first = false {
		key, done, err := d.key(list, first)
		if err != nil {
			return err
		}
		if done {
			break
		}
		// Exact keys first: this switch is the decoder's hottest line.
		name := key
		switch key {
		case "id", "tokens", "kind", "breakpoint":
		default:
			name = match(key, unitKeys...)
		}
		if name == "" {
			if err := d.skip(list, 3); err != nil {
				return err
			}
			continue
		}
		if null, err := d.null(list); err != nil {
			return err
		} else if null {
			continue
		}
		fp := path{parent: "surface", index: i, name: name} // built into a string only on error
		switch name {
		case "id":
			u.ID, err = d.str(fp)
			hasID = true
		case "tokens":
			u.Tokens, err = d.int64(fp)
			hasTokens = true
		case "kind":
			u.Kind, err = d.str(fp)
		case "breakpoint":
			u.Breakpoint, err = d.bool(fp)
		}
		if err != nil {
			return err
		}
	}
	if !hasID {
		return fieldErr(path{parent: "surface", index: i, name: "id"}, "is required")
	}
	if !hasTokens {
		return fieldErr(path{parent: "surface", index: i, name: "tokens"}, "is required")
	}
	return nil
}

func (d *decoder) plan(pl *pricing.Plan, p path) error {
	if d.peek() != '{' {
		return d.typeErr(p, "an object")
	}
	d.i++
	for first := true; ; first = false {
		key, done, err := d.key(p, first)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		name := match(key, planKeys...)
		if name == "" {
			if err := d.skip(p, 2); err != nil {
				return err
			}
			continue
		}
		fp := p.child(name)
		if null, err := d.null(fp); err != nil {
			return err
		} else if null {
			if name == "prune" {
				pl.Prune = nil
			} else {
				pl.Summarize = nil
			}
			continue
		}
		if name == "prune" {
			err = d.prunes(pl, fp)
		} else {
			if d.peek() != '{' {
				return d.typeErr(fp, "an object")
			}
			if pl.Summarize == nil {
				pl.Summarize = new(pricing.SummaryPlan)
			}
			err = d.summarize(pl.Summarize, fp)
		}
		if err != nil {
			return err
		}
	}
}

func (d *decoder) prunes(pl *pricing.Plan, p path) error {
	if d.peek() != '[' {
		return d.typeErr(p, "an array")
	}
	d.i++
	list := pl.Prune
	i := 0
	for first := true; ; first = false {
		done, err := d.next(p, first)
		if err != nil {
			return err
		}
		if done {
			break
		}
		if i < cap(list) {
			list = list[:i+1]
		} else {
			list = append(list[:i], pricing.Prune{})
		}
		ep := path{parent: "plan.prune", index: i}
		if d.peek() != '{' {
			return d.typeErr(ep, "a prune object")
		}
		d.i++
		var hasID, hasAfter bool
		for first := true; ; first = false {
			key, done, err := d.key(ep, first)
			if err != nil {
				return err
			}
			if done {
				break
			}
			name := match(key, pruneKeys...)
			if name == "" {
				if err := d.skip(ep, 4); err != nil {
					return err
				}
				continue
			}
			fp := path{parent: "plan.prune", index: i, name: name}
			if null, err := d.null(fp); err != nil {
				return err
			} else if null {
				continue
			}
			if name == "id" {
				list[i].ID, err = d.str(fp)
				hasID = true
			} else {
				list[i].TokensAfter, err = d.int64(fp)
				hasAfter = true
			}
			if err != nil {
				return err
			}
		}
		if !hasID {
			return fieldErr(path{parent: "plan.prune", index: i, name: "id"}, "is required")
		}
		if !hasAfter {
			return fieldErr(path{parent: "plan.prune", index: i, name: "tokensAfter"}, "is required")
		}
		i++
	}
	if i == 0 {
		list = []pricing.Prune{}
	}
	pl.Prune = list[:i]
	return nil
}

func (d *decoder) summarize(s *pricing.SummaryPlan, p path) error {
	d.i++ // '{', checked by the caller
	var hasStart, hasEnd bool
	for first := true; ; first = false {
		key, done, err := d.key(p, first)
		if err != nil {
			return err
		}
		if done {
			break
		}
		name := match(key, summarizeKeys...)
		if name == "" {
			if err := d.skip(p, 3); err != nil {
				return err
			}
			continue
		}
		fp := p.child(name)
		if null, err := d.null(fp); err != nil {
			return err
		} else if null {
			if name == "sameFamily" {
				s.SameFamily = nil
			}
			continue
		}
		switch name {
		case "start":
			s.Start, err = d.str(fp)
			hasStart = true
		case "end":
			s.End, err = d.str(fp)
			hasEnd = true
		case "estimatedTokens":
			s.EstimatedTokens, err = d.int64(fp)
		case "instructionTokens":
			s.InstructionTokens, err = d.int64(fp)
		case "restoredTokens":
			s.RestoredTokens, err = d.int64(fp)
		case "sameFamily":
			var v bool
			if v, err = d.bool(fp); err == nil {
				if s.SameFamily == nil {
					s.SameFamily = new(bool)
				}
				*s.SameFamily = v
			}
		}
		if err != nil {
			return err
		}
	}
	if !hasStart {
		return fieldErr(p.child("start"), "is required")
	}
	if !hasEnd {
		return fieldErr(p.child("end"), "is required")
	}
	return nil
}
