def tool_search(query: str):
    """Searches the notes of the workspace for a word and lists the matches.

    Args:
        query (str): The word to look for.
    """
    return {"success": True, "output": f"no match for {query}"}


def tool_search_prompt():
    return "Searches the notes of the workspace; use it before answering questions about them."


def tool_good_prompt():
    return "This library's contribution to the system prompt (tool_<stem>_prompt)."
