package worker

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// probeScript prints the interpreter's real path and version. Like the
// bootstrap it must parse in old Pythons.
const probeScript = `import sys; sys.stdout.write((sys.executable or '') + '\n' + '%d.%d.%d' % tuple(sys.version_info[:3]))`

// interpreter returns the configured name and the executable to run. The
// first successful look-up runs the interpreter once to learn its real path
// (sys.executable): launchers such as pyenv shims cost tens of milliseconds
// per start, which every worker would pay otherwise. The result is kept for
// the pool's life; failures are not kept, so installing Python later works.
func (p *Pool) interpreter() (name, exe string, err error) {
	name = p.opts.Python
	if name == "" {
		name = "python3"
	}
	p.interpMu.Lock()
	defer p.interpMu.Unlock()
	if p.interpExe != "" {
		return name, p.interpExe, nil
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return name, "", &InterpreterError{Python: name, Err: err}
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.StartTimeout)
	defer cancel()
	var stderr bytes.Buffer
	// -E -s (known to every Python, unlike -I): the probe imports nothing
	// from the folder or variables lcp runs it with.
	cmd := exec.CommandContext(ctx, path, "-E", "-s", "-c", probeScript)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && ctx.Err() != nil {
		// Killed by the start budget, not broken: say so, since a busy
		// machine is the likely cause and "signal: killed" reads as a crash.
		return name, "", &InterpreterError{Python: name, Err: fmt.Errorf("it did not answer within %v (the start budget; a busy machine can need more)", p.opts.StartTimeout)}
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			err = fmt.Errorf("%w: %s", err, lastLine(msg))
		}
		return name, "", &InterpreterError{Python: name, Err: err}
	}
	real, version, _ := strings.Cut(string(out), "\n")
	if !versionOK(version) {
		return name, "", &InterpreterError{Python: name, Version: version}
	}
	if real == "" {
		real = path
	}
	p.interpExe = real
	p.log.Debug("python interpreter", "name", name, "path", real, "version", version)
	return name, real, nil
}

// versionOK reports whether a "major.minor.patch" version is 3.9 or newer.
func versionOK(v string) bool {
	var major, minor int
	if _, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 3 || (major == 3 && minor >= 9)
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// compiledProgram returns the worker program as compiled by an earlier
// worker of this pool's interpreter, or nil.
func (p *Pool) compiledProgram() []byte {
	p.interpMu.Lock()
	defer p.interpMu.Unlock()
	return p.compiled
}

// keepCompiledProgram stores the compiled program a worker sent back. The
// bootstrap checks its magic number, so a stale one only costs a compile.
func (p *Pool) keepCompiledProgram(b []byte) {
	if len(b) == 0 || len(b) > 8<<20 {
		return
	}
	p.interpMu.Lock()
	defer p.interpMu.Unlock()
	if p.compiled == nil {
		p.compiled = bytes.Clone(b)
	}
}
