// Package hostservices has example backends of the host services an
// embedder implements for lcp (lcp.MusicGenerator, lcp.VideoGenerator,
// lcp.Retriever): each speaks plain JSON over HTTP to a service of the
// embedder's own, so that Python tools' client.generate_music,
// generate_video, query_rag and add_document_to_rag reach it.
//
//	eng, err := lcp.New(ctx, &lcp.Config{
//		TTM: &hostservices.Music{URL: "http://127.0.0.1:9000/music"},
//		RAG: &hostservices.RAG{URL: "http://127.0.0.1:9001"},
//	})
//
// The wire forms:
//
//   - Music and Video POST {"prompt", "lyrics" (music), "model",
//     "options"} to URL and take the answer's body as the media, its
//     Content-Type as the media's type.
//   - RAG POSTs {"query", "top_k"} to URL/query and reads
//     {"results": [{"text", "source", "score"}]}; it POSTs
//     {"file_name", "data" (base64)} to URL/documents and reads {"id"}.
//
// An answer other than 2xx is an error with its status and the first
// line of its body.
package hostservices

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/lcptools/lcp"
)

// maxAnswer bounds an answer's body.
const maxAnswer = 256 << 20

// Music is an lcp.MusicGenerator that POSTs its requests to URL.
type Music struct {
	URL string
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
}

// GenerateMusic implements lcp.MusicGenerator.
func (m *Music) GenerateMusic(ctx context.Context, r *lcp.MusicRequest) (*lcp.Media, error) {
	return media(ctx, m.Client, m.URL, map[string]any{"prompt": r.Prompt, "lyrics": r.Lyrics, "model": r.Model, "options": r.Options})
}

// Video is an lcp.VideoGenerator that POSTs its requests to URL.
type Video struct {
	URL    string
	Client *http.Client
}

// GenerateVideo implements lcp.VideoGenerator.
func (v *Video) GenerateVideo(ctx context.Context, r *lcp.VideoRequest) (*lcp.Media, error) {
	return media(ctx, v.Client, v.URL, map[string]any{"prompt": r.Prompt, "model": r.Model, "options": r.Options})
}

// RAG is an lcp.Retriever served at URL (URL/query, URL/documents).
type RAG struct {
	URL    string
	Client *http.Client
}

// Query implements lcp.Retriever.
func (g *RAG) Query(ctx context.Context, query string, topK int) ([]lcp.Passage, error) {
	body, _, err := post(ctx, g.Client, strings.TrimRight(g.URL, "/")+"/query", map[string]any{"query": query, "top_k": topK})
	if err != nil {
		return nil, err
	}
	var ans struct {
		Results *[]lcp.Passage `json:"results"`
	}
	if err := json.Unmarshal(body, &ans); err != nil || ans.Results == nil {
		return nil, errors.New("hostservices: the query's answer is not {\"results\": [...]}")
	}
	return *ans.Results, nil
}

// Add implements lcp.Retriever.
func (g *RAG) Add(ctx context.Context, fileName string, data []byte) (string, error) {
	body, _, err := post(ctx, g.Client, strings.TrimRight(g.URL, "/")+"/documents", map[string]any{"file_name": fileName, "data": data})
	if err != nil {
		return "", err
	}
	var ans struct {
		ID *string `json:"id"`
	}
	if err := json.Unmarshal(body, &ans); err != nil || ans.ID == nil {
		return "", errors.New("hostservices: the document's answer is not {\"id\": ...}")
	}
	return *ans.ID, nil
}

func media(ctx context.Context, c *http.Client, url string, req map[string]any) (*lcp.Media, error) {
	body, typ, err := post(ctx, c, url, req)
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return nil, fmt.Errorf("hostservices: POST %s: the answer is empty", url)
	}
	if typ == "" || typ == "application/octet-stream" {
		typ = http.DetectContentType(body)
	}
	return &lcp.Media{Data: body, MIMEType: typ}, nil
}

// post sends v as JSON and returns the answer's body and media type.
func post(ctx context.Context, c *http.Client, url string, v any) ([]byte, string, error) {
	if url == "" {
		return nil, "", errors.New("hostservices: no URL")
	}
	if c == nil {
		c = http.DefaultClient
	}
	payload, err := json.Marshal(v)
	if err != nil {
		return nil, "", fmt.Errorf("hostservices: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return nil, "", fmt.Errorf("hostservices: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("hostservices: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, "", fmt.Errorf("hostservices: POST %s: %w", url, err)
	}
	if len(body) > maxAnswer {
		return nil, "", fmt.Errorf("hostservices: POST %s: the answer is over %d bytes", url, maxAnswer)
	}
	if resp.StatusCode/100 != 2 {
		line, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
		return nil, "", fmt.Errorf("hostservices: POST %s: %s: %s", url, resp.Status, line)
	}
	typ, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	return body, strings.TrimSpace(typ), nil
}
