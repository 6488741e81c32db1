package sandbox

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseGitConfig(t *testing.T) {
	tests := []struct {
		name, src string
		want      []gitVar
		err       string
	}{
		{"plain", "[core]\n\thooksPath = hooks\n", []gitVar{{"core", "", "hookspath", "hooks", 2}}, ""},
		{"subsection", "[includeIf \"gitdir:~/x/\"]\npath = a.inc\n", []gitVar{{"includeif", "gitdir:~/x/", "path", "a.inc", 2}}, ""},
		{"old subsection", "[Filter.Lfs]\nclean = git-lfs clean\n", []gitVar{{"filter", "lfs", "clean", "git-lfs clean", 2}}, ""},
		{"bare key", "[core]\nbare\n", []gitVar{{"core", "", "bare", "true", 2}}, ""},
		{"comments", "# c\n; c\n[core] ; c\n  pager = less # c\n", []gitVar{{"core", "", "pager", "less", 4}}, ""},
		{"quotes", "[core]\neditor = \"my editor\"  -w  \n", []gitVar{{"core", "", "editor", "my editor  -w", 2}}, ""},
		{"escapes", "[a]\nb = x\\ty\\\"z\\\\\n", []gitVar{{"a", "", "b", "x\ty\"z\\", 2}}, ""},
		{"continuation", "[a]\nb = one \\\ntwo\nc = 3\n", []gitVar{{"a", "", "b", "one two", 2}, {"a", "", "c", "3", 4}}, ""},
		{"quoted hash", "[a]\nb = \"x # y\"\n", []gitVar{{"a", "", "b", "x # y", 2}}, ""},
		{"crlf", "[a]\r\nb = c\r\n", []gitVar{{"a", "", "b", "c", 2}}, ""},
		{"empty value", "[a]\nb =\n", []gitVar{{"a", "", "b", "", 2}}, ""},
		{"no section", "b = c\n", nil, "line 1: a variable before any section"},
		{"open header", "[core\n", nil, "line 1: section \"core\": the header does not end with ]"},
		{"open quote", "[a]\nb = \"x\n", nil, "line 2: an unterminated quoted value"},
		{"bad escape", "[a]\nb = \\q\n", nil, "line 2: an invalid escape \\q"},
		{"junk", "[a]\n=x\n", nil, "line 2: unexpected '='"},
		{"open subsection", "[a \"b]\n", nil, "line 1: section \"a\": an unterminated subsection name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseGitConfig([]byte(tc.src))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func FuzzParseGitConfig(f *testing.F) {
	for _, s := range []string{
		"[core]\n\thooksPath = .githooks\n\tfsmonitor = ./fsm\n",
		"[include]\npath = ../x.inc\n[includeIf \"onbranch:main\"]\npath = y\n",
		"[a.b]\nc = \"d\\\"e\" ; x\nf = g\\\nh\n",
		"[a \"\\\"]\n", "\ufeff[a]\nb\n", "[",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		vars, err := parseGitConfig(src)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") && !strings.HasPrefix(err.Error(), "larger") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for _, v := range vars {
			if v.Section == "" || v.Key == "" || v.Key != strings.ToLower(v.Key) || v.Line < 1 {
				t.Fatalf("bad variable %+v", v)
			}
		}
	})
}
