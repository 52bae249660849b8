package pricing

import (
	"fmt"
	"testing"
)

func TestGrowth(t *testing.T) {
	for _, c := range []struct {
		envelope int64
		prompts  []int64
		want     string
		covered  int64
	}{
		{0, nil, "", 0},
		{100, []int64{100, 150, 150, 400}, "1:50 3:250 ", 400},
		{500, []int64{300, 600}, "1:100 ", 600},  // a prompt below the envelope adds nothing
		{0, []int64{10, 5, 12}, "0:10 2:2 ", 12}, // cleared content: no unit, the next growth from the high mark
	} {
		got := ""
		covered := Growth(c.envelope, c.prompts, func(i int, tokens int64) { got += fmt.Sprintf("%d:%d ", i, tokens) })
		if got != c.want || covered != c.covered {
			t.Errorf("Growth(%d, %v) = %q, %d; want %q, %d", c.envelope, c.prompts, got, covered, c.want, c.covered)
		}
	}
}

func ExampleGrowth() {
	prompts := []int64{12_000, 15_000, 15_000, 21_000}
	covered := Growth(12_000, prompts, func(i int, tokens int64) {
		fmt.Printf("request %d adds %d tokens\n", i, tokens)
	})
	fmt.Println("covered", covered)
	// Output:
	// request 1 adds 3000 tokens
	// request 3 adds 6000 tokens
	// covered 21000
}
