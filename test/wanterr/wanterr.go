// Package wanterr checks the error a table test's case expects where a
// room's validation errors have a type of their own (pricing's and
// guard/api's *FieldError). It imports no room of the module, so that the
// tests of any room, pricing the lowest, can import it. Only tests import
// it.
package wanterr

import (
	"errors"
	"testing"
)

// Typed fails t unless err is what a case wants: for want "" no error, for
// any other want an error that reads want and in whose chain errors.As finds
// an E. It reports whether an error was wanted, after which the case has
// nothing more to check.
func Typed[E error](t testing.TB, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	var typed E
	if err == nil || err.Error() != want || !errors.As(err, &typed) {
		t.Fatalf("err = %v, want %T %q", err, typed, want)
	}
	return true
}
