package metrics

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The Prometheus text exposition format (version 0.0.4), written by hand:
// a handful of counters, one histogram and a few gauges do not need a
// client library whose package initialisation (its default registry with
// Go and process collectors, protobuf descriptors, a YAML parser) every
// lcp command paid at start-up, serving or not.

// kind is a metric family's TYPE.
type kind string

const (
	counterKind   kind = "counter"
	gaugeKind     kind = "gauge"
	histogramKind kind = "histogram"
	summaryKind   kind = "summary"
)

// family is one metric name: its help, type and series.
type family struct {
	name, help string
	kind       kind
	labels     []string  // label names, in the order values are given
	buckets    []float64 // histogram upper bounds, ascending, without +Inf

	mu     sync.Mutex
	series map[string]*series // by label values joined with 0xff
	// collect, when set, gives the family's series at each scrape
	// instead (gauges read from the process or a server).
	collect func(emit func(s sample))
}

// series is one combination of label values.
type series struct {
	values []string
	value  float64  // counter or gauge
	counts []uint64 // histogram: observations per bucket (not cumulative), +Inf last
	sum    float64
	count  uint64
}

// sample is a series collected at scrape time.
type sample struct {
	labels    [][2]string // name, value
	value     float64
	quantiles [][2]float64 // summary: quantile, value
	sum       float64
	count     uint64
}

func newFamily(name, help string, k kind, labels ...string) *family {
	return &family{name: name, help: help, kind: k, labels: labels, series: map[string]*series{}}
}

// with returns the series of the label values, made on first use.
// The caller holds f.mu.
func (f *family) with(values []string) *series {
	if len(values) != len(f.labels) {
		panic(fmt.Sprintf("metrics: %s takes %d label values, got %d", f.name, len(f.labels), len(values)))
	}
	key := strings.Join(values, "\xff")
	s := f.series[key]
	if s == nil {
		s = &series{values: slices.Clone(values)}
		if f.kind == histogramKind {
			s.counts = make([]uint64, len(f.buckets)+1)
		}
		f.series[key] = s
	}
	return s
}

// add adds d to the counter or gauge of the label values.
func (f *family) add(d float64, values ...string) {
	f.mu.Lock()
	f.with(values).value += d
	f.mu.Unlock()
}

// observe records a histogram observation.
func (f *family) observe(v float64, values ...string) {
	i := sort.SearchFloat64s(f.buckets, v) // the first bound >= v
	f.mu.Lock()
	s := f.with(values)
	s.counts[i]++
	s.sum += v
	s.count++
	f.mu.Unlock()
}

// registry is the families of one process, written sorted by name as
// Prometheus' own client does.
type registry struct {
	mu       sync.Mutex
	families map[string]*family
	// scrape serializes scrapes; prepare runs at the start of each, to
	// read what several families share (the runtime's memory statistics).
	scrape  sync.Mutex
	prepare []func()
}

func (r *registry) register(f *family) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.families == nil {
		r.families = map[string]*family{}
	}
	if _, dup := r.families[f.name]; dup {
		panic("metrics: " + f.name + " registered twice")
	}
	r.families[f.name] = f
}

// write writes every family in the text format.
func (r *registry) write(w io.Writer) error {
	r.scrape.Lock()
	defer r.scrape.Unlock()
	for _, p := range r.prepare {
		p()
	}
	r.mu.Lock()
	fams := make([]*family, 0, len(r.families))
	for _, f := range r.families {
		fams = append(fams, f)
	}
	r.mu.Unlock()
	slices.SortFunc(fams, func(a, b *family) int { return strings.Compare(a.name, b.name) })
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		samples := f.samples()
		if len(samples) == 0 {
			continue
		}
		bw.WriteString("# HELP " + f.name + " " + escapeHelp(f.help) + "\n")
		bw.WriteString("# TYPE " + f.name + " " + string(f.kind) + "\n")
		for _, s := range samples {
			f.writeSample(bw, s)
		}
	}
	return bw.Flush()
}

// samples returns the family's series, sorted by label values.
func (f *family) samples() []sample {
	var out []sample
	if f.collect != nil {
		f.collect(func(s sample) { out = append(out, s) })
	} else {
		f.mu.Lock()
		for _, s := range f.series {
			sm := sample{value: s.value, sum: s.sum, count: s.count}
			for i, n := range f.labels {
				sm.labels = append(sm.labels, [2]string{n, s.values[i]})
			}
			slices.SortFunc(sm.labels, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
			if f.kind == histogramKind {
				// Cumulative counts, one per bound and +Inf, as quantiles
				// carry them here.
				var c uint64
				for i, n := range s.counts {
					c += n
					le := math.Inf(1)
					if i < len(f.buckets) {
						le = f.buckets[i]
					}
					sm.quantiles = append(sm.quantiles, [2]float64{le, float64(c)})
				}
			}
			out = append(out, sm)
		}
		f.mu.Unlock()
		if len(f.labels) == 0 && len(out) == 0 && f.kind != histogramKind {
			out = append(out, sample{}) // an unlabelled counter or gauge shows 0
		}
	}
	slices.SortFunc(out, func(a, b sample) int {
		for i := range min(len(a.labels), len(b.labels)) {
			if c := strings.Compare(a.labels[i][1], b.labels[i][1]); c != 0 {
				return c
			}
		}
		return len(a.labels) - len(b.labels)
	})
	return out
}

func (f *family) writeSample(w *bufio.Writer, s sample) {
	switch f.kind {
	case histogramKind:
		for _, q := range s.quantiles {
			writeLine(w, f.name+"_bucket", s.labels, "le", formatFloat(q[0]), q[1])
		}
		writeLine(w, f.name+"_sum", s.labels, "", "", s.sum)
		writeLine(w, f.name+"_count", s.labels, "", "", float64(s.count))
	case summaryKind:
		for _, q := range s.quantiles {
			writeLine(w, f.name, s.labels, "quantile", formatFloat(q[0]), q[1])
		}
		writeLine(w, f.name+"_sum", s.labels, "", "", s.sum)
		writeLine(w, f.name+"_count", s.labels, "", "", float64(s.count))
	default:
		writeLine(w, f.name, s.labels, "", "", s.value)
	}
}

// writeLine writes `name{a="x",b="y",extra="v"} value`.
func writeLine(w *bufio.Writer, name string, labels [][2]string, extra, extraValue string, v float64) {
	w.WriteString(name)
	if len(labels) > 0 || extra != "" {
		w.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(l[0] + `="` + escapeLabel(l[1]) + `"`)
		}
		if extra != "" {
			if len(labels) > 0 {
				w.WriteByte(',')
			}
			w.WriteString(extra + `="` + extraValue + `"`)
		}
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	w.WriteString(formatFloat(v))
	w.WriteByte('\n')
}

// formatFloat writes a value as Prometheus' client does.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// escapeHelp escapes a HELP text: backslashes and line feeds.
func escapeHelp(s string) string { return escape(s, false) }

// escapeLabel escapes a label value: backslashes, line feeds and quotes.
func escapeLabel(s string) string { return escape(s, true) }

func escape(s string, quotes bool) string {
	if !strings.ContainsAny(s, "\\\n\"") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '"' && quotes:
			b.WriteString(`\"`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
