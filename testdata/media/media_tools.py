"""Omni-tools of the other modalities, for the tests of
lollms_client_instance.tti, .tts and .stt."""


def tool_picture(prompt: str, lollms_client_instance=None):
    """Draws a picture and returns it as an image block."""
    c = lollms_client_instance
    img = c.generate_image(prompt=prompt, width=64, height=64, style="vivid")
    return {"output": f"{len(img)} bytes of {img.mime_type}", "revised": img.revised_prompt,
            "_lcp_content": [{"type": "image", "data": img, "mimeType": img.mime_type}]}


def tool_say_and_hear(text: str, lollms_client_instance=None):
    """Speaks a text, saves it, and transcribes the file."""
    c = lollms_client_instance
    audio = c.generate_audio(text, voice="nova", format="wav")
    with open("speech.wav", "wb") as f:
        f.write(audio)
    heard = c.transcribe_audio("speech.wav", language="en")
    heard_bytes = c.stt.transcribe_audio(bytes(audio), model="whisper-large")
    return {"output": heard, "again": heard_bytes, "mime": audio.mime_type,
            "_lcp_content": [{"type": "audio", "data": audio, "mimeType": audio.mime_type}]}


def tool_switch(lollms_client_instance=None):
    """Lists the models, switches the image and text models, and uses them."""
    c = lollms_client_instance
    out = {"models": c.list_models(), "tti_models": c.tti.list_models(), "voices": c.tts.list_voices()}
    out["switched"] = [c.switch_tti("dalle"), c.switch_model("fast")]
    out["tti_model"] = c.tti.model_name
    c.generate_image("a cat")
    out["text"] = c.generate_text("hi")
    return {"output": out}


def tool_modalities(lollms_client_instance=None):
    """Says which modalities the host has, and what the absent ones raise."""
    c = lollms_client_instance
    out = {"llm": c.llm is not None, "tti": c.tti is not None, "tts": c.tts is not None, "stt": c.stt is not None,
           "errors": {}}
    for name, call in (("generate_image", lambda: c.generate_image("x")),
                       ("generate_audio", lambda: c.generate_audio("x")),
                       ("transcribe_audio", lambda: c.transcribe_audio(b"x")),
                       ("switch_tti", lambda: c.switch_tti("a")),
                       ("generate_music", lambda: c.generate_music("x"))):
        try:
            call()
        except RuntimeError as e:
            out["errors"][name] = f"RuntimeError: {e}"
    return out


def tool_try_picture(lollms_client_instance=None):
    """Asks for a picture and reports the error, if any."""
    try:
        lollms_client_instance.generate_image("x")
        return "drawn"
    except RuntimeError as e:
        return {"success": False, "error": str(e)}
