"""The LCP Python half of lcp's fixture for the MCP conformance suite.

Plain LCP tools: the fixture serves them under the names the suite calls
(tool_simple_text as test_simple_text...) with tool.Rename. Rich results
use lcp's convention: content blocks under the "_lcp_content" key, with
bytes or base64 text as their data. Logging and progress go through the
log_handler and progress_handler the worker injects into the tools that
declare them.
"""

import io
import struct
import time
import wave
import zlib

TOOL_LIBRARY_NAME = "Conformance suite tools"
TOOL_LIBRARY_DESC = "What the MCP conformance suite calls, written as LCP tools."


def _png_pixel():
    """A 1x1 red PNG."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def _wav_beep():
    """A tenth of a second of silence, as WAV."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * 800)
    return buf.getvalue()


def tool_suite_tools_prompt():
    return "These tools answer the MCP conformance suite; call them only for it."


def tool_simple_text():
    """Returns a simple text response."""
    return "This is a simple text response for testing."


def tool_image_content():
    """Returns an image (a 1x1 red PNG)."""
    return {"_lcp_content": [{"type": "image", "data": _png_pixel(), "mimeType": "image/png"}]}


def tool_audio_content():
    """Returns a sound (a short WAV)."""
    return {"_lcp_content": [{"type": "audio", "data": _wav_beep(), "mimeType": "audio/wav"}]}


def tool_embedded_resource():
    """Returns an embedded text resource."""
    return {"_lcp_content": [{"type": "resource", "resource": {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    }}]}


def tool_multiple_content_types():
    """Returns text, an image and an embedded resource."""
    return {"_lcp_content": [
        {"type": "text", "text": "Multiple content types test:"},
        {"type": "image", "data": _png_pixel(), "mimeType": "image/png"},
        {"type": "resource", "resource": {
            "uri": "test://mixed-content-resource",
            "mimeType": "application/json",
            "text": '{"test":"data","value":123}',
        }},
    ]}


def tool_with_logging(log_handler=None):
    """Logs three records while it runs."""
    # The pauses let the client see the records arrive while the call runs
    # (the worker sends a call's records at most every 50 ms).
    log_handler("Tool execution started")
    time.sleep(0.06)
    log_handler("Tool processing data")
    time.sleep(0.06)
    log_handler("Tool execution completed")
    return "Tool with logging executed successfully"


def tool_with_progress(progress_handler=None):
    """Reports its progress: 0, 50, 100 of 100."""
    # Reports closer than 50 ms apart are merged into the latest: pause
    # between them so that the client gets all three.
    for i, p in enumerate((0, 50, 100)):
        if i:
            time.sleep(0.06)
        progress_handler(p, 100, f"step {i + 1} of 3")
    return "Tool with progress executed successfully"


def tool_error_handling():
    """Always fails."""
    raise RuntimeError("This tool intentionally returns an error for testing")


def tool_sampling(prompt: str, lollms_client_instance=None):
    """Asks the language model: the MCP client's, through sampling.

    Args:
        prompt: The prompt to send to the LLM
    """
    if lollms_client_instance is None or lollms_client_instance.llm is None:
        return {"success": False, "error": "No language model: the client does not offer sampling."}
    answer = lollms_client_instance.generate_text(prompt, n_predict=100)
    return "LLM response: " + str(answer)
