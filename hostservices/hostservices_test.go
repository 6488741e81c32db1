package hostservices_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/hostservices"
)

const studioPy = `def tool_song(lollms_client_instance=None):
    """Makes a song, switching the music model first."""
    c = lollms_client_instance
    c.switch_ttm("lyrical")
    song = c.generate_song_from_lyrics("la la la", prompt="folk")
    return {"output": "%d bytes of %s" % (len(song), song.mime_type)}


def tool_clip(lollms_client_instance=None):
    """Makes a video."""
    v = lollms_client_instance.generate_video("a fox running", fps=24)
    return "%d bytes of %s" % (len(v), v.mime_type)


def tool_remember(lollms_client_instance=None):
    """Adds notes.txt and asks about it."""
    with open("notes.txt", "w") as f:
        f.write("The lighthouse is red.")
    doc = lollms_client_instance.add_document_to_rag("notes.txt")
    hits = lollms_client_instance.query_rag("what colour?", top_k=2)
    return {"output": {"id": doc, "hits": hits}}


def tool_modalities(lollms_client_instance=None):
    """Which of ttm, ttv and rag the host has."""
    c = lollms_client_instance
    return [c.ttm is not None, c.ttv is not None, c.rag is not None]


def tool_music_now(lollms_client_instance=None):
    """Asks for music."""
    return lollms_client_instance.generate_music(prompt="calm")


def tool_video_now(lollms_client_instance=None):
    """Asks for a video."""
    return lollms_client_instance.generate_video("x")


def tool_rag_now(lollms_client_instance=None):
    """Queries."""
    return lollms_client_instance.query_rag("x")


def tool_add_now(lollms_client_instance=None):
    """Adds."""
    return lollms_client_instance.add_document_to_rag(b"some text")
`

// fakeServices is the embedder's own service: music, video and a store.
type fakeServices struct {
	mu   sync.Mutex
	seen []map[string]any
	docs map[string]string
}

func (f *fakeServices) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, req)
	switch r.URL.Path {
	case "/music":
		w.Header().Set("Content-Type", "audio/wav")
		_, _ = w.Write([]byte("RIFF....WAVEfmt "))
	case "/video":
		w.Header().Set("Content-Type", "video/mp4")
		_, _ = w.Write([]byte("....ftypisom"))
	case "/rag/documents":
		data, _ := base64.StdEncoding.DecodeString(req["data"].(string))
		if f.docs == nil {
			f.docs = map[string]string{}
		}
		f.docs["doc-1"] = string(data)
		_ = json.NewEncoder(w).Encode(map[string]string{"id": "doc-1"})
	case "/rag/query":
		_ = json.NewEncoder(w).Encode(map[string]any{"results": []lcp.Passage{{Text: f.docs["doc-1"], Source: "notes.txt", Score: 0.9}}})
	case "/broken":
		http.Error(w, "the model is loading\nmore", http.StatusServiceUnavailable)
	default:
		http.NotFound(w, r)
	}
}

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

func engine(t *testing.T, cfg *lcp.Config) *lcp.Engine {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "studio.py"), []byte(studioPy), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.ToolsFolders, cfg.Workspace = []string{dir}, t.TempDir()
	eng, err := lcp.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// TestHostServices: Python tools reach the embedder's music, video and
// retrieval services through the example backends, against a local fake
// server; without them the calls raise the seed's errors, and a failing
// service's error is named.
func TestHostServices(t *testing.T) {
	needPython(t)
	fake := &fakeServices{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	ctx := context.Background()
	eng := engine(t, &lcp.Config{TTM: &hostservices.Music{URL: srv.URL + "/music"}, TTV: &hostservices.Video{URL: srv.URL + "/video"},
		RAG: &hostservices.RAG{URL: srv.URL + "/rag"}})
	if res := eng.ExecuteTool(ctx, "tool_modalities", nil); res.Text() != "[true,true,true]" {
		t.Errorf("modalities %s", res.Text())
	}
	res := eng.ExecuteTool(ctx, "tool_song", nil)
	if !res.Success || res.Text() != "16 bytes of audio/wav" {
		t.Fatalf("song = %+v", res)
	}
	if got := fake.seen[0]; got["lyrics"] != "la la la" || got["prompt"] != "folk" || got["model"] != "lyrical" {
		t.Errorf("music request %v", got)
	}
	res = eng.ExecuteTool(ctx, "tool_clip", nil)
	if !res.Success || res.Text() != "12 bytes of video/mp4" {
		t.Fatalf("clip = %+v", res)
	}
	if got := fake.seen[1]; got["prompt"] != "a fox running" || got["options"].(map[string]any)["fps"] != float64(24) {
		t.Errorf("video request %v", got)
	}
	res = eng.ExecuteTool(ctx, "tool_remember", nil)
	if !res.Success || !strings.Contains(res.Text(), `"id":"doc-1"`) || !strings.Contains(res.Text(), `"text":"The lighthouse is red."`) {
		t.Fatalf("remember = %+v", res)
	}
	if got := fake.seen[3]; got["top_k"] != float64(2) || got["query"] != "what colour?" {
		t.Errorf("query request %v", got)
	}

	none := engine(t, &lcp.Config{})
	for name, want := range map[string]string{
		"tool_music_now": "RuntimeError: generate_music is not available: the host has no ttm binding.",
		"tool_video_now": "RuntimeError: generate_video is not available: the host has no ttv binding.",
		"tool_rag_now":   "RuntimeError: query_rag is not available: the host has no rag binding.",
		"tool_add_now":   "RuntimeError: add_document_to_rag is not available: the host has no rag binding.",
	} {
		if res := none.ExecuteTool(ctx, name, nil); res.Success || !strings.Contains(res.Error, want) {
			t.Errorf("%s without the service: %q, want %q", name, res.Error, want)
		}
	}
	if res := none.ExecuteTool(ctx, "tool_modalities", nil); res.Text() != "[false,false,false]" {
		t.Errorf("modalities without services %s", res.Text())
	}

	broken := engine(t, &lcp.Config{TTM: &hostservices.Music{URL: srv.URL + "/broken"}, RAG: &hostservices.RAG{URL: srv.URL + "/nowhere"}})
	if res := broken.ExecuteTool(ctx, "tool_music_now", nil); res.Success || !strings.Contains(res.Error, "generate_music failed: hostservices: POST "+srv.URL+"/broken: 503 Service Unavailable: the model is loading") {
		t.Errorf("a failing service: %q", res.Error)
	}
	if res := broken.ExecuteTool(ctx, "tool_rag_now", nil); res.Success || !strings.Contains(res.Error, "query_rag failed: hostservices: POST "+srv.URL+"/nowhere/query: 404") {
		t.Errorf("a missing store: %q", res.Error)
	}
}
