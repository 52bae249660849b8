// Package cctool decodes what the Claude Code fold predictor reads of a
// file tool's use: the input of Read, Write, Edit, MultiEdit and
// ExitPlanMode, and the toolUseResult of the transcript line that answers
// it. It walks the JSON in place with the importer's scanner and decodes
// only those fields (a result's structuredPatch, often as large as the
// file, is skipped unread), as encoding/json would decode them into the
// same fields: app/importer's FuzzFileOp holds the two to the same results.
// A file's text (a Read's, a Write's, an Edit's original) is a jsonl.Text:
// validated and measured here, decoded only when the predictor applies an
// edit to it or restores the file.
package cctool

import (
	"strconv"

	"tollgate/app/importer/jsonl"
)

// Edit is one old → new replacement of an Edit or MultiEdit input.
type Edit struct {
	Old, New   string
	ReplaceAll bool
}

// Input is what the predictor reads of a file tool's input.
type Input struct {
	FilePath, OldString, NewString string
	Content                        jsonl.Text // a Write's text
	ReplaceAll                     bool
	PlanLen                        int // a plan's length (ExitPlanMode)
	Edits                          []Edit
}

// DecodeInput reads a file tool's input; false when it is not an
// object of the expected field types.
func DecodeInput(b []byte) (Input, bool) {
	var in Input
	s := jsonl.Scanner{B: b}
	// As encoding/json does: null leaves a field as it was.
	str := func(p *string) {
		if !s.IsNull() {
			*p = s.Str()
		}
	}
	boolean := func(p *bool) {
		if !s.IsNull() {
			*p = s.Boolean()
		}
	}
	s.Object(func(k []byte) {
		switch string(k) {
		case "file_path":
			str(&in.FilePath)
		case "content":
			if !s.IsNull() {
				in.Content = s.Text()
			}
		case "old_string":
			str(&in.OldString)
		case "new_string":
			str(&in.NewString)
		case "replace_all":
			boolean(&in.ReplaceAll)
		case "plan":
			if !s.IsNull() {
				in.PlanLen = s.Text().Len()
			}
		case "edits":
			if s.IsNull() {
				in.Edits = nil
				return
			}
			if s.Peek() != '[' {
				s.Fail("edits: want an array")
				return
			}
			in.Edits = in.Edits[:0]
			eachValue(&s, func() {
				var e Edit
				if !s.IsNull() {
					s.Object(func(k []byte) {
						switch string(k) {
						case "old_string":
							str(&e.Old)
						case "new_string":
							str(&e.New)
						case "replace_all":
							boolean(&e.ReplaceAll)
						default:
							s.Skip()
						}
					})
				}
				in.Edits = append(in.Edits, e)
			})
		default:
			s.Skip()
		}
	})
	s.End()
	return in, s.Err == nil
}

// Result is what the predictor reads of a file tool's toolUseResult.
type Result struct {
	HasFile                         bool // a Read's file object
	FileContent                     jsonl.Text
	StartLine, NumLines, TotalLines int
	Content, OriginalFile           jsonl.Text // a Write's text, an Edit's file before it
	HasContent, HasOriginal         bool
}

// DecodeResult reads a file tool's result object; false when a field
// it reads has another type.
func DecodeResult(b []byte) (Result, bool) {
	s := jsonl.Scanner{B: b}
	r, ok := ReadResult(&s, jsonl.Text{})
	s.End()
	return r, ok && s.Err == nil
}

// ReadResult reads a file tool's result object where s stands, in its
// line: the tracer decodes it in place instead of finding its end first.
// false when it is not an object of the expected field types (s.Err
// then says where); s then stands anywhere inside the value. prev is the
// file's text as the trace last saw it (zero: none): its texts are read
// against it (jsonl.Scanner.TextAfter), the same texts either way.
func ReadResult(s *jsonl.Scanner, prev jsonl.Text) (Result, bool) {
	var r Result
	integer := func(p *int) {
		if s.IsNull() {
			return
		}
		if c := s.Peek(); c != '-' && (c < '0' || c > '9') {
			s.Fail("want an integer")
			return
		}
		text := s.Number()
		if s.Err != nil {
			return
		}
		n, err := strconv.Atoi(string(text))
		if err != nil {
			s.Fail("want an integer, found %s", text)
		}
		*p = n
	}
	s.Object(func(k []byte) {
		switch string(k) {
		case "file":
			if s.IsNull() {
				// A null pointer: a later "file" object starts from zero.
				r.HasFile, r.FileContent, r.StartLine, r.NumLines, r.TotalLines = false, jsonl.Text{}, 0, 0, 0
				return
			}
			r.HasFile = true
			s.Object(func(k []byte) {
				switch string(k) {
				case "content":
					if !s.IsNull() {
						r.FileContent = s.TextAfter(prev)
					}
				case "startLine":
					integer(&r.StartLine)
				case "numLines":
					integer(&r.NumLines)
				case "totalLines":
					integer(&r.TotalLines)
				default:
					s.Skip()
				}
			})
		case "content":
			if s.IsNull() {
				r.Content, r.HasContent = jsonl.Text{}, false
			} else {
				r.Content, r.HasContent = s.TextAfter(prev), true
			}
		case "originalFile":
			if s.IsNull() {
				r.OriginalFile, r.HasOriginal = jsonl.Text{}, false
			} else {
				r.OriginalFile, r.HasOriginal = s.TextAfter(prev), true
			}
		default:
			s.Skip()
		}
	})
	return r, s.Err == nil
}

// eachValue walks an array, calling elem for every element (elem must
// consume it).
func eachValue(s *jsonl.Scanner, elem func()) { s.Elems("an array", elem) }
