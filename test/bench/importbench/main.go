// Command importbench is `make bench-import`: it builds a Claude Code
// corpus from the real transcripts of the shared data folder (corpus.go),
// then imports it with `tollgate import --harness claude-code` into a fresh
// home and reads it with the pinned ccusage (`ccusage session --json
// --offline`, which parses and stores nothing), alternating, and prints the
// medians of wall time, CPU, system time and peak RSS, tollgate's throughput
// as a multiple of ccusage's, both programs' total cost, and the time of a
// second import of the unchanged corpus. With -scale N it also imports a
// corpus N times as large, alternating with the 1× one, to show how time
// and memory grow.
//
// The machine may be shared: only ratios measured in one run, side by
// side, mean anything.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	_ "github.com/mattn/go-sqlite3" // the digest of stored rows reads both databases

	"tollgate/storage/sqlite"
)

func main() {
	data := flag.String("data", "../shared/data", "the shared real-data `folder` (claude-code/ inside)")
	tollgate := flag.String("tollgate", "build/bin/tollgate", "the tollgate `binary`")
	ccusage := flag.String("ccusage", "test/bench/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage", "the ccusage `binary` (pinned in test/bench/package.json)")
	work := flag.String("work", "build/bench-import", "`folder` for the corpora and the homes (rebuilt)")
	targetMB := flag.Float64("mb", 294, "size of the 1× corpus in `MB` (whole copies of the sources)")
	scale := flag.Int("scale", 1, "also import a corpus this many `times` the 1× one (1: only the 1× corpus)")
	runs := flag.Int("runs", 3, "runs of each program")
	compare := flag.String("compare", "", "another tollgate `binary` (e.g. built from main) whose import of the 1× corpus must store the same rows")
	flag.Parse()
	if err := run(context.Background(), *data, *tollgate, *ccusage, *work, *targetMB, *scale, *runs, *compare); err != nil {
		fmt.Fprintln(os.Stderr, "importbench:", err)
		os.Exit(1)
	}
}

// measure is one run of a program.
type measure struct {
	Wall, CPU, Sys time.Duration
	RSS            int64 // peak, bytes
}

func runMeasured(ctx context.Context, env []string, stdout *bytes.Buffer, name string, args ...string) (measure, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return measure{}, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return measure{}, errors.New("no rusage on this system")
	}
	user := time.Duration(ru.Utime.Nano())
	sys := time.Duration(ru.Stime.Nano())
	return measure{Wall: wall, CPU: user + sys, Sys: sys, RSS: ru.Maxrss * 1024}, nil
}

func median(ms []measure) measure {
	pick := func(f func(measure) int64) int64 {
		v := make([]int64, len(ms))
		for i, m := range ms {
			v[i] = f(m)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return measure{
		Wall: time.Duration(pick(func(m measure) int64 { return int64(m.Wall) })),
		CPU:  time.Duration(pick(func(m measure) int64 { return int64(m.CPU) })),
		Sys:  time.Duration(pick(func(m measure) int64 { return int64(m.Sys) })),
		RSS:  pick(func(m measure) int64 { return m.RSS }),
	}
}

type corpus struct {
	root  string
	stats corpusStats
}

func (c corpus) projects() string { return filepath.Join(c.root, ".claude", "projects") }

func run(ctx context.Context, data, tollgate, ccusage, work string, targetMB float64, scale, runs int, compare string) error {
	for _, p := range []string{tollgate, ccusage} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%w (make bench-import builds and installs it)", err)
		}
	}
	sources, err := loadSources(data)
	if err != nil {
		return err
	}
	var unit int64
	for _, s := range sources {
		unit += int64(len(s.data))
	}
	copies := max(int(math.Round(targetMB*1e6/float64(unit))), 1)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	work, _ = filepath.Abs(work)
	one := corpus{root: filepath.Join(work, "corpus-1x")}
	if one.stats, err = writeCorpus(one.root, sources, copies); err != nil {
		return err
	}
	fmt.Printf("corpus 1×: %d source files (%d main transcripts) copied %d times: %d files, %.1f MB\n",
		len(sources), countMain(sources), copies, one.stats.Files, float64(one.stats.Bytes)/1e6)
	var big corpus
	if scale > 1 {
		big = corpus{root: filepath.Join(work, fmt.Sprintf("corpus-%dx", scale))}
		if big.stats, err = writeCorpus(big.root, sources, copies*scale); err != nil {
			return err
		}
		fmt.Printf("corpus %d×: %d files, %.1f MB\n", scale, big.stats.Files, float64(big.stats.Bytes)/1e6)
	}

	importInto := func(c corpus, home string) (measure, string, error) {
		if err := os.RemoveAll(home); err != nil {
			return measure{}, "", err
		}
		var out bytes.Buffer
		m, err := runMeasured(ctx, nil, &out, tollgate, "import", "--home", home, "--harness", "claude-code", c.projects())
		return m, strings.TrimSpace(out.String()), err
	}
	readCCUsage := func(c corpus) (measure, []byte, error) {
		var out bytes.Buffer
		m, err := runMeasured(ctx, []string{"HOME=" + c.root, "CLAUDE_CONFIG_DIR=" + filepath.Join(c.root, ".claude")}, &out,
			ccusage, "session", "--json", "--offline")
		return m, out.Bytes(), err
	}

	var tg, cc, tgBig, other []measure
	otherHome := filepath.Join(work, "home-compare")
	var tgSummary string
	var ccOut []byte
	home := filepath.Join(work, "home")
	for i := range runs {
		m, summary, err := importInto(one, home)
		if err != nil {
			return err
		}
		tg, tgSummary = append(tg, m), summary
		mc, out, err := readCCUsage(one)
		if err != nil {
			return err
		}
		cc, ccOut = append(cc, mc), out
		if compare != "" {
			if err := os.RemoveAll(otherHome); err != nil {
				return err
			}
			var out bytes.Buffer
			mo, err := runMeasured(ctx, nil, &out, compare, "import", "--home", otherHome, "--harness", "claude-code", one.projects())
			if err != nil {
				return err
			}
			other = append(other, mo)
		}
		if scale > 1 {
			mb, _, err := importInto(big, filepath.Join(work, "home-big"))
			if err != nil {
				return err
			}
			tgBig = append(tgBig, mb)
		}
		fmt.Printf("run %d: tollgate %v, ccusage %v\n", i+1, m.Wall.Round(time.Millisecond), mc.Wall.Round(time.Millisecond))
	}
	fmt.Println("tollgate:", tgSummary)

	// The home holds the last fresh import: import the unchanged corpus again.
	var again []measure
	for range runs {
		var out bytes.Buffer
		m, err := runMeasured(ctx, nil, &out, tollgate, "import", "--home", home, "--harness", "claude-code", one.projects())
		if err != nil {
			return err
		}
		again = append(again, m)
	}

	tgCost, tgRequests, err := tollgateTotal(ctx, filepath.Join(home, "tollgate.db"))
	if err != nil {
		return err
	}
	ccCost, err := ccusageTotal(ccOut)
	if err != nil {
		return err
	}

	t, c, a := median(tg), median(cc), median(again)
	fmt.Printf("\n%d runs each, alternating; medians\n\n", runs)
	fmt.Printf("| %-62s | %8s | %8s | %8s | %9s |\n", "", "wall", "CPU", "sys", "peak RSS")
	fmt.Printf("|%s|%s|%s|%s|%s|\n", strings.Repeat("-", 64), strings.Repeat("-", 10), strings.Repeat("-", 10), strings.Repeat("-", 10), strings.Repeat("-", 11))
	row := func(name string, m measure) {
		fmt.Printf("| %-62s | %7.2fs | %7.2fs | %7.2fs | %6d MB |\n", name, m.Wall.Seconds(), m.CPU.Seconds(), m.Sys.Seconds(), m.RSS>>20)
	}
	row("`tollgate import --harness claude-code` into a fresh home", t)
	row("`ccusage session --json --offline` (parses, stores nothing)", c)
	row("`tollgate import` again, corpus unchanged", a)
	if compare != "" {
		row("-compare "+filepath.Base(compare)+": `import` into a fresh home", median(other))
	}
	if scale > 1 {
		row(fmt.Sprintf("`tollgate import` of the %d× corpus into a fresh home", scale), median(tgBig))
	}
	fmt.Println()
	fmt.Printf("throughput: tollgate %.2f× ccusage's (ccusage wall / tollgate wall; target ≥ 1.0)\n", c.Wall.Seconds()/t.Wall.Seconds())
	fmt.Printf("CPU: ccusage's is %.2f× tollgate's (less sensitive to a busy machine than wall time)\n", c.CPU.Seconds()/t.CPU.Seconds())
	fmt.Printf("peak RSS: tollgate %.2f× ccusage's (target ≤ 1.0)\n", float64(t.RSS)/float64(c.RSS))
	fmt.Printf("second import: %.1f%% of the first (target ≤ 5%%)\n", 100*a.Wall.Seconds()/t.Wall.Seconds())
	if scale > 1 {
		b := median(tgBig)
		fmt.Printf("%d× corpus: %.2f× the time (target ≤ %.1f×), peak RSS %.2f× the 1× import's\n",
			scale, b.Wall.Seconds()/t.Wall.Seconds(), float64(scale)*1.1, float64(b.RSS)/float64(t.RSS))
	}
	fmt.Printf("total cost: tollgate $%.2f (%d requests), ccusage $%.2f", tgCost, tgRequests, ccCost)
	if math.Round(tgCost*100) == math.Round(ccCost*100) {
		fmt.Println(" — they agree to the cent")
	} else {
		fmt.Printf(" — they differ by $%.2f\n", tgCost-ccCost)
	}
	if compare != "" {
		o := median(other)
		fmt.Printf("this tollgate's import takes %.2f× the wall time and %.2f× the CPU of %s's\n", t.Wall.Seconds()/o.Wall.Seconds(), t.CPU.Seconds()/o.CPU.Seconds(), compare)
		a, err := storedRows(filepath.Join(home, "tollgate.db"))
		if err != nil {
			return err
		}
		b, err := storedRows(filepath.Join(otherHome, "tollgate.db"))
		if err != nil {
			return err
		}
		if a != b {
			return fmt.Errorf("the rows differ from %s's:\n  this  %s\n  other %s", compare, a, b)
		}
		fmt.Printf("stored rows identical to %s's: %s\n", compare, a)
	}
	return nil
}

// storedRows digests what an import stored: every request with its
// figures and ledger fields, every fold with its prediction, every break.
// Ids the import makes up (row ids, import times) are left out.
func storedRows(path string) (string, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return "", err
	}
	defer db.Close()
	var parts []string
	for _, q := range []struct{ name, sql string }{
		{"requests", `SELECT session_id, request_id, seq, at, purpose, model, input, cache_read, cache_write, cache_write_1h, output,
			cost_usd, prices, thread, started_by, cache_ttl FROM requests ORDER BY session_id, seq`},
		{"folds", `SELECT id, session_id, seq, predicted_cold, predicted_cold_low, predicted_cold_high, actual_cold, actual_seq, summary_input
			FROM rewrites ORDER BY id`},
		{"breaks", `SELECT * FROM breaks ORDER BY session_id, seq`},
	} {
		rows, err := db.Query(q.sql)
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		cols, _ := rows.Columns()
		h := sha256.New()
		n := 0
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return "", err
			}
			fmt.Fprintf(h, "%v\n", vals)
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return "", err
		}
		parts = append(parts, fmt.Sprintf("%d %s (sha256 %x)", n, q.name, h.Sum(nil)[:6]))
	}
	return strings.Join(parts, ", "), nil
}

func countMain(sources []sourceFile) int {
	n := 0
	for _, s := range sources {
		if s.rel == "{S}.jsonl" {
			n++
		}
	}
	return n
}

// tollgateTotal sums the cost of every request the import stored.
func tollgateTotal(ctx context.Context, path string) (float64, int, error) {
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	totals, err := db.Totals(ctx)
	if err != nil {
		return 0, 0, err
	}
	var cost float64
	var n int
	for _, t := range totals {
		cost += t.CostUSD
		n += int(t.Requests)
	}
	return cost, n, nil
}

// ccusageTotal reads the total cost from `ccusage session --json`.
func ccusageTotal(out []byte) (float64, error) {
	var doc struct {
		Totals struct {
			TotalCost *float64 `json:"totalCost"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return 0, fmt.Errorf("ccusage output: %w", err)
	}
	if doc.Totals.TotalCost == nil {
		return 0, fmt.Errorf("ccusage output has no totals.totalCost: %.200s", out)
	}
	return *doc.Totals.TotalCost, nil
}
