// Package cctooltest is encoding/json's reading of Claude Code's file tools'
// inputs and results, the reference that the in-place decoders (cctool's,
// and the tracer's in cclog) are held to in their tests, written once. It
// imports neither, so that cctool's own tests can import it. Only tests
// import it.
package cctooltest

import (
	"bytes"
	"encoding/json"
	"strings"
)

// FileToolInput is a file tool's input (Read, Write, Edit, MultiEdit,
// ExitPlanMode) as encoding/json decodes it.
type FileToolInput struct {
	FilePath   string `json:"file_path"`
	Content    string `json:"content"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
	Plan       string `json:"plan"`
	Edits      []struct {
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	} `json:"edits"`
}

// FileToolResult is a file tool's result (a line's toolUseResult) as
// encoding/json decodes it; a nil field is one the result does not hold.
type FileToolResult struct {
	File *struct {
		Content    string `json:"content"`
		StartLine  int    `json:"startLine"`
		NumLines   int    `json:"numLines"`
		TotalLines int    `json:"totalLines"`
	} `json:"file"`
	Content      *string `json:"content"`
	OriginalFile *string `json:"originalFile"`
}

// FoldedKey says a JSON text has a string (a key, or a value: skipping
// those too costs nothing) that encoding/json would take for a field of
// FileToolInput or FileToolResult spelled otherwise ("File_Path" for
// file_path), which the decoders, like every other reader of the importer,
// do not: a fuzz test skips such texts.
func FoldedKey(b []byte) bool {
	fields := []string{"file_path", "content", "old_string", "new_string", "replace_all", "plan", "edits",
		"file", "startLine", "numLines", "totalLines", "originalFile"}
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if v, ok := tok.(string); ok {
			for _, f := range fields {
				if v != f && strings.EqualFold(v, f) {
					return true
				}
			}
		}
	}
}
