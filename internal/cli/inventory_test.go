package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/sandbox"
)

// TestModelFlags parses the flags of the models of the modalities and
// checks the engine configuration they make.
func TestModelFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "models.json")
	if err := os.WriteFile(file, []byte(`{
		"llm": {"alias": "fast", "url": "http://localhost:9000/v1#small"},
		"tti": [{"alias": "dalle", "url": "https://api.openai.com/v1#dall-e-3", "api_key_env": "IMG_KEY"}],
		"tts": {"url": "http://localhost:8880/v1#kokoro", "voice": "af_sky"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := testEnv()
	env.Getenv = func(k string) string {
		return map[string]string{"LCP_API_KEY": "k", "IMG_KEY": "img"}[k]
	}
	var got *CallOptions
	err := parse(t, NewCmdCall(env, func(o *CallOptions) error { got = o; return nil }),
		"--llm", "http://localhost:8080/v1#big", "--tti", "http://localhost:7860#sdxl", "--stt", "http://localhost:8000/v1/audio/transcriptions#whisper-1",
		"--model-config", file, "tool_x")
	if err != nil {
		t.Fatal(err)
	}
	if got.inv.llm != "http://localhost:8080/v1#big" || got.inv.tti != "http://localhost:7860#sdxl" || got.inv.tts != "" ||
		got.inv.stt != "http://localhost:8000/v1/audio/transcriptions#whisper-1" || got.inv.modelCfg != file {
		t.Fatalf("flags %+v", got.inv)
	}
	got.inv.getenv = env.Getenv
	cfg, err := got.inv.config()
	if err != nil {
		t.Fatal(err)
	}
	aliases := func(e any) string {
		r, ok := e.(*llm.Router)
		if !ok {
			return "not a router"
		}
		var out []string
		for _, p := range r.Profiles {
			out = append(out, p.Alias+"="+p.Client.BaseURL+"#"+p.Client.Model+"/"+p.Client.APIKey)
		}
		return strings.Join(out, " ")
	}
	if a := aliases(cfg.LLM); a != "big=http://localhost:8080/v1#big/k fast=http://localhost:9000/v1#small/k" {
		t.Errorf("llm %s", a)
	}
	if a := aliases(cfg.TTI); a != "sdxl=http://localhost:7860/v1#sdxl/k dalle=https://api.openai.com/v1#dall-e-3/img" {
		t.Errorf("tti %s", a)
	}
	if c, ok := cfg.TTS.(*llm.Client); !ok || c.Voice != "af_sky" || c.Model != "kokoro" {
		t.Errorf("tts %#v", cfg.TTS)
	}
	if c, ok := cfg.STT.(*llm.Client); !ok || c.BaseURL != "http://localhost:8000/v1" || c.Model != "whisper-1" {
		t.Errorf("stt %#v", cfg.STT)
	}

	// Nothing given: no models at all (nil interfaces, not typed nils).
	var bare *CallOptions
	if err := parse(t, NewCmdCall(testEnv(), func(o *CallOptions) error { bare = o; return nil }), "tool_x"); err != nil {
		t.Fatal(err)
	}
	cfg, err = bare.inv.config()
	if err != nil || cfg.LLM != nil || cfg.TTI != nil || cfg.TTS != nil || cfg.STT != nil {
		t.Errorf("bare config %+v, %v", cfg, err)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--tti", "ftp://x"}, "--tti: llm: endpoint"},
		{[]string{"--tts", "localhost:8880"}, "--tts: llm: endpoint"},
		{[]string{"--model-config", filepath.Join(dir, "none.json")}, "--model-config: llm: model config"},
		{[]string{"--llm", "http://x/v1#fast", "--model-config", file}, `the llm alias "fast" is the model of --llm already`},
	} {
		var o *CallOptions
		if err := parse(t, NewCmdCall(env, func(c *CallOptions) error { o = c; return nil }), append(tt.args, "tool_x")...); err != nil {
			t.Fatal(err)
		}
		o.inv.getenv = env.Getenv
		_, err := o.inv.config()
		if err == nil || !strings.Contains(err.Error(), tt.want) || ExitCode(err) != ExitUsage {
			t.Errorf("%v: %v, want a usage error with %q", tt.args, err, tt.want)
		}
	}
}

// TestBudgetFlags: the budget flags reach the engine's configuration;
// nonsense is a usage error naming the flag.
func TestBudgetFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want sandbox.Limits
		err  string
	}{
		{[]string{"--sandbox-memory-mb", "512", "--sandbox-disk-mb", "64", "--sandbox-processes", "32", "--sandbox-time", "2m"},
			sandbox.Limits{TotalMemory: 512 << 20, Disk: 64 << 20, Processes: 32, WallTime: 2 * time.Minute}, ""},
		{nil, sandbox.Limits{}, ""},
		{[]string{"--sandbox-memory-mb", "-1"}, sandbox.Limits{}, "--sandbox-memory-mb: -1 is not allowed"},
		{[]string{"--sandbox-processes", "0"}, sandbox.Limits{}, "--sandbox-processes: 0 is not allowed"},
		{[]string{"--sandbox-disk-mb", "lots"}, sandbox.Limits{}, `invalid argument "lots" for "--sandbox-disk-mb"`},
		{[]string{"--sandbox-time", "-5s"}, sandbox.Limits{}, "--sandbox-time: -5s is not allowed"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var got *CallOptions
			err := parse(t, NewCmdCall(testEnv(), func(o *CallOptions) error { got = o; return nil }), append(tc.args, "tool_x")...)
			if err == nil {
				_, err = got.inv.config()
				if err == nil && got.inv.flags != nil {
					cfg, _ := got.inv.config()
					if cfg.SandboxBudget != tc.want {
						t.Errorf("budget %+v, want %+v", cfg.SandboxBudget, tc.want)
					}
				}
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
		})
	}
}
