package shell

import (
	"regexp"
	"testing"
)

// TestIsPythonName checks the hand-written test against the pattern it
// replaces.
func TestIsPythonName(t *testing.T) {
	re := regexp.MustCompile(`^(python|pip|pypy)[0-9.]*$`)
	for _, name := range []string{"python", "python3", "python3.11", "pip", "pip3", "pypy", "pypy3.10",
		"py", "pythonx", "python3a", "pipx", "pip-3", "ipython", "", "python..", "pythonpip", "pypython", "Python3"} {
		if got, want := isPythonName(name), re.MatchString(name); got != want {
			t.Errorf("isPythonName(%q) = %v, want %v", name, got, want)
		}
	}
}

func FuzzIsPythonName(f *testing.F) {
	re := regexp.MustCompile(`^(python|pip|pypy)[0-9.]*$`)
	for _, s := range []string{"python3", "pip", "pypy3.9", "pyth", "python3x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := isPythonName(name), re.MatchString(name); got != want {
			t.Fatalf("isPythonName(%q) = %v, want %v", name, got, want)
		}
	})
}
