package servetest

import (
	"os"
	"path/filepath"
)

// goodTools is a library of one well-behaved tool: echo answers with what
// it was given (so that a misrouted result shows).
const goodTools = `"""A tool that works."""
import os
import time


def tool_echo(nonce: str, ms: int = 0):
    """Answers with the nonce it was given, after ms milliseconds.

    Args:
        nonce: any text, returned as it came
        ms: how long to work first
    """
    if ms:
        time.sleep(ms / 1000)
    return {"success": True, "output": "echo:" + nonce, "pid": os.getpid()}
`

// faultyTools are libraries of Python tools that misbehave as their names
// say, each in a library of its own (its own worker), so that a crash
// takes down no other kind of call.
var faultyTools = map[string]string{
	"crash.py": `import os


def tool_crash(nonce: str):
    """Kills its worker process.

    Args:
        nonce: ignored
    """
    os._exit(3)
`,
	"hang.py": `import time


def tool_hang(nonce: str, seconds: int = 3600):
    """Sleeps far longer than any time limit.

    Args:
        nonce: ignored
        seconds: how long
    """
    time.sleep(seconds)
    return "woke up"
`,
	"flood.py": `import sys


def tool_flood(nonce: str, lines: int = 20000):
    """Prints a flood of lines, then answers.

    Args:
        nonce: returned as it came
        lines: how many lines to print
    """
    for i in range(lines):
        print("flood line", i, "x" * 80)
        sys.stderr.write("err line %d\n" % i)
    return "flood:" + nonce
`,
	"huge.py": `def tool_huge(nonce: str, mb: int = 8):
    """Returns a value of mb megabytes.

    Args:
        nonce: returned at the start of the value
        mb: the size of the value
    """
    return "huge:" + nonce + ":" + "y" * (mb << 20)
`,
}

// WriteFaultyTools writes a folder of tools under dir (good.py with
// tool_echo; crash.py, hang.py, flood.py and huge.py with tool_crash,
// tool_hang, tool_flood and tool_huge) and returns the folder.
func WriteFaultyTools(dir string) (string, error) {
	tools := filepath.Join(dir, "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tools, "good.py"), []byte(goodTools), 0o644); err != nil {
		return "", err
	}
	for name, src := range faultyTools {
		if err := os.WriteFile(filepath.Join(tools, name), []byte(src), 0o644); err != nil {
			return "", err
		}
	}
	return tools, nil
}
