package harness

import (
	"strings"
	"testing"

	"tollgate/app/home"
	"tollgate/guard/api"
)

// isolate gives a test an empty registry and puts the real one back after.
func isolate(t *testing.T) {
	saved := registered
	registered = map[string]*Integration{}
	t.Cleanup(func() { registered = saved })
}

func fake(name string, order int, aliases ...string) Integration {
	return Integration{Name: name, Order: order, Aliases: aliases, Status: func(home.Probe) api.Integration { return api.Integration{Name: name} }}
}

// Registered lists by Order, then name; Lookup finds a name or an alias;
// the label defaults to the name and the title to the label.
func TestRegisteredInOrder(t *testing.T) {
	isolate(t)
	Register(fake("b", 20))
	Register(fake("c", 10, "see"))
	Register(fake("a", 20))
	var names []string
	for _, in := range Registered() {
		names = append(names, in.Name)
	}
	if strings.Join(names, " ") != "c a b" {
		t.Fatal(names)
	}
	if in, ok := Lookup("see"); !ok || in.Name != "c" || in.Label != "c" || in.Title != "c" {
		t.Fatalf("%+v %v", in, ok)
	}
	labelled := fake("d", 30)
	labelled.Label, labelled.About, labelled.Setup = "Dee", "d's text", "d --install"
	Register(labelled)
	if in, _ := Lookup("d"); in.Title != "Dee" {
		t.Fatalf("title %q, want the label", in.Title)
	}
	if _, ok := Lookup("e"); ok {
		t.Fatal("an unknown name was found")
	}
	list := IntegrationsFor(home.Probe{Home: t.TempDir(), Getenv: func(string) string { return "" }})
	if len(list) != 4 || list[0].Name != "c" {
		t.Fatalf("%+v", list)
	}
	// Each entry carries the registry's label and the Integrations page's texts.
	if d := list[3]; d.Label != "Dee" || d.Title != "Dee" || d.About != "d's text" || d.Setup != "d --install" {
		t.Fatalf("%+v", d)
	}
}

// A second registration of a name or an alias, a bad name or no Status is a
// program error.
func TestRegisterPanics(t *testing.T) {
	isolate(t)
	Register(fake("a", 1, "alpha"))
	for _, in := range []Integration{fake("a", 2), fake("b", 2, "alpha"), fake("alpha", 3), fake("", 1), fake("x y", 1), {Name: "z"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%q registered", in.Name)
				}
			}()
			Register(in)
		}()
	}
}
