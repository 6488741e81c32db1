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

func TestBusyStep(t *testing.T) {
	const cpus = 2
	run := func(samples ...int) (busy []bool) {
		var avg int64
		for _, n := range samples {
			avg = busyStep(avg, n, cpus)
			busy = append(busy, avg >= busyThreshold)
		}
		return busy
	}
	repeat := func(n int, pattern ...int) []int {
		var s []int
		for range n {
			s = append(s, pattern...)
		}
		return s
	}
	tests := []struct {
		name    string
		samples []int
		// want is whether the last sample reports busy; first is the
		// index of the first sample that does (-1: none).
		want  bool
		first int
	}{
		{"idle", repeat(20, 1), false, -1},
		{"two busy threads on two CPUs", repeat(20, 2), false, -1},
		{"a third thread in a third of the samples", repeat(20, 2, 2, 3), false, -1},
		{"one thread always waiting", repeat(20, 3), true, 4},
		{"a loaded machine", repeat(3, 30), true, 0},
		{"the load ends", append(repeat(5, 30), repeat(20, 2)...), false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			busy := run(tt.samples...)
			first := -1
			for i, b := range busy {
				if b {
					first = i
					break
				}
			}
			if got := busy[len(busy)-1]; got != tt.want || first != tt.first {
				t.Errorf("last sample busy = %v, first busy sample = %d; want %v, %d", got, first, tt.want, tt.first)
			}
		})
	}
}
