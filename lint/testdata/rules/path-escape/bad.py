"""Paths from parameters used as they are."""
import os
import shutil
from pathlib import Path


def tool_read_file(path: str):
    """Reads a text file of the workspace and returns its content.

    Args:
        path (str): The file to read.
    """
    with open(path, encoding="utf-8") as f:
        return {"success": True, "output": f.read()}


def tool_list_folder(folder: str = "."):
    """Lists the names of the files in a folder of the workspace.

    Args:
        folder (str): The folder to list.
    """
    names = os.listdir(os.path.join(".", folder))
    return {"success": True, "output": "\n".join(names)}


def tool_delete_note(name: str):
    """Deletes a note file from the notes folder of the workspace.

    Args:
        name (str): The note's file name.
    """
    target = Path("notes") / name
    target.unlink()
    return {"success": True, "output": f"Deleted {name}."}


def tool_write_report(title: str, text: str):
    """Writes a report file named after its title into the reports folder.

    Args:
        title (str): The report's title.
        text (str): The report's text.
    """
    Path(f"reports/{title}.md").write_text(text, encoding="utf-8")
    return {"success": True, "output": "Written."}


def tool_copy(src: str, dst: str):
    """Copies a file of the workspace to another name in the workspace.

    Args:
        src (str): The file to copy.
        dst (str): The new file.
    """
    shutil.copy(src, dst)
    return {"success": True, "output": "Copied."}


def tool_unresolved_check(path: str):
    """Reads a file after a prefix check that does not resolve the path first.

    Args:
        path (str): The file to read.
    """
    full = os.path.join(os.getcwd(), path)
    if not full.startswith(os.getcwd()):
        return {"success": False, "error": "Outside the workspace."}
    return {"success": True, "output": open(full).read()}


def _load(name):
    with open(name, encoding="utf-8") as f:
        return f.read()


def tool_through_helper(name: str):
    """Loads a data file of the workspace through a helper function.

    Args:
        name (str): The data file's name.
    """
    return {"success": True, "output": _load(name)}
