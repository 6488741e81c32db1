package shell

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/lcptools/lcp/sandbox"
)

// Program returns the program and arguments that run command: bash -c when
// bash is on PATH (the dialect Classify parses), else /bin/sh -c.
func Program(command string) (string, []string) {
	if p, err := exec.LookPath("bash"); err == nil {
		return p, []string{"-c", command}
	}
	return "/bin/sh", []string{"-c", command}
}

// gitConfigPair matches the variables of git's environment configuration,
// whose names hold KEY without being keys.
var gitConfigPair = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^GIT_CONFIG_(KEY|VALUE)_[0-9]+$`)
})

// gitHardening is the configuration safe mode gives git through the
// environment (GIT_CONFIG_COUNT has the precedence of `git -c`): a
// repository's own configuration cannot then make a read-only subcommand
// run a program through the fsmonitor, hooks, a pager, signature
// verification or a remote transport.
var gitHardening = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
	{"core.pager", "cat"},
	{"protocol.allow", "never"},
	{"gpg.program", "false"},
	{"gpg.ssh.program", "false"},
	{"gpg.x509.program", "false"},
	{"log.showSignature", "false"},
}

// SafeEnv returns env (KEY=VALUE entries) prepared for a command that safe
// mode runs without asking (on a machine without the sandbox): variables
// whose names look like secrets are removed (printenv, /proc/self/environ
// and awk's ENVIRON would otherwise hand them to the LLM), pagers are cat,
// git cannot prompt, and git's configuration is hardened as described at
// gitHardening. Variables that make git or less run programs are removed.
// env itself is not modified.
//
// This is defense in depth: filters and diff drivers configured in a
// repository still run, which is why safe mode asks before any write into
// a .git directory.
func SafeEnv(env []string) []string {
	drop := map[string]bool{"GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true, "PAGER": true, "LESSOPEN": true,
		"LESSCLOSE": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true, "GIT_SSH": true, "GIT_SSH_COMMAND": true,
		"GIT_TERMINAL_PROMPT": true}
	count := 0
	out := make([]string, 0, len(env)+len(gitHardening)*2+4)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if drop[k] || sandbox.IsSecretName(k) && !gitConfigPair().MatchString(k) {
			continue
		}
		if k == "GIT_CONFIG_COUNT" {
			count, _ = strconv.Atoi(v)
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "GIT_PAGER=cat", "PAGER=cat", "GIT_TERMINAL_PROMPT=0")
	for i, kv := range gitHardening {
		n := strconv.Itoa(count + i)
		out = append(out, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	out = append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(count+len(gitHardening)))
	return out
}
