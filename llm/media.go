package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// The endpoints of the other modalities of OpenAI-compatible servers:
// images, speech and transcription. They are what a Python tool's
// lollms_client_instance.generate_image, generate_audio and
// transcribe_audio reach.

// DefaultVoice is the voice of speech requests that name none, when the
// Client has no Voice: OpenAI's API needs one, and servers that mimic it
// map this name to a voice of theirs.
const DefaultVoice = "alloy"

// ImageRequest asks for an image (POST {BaseURL}/images/generations).
type ImageRequest struct {
	// Prompt describes the image.
	Prompt string
	// NegativePrompt says what to avoid; sent as "negative_prompt", which
	// Stable Diffusion servers read and OpenAI's API does not have.
	NegativePrompt string
	// Width and Height in pixels, sent as "size": "WxH" when both are
	// set; zero means the server's default.
	Width, Height int
	// Model names the model; empty means the Client's Model.
	Model string
	// Extra holds further fields the server understands ("quality",
	// "style", "seed"...). They never replace the fields above.
	Extra map[string]json.RawMessage
}

// ImageEditRequest asks for an edit of images (/images/edits): the
// images and the prompt are required.
type ImageEditRequest struct {
	// Images are the image files to edit (PNG, JPEG, WebP), in order.
	// One is sent as the field "image", several as "image[]" (the form
	// gpt-image models take).
	Images [][]byte
	// Mask, when set, is a PNG whose transparent pixels say where to edit.
	Mask []byte
	// Prompt describes the edit.
	Prompt string
	// Width and Height in pixels, sent as "size": "WxH" when both are set.
	Width, Height int
	// Model names the model; empty means the Client's Model.
	Model string
	// Extra holds further form fields ("quality", "background"...). They
	// never replace the fields above.
	Extra map[string]string
}

// Image is a generated image.
type Image struct {
	// Data is the image file's bytes and MIMEType its type (image/png...),
	// read from its first bytes.
	Data     []byte
	MIMEType string
	// RevisedPrompt is the prompt the server used, when it rewrote it.
	RevisedPrompt string
}

// SpeechRequest asks for speech (POST {BaseURL}/audio/speech).
type SpeechRequest struct {
	// Input is the text to speak.
	Input string
	// Voice names the voice; empty means the Client's Voice, else
	// DefaultVoice.
	Voice string
	// Model names the model; empty means the Client's Model.
	Model string
	// Format is the audio format ("mp3", "wav", "opus", "aac", "flac",
	// "pcm"); empty means the server's default.
	Format string
	// Speed is the speaking rate (1 is normal); zero means the server's
	// default.
	Speed float64
	// Extra holds further fields the server understands. They never
	// replace the fields above.
	Extra map[string]json.RawMessage
}

// Audio is generated sound.
type Audio struct {
	// Data is the audio file's bytes and MIMEType its type (audio/mpeg...).
	Data     []byte
	MIMEType string
}

// TranscriptionRequest asks for the text of speech (POST
// {BaseURL}/audio/transcriptions).
type TranscriptionRequest struct {
	// Audio is the sound file's bytes and FileName its name, whose
	// extension tells servers its format; empty means a name made from
	// the data's first bytes ("audio.wav", "audio.mp3"...).
	Audio    []byte
	FileName string
	// Model names the model; empty means the Client's Model.
	Model string
	// Language (ISO-639-1, "en") and Prompt (text that guides the style
	// or continues a previous segment) are sent when set.
	Language, Prompt string
	// Extra holds further form fields ("temperature"...). They never
	// replace the fields above.
	Extra map[string]string
}

// Transcription is the text of speech.
type Transcription struct {
	Text string
	// Language and Duration (in seconds) are given by some servers.
	Language string
	Duration float64
}

// model returns the model of a request: its own, else the Client's.
func (c *Client) model(m string) string {
	if m != "" {
		return m
	}
	return c.Model
}

// jsonBody writes fields, then the extras that do not replace them.
func jsonBody(fields map[string]any, extra map[string]json.RawMessage) ([]byte, error) {
	m := make(map[string]json.RawMessage, len(fields)+len(extra))
	for k, v := range extra {
		m[k] = v
	}
	for k, v := range fields {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("llm: %s: %w", k, err)
		}
		m[k] = b
	}
	return json.Marshal(m)
}

// GenerateImage asks for one image. Its errors are those of Chat; an
// answer without an image is a *ResponseError.
func (c *Client) GenerateImage(ctx context.Context, r *ImageRequest) (*Image, error) {
	fields := map[string]any{"prompt": r.Prompt, "n": 1}
	if m := c.model(r.Model); m != "" {
		fields["model"] = m
	}
	if r.Width > 0 && r.Height > 0 {
		fields["size"] = fmt.Sprintf("%dx%d", r.Width, r.Height)
	}
	if r.NegativePrompt != "" {
		fields["negative_prompt"] = r.NegativePrompt
	}
	extra := r.Extra
	if _, ok := extra["response_format"]; !ok && !strings.HasPrefix(c.model(r.Model), "gpt-image") {
		// The image itself rather than a link that expires; gpt-image
		// models always answer so, and refuse the field.
		extra = withField(extra, "response_format", `"b64_json"`)
	}
	body, err := jsonBody(fields, extra)
	if err != nil {
		return nil, err
	}
	raw, x, err := c.post(ctx, "/images/generations", body, "application/json")
	if err != nil {
		return nil, err
	}
	return c.imageAnswer(ctx, raw, x)
}

// imageAnswer reads the image of an /images/generations or /images/edits
// answer: the first of its data, base64 or a link to download.
func (c *Client) imageAnswer(ctx context.Context, raw []byte, x *exchange) (*Image, error) {
	var err error
	var resp struct {
		Data []struct {
			B64JSON       string `json:"b64_json"`
			URL           string `json:"url"`
			RevisedPrompt string `json:"revised_prompt"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("llm: %s %s: %w", x.method, x.shown, &ResponseError{Reason: "not an image response: " + err.Error()})
	}
	if len(resp.Data) == 0 {
		return nil, fmt.Errorf("llm: %s %s: %w", x.method, x.shown, &ResponseError{Reason: "the answer has no image"})
	}
	d := resp.Data[0]
	img := &Image{RevisedPrompt: d.RevisedPrompt}
	switch {
	case d.B64JSON != "":
		img.Data, err = base64.StdEncoding.DecodeString(strings.TrimSpace(d.B64JSON))
		if err != nil {
			return nil, fmt.Errorf("llm: %s %s: %w", x.method, x.shown, &ResponseError{Reason: "the image is not base64: " + err.Error()})
		}
	case d.URL != "":
		img.Data, err = c.download(ctx, d.URL)
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("llm: %s %s: %w", x.method, x.shown, &ResponseError{Reason: "the image has neither b64_json nor url"})
	}
	if len(img.Data) == 0 {
		return nil, fmt.Errorf("llm: %s %s: %w", x.method, x.shown, &ResponseError{Reason: "the image is empty"})
	}
	img.MIMEType = http.DetectContentType(img.Data)
	return img, nil
}

func withField(m map[string]json.RawMessage, k, v string) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m)+1)
	for kk, vv := range m {
		out[kk] = vv
	}
	out[k] = json.RawMessage(v)
	return out
}

// download fetches the image of a URL answer (or decodes a data: URL)
// within the Client's limits.
func (c *Client) download(ctx context.Context, raw string) ([]byte, error) {
	if strings.HasPrefix(raw, "data:") {
		meta, data, ok := strings.Cut(strings.TrimPrefix(raw, "data:"), ",")
		if !ok || !strings.HasSuffix(meta, ";base64") {
			return nil, &ResponseError{Reason: "the image's data URL is not base64"}
		}
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, &ResponseError{Reason: "the image's data URL is not base64: " + err.Error()}
		}
		return b, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ResponseError{Reason: fmt.Sprintf("the image's URL %q is not an http(s) URL", redactURL(raw))}
	}
	// A plain GET: the key of the API is not sent to wherever the image is.
	dl := &Client{BaseURL: raw, HTTPClient: c.HTTPClient, Timeout: c.Timeout, MaxResponseBytes: c.MaxResponseBytes}
	x, err := dl.start(ctx, http.MethodGet, "", nil, "", "*/*", false)
	if err != nil {
		return nil, err
	}
	defer x.close()
	return x.readAll()
}

// audioTypes are the MIME types of the speech formats.
var audioTypes = map[string]string{
	"mp3": "audio/mpeg", "wav": "audio/wav", "opus": "audio/ogg", "ogg": "audio/ogg",
	"aac": "audio/aac", "flac": "audio/flac", "pcm": "audio/pcm",
}

// GenerateSpeech asks for the speech of a text. Its errors are those of
// Chat; an empty answer is a *ResponseError.
func (c *Client) GenerateSpeech(ctx context.Context, r *SpeechRequest) (*Audio, error) {
	voice := r.Voice
	if voice == "" {
		voice = c.Voice
	}
	if voice == "" {
		voice = DefaultVoice
	}
	fields := map[string]any{"input": r.Input, "voice": voice}
	if m := c.model(r.Model); m != "" {
		fields["model"] = m
	}
	if r.Format != "" {
		fields["response_format"] = r.Format
	}
	if r.Speed > 0 {
		fields["speed"] = r.Speed
	}
	body, err := jsonBody(fields, r.Extra)
	if err != nil {
		return nil, err
	}
	data, x, err := c.post(ctx, "/audio/speech", body, "application/json")
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("llm: %s %s: %w", x.method, x.shown, &ResponseError{Reason: "the answer has no audio"})
	}
	mt := x.mediaType()
	if mt == "application/json" {
		return nil, fmt.Errorf("llm: %s %s: %w", x.method, x.shown, &ResponseError{Reason: "the answer is JSON, not audio: " + clip(string(data))})
	}
	if !strings.HasPrefix(mt, "audio/") {
		mt = audioTypes[strings.ToLower(r.Format)]
		if mt == "" {
			mt = sniffAudio(data)
		}
	}
	return &Audio{Data: data, MIMEType: mt}, nil
}

// sniffAudio names the type of audio data from its first bytes.
func sniffAudio(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("RIFF")) && len(b) >= 12 && string(b[8:12]) == "WAVE":
		return "audio/wav"
	case bytes.HasPrefix(b, []byte("ID3")), len(b) >= 2 && b[0] == 0xFF && b[1]&0xE0 == 0xE0:
		return "audio/mpeg"
	case bytes.HasPrefix(b, []byte("OggS")):
		return "audio/ogg"
	case bytes.HasPrefix(b, []byte("fLaC")):
		return "audio/flac"
	case len(b) >= 12 && string(b[4:8]) == "ftyp":
		return "audio/mp4"
	case len(b) >= 4 && b[0] == 0x1A && b[1] == 0x45 && b[2] == 0xDF && b[3] == 0xA3:
		return "audio/webm"
	}
	return "application/octet-stream"
}

// audioExtensions name a file after its type, for servers that read the
// format from the name.
var audioExtensions = map[string]string{
	"audio/wav": ".wav", "audio/mpeg": ".mp3", "audio/ogg": ".ogg", "audio/flac": ".flac",
	"audio/mp4": ".m4a", "audio/webm": ".webm",
}

// Transcribe asks for the text of a sound file. Its errors are those of
// Chat.
func (c *Client) Transcribe(ctx context.Context, r *TranscriptionRequest) (*Transcription, error) {
	if len(r.Audio) == 0 {
		return nil, errors.New("llm: transcription: no audio")
	}
	name := path.Base(strings.ReplaceAll(r.FileName, `\`, "/"))
	if name == "" || name == "." || name == "/" {
		ext := audioExtensions[sniffAudio(r.Audio)]
		if ext == "" {
			ext = ".wav"
		}
		name = "audio" + ext
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	h.Set("Content-Type", "application/octet-stream")
	part, err := mw.CreatePart(h)
	if err == nil {
		_, err = part.Write(r.Audio)
	}
	fields := map[string]string{}
	for k, v := range r.Extra {
		fields[k] = v
	}
	fields["response_format"] = "json"
	if m := c.model(r.Model); m != "" {
		fields["model"] = m
	}
	if r.Language != "" {
		fields["language"] = r.Language
	}
	if r.Prompt != "" {
		fields["prompt"] = r.Prompt
	}
	for _, k := range sortedKeys(fields) {
		if err == nil {
			err = mw.WriteField(k, fields[k])
		}
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("llm: transcription: %w", err)
	}
	raw, x, err := c.post(ctx, "/audio/transcriptions", buf.Bytes(), mw.FormDataContentType())
	if err != nil {
		return nil, err
	}
	if x.mediaType() != "application/json" && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		return &Transcription{Text: strings.TrimSpace(string(raw))}, nil
	}
	var resp struct {
		Text     *string `json:"text"`
		Language string  `json:"language"`
		Duration any     `json:"duration"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil || resp.Text == nil {
		reason := "no text"
		if err != nil {
			reason = err.Error()
		}
		return nil, fmt.Errorf("llm: %s %s: %w", x.method, x.shown, &ResponseError{Reason: "not a transcription: " + reason})
	}
	t := &Transcription{Text: *resp.Text, Language: resp.Language}
	switch d := resp.Duration.(type) {
	case float64:
		t.Duration = d
	case string:
		t.Duration, _ = strconv.ParseFloat(d, 64)
	}
	return t, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// Voices lists the voices the speech endpoint offers (GET
// {BaseURL}/audio/voices, which OpenAI-compatible speech servers such as
// Kokoro serve; OpenAI's API has no list). Without one, it is the
// Client's Voice, or DefaultVoice.
func (c *Client) Voices(ctx context.Context) ([]string, error) {
	x, err := c.start(ctx, http.MethodGet, "/audio/voices", nil, "", "application/json", false)
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) && (he.StatusCode == http.StatusNotFound || he.StatusCode == http.StatusMethodNotAllowed) {
			if c.Voice != "" {
				return []string{c.Voice}, nil
			}
			return []string{DefaultVoice}, nil
		}
		return nil, err
	}
	defer x.close()
	raw, err := x.readAll()
	if err != nil {
		return nil, err
	}
	var list struct {
		Voices []json.RawMessage `json:"voices"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("llm: %s %s: %w", x.method, x.shown, &ResponseError{Reason: "not a voice list: " + err.Error()})
	}
	var out []string
	for _, v := range list.Voices {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out = append(out, s)
			continue
		}
		var m map[string]any
		_ = json.Unmarshal(v, &m)
		for _, k := range []string{"id", "voice_id", "name"} {
			if s, ok := m[k].(string); ok && s != "" {
				out = append(out, s)
				break
			}
		}
	}
	return out, nil
}

// post sends a request body and returns the whole answer and its exchange
// (closed).
func (c *Client) post(ctx context.Context, p string, body []byte, contentType string) ([]byte, *exchange, error) {
	x, err := c.start(ctx, http.MethodPost, p, body, contentType, "*/*", false)
	if err != nil {
		return nil, nil, err
	}
	defer x.close()
	raw, err := x.readAll()
	if err != nil {
		return nil, nil, err
	}
	return raw, x, nil
}

// EditImage edits images as r asks, through the OpenAI-compatible
// /images/edits endpoint (a multipart form), and returns the first image
// of the answer.
func (c *Client) EditImage(ctx context.Context, r *ImageEditRequest) (*Image, error) {
	if len(r.Images) == 0 {
		return nil, errors.New("llm: image edit: no image to edit")
	}
	if strings.TrimSpace(r.Prompt) == "" {
		return nil, errors.New("llm: image edit: the prompt is empty")
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	var err error
	file := func(field, name string, data []byte) {
		if err != nil {
			return
		}
		h := make(textproto.MIMEHeader)
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, field, name))
		h.Set("Content-Type", http.DetectContentType(data))
		var part io.Writer
		if part, err = mw.CreatePart(h); err == nil {
			_, err = part.Write(data)
		}
	}
	field := "image"
	if len(r.Images) > 1 {
		field = "image[]"
	}
	for i, img := range r.Images {
		if len(img) == 0 {
			return nil, fmt.Errorf("llm: image edit: image %d is empty", i+1)
		}
		file(field, fmt.Sprintf("image%d%s", i+1, imageExtension(img)), img)
	}
	if len(r.Mask) > 0 {
		file("mask", "mask.png", r.Mask)
	}
	fields := map[string]string{}
	for k, v := range r.Extra {
		fields[k] = v
	}
	fields["prompt"] = r.Prompt
	fields["n"] = "1"
	if m := c.model(r.Model); m != "" {
		fields["model"] = m
	}
	if r.Width > 0 && r.Height > 0 {
		fields["size"] = fmt.Sprintf("%dx%d", r.Width, r.Height)
	}
	if _, ok := fields["response_format"]; !ok && !strings.HasPrefix(c.model(r.Model), "gpt-image") {
		fields["response_format"] = "b64_json"
	}
	for _, k := range sortedKeys(fields) {
		if err == nil {
			err = mw.WriteField(k, fields[k])
		}
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("llm: image edit: %w", err)
	}
	raw, x, err := c.post(ctx, "/images/edits", buf.Bytes(), mw.FormDataContentType())
	if err != nil {
		return nil, err
	}
	return c.imageAnswer(ctx, raw, x)
}

// imageExtension is the file extension of an image's type, ".png" when
// unknown.
func imageExtension(data []byte) string {
	switch http.DetectContentType(data) {
	case "image/jpeg":
		return ".jpg"
	case "image/webp":
		return ".webp"
	case "image/gif":
		return ".gif"
	}
	return ".png"
}
