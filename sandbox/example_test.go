package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/lcptools/lcp/sandbox"
)

func ExampleEnv() {
	host := []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "OPENAI_API_KEY=sk-123", "DB_PASSWORD=x", "EDITOR=vim"}
	fmt.Println(sandbox.Env(host, "/home/ada"))
	// Output: [PATH=/usr/bin:/bin LANG=C.UTF-8 HOME=/home/ada TMPDIR=/tmp]
}

func ExampleIsSecretName() {
	for _, name := range []string{"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "PATH", "GOCACHE"} {
		fmt.Println(name, sandbox.IsSecretName(name))
	}
	// Output:
	// GITHUB_TOKEN true
	// AWS_SECRET_ACCESS_KEY true
	// PATH false
	// GOCACHE false
}

// ExampleWrap runs a command in a copy-on-write sandbox and applies the new
// files it made.
func ExampleWrap() {
	ws, _ := os.MkdirTemp("", "ws")
	defer os.RemoveAll(ws)
	cmd := exec.Command("/bin/sh", "-c", "echo hello > greeting.txt")
	cmd.Dir = ws
	box, err := sandbox.Wrap(cmd, &sandbox.Policy{Workspace: ws, Mode: sandbox.CopyOnWrite,
		Env: sandbox.Env(os.Environ(), "/home/nobody")})
	if err != nil {
		fmt.Println("no sandbox:", err)
		return
	}
	defer box.Close()
	err = cmd.Start()
	box.Started()
	if err != nil {
		return
	}
	_ = cmd.Wait()
	if r := box.Report(); r.SetupErr != nil {
		fmt.Println(r.SetupErr)
		return
	}
	changes, _ := box.Changes(nil)
	out := changes.Apply(func(c *sandbox.Change) bool { return !c.Risky }, nil)
	for _, c := range out.Applied {
		fmt.Println(c)
	}
}
