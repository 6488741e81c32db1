package lcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/llm/llmtest"
	"github.com/lcptools/lcp/tool"
)

// The tests of lollms_client_instance's other modalities run real Python
// workers against a fake OpenAI-compatible server (llm/llmtest).

func mediaEngine(t *testing.T, cfg *lcp.Config) (*lcp.Engine, string) {
	t.Helper()
	ws := t.TempDir()
	cfg.ToolsFolders = []string{"testdata/media"}
	cfg.Workspace = ws
	eng, err := lcp.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng, ws
}

func outputOf(t *testing.T, res *tool.Result, v any) {
	t.Helper()
	if !res.Success {
		t.Fatalf("call failed: %s", res.Error)
	}
	if err := json.Unmarshal(res.Output, v); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
}

// TestModalitiesAbsent: without models, client.tti, .tts and .stt are
// None and their calls raise the seed's RuntimeError; the seed's creative
// studio says what is missing.
func TestModalitiesAbsent(t *testing.T) {
	needPython(t)
	eng, _ := mediaEngine(t, &lcp.Config{})
	ctx := context.Background()
	var got struct {
		LLM, TTI, TTS, STT bool
		Errors             map[string]string
	}
	outputOf(t, eng.ExecuteTool(ctx, "tool_modalities", nil), &got)
	if got.LLM || got.TTI || got.TTS || got.STT {
		t.Errorf("modalities %+v", got)
	}
	want := map[string]string{
		"generate_image":   "RuntimeError: generate_image is not available: the host has no tti binding.",
		"generate_audio":   "RuntimeError: generate_audio is not available: the host has no tts binding.",
		"transcribe_audio": "RuntimeError: transcribe_audio is not available: the host has no stt binding.",
		"switch_tti":       "RuntimeError: switch_tti is not available: the host has no tti binding.",
		"generate_music":   "RuntimeError: generate_music is not available: the host has no ttm binding.",
	}
	if diff := cmp.Diff(want, got.Errors); diff != "" {
		t.Errorf("errors mismatch (-want +got):\n%s", diff)
	}
	res := eng.ExecuteTool(ctx, "tool_create_illustrated_audio_story", json.RawMessage(`{"subject": "a lighthouse"}`))
	if res.Success || !strings.Contains(res.Error, "Missing required modality bindings") {
		t.Errorf("creative studio without models: %+v", res)
	}
}

// TestSeedCreativeStudio runs the seed's omni-tool verbatim with a text
// and an image model: the image lands in the workspace, captioned.
func TestSeedCreativeStudio(t *testing.T) {
	needPython(t)
	srv := llmtest.New(t, llmtest.Text("A beam of light in the storm."))
	c := srv.Client()
	eng, ws := mediaEngine(t, &lcp.Config{LLM: c, TTI: c})
	res := eng.ExecuteTool(context.Background(), "tool_create_illustrated_audio_story", json.RawMessage(`{"subject": "a lighthouse", "with_music": true}`))
	if !res.Success || !strings.Contains(res.Text(), `Caption: "A beam of light in the storm."`) {
		t.Fatalf("story = %+v", res)
	}
	var name string
	_ = json.Unmarshal(res.Payload["image_filename"], &name)
	data, err := os.ReadFile(filepath.Join(ws, name))
	if err != nil || !bytes.Equal(data, llmtest.Pixel) {
		t.Errorf("image %s: %d bytes, %v", name, len(data), err)
	}
	r := srv.MediaRequests()[0]
	if r.Field("size") != "1024x1024" || !strings.Contains(r.Field("prompt"), "watercolor illustration of a lighthouse") {
		t.Errorf("image request %v", r.Fields)
	}
}

// TestModalitiesReachTheEndpoints: images and sound come back as bytes
// with their type, travel as content blocks, and the kwargs reach the
// server.
func TestModalitiesReachTheEndpoints(t *testing.T) {
	needPython(t)
	srv := llmtest.New(t)
	srv.Transcript = "hello there"
	c := srv.Client()
	c.Model = "omni"
	eng, ws := mediaEngine(t, &lcp.Config{TTI: c, TTS: c, STT: c})
	ctx := context.Background()

	res := eng.ExecuteTool(ctx, "tool_picture", json.RawMessage(`{"prompt": "a fox"}`))
	if !res.Success || res.Text() != "69 bytes of image/png" || len(res.Content) != 1 {
		t.Fatalf("picture = %+v", res)
	}
	if b := res.Content[0]; b.Type != "image" || b.MIMEType != "image/png" || !bytes.Equal(b.Data, llmtest.Pixel) {
		t.Errorf("image block %+v", b)
	}
	if _, noted := res.Payload["_converted"]; noted || string(res.Payload["revised"]) != `"llmtest: a fox"` {
		t.Errorf("payload %v", res.Payload)
	}
	img := srv.MediaRequests()[0]
	if img.Field("size") != "64x64" || img.Field("style") != "vivid" || img.Field("model") != "omni" {
		t.Errorf("image request %v", img.Fields)
	}

	res = eng.ExecuteTool(ctx, "tool_say_and_hear", json.RawMessage(`{"text": "hello"}`))
	if !res.Success || res.Text() != "hello there" || string(res.Payload["mime"]) != `"audio/wav"` ||
		len(res.Content) != 1 || res.Content[0].Type != "audio" {
		t.Fatalf("say and hear = %+v", res)
	}
	if saved, _ := os.ReadFile(filepath.Join(ws, "speech.wav")); !bytes.Equal(saved, llmtest.Beep) {
		t.Errorf("speech.wav holds %d bytes", len(saved))
	}
	reqs := srv.MediaRequests()
	speech, file, raw := reqs[1], reqs[2], reqs[3]
	if speech.Field("input") != "hello" || speech.Field("voice") != "nova" || speech.Field("response_format") != "wav" {
		t.Errorf("speech request %v", speech.Fields)
	}
	if file.FileName != "speech.wav" || !bytes.Equal(file.File, llmtest.Beep) || file.Field("language") != "en" || file.Field("model") != "omni" {
		t.Errorf("transcription of the file %q %v", file.FileName, file.Fields)
	}
	if raw.FileName != "audio.wav" || raw.Field("model") != "whisper-large" {
		t.Errorf("transcription of bytes %q %v", raw.FileName, raw.Fields)
	}
}

// TestSwitchingModels: switch_model and switch_tti pick a profile of a
// Router for the rest of the call; list_models lists what they accept.
func TestSwitchingModels(t *testing.T) {
	needPython(t)
	main, fast := llmtest.New(t), llmtest.New(t, llmtest.Text("quick answer"))
	main.Models = []string{"big-model"}
	sd, dalle := llmtest.New(t), llmtest.New(t)
	speech := llmtest.New(t)
	speech.Voices = []string{"af_sky", "am_adam"}
	cl := func(s *llmtest.Server, model string) *llm.Client {
		c := s.Client()
		c.Model = model
		return c
	}
	eng, _ := mediaEngine(t, &lcp.Config{
		LLM: llm.Route([]llm.Profile{{Alias: "main", Client: cl(main, "big-model")}, {Alias: "fast", Client: cl(fast, "small-model")}}),
		TTI: llm.Route([]llm.Profile{{Alias: "sdxl", Client: cl(sd, "sdxl")}, {Alias: "dalle", Client: cl(dalle, "dall-e-3")}}),
		TTS: cl(speech, "kokoro"),
	})
	var got struct {
		Models    []string `json:"models"`
		TTIModels []string `json:"tti_models"`
		Voices    []string `json:"voices"`
		Switched  []bool   `json:"switched"`
		TTIModel  string   `json:"tti_model"`
		Text      string   `json:"text"`
	}
	res := eng.ExecuteTool(context.Background(), "tool_switch", nil)
	raw, _ := json.Marshal(res)
	if err := json.Unmarshal(res.Output, &got); err != nil || !res.Success {
		t.Fatalf("switch: %s", raw)
	}
	if !cmp.Equal(got.Models, []string{"main", "fast", "sdxl", "dalle", "test-model"}) || !cmp.Equal(got.TTIModels, []string{"sdxl", "dalle"}) ||
		!cmp.Equal(got.Voices, []string{"af_sky", "am_adam"}) || !cmp.Equal(got.Switched, []bool{true, true}) || got.TTIModel != "dalle" ||
		got.Text != "quick answer" {
		t.Errorf("switch = %+v", got)
	}
	if len(sd.MediaRequests()) != 0 || len(dalle.MediaRequests()) != 1 || dalle.MediaRequests()[0].Field("model") != "dall-e-3" {
		t.Errorf("image went to sd %d, dalle %v", len(sd.MediaRequests()), dalle.MediaRequests())
	}
	if len(main.Requests()) != 0 || len(fast.Requests()) != 1 || fast.Requests()[0].Model != "small-model" {
		t.Errorf("text went to main %d, fast %d", len(main.Requests()), len(fast.Requests()))
	}
}

// TestModalityEndpointDown: an image endpoint that nothing serves, or one
// that never answers within its limit, is a clear error for the tool,
// never a hang.
func TestModalityEndpointDown(t *testing.T) {
	needPython(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	for _, tt := range []struct {
		name   string
		client *llm.Client
		want   string
	}{
		{"down", &llm.Client{BaseURL: "http://" + addr + "/v1"}, "generate_image failed: llm: POST http://" + addr + "/v1/images/generations: dial tcp"},
		{"mute", &llm.Client{BaseURL: "http://" + mute.Addr().String() + "/v1", Timeout: 500 * time.Millisecond}, "no answer within 500ms"},
	} {
		eng, _ := mediaEngine(t, &lcp.Config{TTI: tt.client})
		start := time.Now()
		res := eng.ExecuteTool(context.Background(), "tool_try_picture", nil)
		if res.Success || !strings.Contains(res.Error, tt.want) {
			t.Errorf("%s: %+v, want %q", tt.name, res, tt.want)
		}
		if d := time.Since(start); d > time.Minute {
			t.Errorf("%s took %v", tt.name, d)
		}
	}
}
