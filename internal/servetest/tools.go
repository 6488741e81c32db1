package servetest

import (
	"os"
	"path/filepath"
)

// faultyTools is a library of Python tools for load and fault tests:
// echo answers with what it was given (so that a misrouted result shows),
// the others misbehave as their names say.
const faultyTools = `"""Tools that work, and tools that misbehave on demand."""
import os
import sys
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


def tool_crash(nonce: str):
    """Kills its worker process.

    Args:
        nonce: ignored
    """
    os._exit(3)


def tool_hang(nonce: str, seconds: int = 3600):
    """Sleeps far longer than any time limit.

    Args:
        nonce: ignored
        seconds: how long
    """
    time.sleep(seconds)
    return "woke up"


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


def tool_huge(nonce: str, mb: int = 8):
    """Returns a value of mb megabytes.

    Args:
        nonce: returned at the start of the value
        mb: the size of the value
    """
    return "huge:" + nonce + ":" + "y" * (mb << 20)
`

// WriteFaultyTools writes the library of misbehaving tools (faulty.py)
// into a new folder under dir and returns the folder.
func WriteFaultyTools(dir string) (string, error) {
	tools := filepath.Join(dir, "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		return "", err
	}
	return tools, os.WriteFile(filepath.Join(tools, "faulty.py"), []byte(faultyTools), 0o644)
}
