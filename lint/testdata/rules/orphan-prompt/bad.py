def tool_search(query: str):
    """Searches the notes of the workspace for a word and lists the matches.

    Args:
        query (str): The word to look for.
    """
    return {"success": True, "output": f"no match for {query}"}


def tool_serch_prompt():
    return "Searches notes (misspelled: this prompt belongs to no tool)."
