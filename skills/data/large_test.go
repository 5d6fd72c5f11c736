package data

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

const largeRows = 200_000

// largeTable generates a conforming PK-like table of n rows, with three
// violations planted at known rows: a negative concentration at row 1000, an
// unknown sex at row 150000, and row 199999 repeating row 1's key.
func largeTable(n int) string {
	var b strings.Builder
	b.Grow(n * 32)
	b.WriteString("id,time_h,conc,sex\n")
	for i := 1; i <= n; i++ {
		id, conc, sex := i, fmt.Sprintf("%d.%02d", i%17, i%100), "F"
		if i%2 == 0 {
			sex = "M"
		}
		switch i {
		case 1000:
			conc = "-1.5"
		case 150000:
			sex = "X"
		case 199999:
			id = 1
		}
		fmt.Fprintf(&b, "%d,%d,%s,%s\n", id, i%24, conc, sex)
	}
	return b.String()
}

func largeSpec() Spec {
	return Spec{Columns: []Column{
		{Name: "id", Type: TypeInteger, Required: true},
		{Name: "time_h", Type: TypeInteger, Min: "0", Max: "23"},
		{Name: "conc", Type: TypeNumber, Min: "0"},
		{Name: "sex", Type: TypeString, Allowed: []string{"F", "M"}},
	}, UniqueKeys: [][]string{{"id"}}}
}

type event struct {
	fraction float64
	message  string
}

func TestLargeTableProgress(t *testing.T) {
	text := largeTable(largeRows)
	var events []event
	r, err := CheckConformance(context.Background(), Input{CSV: text, Spec: largeSpec(), ProgressEvery: 25_000},
		func(f float64, m string) { events = append(events, event{f, m}) })
	if err != nil {
		t.Fatal(err)
	}
	if r.Rows != largeRows {
		t.Errorf("rows %d", r.Rows)
	}
	want := "1000/1001 conc below_min; 150000/150001 sex value_not_allowed; 199999/200000 id duplicate_key"
	if g := strings.Join(got(r), "; "); g != want {
		t.Errorf("violations %s, want %s", g, want)
	}
	// 200000 / 25000 = 8 reports on the way, then the final one.
	if len(events) != 9 {
		t.Fatalf("%d progress events, want 9: %v", len(events), events)
	}
	// After row k the reader has consumed the header and k rows, each with
	// its newline: the fraction is that byte count over the text's length,
	// counted here from the text itself.
	ends := []int{}
	for i, ch := range []byte(text) {
		if ch == '\n' {
			ends = append(ends, i+1)
		}
	}
	for i, e := range events[:8] {
		k := 25_000 * (i + 1)
		if expect := float64(ends[k]) / float64(len(text)); e.fraction != expect {
			t.Errorf("event %d after row %d: fraction %.6f, want %.6f", i, k, e.fraction, expect)
		}
	}
	if last := events[8]; last.fraction != 1 || last.message != "checked 200000 rows, 3 violations" {
		t.Errorf("final event %+v", last)
	}
	if events[0].message != "checked 25000 rows, 1 violations" {
		t.Errorf("first message %q", events[0].message)
	}
}

// countingReader counts the bytes handed out.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Cancelling at the first progress report stops the check before the next
// row: the function returns context.Canceled, reports no more progress, and
// has read little more than the rows before the report (csv's 4 KiB buffer).
func TestLargeTableCancellation(t *testing.T) {
	text := largeTable(largeRows)
	src := &countingReader{r: strings.NewReader(text)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	r, err := CheckConformance(ctx, Input{Source: src, Spec: largeSpec(), ProgressEvery: 10_000},
		func(float64, string) { calls++; cancel() })
	if !errors.Is(err, context.Canceled) || r != nil {
		t.Fatalf("got %v, %v; want context.Canceled and no report", r, err)
	}
	if calls != 1 {
		t.Errorf("%d progress calls after cancelling, want 1", calls)
	}
	upTo := int64(strings.Index(text, "\n10001,")) // bytes through row 10000
	if src.n > upTo+8192 || src.n < upTo {
		t.Errorf("read %d bytes of %d; row 10000 ends at %d", src.n, len(text), upTo)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := &countingReader{r: strings.NewReader("id\n1\n")}
	if _, err := CheckConformance(ctx, Input{Source: src, Spec: largeSpec()}, nil); !errors.Is(err, context.Canceled) || src.n != 0 {
		t.Errorf("err %v after reading %d bytes", err, src.n)
	}
}

func TestUnknownSizeFraction(t *testing.T) {
	var fr []float64
	_, err := CheckConformance(context.Background(), Input{Source: strings.NewReader(largeTable(20)), Spec: largeSpec(), ProgressEvery: 10},
		func(f float64, _ string) { fr = append(fr, f) })
	if err != nil || len(fr) != 3 || fr[0] != UnknownFraction || fr[1] != UnknownFraction || fr[2] != 1 {
		t.Errorf("fractions %v, err %v", fr, err)
	}
	fr = nil
	text := largeTable(20)
	_, _ = CheckConformance(context.Background(), Input{Source: strings.NewReader(text), SourceSize: int64(len(text)), Spec: largeSpec(), ProgressEvery: 10},
		func(f float64, _ string) { fr = append(fr, f) })
	if len(fr) != 3 || fr[0] <= 0 || fr[0] >= fr[1] {
		t.Errorf("fractions with a known size %v", fr)
	}
}

func BenchmarkLargeTable(b *testing.B) {
	text := largeTable(largeRows)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := CheckConformance(context.Background(), Input{CSV: text, Spec: largeSpec()}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
