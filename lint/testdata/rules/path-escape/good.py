"""Paths from parameters checked against the workspace first."""
import os
import re
from pathlib import Path

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_CONFIRM_HANDLER = None


def set_confirm_handler(handler) -> None:
    global _CONFIRM_HANDLER
    _CONFIRM_HANDLER = handler


def _inside(relative: str) -> Path:
    candidate = Path(relative).resolve()
    root = Path.cwd().resolve()
    if not candidate.is_relative_to(root):
        raise PermissionError(f"Access outside the workspace is forbidden: {relative}")
    return candidate


def tool_read_file(path: str):
    """Reads a text file of the workspace and returns its content.

    Args:
        path (str): The file to read.
    """
    try:
        target = _inside(path)
    except PermissionError as ex:
        return {"success": False, "error": str(ex)}
    return {"success": True, "output": target.read_text(encoding="utf-8")}


def tool_list_folder(folder: str = "."):
    """Lists the names of the files in a folder of the workspace.

    Args:
        folder (str): The folder to list.
    """
    root = os.path.realpath(os.getcwd())
    target = os.path.realpath(os.path.join(root, folder))
    if os.path.commonpath([root, target]) != root:
        return {"success": False, "error": "The folder is outside the workspace."}
    return {"success": True, "output": "\n".join(sorted(os.listdir(target)))}


def tool_delete_note(name: str):
    """Deletes a note file from the notes folder of the workspace.

    Args:
        name (str): The note's file name.
    """
    notes = (Path.cwd() / "notes").resolve()
    target = (notes / name).resolve()
    try:
        target.relative_to(notes)
    except ValueError:
        return {"success": False, "error": "Only notes of the notes folder can be deleted."}
    if _CONFIRM_HANDLER is None:
        return {"success": False, "error": "Deleting needs the operator's approval and this host cannot ask."}
    decision, reason = _CONFIRM_HANDLER(f"rm {target}", f"Delete note {name}")
    if decision not in ("allow", "always"):
        return {"success": False, "error": f"The operator refused: {reason or 'no reason given'}"}
    os.remove(target)
    return {"success": True, "output": f"Deleted {name}."}


def tool_write_report(title: str, text: str):
    """Writes a report file named after its title into the reports folder.

    Args:
        title (str): The report's title: letters, digits, '-' and '_'.
        text (str): The report's text.
    """
    if not _NAME.fullmatch(title):
        return {"success": False, "error": "Use letters, digits, '-' and '_' in the title."}
    Path(f"reports/{title}.md").write_text(text, encoding="utf-8")
    return {"success": True, "output": "Written."}


def tool_save_upload(file_name: str, data: str):
    """Saves uploaded text under its base name in the uploads folder.

    Args:
        file_name (str): The uploaded file's name (directories are dropped).
        data (str): The file's text.
    """
    base = os.path.basename(file_name)
    with open(os.path.join("uploads", base), "w", encoding="utf-8") as f:
        f.write(data)
    return {"success": True, "output": f"Saved {base}."}


def tool_prefix_check(path: str):
    """Reads a file after a prefix check on the resolved path.

    Args:
        path (str): The file to read.
    """
    root = os.path.realpath(os.getcwd())
    full = os.path.realpath(os.path.join(root, path))
    if not full.startswith(root + os.sep):
        return {"success": False, "error": "Outside the workspace."}
    with open(full, encoding="utf-8") as f:
        return {"success": True, "output": f.read()}


def tool_export(file_name: str = "notes.json"):
    """Exports the notes to a JSON file inside the workspace.

    Args:
        file_name (str): The file to write, inside the workspace.
    """
    root = Path.cwd().resolve()
    target = (root / file_name).resolve()
    if root not in target.parents:
        return {"success": False, "error": "The export file must be inside the workspace."}
    target.write_text("[]", encoding="utf-8")
    return {"success": True, "output": f"Exported to {file_name}."}
