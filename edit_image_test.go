package lcp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/llm/llmtest"
)

// editsServer is a fake OpenAI-compatible /images/edits endpoint: it
// keeps each request's form and answers with llmtest.Pixel.
type editsServer struct {
	mu    sync.Mutex
	forms []map[string][]string
	files []map[string][][]byte
}

func (s *editsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/images/edits" || r.Method != http.MethodPost {
		http.Error(w, "not here", http.StatusNotFound)
		return
	}
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	files := map[string][][]byte{}
	for k, hs := range r.MultipartForm.File {
		for _, h := range hs {
			f, _ := h.Open()
			b, _ := io.ReadAll(f)
			f.Close()
			files[k] = append(files[k], b)
		}
	}
	s.mu.Lock()
	s.forms = append(s.forms, r.MultipartForm.Value)
	s.files = append(s.files, files)
	s.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]any{"data": []any{map[string]string{"b64_json": base64.StdEncoding.EncodeToString(llmtest.Pixel)}}})
}

const editPy = `def tool_edit(prompt: str, lollms_client_instance=None):
    """Edits photo.png and a second image.

    Args:
        prompt: the edit
    """
    with open("photo.png", "rb") as f:
        second = f.read()
    img = lollms_client_instance.edit_image(images=["photo.png", second], prompt=prompt, mask=second, quality="high")
    return {"output": "%d bytes of %s" % (len(img), img.mime_type)}


def tool_edit_nothing(lollms_client_instance=None):
    """Edits without images."""
    return lollms_client_instance.edit_image(prompt="x")
`

// TestEditImage: a Python tool's edit_image reaches the OpenAI-compatible
// /images/edits endpoint as a multipart form (images by path and as
// bytes, the mask, the options); without an image model it raises the
// seed's error, with a model that cannot edit it says so, and bad input
// is named.
func TestEditImage(t *testing.T) {
	needPython(t)
	fake := &editsServer{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "edit.py"), []byte(editPy), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	engine := func(tti lcp.ImageGenerator) *lcp.Engine {
		ws := t.TempDir()
		if err := os.WriteFile(filepath.Join(ws, "photo.png"), llmtest.Pixel, 0o644); err != nil {
			t.Fatal(err)
		}
		eng, err := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{dir}, Workspace: ws, TTI: tti})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { eng.Close() })
		return eng
	}
	eng := engine(&llm.Client{BaseURL: srv.URL + "/v1", Model: "gpt-image-1"})
	res := eng.ExecuteTool(ctx, "tool_edit", json.RawMessage(`{"prompt": "add a hat"}`))
	if !res.Success || res.Text() != "69 bytes of image/png" {
		t.Fatalf("edit = %+v", res)
	}
	form, files := fake.forms[0], fake.files[0]
	if form["prompt"][0] != "add a hat" || form["model"][0] != "gpt-image-1" || form["quality"][0] != "high" || form["response_format"] != nil {
		t.Errorf("form %v", form)
	}
	if len(files["image[]"]) != 2 || !bytes.Equal(files["image[]"][0], llmtest.Pixel) || !bytes.Equal(files["image[]"][1], llmtest.Pixel) || len(files["mask"]) != 1 {
		t.Errorf("files %v", files)
	}
	if res := eng.ExecuteTool(ctx, "tool_edit_nothing", nil); res.Success || !strings.Contains(res.Error, "edit_image needs images=") {
		t.Errorf("no images: %+v", res)
	}

	none := engine(nil)
	if res := none.ExecuteTool(ctx, "tool_edit", json.RawMessage(`{"prompt": "x"}`)); res.Success ||
		!strings.Contains(res.Error, "RuntimeError: edit_image is not available: the host has no tti binding.") {
		t.Errorf("no image model: %+v", res)
	}
	genOnly := engine(generateOnly{})
	if res := genOnly.ExecuteTool(ctx, "tool_edit", json.RawMessage(`{"prompt": "x"}`)); res.Success ||
		!strings.Contains(res.Error, "edit_image is not supported by the host's image model") {
		t.Errorf("a model that only generates: %+v", res)
	}
	if res := eng.ExecuteTool(ctx, "tool_edit", json.RawMessage(`{"prompt": " "}`)); res.Success || !strings.Contains(res.Error, "give prompt=") {
		t.Errorf("empty prompt: %+v", res)
	}
}

// generateOnly is an image model that cannot edit.
type generateOnly struct{}

func (generateOnly) GenerateImage(context.Context, *llm.ImageRequest) (*llm.Image, error) {
	return &llm.Image{Data: llmtest.Pixel, MIMEType: "image/png"}, nil
}
