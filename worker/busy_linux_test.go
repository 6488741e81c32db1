package worker

import "testing"

func TestParseRunnable(t *testing.T) {
	for in, want := range map[string]int{
		"0.52 0.58 0.59 3/650 12345\n": 3,
		"1.00 2.00 3.00 17/1024 1":     17,
		"":                             0,
		"0.1 0.2 0.3":                  0,
		"0.1 0.2 0.3 x/9 1":            0,
		"0.1 0.2 0.3 12 1":             0,
	} {
		if got := parseRunnable([]byte(in)); got != want {
			t.Errorf("parseRunnable(%q) = %d, want %d", in, got, want)
		}
	}
	if n := runnableThreads(); n < 1 {
		t.Errorf("runnableThreads() = %d: this test is running", n)
	}
	cpuBusy() // samples without failing
}
