package token

import "testing"

// lookupByMap is the definition Lookup implements.
func lookupByMap(s string) Token {
	if tok, ok := keywords[s]; ok {
		return tok
	}
	return NAME
}

func TestLookup(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := Lookup(s), lookupByMap(s); got != want {
			t.Errorf("Lookup(%q) = %v, want %v", s, got, want)
		}
	}
	if len(keywords) != 35 {
		t.Errorf("%d hard keywords, Python 3.12 has 35", len(keywords))
	}
	letters := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0é"
	for kw := range keywords {
		check(kw)
		for i := 0; i <= len(kw); i++ {
			check(kw[:i])
			check(kw[i:])
			for _, c := range letters {
				check(kw[:i] + string(c) + kw[i:]) // one more letter
				if i < len(kw) {
					check(kw[:i] + string(c) + kw[i+1:]) // one letter changed
				}
			}
		}
	}
	// every name of up to three ASCII letters
	for _, a := range letters {
		check(string(a))
		for _, b := range letters {
			check(string(a) + string(b))
			for _, c := range letters {
				check(string(a) + string(b) + string(c))
			}
		}
	}
	for _, s := range []string{"match", "case", "type", "_", "print", "self", "__init__", "nonlocals", "Falsey"} {
		check(s)
	}
}

func FuzzLookup(f *testing.F) {
	for _, s := range []string{"if", "nonlocal", "x", "", "yield_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Lookup(s), lookupByMap(s); got != want {
			t.Errorf("Lookup(%q) = %v, want %v", s, got, want)
		}
	})
}
