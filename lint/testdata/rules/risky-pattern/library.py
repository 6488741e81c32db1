"""A library that spawns a process in a way no tool's analysis sees, and
never uses the confirm handler: the library-level form of the rule."""
import subprocess


class Runner:
    def run(self, args):
        return subprocess.run(args, capture_output=True, text=True).stdout


def tool_versions():
    """Reports the versions of git and python installed on this machine."""
    r = Runner()
    return {"success": True, "output": r.run(["git", "--version"]) + r.run(["python3", "--version"])}
