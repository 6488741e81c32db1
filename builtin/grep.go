package builtin

import (
	"bufio"
	"context"
	"fmt"
	"github.com/lcptools/lcp/internal/editdist"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/lcptools/lcp/builtin/workspace"
)

// maxCandidates bounds the matching lines kept for ranking.
const maxCandidates = 20000

type grepArgs struct {
	Pattern         string  `json:"pattern"`
	FileExtension   *string `json:"file_extension"`
	MaxResults      *int    `json:"max_results"`
	SearchMode      *string `json:"search_mode"`
	SortByRelevance *bool   `json:"sort_by_relevance"`
	Path            *string `json:"path"`
}

type grepMatch struct {
	File  string  `json:"file"`
	Line  int     `json:"line"`
	Text  string  `json:"text"`
	Score float64 `json:"score"`
	order int
}

// matcher scores a line; 0 means no match.
type matcher func(line string) float64

func (b *lib) grepFiles(ctx context.Context, in grepArgs) (map[string]any, error) {
	ws, err := b.openWorkspace(ctx)
	if err != nil {
		return failure(err.Error(), nil), nil
	}
	defer ws.Close()
	q, msg := newGrepQuery(in)
	if q == nil {
		return failure(msg, nil), nil
	}
	q.base = ws.Display(q.dir)
	s := &grepSearch{q: q}
	if err := ws.Walk(q.dir, func(rel string, d fs.DirEntry) error { return s.file(ctx, ws, rel, d) }); err != nil {
		return failure(pathError(err), nil), nil
	}
	return s.report(), nil
}

// grepQuery is what tool_grep_files searches for, read from its arguments.
type grepQuery struct {
	pattern, mode, note string
	match               matcher
	max                 int
	byRelevance         bool
	exts                []string
	dir, base           string
}

// newGrepQuery reads the query, or says what is wrong with it.
func newGrepQuery(in grepArgs) (*grepQuery, string) {
	q := &grepQuery{pattern: in.Pattern, mode: "case_insensitive", max: 50, dir: "."}
	if in.SearchMode != nil && *in.SearchMode != "" {
		q.mode = strings.ToLower(strings.TrimSpace(*in.SearchMode))
	}
	if strings.TrimSpace(in.Pattern) == "" {
		return nil, "The pattern is empty."
	}
	var err error
	if q.match, q.note, err = newMatcher(q.mode, in.Pattern); err != nil {
		return nil, err.Error()
	}
	if in.MaxResults != nil && *in.MaxResults > 0 {
		q.max = *in.MaxResults
	}
	q.byRelevance = in.SortByRelevance == nil || *in.SortByRelevance
	q.exts = extensions(in.FileExtension)
	if in.Path != nil && *in.Path != "" {
		q.dir = *in.Path
	}
	return q, ""
}

// grepSearch collects the matches of a query, file by file.
type grepSearch struct {
	q       *grepQuery
	matches []grepMatch
	files   int
	more    bool // matches were left out
}

// file searches one file of the walk.
func (s *grepSearch) file(ctx context.Context, ws *workspace.Workspace, rel string, d fs.DirEntry) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !d.Type().IsRegular() || !hasExtension(rel, s.q.exts) {
		return nil
	}
	if info, err := d.Info(); err != nil || info.Size() > maxGrepFile {
		return nil
	}
	name := path.Join(s.q.base, rel)
	f, err := ws.Open(name)
	if err != nil {
		return nil // hard-linked or vanished: skipped
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if head, _ := br.Peek(sniffLen); isBinary(head) {
		return nil
	}
	s.files++
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64<<10), maxGrepFile)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		score := s.q.match(line)
		if score <= 0 {
			continue
		}
		if (!s.q.byRelevance && len(s.matches) >= s.q.max) || len(s.matches) >= maxCandidates {
			s.more = true
			return fs.SkipAll
		}
		s.matches = append(s.matches, grepMatch{File: name, Line: n, Text: clip(strings.TrimRight(line, "\r"), 300), Score: score, order: len(s.matches)})
	}
	return nil
}

// report ranks the matches and writes the tool's result.
func (s *grepSearch) report() map[string]any {
	q, matches, more := s.q, s.matches, s.more
	if q.byRelevance {
		slices.SortStableFunc(matches, func(a, b grepMatch) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return a.order - b.order
		})
	}
	if len(matches) > q.max {
		matches, more = matches[:q.max], true
	}
	var sb strings.Builder
	if q.note != "" {
		sb.WriteString(q.note + "\n")
	}
	if len(matches) == 0 {
		fmt.Fprintf(&sb, "No match for '%s' (%s) in %d file(s) under '%s'.", q.pattern, q.mode, s.files, q.base)
	} else {
		fmt.Fprintf(&sb, "%d matching line(s) for '%s' (%s):\n", len(matches), q.pattern, q.mode)
		for _, m := range matches {
			fmt.Fprintf(&sb, "%s:%d: %s\n", m.File, m.Line, m.Text)
		}
		if more {
			fmt.Fprintf(&sb, "[... more matches; raise max_results above %d or narrow the search ...]\n", q.max)
		}
	}
	if matches == nil {
		matches = []grepMatch{}
	}
	return map[string]any{"success": true, "output": sb.String(), "matches": matches, "count": len(matches),
		"files_searched": s.files, "truncated": more}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// extensions parses "py", ".py", "*.py" or "py, md" into [".py", ".md"].
func extensions(s *string) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, e := range strings.Split(*s, ",") {
		e = strings.TrimSpace(e)
		e = strings.TrimPrefix(e, "*")
		if e == "" {
			continue
		}
		if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		out = append(out, strings.ToLower(e))
	}
	return out
}

func hasExtension(name string, exts []string) bool {
	if len(exts) == 0 {
		return true
	}
	lower := strings.ToLower(name)
	for _, e := range exts {
		if strings.HasSuffix(lower, e) {
			return true
		}
	}
	return false
}

// newMatcher builds the matcher of a search mode. A pattern that is not a
// valid regular expression is searched as literal text, with a note.
func newMatcher(mode, pattern string) (matcher, string, error) {
	switch mode {
	case "exact":
		return literalMatcher(pattern, false), "", nil
	case "case_sensitive", "case_insensitive", "regex":
		prefix := ""
		if mode == "case_insensitive" {
			prefix = "(?i)"
		}
		re, err := regexp.Compile(prefix + pattern)
		if err != nil {
			note := fmt.Sprintf("Note: '%s' is not a valid regular expression (%v); it was searched as literal text.", pattern, err)
			return literalMatcher(pattern, mode == "case_insensitive"), note, nil
		}
		return regexMatcher(re), "", nil
	case "words":
		words := splitWords(pattern)
		if len(words) == 0 {
			return nil, "", fmt.Errorf("the pattern has no words to search for")
		}
		return func(line string) float64 { return wordScore(words, splitWords(line), 0) }, "", nil
	case "fuzzy":
		words := splitWords(pattern)
		if len(words) == 0 {
			return nil, "", fmt.Errorf("the pattern has no words to search for")
		}
		return func(line string) float64 { return wordScore(words, splitWords(line), -1) }, "", nil
	}
	return nil, "", fmt.Errorf("unknown search_mode '%s': use exact, case_sensitive, case_insensitive, words or fuzzy", mode)
}

func literalMatcher(pattern string, fold bool) matcher {
	if fold {
		p := strings.ToLower(pattern)
		return func(line string) float64 { return occurrences(strings.ToLower(line), p) }
	}
	return func(line string) float64 { return occurrences(line, pattern) }
}

func occurrences(line, p string) float64 {
	n := strings.Count(line, p)
	if n == 0 {
		return 0
	}
	return 1 + 0.1*float64(n-1)
}

func regexMatcher(re *regexp.Regexp) matcher {
	return func(line string) float64 {
		locs := re.FindAllStringIndex(line, 16)
		if len(locs) == 0 {
			return 0
		}
		score := 1 + 0.1*float64(len(locs)-1)
		// A match on word boundaries ranks above one inside a word.
		for _, l := range locs {
			if (l[0] == 0 || !isWordByte(line[l[0]-1])) && (l[1] == len(line) || !isWordByte(line[l[1]])) {
				score += 0.5
				break
			}
		}
		return score
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func splitWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
}

// wordScore scores a line for words that must all appear in it: exactly
// (maxEdits 0) or within a few typos (maxEdits < 0: by word length). Words
// close together score higher.
func wordScore(words, tokens []string, maxEdits int) float64 {
	if len(tokens) == 0 {
		return 0
	}
	total := 0.0
	first, last := len(tokens), -1
	for _, w := range words {
		allowed := maxEdits
		if allowed < 0 {
			switch r := len([]rune(w)); {
			case r <= 3:
				allowed = 0
			case r <= 6:
				allowed = 1
			default:
				allowed = 2
			}
		}
		best, bestAt := -1.0, -1
		for i, t := range tokens {
			d := 0
			if t != w {
				if allowed == 0 {
					continue
				}
				d = editdist.Levenshtein(w, t, allowed)
				if d > allowed {
					continue
				}
			}
			s := 1 - float64(d)/float64(len([]rune(w))+1)
			if s > best {
				best, bestAt = s, i
			}
		}
		if bestAt < 0 {
			return 0
		}
		total += best
		first, last = min(first, bestAt), max(last, bestAt)
	}
	span := float64(last - first + 1)
	return total + float64(len(words))/span
}
