package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/llm/llmtest"
)

func TestGenerateImage(t *testing.T) {
	srv := llmtest.New(t)
	c := srv.Client()
	c.Model, c.APIKey = "sdxl", secretKey
	ctx := context.Background()
	img, err := c.GenerateImage(ctx, &llm.ImageRequest{Prompt: "a lighthouse", NegativePrompt: "blur", Width: 1024, Height: 768,
		Extra: map[string]json.RawMessage{"quality": json.RawMessage(`"hd"`), "prompt": json.RawMessage(`"not this"`)}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(img.Data, llmtest.Pixel) || img.MIMEType != "image/png" || img.RevisedPrompt != "llmtest: a lighthouse" {
		t.Errorf("image = %+v", img)
	}
	r := srv.MediaRequests()[0]
	want := map[string]string{"prompt": "a lighthouse", "negative_prompt": "blur", "size": "1024x768", "model": "sdxl",
		"quality": "hd", "response_format": "b64_json", "n": "1"}
	for k, v := range want {
		if got := r.Field(k); got != v {
			t.Errorf("field %s = %q, want %q", k, got, v)
		}
	}
	if r.Path != "/v1/images/generations" || r.Header.Get("Authorization") != "Bearer "+secretKey {
		t.Errorf("request %s %v", r.Path, r.Header)
	}

	// A link answer is fetched (without the key); gpt-image models get no
	// response_format, which they refuse.
	img, err = c.GenerateImage(ctx, &llm.ImageRequest{Prompt: "x", Model: "dall-e-2", Extra: map[string]json.RawMessage{"response_format": json.RawMessage(`"url"`)}})
	if err != nil || !bytes.Equal(img.Data, llmtest.Pixel) {
		t.Errorf("url answer: %+v, %v", img, err)
	}
	if _, err := c.GenerateImage(ctx, &llm.ImageRequest{Prompt: "x", Model: "gpt-image-1"}); err != nil {
		t.Fatal(err)
	}
	last := srv.MediaRequests()[2]
	if _, ok := last.Fields["response_format"]; ok || last.Field("model") != "gpt-image-1" || last.Field("size") != "" {
		t.Errorf("gpt-image request %v", last.Fields)
	}
}

func TestGenerateSpeechAndVoices(t *testing.T) {
	srv := llmtest.New(t)
	c := srv.Client()
	ctx := context.Background()
	audio, err := c.GenerateSpeech(ctx, &llm.SpeechRequest{Input: "Hello", Format: "wav", Speed: 1.25})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(audio.Data, llmtest.Beep) || audio.MIMEType != "audio/wav" {
		t.Errorf("audio = %d bytes %s", len(audio.Data), audio.MIMEType)
	}
	r := srv.MediaRequests()[0]
	if r.Field("input") != "Hello" || r.Field("voice") != llm.DefaultVoice || r.Field("response_format") != "wav" ||
		r.Field("speed") != "1.25" || r.Field("model") != "test-model" {
		t.Errorf("speech request %v", r.Fields)
	}
	c.Voice = "af_sky"
	srv.SpeechType = "application/octet-stream"
	srv.Speech = []byte("ID3\x04rest of an mp3")
	audio, err = c.GenerateSpeech(ctx, &llm.SpeechRequest{Input: "Hi"})
	if err != nil || audio.MIMEType != "audio/mpeg" || srv.MediaRequests()[1].Field("voice") != "af_sky" {
		t.Errorf("sniffed speech: %+v, %v", audio, err)
	}
	voices, err := c.Voices(ctx)
	if err != nil || !cmp.Equal(voices, []string{"af_sky"}) {
		t.Errorf("voices without a list = %v, %v", voices, err)
	}
	srv.Voices = []string{"af_sky", "am_adam"}
	voices, err = c.Voices(ctx)
	if err != nil || !cmp.Equal(voices, []string{"af_sky", "am_adam"}) {
		t.Errorf("voices = %v, %v", voices, err)
	}
}

func TestTranscribe(t *testing.T) {
	srv := llmtest.New(t)
	srv.Transcript = "hello world"
	c := srv.Client()
	c.Model = "whisper-1"
	tr, err := c.Transcribe(context.Background(), &llm.TranscriptionRequest{Audio: llmtest.Beep, Language: "en", Prompt: "greeting",
		Extra: map[string]string{"temperature": "0", "model": "not this"}})
	if err != nil || tr.Text != "hello world" {
		t.Fatalf("transcription = %+v, %v", tr, err)
	}
	r := srv.MediaRequests()[0]
	if r.FileName != "audio.wav" || !bytes.Equal(r.File, llmtest.Beep) || r.Field("model") != "whisper-1" || r.Field("language") != "en" ||
		r.Field("prompt") != "greeting" || r.Field("temperature") != "0" || r.Field("response_format") != "json" {
		t.Errorf("transcription request %q %v", r.FileName, r.Fields)
	}
	if _, err := c.Transcribe(context.Background(), &llm.TranscriptionRequest{Audio: []byte("x"), FileName: "/tmp/voice memo.ogg"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.MediaRequests()[1].FileName; got != "voice memo.ogg" {
		t.Errorf("file name %q", got)
	}
	if _, err := c.Transcribe(context.Background(), &llm.TranscriptionRequest{}); err == nil {
		t.Error("no audio: no error")
	}
}

// TestMediaErrors: a server's refusal, a malformed answer, an endpoint
// that is down and one that never answers are each a clear error, soon.
func TestMediaErrors(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.New(t)
	c := srv.Client()
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"refused", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error":{"message":"Your prompt was rejected"}}`))
		}, "400 Bad Request: Your prompt was rejected"},
		{"not json", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>")) }, "malformed response: not an image response"},
		{"no image", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"data":[]}`)) }, "the answer has no image"},
		{"bad base64", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"data":[{"b64_json":"%%%"}]}`)) }, "not base64"},
		{"file url", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"data":[{"url":"file:///etc/passwd"}]}`))
		}, "not an http(s) URL"},
	} {
		srv.MediaHandler = tt.handler
		_, err := c.GenerateImage(ctx, &llm.ImageRequest{Prompt: "x"})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	srv.MediaHandler = func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"detail":"no"}`))
	}
	if _, err := c.GenerateSpeech(ctx, &llm.SpeechRequest{Input: "x"}); err == nil || !strings.Contains(err.Error(), "JSON, not audio") {
		t.Errorf("speech as JSON: %v", err)
	}

	// Down: nothing listens.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	down := &llm.Client{BaseURL: "http://" + addr + "/v1"}
	start := time.Now()
	_, err = down.GenerateImage(ctx, &llm.ImageRequest{Prompt: "x"})
	if err == nil || !strings.Contains(err.Error(), "POST http://"+addr+"/v1/images/generations") || time.Since(start) > 5*time.Second {
		t.Errorf("down: %v after %v", err, time.Since(start))
	}

	// Mute: accepts, never answers.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	go func() {
		for {
			conn, err := mute.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	slow := &llm.Client{BaseURL: "http://" + mute.Addr().String() + "/v1", Timeout: 300 * time.Millisecond}
	start = time.Now()
	_, err = slow.Transcribe(ctx, &llm.TranscriptionRequest{Audio: llmtest.Beep})
	var te *llm.TimeoutError
	if !errors.As(err, &te) || time.Since(start) > 5*time.Second {
		t.Errorf("mute: %v after %v", err, time.Since(start))
	}
}

func TestParseModalities(t *testing.T) {
	env := map[string]string{"LCP_API_KEY": "k-default", "MY_KEY": "k-mine"}
	getenv := func(k string) string { return env[k] }
	m, err := llm.ParseModalities([]byte(`{
		"llm": {"url": "http://localhost:8080/v1#qwen"},
		"tti": [{"alias": "sdxl", "url": "http://localhost:7860"},
		        {"url": "https://api.openai.com/v1/images/generations", "model": "dall-e-3", "api_key_env": "MY_KEY", "timeout": 90}],
		"tts": {"url": "http://localhost:8880/v1#kokoro", "voice": "af_sky"},
		"stt": null}`), getenv)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Alias, Base, Model, Key, Voice string }
	var got []row
	for _, list := range [][]llm.Profile{m.LLM, m.TTI, m.TTS, m.STT} {
		for _, p := range list {
			got = append(got, row{p.Alias, p.Client.BaseURL, p.Client.Model, p.Client.APIKey, p.Client.Voice})
		}
	}
	want := []row{
		{"qwen", "http://localhost:8080/v1", "qwen", "k-default", ""},
		{"sdxl", "http://localhost:7860/v1", "", "k-default", ""},
		{"dall-e-3", "https://api.openai.com/v1", "dall-e-3", "k-mine", ""},
		{"kokoro", "http://localhost:8880/v1", "kokoro", "k-default", "af_sky"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("profiles mismatch (-want +got):\n%s", diff)
	}
	if m.TTI[1].Client.Timeout != 90*time.Second {
		t.Errorf("timeout %v", m.TTI[1].Client.Timeout)
	}
	for _, tt := range []struct{ in, want string }{
		{`[]`, "want a JSON object"},
		{`{"ttm": {"url": "http://x"}}`, `unknown modality "ttm"`},
		{`{"tti": {"model": "x"}}`, `tti profile 1: a profile needs a "url"`},
		{`{"tti": {"url": "ftp://x"}}`, "must start with http"},
		{`{"tti": {"url": "http://x", "colour": "red"}}`, `unknown field "colour"`},
		{`{"tti": [{"url": "http://a#m"}, {"url": "http://b#m"}]}`, `tti profile 2: the alias "m" is used twice`},
		{`{"tts": {"url": "http://x", "api_key_env": "UNSET"}}`, "$UNSET is not set"},
		{`{"stt": {"url": "http://x", "timeout": 0}}`, "out of range"},
	} {
		if _, err := llm.ParseModalities([]byte(tt.in), getenv); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestRouter(t *testing.T) {
	a, b := llmtest.New(t, llmtest.Text("from a"), llmtest.Text("from a again")), llmtest.New(t, llmtest.Text("from b"))
	ca, cb := a.Client(), b.Client()
	ca.Model, cb.Model = "model-a", "model-b"
	if llm.Route(nil) != nil || llm.Route([]llm.Profile{{Alias: "a", Client: ca}}) != llm.Endpoint(ca) {
		t.Error("Route of none or one profile")
	}
	r := llm.Route([]llm.Profile{{Alias: "a", Client: ca}, {Alias: "b", Client: cb}})
	ctx := context.Background()
	for _, tt := range []struct{ options, want, model string }{
		{`{"model": "b"}`, "from b", "model-b"},
		{`{}`, "from a", "model-a"},
		{`{"model": "other"}`, "from a again", "other"},
	} {
		got, err := r.GenerateJSON(ctx, "hi", json.RawMessage(tt.options))
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v", tt.options, got, err)
		}
	}
	if got := b.Requests()[0].Model; got != "model-b" {
		t.Errorf("b was asked for %q", got)
	}
	if got := a.Requests()[1].Model; got != "other" {
		t.Errorf("a was asked for %q", got)
	}
	if _, err := r.GenerateImage(ctx, &llm.ImageRequest{Prompt: "x", Model: "b"}); err != nil || len(b.MediaRequests()) != 1 || b.MediaRequests()[0].Field("model") != "model-b" {
		t.Errorf("image on b: %v %v", err, b.MediaRequests())
	}
	names, err := r.Models(ctx)
	if err != nil || !cmp.Equal(names, []string{"a", "b"}) {
		t.Errorf("models = %v, %v", names, err)
	}
}

// FuzzParseModalities: the reader of --model-config never panics, and a
// profile it accepts has a client with an endpoint.
func FuzzParseModalities(f *testing.F) {
	for _, s := range []string{
		`{"llm": {"url": "http://localhost:8080/v1#qwen"}}`,
		`{"tti": [{"alias": "a", "url": "http://x"}, {"url": "https://y/v1#m", "timeout": 3}], "stt": null}`,
		`{"tts": {"url": "http://x", "voice": "v", "api_key_env": "K"}}`,
		`{}`, `[]`, `{"llm": 3}`, `{"llm": [null]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := llm.ParseModalities(data, func(string) string { return "k" })
		if err != nil {
			return
		}
		for _, list := range [][]llm.Profile{m.LLM, m.TTI, m.TTS, m.STT} {
			for _, p := range list {
				if p.Client == nil || p.Client.BaseURL == "" || p.Client.Timeout < 0 {
					t.Fatalf("profile %+v of %s", p, data)
				}
			}
		}
	})
}

// TestEditImageBadInput: an edit without images, with an empty image or
// an empty prompt is refused before any request.
func TestEditImageBadInput(t *testing.T) {
	c := &llm.Client{BaseURL: "http://127.0.0.1:1/v1"}
	for _, tt := range []struct {
		r    llm.ImageEditRequest
		want string
	}{
		{llm.ImageEditRequest{Prompt: "x"}, "no image to edit"},
		{llm.ImageEditRequest{Images: [][]byte{llmtest.Pixel}, Prompt: " "}, "the prompt is empty"},
		{llm.ImageEditRequest{Images: [][]byte{llmtest.Pixel, nil}, Prompt: "x"}, "image 2 is empty"},
	} {
		if _, err := c.EditImage(context.Background(), &tt.r); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.r, err, tt.want)
		}
	}
}
