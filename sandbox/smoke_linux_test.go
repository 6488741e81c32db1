package sandbox

import "testing"

func TestSmoke(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	r := runIn(t, &Policy{Workspace: ws, Mode: CopyOnWrite}, "id; pwd; ls /; cat /proc/self/status | grep -i cap; echo hi > f; ls -la")
	t.Logf("stdout:\n%s\nstderr:\n%s\nerr: %v\nreport: %+v", r.stdout, r.stderr, r.err, r.report)
}

func BenchmarkTrueCOW(b *testing.B) {
	requireSandbox(b)
	ws := b.TempDir()
	for b.Loop() {
		r := runIn(b, &Policy{Workspace: ws, Mode: CopyOnWrite}, "true")
		if r.err != nil {
			b.Fatal(r.err, r.stderr)
		}
		r.box.Close()
	}
}

func BenchmarkTrueWrite(b *testing.B) {
	requireSandbox(b)
	ws := b.TempDir()
	for b.Loop() {
		r := runIn(b, &Policy{Workspace: ws, Mode: Write}, "true")
		if r.err != nil {
			b.Fatal(r.err, r.stderr)
		}
		r.box.Close()
	}
}
