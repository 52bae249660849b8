// Command fakeprovider serves the end-to-end tests' fake model provider on
// its own, for looking at what a harness sends: it prints its URL and, with
// -dump DIR, writes every request body there.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"

	"tollgate/test/harness"
)

func main() {
	dump := flag.String("dump", "", "write every request body into `DIR`")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	p, err := harness.StartProvider(log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeprovider:", err)
		os.Exit(1)
	}
	p.DumpDir = *dump
	fmt.Println(p.URL)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	<-sigs
	p.Close()
}
