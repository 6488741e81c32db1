package lint

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/lcptools/lcp/discover"
	"github.com/lcptools/lcp/tool"
)

// Run checks what a discovery found: the checklist rules on every file
// (read again from disk and analysed in parallel, one worker per CPU), and
// the diagnostics of discovery, the binding and the inventory turned into
// findings. Files are identified by absolute path. The result lists the
// findings without a file first (in the diagnostics' order), then each
// file's in discovery order, by position.
func Run(files []*discover.File, diags []tool.Diagnostic) []Finding {
	type result struct {
		src      []byte
		findings []Finding
	}
	results := make([]result, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), max(len(files), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f := files[i]
				src, err := os.ReadFile(f.Path)
				if err != nil {
					var pe *fs.PathError
					if errors.As(err, &pe) {
						err = pe.Err // the path is in the message already
					}
					r := rulesByID["unreadable-file"]
					results[i].findings = []Finding{{Severity: r.Severity, Code: r.ID, Fix: r.Fix, File: f.Path,
						Message: fmt.Sprintf("cannot read %s again to check it: %v", f.Path, err)}}
					continue
				}
				results[i] = result{src: src, findings: Check(f.Path, src, &Options{Reader: f.Source})}
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()

	lines := make([]*lineIndex, len(files))
	order := map[string]int{}
	for i, f := range files {
		order[f.Path] = i
	}
	type keyed struct {
		Finding
		file int
		seq  int
	}
	n := len(diags)
	for _, r := range results {
		n += len(r.findings)
	}
	all := make([]keyed, 0, n)
	absPaths := map[string]string{}
	for i, d := range diags {
		f := FromDiagnostic(d)
		k := keyed{Finding: f, file: -1, seq: i}
		if f.File != "" {
			abs, ok := absPaths[f.File]
			if !ok {
				if a, err := filepath.Abs(f.File); err == nil {
					abs = a
				} else {
					abs = f.File
				}
				absPaths[f.File] = abs
			}
			k.File = abs
			if j, ok := order[k.File]; ok {
				k.file = j
				if results[j].src != nil && k.Line > 0 && k.Column == 0 {
					if lines[j] == nil {
						lines[j] = newLineIndex(bytes.TrimPrefix(results[j].src, bom))
					}
					fillColumn(&k.Finding, lines[j])
				}
			}
		}
		all = append(all, k)
	}
	for j, r := range results {
		for _, f := range r.findings {
			all = append(all, keyed{Finding: f, file: j, seq: len(all)})
		}
	}
	// Stable by seq (the order found), without a stable sort's many moves
	// of a large struct.
	sorted := make([]*keyed, len(all))
	for i := range all {
		sorted[i] = &all[i]
	}
	slices.SortFunc(sorted, func(a, b *keyed) int {
		if a.file < 0 || b.file < 0 {
			return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.seq, b.seq))
		}
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.seq, b.seq))
	})
	out := make([]Finding, len(sorted))
	for i, k := range sorted {
		out[i] = k.Finding
	}
	return out
}
